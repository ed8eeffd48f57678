// core/small_buffer.h — room for `n` trivially copyable items: inline up to `Inline`, on the
// heap above it. For per-call scratch (the kept frames of one location) sized by what the
// common call needs, so that the common call allocates nothing. Part of the raw-stack cache
// kit (core/stack_table.h).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace callsite::detail {

template <class T, std::size_t Inline>
class SmallBuffer {
  static_assert(std::is_trivially_copyable_v<T> && Inline > 0);

 public:
  SmallBuffer() noexcept = default;
  SmallBuffer(const SmallBuffer &) = delete;
  SmallBuffer &operator=(const SmallBuffer &) = delete;

  /// Room for `n` items (their values unspecified; what was there before is not kept). False
  /// when memory ran out (data() is then the inline room, too small).
  bool reserve(std::size_t n) noexcept {
    if (n <= Inline) {
      data_ = inline_;
      return true;
    }
    heap_.reset(new (std::nothrow) T[n]);
    data_ = heap_ ? heap_.get() : inline_;
    return heap_ != nullptr;
  }

  T *data() noexcept { return data_; }

 private:
  T *data_ = inline_;
  std::unique_ptr<T[]> heap_;
  T inline_[Inline];
};

}  // namespace callsite::detail
