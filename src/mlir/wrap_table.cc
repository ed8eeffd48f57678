// mlir/wrap_table.cc — nameloc_wrap's cache, bounded in the number of current locations.
#include "mlir/wrap_table.h"

#include <exception>
#include <vector>

namespace callsite::mlir {

PyObject *WrapTable::find(PyObject *current, PyObject *inner) const noexcept {
  auto group = groups_.find(current);
  if (group == groups_.end()) return nullptr;
  auto hit = group->second.by_inner.find(inner);
  return hit != group->second.by_inner.end() ? hit->second.wrapped : nullptr;
}

PyObject *WrapTable::store(PyObject *current, PyObject *inner, PyObject *wrapped,
                           bool own_inner) noexcept {
  // Every `with ir.Location.name(...)` is a new current location: bound the groups.
  constexpr std::size_t kMaxGroups = 1024;
  auto group = groups_.find(current);
  if (group == groups_.end() && groups_.size() >= kMaxGroups) {
    clear();
    group = groups_.end();
  }
  try {
    if (group == groups_.end()) {
      group = groups_.emplace(current, Group{current, {}}).first;
      Py_INCREF(current);
      ++held_;
    }
    auto [it, inserted] = group->second.by_inner.emplace(inner, Wrapped{wrapped, own_inner});
    if (!inserted) {  // built meanwhile by a re-entrant call: keep the first
      Py_DECREF(wrapped);
      return it->second.wrapped;
    }
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    Py_DECREF(wrapped);
    PyErr_NoMemory();
    return nullptr;
  }
  ++held_;
  if (own_inner) {
    Py_INCREF(inner);
    ++held_;
  }
  return wrapped;
}

void WrapTable::clear() noexcept {
  std::vector<PyObject *> drop;  // decref after the map is consistent (dealloc may re-enter)
  try {
    drop.reserve(held_);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
  }
  for (auto &g : groups_) {
    drop.push_back(g.second.current);
    for (auto &kv : g.second.by_inner) {
      drop.push_back(kv.second.wrapped);
      if (kv.second.own_inner) drop.push_back(kv.first);
    }
  }
  held_ = 0;
  groups_.clear();
  for (PyObject *o : drop) Py_DECREF(o);
}

std::size_t WrapTable::size() const noexcept {
  std::size_t n = 0;
  for (const auto &g : groups_) n += g.second.by_inner.size();
  return n;
}

}  // namespace callsite::mlir
