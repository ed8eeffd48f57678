// bindings/filter.cc — registers callsite.Filter (the type lives in src/filter).
#include "bindings/init.h"
#include "filter/filter_object.h"

namespace callsite::bindings {

void init_filter(nanobind::module_ &m) {
  PyTypeObject *type = detail::init_filter_type();
  if (!type) throw nanobind::python_error();
  m.attr("Filter") = nanobind::handle(reinterpret_cast<PyObject *>(type));
}

}  // namespace callsite::bindings
