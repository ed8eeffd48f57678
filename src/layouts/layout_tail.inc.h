/* layouts/layout_tail.inc.h — the end of every layout file: the start-up refusal and the
 * layout table select.c reads (callsite_layout_compiled).
 *
 * A layout file defines, then includes this file last:
 *   CALLSITE_LAYOUT_NAME        "internal-3.X", the name callsite reports
 *   CALLSITE_WALK_NAME          its walk function; CALLSITE_WALK_NAME##_marker its marker one
 *   CALLSITE_DEBUG_OFFSETS      (3.13+) an initializer list of callsite_offset_facts the walk
 *                               relies on, checked against _PyRuntime.debug_offsets
 *   CALLSITE_RUNTIME_REFUSAL()  (optional) a further check of the running interpreter:
 *                               a const char * reason, or NULL */
/* Each macro this file needs, named when missing (the layout file's list above). */
#ifndef CALLSITE_LAYOUT_NAME
#error "layouts/layout_tail.inc.h needs CALLSITE_LAYOUT_NAME defined before it is included"
#endif
#ifndef CALLSITE_WALK_NAME
#error "layouts/layout_tail.inc.h needs CALLSITE_WALK_NAME defined before it is included"
#endif

#ifdef CALLSITE_DEBUG_OFFSETS
static const callsite_offset_fact callsite_facts[] = {CALLSITE_DEBUG_OFFSETS};
static const callsite_offsets_expectation callsite_expected =
    CALLSITE_OFFSETS_EXPECTATION(callsite_facts);

const char *callsite_layout_internal_offsets_refusal(const void *image, size_t size) {
  return callsite_debug_offsets_refusal(image, size, &callsite_expected);
}

/* Refuse when the running interpreter's _PyRuntime.debug_offsets disagree with the headers
 * this file was compiled against. */
const char *callsite_layout_internal_version_refusal(void) {
  const char *why = callsite_layout_internal_offsets_refusal(&_PyRuntime.debug_offsets,
                                                             sizeof _PyRuntime.debug_offsets);
#ifdef CALLSITE_RUNTIME_REFUSAL
  if (!why) why = CALLSITE_RUNTIME_REFUSAL();
#endif
  return why;
}
#else
/* Before 3.13 CPython publishes no _Py_DebugOffsets: the minor version (select.c) and the
 * start-up self-check against the public API (capture/backend.cc) are the checks. */
const char *callsite_layout_internal_version_refusal(void) { return NULL; }
#endif

const callsite_layout callsite_layout_compiled = {
    CALLSITE_LAYOUT_NAME, PY_VERSION_HEX, CALLSITE_WALK_NAME,
    CALLSITE_CAT(CALLSITE_WALK_NAME, _marker)};
