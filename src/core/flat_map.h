// core/flat_map.h — an open-addressing hash table of trivially copyable keys and values, for
// tables filled once per frame or per link on a cold path (MLIR's C API builder fills them for
// every new Context): one array, no allocation per entry (a std::unordered_map allocates a node
// each). Part of the raw-stack cache kit (core/stack_table.h, core/small_buffer.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <type_traits>
#include <utility>
#include <vector>

namespace callsite::detail {

/// `Initial`: the slots allocated on the first insert (a power of two; the table grows when half
/// full), sized for what one kernel in a new Context stores, so that it rarely rehashes.
template <class Key, class Value, class Hash, std::size_t Initial = 64>
class FlatMap {
  static_assert(std::is_trivially_copyable_v<Key> && std::is_trivially_copyable_v<Value>);
  static_assert(Initial >= 2 && (Initial & (Initial - 1)) == 0);

 public:
  /// The value stored for `key`, or nullptr.
  const Value *find(const Key &key) const noexcept {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      const Slot &s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  /// Stores `value` for `key` unless `key` is there. {the stored value, inserted}; {nullptr,
  /// false} when the table could not grow (out of memory).
  std::pair<const Value *, bool> insert(const Key &key, const Value &value) noexcept {
    if ((size_ + 1) * 2 > slots_.size() && !grow()) return {nullptr, false};
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      Slot &s = slots_[i];
      if (s.used && s.key == key) return {&s.value, false};
      if (!s.used) {
        s = Slot{key, value, true};
        ++size_;
        return {&s.value, true};
      }
    }
  }

  /// Calls f(key, value) for every entry.
  template <class F>
  void for_each(F &&f) const {
    for (const Slot &s : slots_)
      if (s.used) f(s.key, s.value);
  }

  /// Drops every entry and the array.
  void clear() noexcept {
    std::vector<Slot>().swap(slots_);
    size_ = 0;
  }

  std::size_t size() const noexcept { return size_; }

 private:
  struct Slot {
    Key key;
    Value value;
    bool used;
  };

  std::size_t mask() const noexcept { return slots_.size() - 1; }
  // Fibonacci hashing: the table's size is a power of two, so the home slot takes the high bits
  // of the product (the low bits of a pointer-derived hash repeat).
  std::size_t home(const Key &key) const noexcept {
    return std::size_t((std::uint64_t(Hash()(key)) * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  bool grow() noexcept {
    const std::size_t capacity = slots_.empty() ? Initial : slots_.size() * 2;
    std::vector<Slot> old;
    try {
      old.swap(slots_);
      slots_.assign(capacity, Slot{});
    } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
      slots_.swap(old);
      return false;
    }
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (const Slot &s : old)
      if (s.used)
        for (std::size_t i = home(s.key);; i = (i + 1) & mask())
          if (!slots_[i].used) {
            slots_[i] = s;
            break;
          }
    return true;
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  unsigned shift_ = 64;
};

}  // namespace callsite::detail
