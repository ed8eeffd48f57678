// core/pointer_set.h — a set of pointers in one flat table (open addressing, linear probing,
// backward-shift deletion): no allocation per insert and no node to free per erase, which a
// node-based std::unordered_set pays on paths run once per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace callsite {

class PointerSet {
 public:
  /// Adds `p` (not nullptr). Throws std::bad_alloc when the table cannot grow.
  void insert(const void *p) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(p);
    while (slots_[i] && slots_[i] != p) i = (i + 1) & mask();
    if (!slots_[i]) {
      slots_[i] = p;
      ++count_;
    }
  }

  /// Removes `p` when present.
  void erase(const void *p) noexcept {
    if (slots_.empty()) return;
    std::size_t i = home(p);
    while (slots_[i] != p) {
      if (!slots_[i]) return;
      i = (i + 1) & mask();
    }
    // Backward shift: move later entries of the probe run into the hole when their home
    // slot does not lie (cyclically) between the hole and where they are.
    for (std::size_t j = (i + 1) & mask(); slots_[j]; j = (j + 1) & mask()) {
      const std::size_t k = home(slots_[j]);
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = nullptr;
    --count_;
  }

  bool contains(const void *p) const noexcept {
    if (slots_.empty()) return false;
    for (std::size_t i = home(p); slots_[i]; i = (i + 1) & mask())
      if (slots_[i] == p) return true;
    return false;
  }

  std::size_t size() const noexcept { return count_; }

 private:
  std::size_t mask() const noexcept { return slots_.size() - 1; }

  // Fibonacci hashing: the high bits of the product mix every bit of the address.
  std::size_t home(const void *p) const noexcept {
    const std::uint64_t h = std::uint64_t(reinterpret_cast<std::uintptr_t>(p)) *
                            0x9E3779B97F4A7C15ull;
    return std::size_t(h >> 32) & mask();
  }

  void grow() {
    std::vector<const void *> old(slots_.empty() ? 16 : slots_.size() * 2, nullptr);
    old.swap(slots_);
    count_ = 0;
    for (const void *p : old)
      if (p) insert(p);
  }

  std::vector<const void *> slots_;
  std::size_t count_ = 0;
};

}  // namespace callsite
