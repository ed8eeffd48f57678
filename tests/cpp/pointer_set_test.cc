// tests/cpp/pointer_set_test.cc — core/pointer_set.h against std::set, the oracle, on inserts
// and erases whose probe runs collide and wrap around the end of the table.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "core/pointer_set.h"

using callsite::PointerSet;

namespace {

const void *ptr(std::uintptr_t n) { return reinterpret_cast<const void *>(n * 16 + 16); }

void expect_same(const PointerSet &set, const std::set<const void *> &oracle,
                 std::uintptr_t universe) {
  ASSERT_EQ(set.size(), oracle.size());
  for (std::uintptr_t n = 0; n < universe; ++n)
    ASSERT_EQ(set.contains(ptr(n)), oracle.count(ptr(n)) == 1) << "pointer #" << n;
}

TEST(PointerSet, EmptyContainsNothingAndErasesNothing) {
  PointerSet set;
  EXPECT_FALSE(set.contains(ptr(1)));
  set.erase(ptr(1));
  EXPECT_EQ(set.size(), 0u);
}

TEST(PointerSet, InsertTwiceKeepsOneErasedIsGone) {
  PointerSet set;
  set.insert(ptr(3));
  set.insert(ptr(3));
  EXPECT_EQ(set.size(), 1u);
  set.erase(ptr(3));
  EXPECT_FALSE(set.contains(ptr(3)));
  EXPECT_EQ(set.size(), 0u);
}

TEST(PointerSet, RandomInsertsAndErasesAgreeWithStdSet) {
  // A small universe of pointers in a table that grows to 16-64 slots: long probe runs,
  // wrap-arounds and backward shifts across them.
  std::mt19937 rng(1234);
  for (const std::uintptr_t universe : {8u, 24u, 200u}) {
    PointerSet set;
    std::set<const void *> oracle;
    for (int step = 0; step < 20000; ++step) {
      const void *p = ptr(rng() % universe);
      if (rng() % 3) {
        set.insert(p);
        oracle.insert(p);
      } else {
        set.erase(p);
        oracle.erase(p);
      }
      if (step % 97 == 0) expect_same(set, oracle, universe);
    }
    expect_same(set, oracle, universe);
  }
}

TEST(PointerSet, LifoPushAndPopOfADeepStack) {
  // The decorator's pattern: nested calls insert in order and erase in reverse.
  PointerSet set;
  std::vector<const void *> stack;
  for (std::uintptr_t n = 0; n < 5000; ++n) {
    set.insert(ptr(n));
    stack.push_back(ptr(n));
  }
  while (!stack.empty()) {
    ASSERT_TRUE(set.contains(stack.back()));
    set.erase(stack.back());
    ASSERT_FALSE(set.contains(stack.back()));
    stack.pop_back();
    if (!stack.empty()) ASSERT_TRUE(set.contains(stack.front()));
  }
  EXPECT_EQ(set.size(), 0u);
}

}  // namespace
