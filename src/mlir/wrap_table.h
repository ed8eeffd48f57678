// mlir/wrap_table.h — nameloc_wrap's cache: (Location.current, inner location) -> the inner one
// wrapped in the current one's names. Both location builders (build_python.h, build_capi.h)
// keep one per Context.
#pragma once
#include <Python.h>

#include <cstddef>
#include <unordered_map>

namespace callsite::mlir {

class WrapTable {
 public:
  WrapTable() = default;
  WrapTable(const WrapTable &) = delete;
  WrapTable &operator=(const WrapTable &) = delete;
  ~WrapTable() { clear(); }

  /// The wrapped location stored for (current, inner), borrowed, or nullptr.
  PyObject *find(PyObject *current, PyObject *inner) const noexcept;
  /// Takes the new reference `wrapped`; keeps `current` alive, and `inner` when `own_inner`
  /// (it is not one of the cache's own). Returns the stored location (borrowed: `wrapped`, or
  /// the one a re-entrant call stored first), nullptr + MemoryError.
  PyObject *store(PyObject *current, PyObject *inner, PyObject *wrapped, bool own_inner) noexcept;
  /// Drops every entry (nothing borrows from this table).
  void clear() noexcept;

  std::size_t size() const noexcept;
  /// Location objects this table owns.
  std::size_t held() const noexcept { return held_; }

 private:
  /// The current locations and the wrapped ones are owned; an inner one only when it is not
  /// already the cache's (an explicit loc=), so every owned Location object is counted once.
  struct Wrapped {
    PyObject *wrapped;
    bool own_inner;
  };
  struct Group {
    PyObject *current;
    std::unordered_map<PyObject *, Wrapped> by_inner;
  };
  std::unordered_map<PyObject *, Group> groups_;  ///< keyed by Location.current
  std::size_t held_ = 0;
};

}  // namespace callsite::mlir
