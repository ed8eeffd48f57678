// python/init.h — the one place that knows in which order callsite's types and caches are made.
#pragma once

namespace callsite::python {

/// Creates every type and cache of the Python-facing layer and the layers below it, in
/// dependency order (Traceback and Frame before Filter; native frames after their reifier
/// cache). Idempotent. Called by the _callsite module and by the C++ tests' environment, so
/// both run the same order. GIL held; false with a Python error.
bool init_types();

}  // namespace callsite::python
