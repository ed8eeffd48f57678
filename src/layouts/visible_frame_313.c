/* layouts/visible_frame_313.c — visible native frames on CPython 3.13: tstate->current_frame,
 * f_executable (a PyObject*, "code object or None") and instr_ptr, the instruction currently
 * executing (3.13 pycore_frame.h). */
#include <Python.h>
#include <frameobject.h>
#include <opcode.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include "layouts/visible_frame.h"

#if PY_VERSION_HEX < 0x030D0000 || PY_VERSION_HEX >= 0x030E0000
#error "visible_frame_313.c is for CPython 3.13 only"
#endif
#ifdef Py_GIL_DISABLED
#error "the free-threaded build has no tested visible-frame implementation"
#endif

#define CALLSITE_VF_CURRENT(tstate) ((tstate)->current_frame)
#define CALLSITE_VF_CODE_FIELD f_executable
#define CALLSITE_VF_IP_FIELD instr_ptr
#define CALLSITE_VF_NAME "visible-3.13"
#include "layouts/visible_frame.inc.h"
