/* layouts/visible_frame_312.c — visible native frames on CPython 3.12: the current frame is
 * tstate->cframe->current_frame, the code is f_code and the position prev_instr, "the code
 * unit prior to the next instruction" (3.12 pycore_frame.h): base + 1 + k reads as
 * instruction 1 + k (the k-th after RESUME), as instr_ptr does on 3.13. */
#include <Python.h>
#include <frameobject.h>
#include <opcode.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include "layouts/visible_frame.h"

#if PY_VERSION_HEX < 0x030C0000 || PY_VERSION_HEX >= 0x030D0000
#error "visible_frame_312.c is for CPython 3.12 only"
#endif

#define CALLSITE_VF_CURRENT(tstate) ((tstate)->cframe->current_frame)
#define CALLSITE_VF_CODE_FIELD f_code
#define CALLSITE_VF_IP_FIELD prev_instr
#define CALLSITE_VF_NAME "visible-3.12"
#include "layouts/visible_frame.inc.h"
