/* layouts/debug_offsets.c — see debug_offsets.h. */
#include "layouts/debug_offsets.h"

#include <stdio.h>
#include <string.h>

static uint64_t read_u64(const unsigned char *image, size_t at) {
  uint64_t v;
  memcpy(&v, image + at, sizeof v); /* the image may be an unaligned copy (a bytes object) */
  return v;
}

const char *callsite_debug_offsets_refusal(const void *image_, size_t size,
                                           const callsite_offsets_expectation *want) {
  static char why[256];
  const unsigned char *image = (const unsigned char *)image_;
  /* The cookie and version come first in every _Py_DebugOffsets (3.13-3.15), so they can be
   * read even from another version's image, whose later fields sit elsewhere. */
  if (size < 8 || memcmp(image, want->cookie, 8) != 0)
    return "_PyRuntime.debug_offsets has no valid cookie";
  if (size < want->version_at + 8) return "_PyRuntime.debug_offsets is truncated";
  const uint64_t version = read_u64(image, want->version_at);
  if ((version >> 16) != (want->compiled_hex >> 16)) {
    snprintf(why, sizeof why,
             "_PyRuntime.debug_offsets is from CPython %u.%u, the layout was compiled for %u.%u",
             (unsigned)(version >> 24) & 0xFF, (unsigned)(version >> 16) & 0xFF,
             (unsigned)(want->compiled_hex >> 24) & 0xFF,
             (unsigned)(want->compiled_hex >> 16) & 0xFF);
    return why;
  }
  if (size < want->image_size) return "_PyRuntime.debug_offsets is truncated";
  if (read_u64(image, want->free_threaded_at))
    return "the interpreter is a free-threaded build (no internal layout for it)";
  for (size_t i = 0; i < want->n_facts; ++i) {
    const callsite_offset_fact *fact = &want->facts[i];
    const uint64_t got = read_u64(image, fact->at);
    if (got != fact->expected) {
      snprintf(why, sizeof why,
               "_Py_DebugOffsets.%s is %llu in this interpreter, the layout was compiled with %llu",
               fact->name, (unsigned long long)got, (unsigned long long)fact->expected);
      return why;
    }
  }
  return NULL;
}
