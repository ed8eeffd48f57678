/* layouts/visible_frame_314.c — visible native frames on CPython 3.14: the 3.14+ frame of
 * layouts/visible_stackref_frame.inc.h, nothing more. */
#include <Python.h>
#include <frameobject.h>
#include <opcode.h>

#if PY_VERSION_HEX < 0x030E0000 || PY_VERSION_HEX >= 0x030F0000
#error "visible_frame_314.c is for CPython 3.14 only"
#endif

#define CALLSITE_VF_NAME "visible-3.14"
#include "layouts/visible_stackref_frame.inc.h"
