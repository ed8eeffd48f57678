/* layouts/visible_frame_314.c — visible native frames on CPython 3.14: tstate->current_frame
 * and instr_ptr as in 3.13, but f_executable and f_funcobj are tagged _PyStackRefs and the
 * value stack is `stackpointer` (internal/pycore_interpframe_structs.h). References are made
 * with pycore_stackref.h's helpers: a raw pointer to an immortal object would be taken for
 * an owned reference and decref'd. The take-over copies with the header's _PyFrame_Copy,
 * which turns our borrowed references into strong ones. */
#include <Python.h>
#include <frameobject.h>
#include <opcode.h>

#if PY_VERSION_HEX < 0x030E0000 || PY_VERSION_HEX >= 0x030F0000
#error "visible_frame_314.c is for CPython 3.14 only"
#endif
#ifdef Py_GIL_DISABLED
#error "the free-threaded build has no tested visible-frame implementation"
#endif

#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#include <internal/pycore_interpframe.h>
#include <internal/pycore_stackref.h>
#undef Py_BUILD_CORE

#include "layouts/visible_frame.h"

#define CALLSITE_VF_CURRENT(tstate) ((tstate)->current_frame)
#define CALLSITE_VF_IP_FIELD instr_ptr
#define CALLSITE_VF_STACKREFS 1
#define CALLSITE_VF_NAME "visible-3.14"
#include "layouts/visible_frame.inc.h"
