// tracking/query.h — reading the calling thread's window: the window a query reads, and a copy
// of its entries that stays valid while the query runs Python code.
#pragma once
#include <Python.h>

#include <cstddef>
#include <vector>

#include "tracking/window.h"

namespace callsite::tracking::detail {

/// The calling thread's window, or nullptr with RuntimeError saying why there is none (`what`
/// names the query in the message).
Window *window_for_query(const char *what) noexcept;

// Copies the window with references held (a query may run code that makes calls, which
// overwrite entries), hands the copy to `use`, releases it.
// At most `want` entries are copied (a filter may need them all; a plain query `limit`).
template <class Use>
inline PyObject *with_copy(Window *r, std::size_t skip, std::size_t want, Use use) {
  OwnedCallSite small[64];
  std::vector<OwnedCallSite> big;
  OwnedCallSite *buf = small;
  const std::size_t cap = want < r->count ? want : r->count;
  if (cap > 64) {
    big.resize(cap);
    buf = big.data();
  }
  const std::size_t n = copy_recent(r, skip, buf, cap);
  PyObject *result = use(buf, n);
  release_copies(buf, n);
  return result;
}

}  // namespace callsite::tracking::detail
