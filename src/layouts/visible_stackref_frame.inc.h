/* layouts/visible_stackref_frame.inc.h — visible native frames on the 3.14+ frame, written
 * once for visible_frame_314.c and visible_frame_315.c: tstate->current_frame and instr_ptr as
 * in 3.13, but f_executable and f_funcobj are tagged _PyStackRefs and the value stack is
 * `stackpointer` (internal/pycore_interpframe_structs.h, 3.14 and 3.15). References are made
 * with pycore_stackref.h's helpers: a raw pointer to an immortal object would be taken for an
 * owned reference and decref'd. The take-over copies with the header's _PyFrame_Copy, which
 * turns our borrowed references into strong ones.
 *
 * A file includes <Python.h>, <frameobject.h> and <opcode.h>, checks its version, defines
 * CALLSITE_VF_NAME and what its version adds (visible_frame.inc.h's list), then includes this
 * file. */
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
#include "layouts/visible_frame.inc.h"
