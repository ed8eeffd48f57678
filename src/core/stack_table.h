// core/stack_table.h — the raw-stack cache kit: one hash of a frame sequence, a stored copy of
// one, and a table from stacks to values. A stack is cached by its raw frames (code object or
// executable, offset or state: callsite/frame.h), so a stack seen before is found with one walk,
// one hash and one comparison, without symbolizing anything. MLIR's location caches and torch's
// recorded texts are both such tables; core/flat_map.h and core/small_buffer.h complete the kit.
#pragma once
#include <Python.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "callsite/frame.h"
#include "core/frame_refs.h"

namespace callsite::detail {

/// The hash of frames[0..n) mixed with `seed` (what else keys an entry: a filter's generation
/// and a limit, a recording mode).
std::uint64_t hash_frames(const RawFrame *f, std::size_t n, std::uint64_t seed) noexcept;

/// A hash of one raw frame, for tables keyed by frames (core/flat_map.h, std::unordered_map).
struct RawFrameHash {
  std::size_t operator()(const RawFrame &f) const noexcept {
    return std::size_t((f.tagged >> 4) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(f.payload));
  }
};

/// Whether a stored stack owns a reference to each frame's code object or executable owner
/// (core/frame_refs.h): `retained` keeps what the frames name alive, so an address cannot be
/// reused by another code object while the entry exists; `borrowed` stores the bits only, and
/// the table's user checks that the frames still mean what they meant (torch's texts check the
/// code objects' file, name and line table).
enum class FrameRefs : bool { borrowed = false, retained = true };

/// A copy of a stack, as a key. Released (when retained) by its destructor.
class StoredStack {
 public:
  StoredStack() noexcept = default;
  /// Copies (and retains, when `refs` says so) frames[0..n). Throws std::bad_alloc.
  StoredStack(const RawFrame *f, std::size_t n, FrameRefs refs);
  StoredStack(StoredStack &&o) noexcept
      : frames_(std::move(o.frames_)), n_(o.n_), refs_(o.refs_) {
    o.n_ = 0;
  }
  StoredStack &operator=(StoredStack &&o) noexcept;
  StoredStack(const StoredStack &) = delete;
  StoredStack &operator=(const StoredStack &) = delete;
  ~StoredStack() { release_frames(); }

  const RawFrame *data() const noexcept { return frames_.get(); }
  std::size_t size() const noexcept { return n_; }
  bool equals(const RawFrame *f, std::size_t n) const noexcept {
    return n == n_ && std::memcmp(frames_.get(), f, n * sizeof(RawFrame)) == 0;
  }

 private:
  void release_frames() noexcept;

  std::unique_ptr<RawFrame[]> frames_;
  std::size_t n_ = 0;
  FrameRefs refs_ = FrameRefs::borrowed;
};

/// Stacks (+ whatever `Value` adds to the key) to values. Several entries may share a stack: a
/// lookup takes the first whose value `accept`s (asked only of entries whose stack is the one
/// looked up, so it may read the looked-up frames by index). The table never calls into Python while it
/// is being changed: clear() and erase() empty it first and only then hand the values to the
/// caller's `drop` (a release may run any code, including a lookup in this table).
template <class Value>
class StackTable {
 public:
  explicit StackTable(FrameRefs refs) noexcept : refs_(refs) {}
  StackTable(const StackTable &) = delete;
  StackTable &operator=(const StackTable &) = delete;

  /// The value of the entry for frames[0..n) (hashed `hash`) that `accept(value)` takes, or
  /// nullptr. Borrowed until the table next changes.
  template <class Accept>
  Value *find(std::uint64_t hash, const RawFrame *f, std::size_t n, Accept &&accept) noexcept {
    auto range = map_.equal_range(hash);
    for (auto it = range.first; it != range.second; ++it)
      if (it->second.key.equals(f, n) && accept(static_cast<const Value &>(it->second.value)))
        return &it->second.value;
    return nullptr;
  }

  /// Stores `value` for frames[0..n) (copied, and retained when the table's frames are). False
  /// when memory ran out (the value is then not stored: the caller still owns what it holds).
  bool insert(std::uint64_t hash, const RawFrame *f, std::size_t n, Value value) noexcept {
    try {
      return insert(hash, StoredStack(f, n, refs_), std::move(value));
    } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
      return false;
    }
  }
  /// The same with a key already made (with the table's FrameRefs).
  bool insert(std::uint64_t hash, StoredStack &&key, Value value) noexcept {
    try {
      map_.emplace(hash, Entry{std::move(key), std::move(value)});
    } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
      return false;
    }
    return true;
  }

  /// Removes the entry find() would return, then calls drop(value) on its value. False when
  /// there was none.
  template <class Accept, class Drop>
  bool erase(std::uint64_t hash, const RawFrame *f, std::size_t n, Accept &&accept,
             Drop &&drop) noexcept {
    auto range = map_.equal_range(hash);
    for (auto it = range.first; it != range.second; ++it)
      if (it->second.key.equals(f, n) && accept(static_cast<const Value &>(it->second.value))) {
        Entry gone = std::move(it->second);
        map_.erase(it);
        drop(gone.value);
        return true;
      }
    return false;
  }

  /// Empties the table, then calls drop(value) on every value it held.
  template <class Drop>
  void clear(Drop &&drop) noexcept {
    std::unordered_multimap<std::uint64_t, Entry> gone;
    gone.swap(map_);
    for (auto &item : gone) drop(item.second.value);
  }

  /// Calls f(key, value) for every entry.
  template <class F>
  void for_each(F &&f) const {
    for (const auto &item : map_) f(item.second.key, item.second.value);
  }

  std::size_t size() const noexcept { return map_.size(); }
  FrameRefs refs() const noexcept { return refs_; }

 private:
  struct Entry {
    StoredStack key;
    Value value;
  };
  std::unordered_multimap<std::uint64_t, Entry> map_;
  FrameRefs refs_;
};

}  // namespace callsite::detail
