/* layouts/layout_313.c — CPython 3.13: tstate->current_frame (Include/cpython/pystate.h),
 * _PyInterpreterFrame.f_executable instead of f_code, instr_ptr instead of prev_instr. */
#include <Python.h>
#include <frameobject.h>

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030D0000 || PY_VERSION_HEX >= 0x030E0000
#error "layout_313.c is for CPython 3.13 only"
#endif
/* Free-threaded builds have no tested layout: select.c refuses them, this file is empty. */
#ifndef Py_GIL_DISABLED
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>
#undef Py_BUILD_CORE

/* f_executable is a plain PyObject* (3.13 pycore_frame.h). Shim frames pushed when C calls
 * into the interpreter are owned by FRAME_OWNED_BY_CSTACK; tracebacks never show them. */
#define CALLSITE_EXECUTABLE(f) ((f)->f_executable)
#define CALLSITE_HIDDEN_OWNER(owner) ((owner) == FRAME_OWNED_BY_CSTACK)
#define CALLSITE_WALK_NAME walk_313
#include "layouts/interpreter_frame.inc.h"

/* Every offset the walker reads that CPython publishes (3.13 internal/pycore_runtime.h). */
static const callsite_offset_fact facts_313[] = {CALLSITE_WALKER_FACTS};
static const callsite_offsets_expectation expected_313 = CALLSITE_OFFSETS_EXPECTATION(facts_313);

const char *callsite_layout_internal_offsets_refusal(const void *image, size_t size) {
  return callsite_debug_offsets_refusal(image, size, &expected_313);
}

/* Refuse when the running interpreter's _PyRuntime.debug_offsets disagree with the headers
 * this file was compiled against. */
const char *callsite_layout_internal_version_refusal(void) {
  return callsite_layout_internal_offsets_refusal(&_PyRuntime.debug_offsets,
                                                  sizeof _PyRuntime.debug_offsets);
}

const callsite_layout callsite_layout_compiled = {
    "internal-3.13", PY_VERSION_HEX, walk_313, walk_313_marker};
#endif
