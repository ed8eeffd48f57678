// filter/default_filter.cc — the process-wide default Filter. The Filter type lives in the
// Python layer, which registers how to make one; the layers below reach it here, downward.
#include "filter/filter.h"

namespace callsite {

namespace {
PyObject *(*make_default)() = nullptr;
PyObject *the_default = nullptr;  // strong, never released: made at first use, not at init,
                                  // so its exclusions see callsite's package directory
}  // namespace

PyObject *default_filter() noexcept {
  if (the_default) return the_default;
  if (!make_default) {
    PyErr_SetString(PyExc_RuntimeError, "callsite's default Filter is not registered (the "
                                        "callsite module was not initialised)");
    return nullptr;
  }
  the_default = make_default();
  return the_default;
}

void set_default_filter_maker(PyObject *(*make)()) noexcept { make_default = make; }

}  // namespace callsite
