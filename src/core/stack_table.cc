// core/stack_table.cc — the raw-stack hash and the stored copy of a stack.
#include "core/stack_table.h"

namespace callsite::detail {

std::uint64_t hash_frames(const RawFrame *f, std::size_t n, std::uint64_t seed) noexcept {
  // FNV-1a over the frames' two words. The tables that use it (std::unordered_multimap) take
  // the hash modulo a prime, so one final fold of the high bits (which a multiply fills) into
  // the low ones is enough; a fold per frame would only lengthen the hot loop.
  std::uint64_t h = 0xcbf29ce484222325ull ^ seed ^ (std::uint64_t(n) << 48);
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ f[i].tagged) * 0x100000001b3ull;
    h = (h ^ std::uint64_t(f[i].payload)) * 0x100000001b3ull;
  }
  return h ^ (h >> 29);
}

StoredStack::StoredStack(const RawFrame *f, std::size_t n, FrameRefs refs)
    : frames_(new RawFrame[n ? n : 1]), n_(n), refs_(refs) {
  if (n) std::memcpy(frames_.get(), f, n * sizeof(RawFrame));  // memcpy's source may not be null
  if (refs_ == FrameRefs::retained)
    for (std::size_t i = 0; i < n_; ++i) retain(frames_[i]);
}

StoredStack &StoredStack::operator=(StoredStack &&o) noexcept {
  if (this != &o) {
    release_frames();
    frames_ = std::move(o.frames_);
    n_ = o.n_;
    refs_ = o.refs_;
    o.n_ = 0;
  }
  return *this;
}

void StoredStack::release_frames() noexcept {
  if (refs_ == FrameRefs::retained)
    for (std::size_t i = 0; i < n_; ++i) release(frames_[i]);
}

}  // namespace callsite::detail
