/* layouts/visible_frame_315.c — visible native frames on CPython 3.15: the 3.14+ frame
 * (layouts/visible_stackref_frame.inc.h), plus what 3.15 adds around it
 * (internal/pycore_interpframe.h, cpython/pystate.h):
 * - _PyFrame_ClearExceptCode is exported "for external JIT support": pop goes through it, so
 *   CPython itself takes a frame object over. It copies f_executable into the frame object
 *   and restores a reference for the frame, so our f_executable must be a strong reference
 *   when it runs (a borrowed one leaks a reference per taken-over frame): pop makes it
 *   strong just before; the frame borrows it otherwise, as on 3.14;
 * - PyThreadState.last_profiled_frame/_seq, the anchor of the remote profiler's frame cache:
 *   moved to `previous` when the frame it names is popped (_PyThreadState_UpdateLastProfiledFrame),
 *   or the sampler reuses stale parents for a frame at a reused address. */
#include <Python.h>
#include <frameobject.h>
#include <opcode.h>

#if PY_VERSION_HEX < 0x030F0000 || PY_VERSION_HEX >= 0x03100000
#error "visible_frame_315.c is for CPython 3.15 only"
#endif

#define CALLSITE_VF_EXPORTED_CLEAR 1
/* RESUME has an inline cache entry (INSTR_FMT_IBC; _PyOpcode_Caches[RESUME] == 1, 3.15
 * internal/pycore_opcode_metadata.h). */
#define CALLSITE_VF_RESUME_CACHES 1
#define CALLSITE_VF_NAME "visible-3.15"
#include "layouts/visible_stackref_frame.inc.h"
