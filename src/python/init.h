// python/init.h — the one place that knows in which order callsite's types and caches are made
// and what else the module's import sets up. Caches made on first use (the filter rules' `re`
// module, tracking's sys.monitoring objects) are their owners' business: no order involves them.
#pragma once

namespace callsite::python {

/// Creates every type and cache of the Python-facing layer and the layers below it, in
/// dependency order (Traceback and Frame before Filter; native frames after their reifier
/// cache). Idempotent. Called by init_module() and by the C++ tests' environment, so both run
/// the same order. GIL held; false with a Python error.
bool init_types();

/// What importing _callsite sets up, in order: the daemon-thread exit guard, init_types(),
/// then the frame-walk backend (chosen with the importer's Python frames on the stack, which
/// its self-check compares). GIL held; false with a Python error.
bool init_module();

}  // namespace callsite::python
