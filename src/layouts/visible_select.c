/* layouts/visible_select.c — whether this build and the running interpreter have a tested
 * visible-frame implementation (visible_frame_3XX.c): only where the internal layout of the
 * same version is compiled and accepted, since both rely on the same struct layouts. */
#include <Python.h>

#include "layouts/layout.h"
#include "layouts/visible_frame.h"

#if CALLSITE_HAVE_VISIBLE
extern const callsite_visible_ops callsite_visible_ops_compiled;
#endif

static const char *backend_refusal = NULL;

void callsite_visible_frames_refuse(const char *why) { backend_refusal = why; }

const char *callsite_visible_frames_backend_refusal(void) { return backend_refusal; }

const callsite_visible_ops *callsite_visible_frames(void) {
#if CALLSITE_HAVE_VISIBLE
  static int refused = -1;
  if (refused < 0) refused = callsite_layout_internal_refusal() != NULL;
  return refused || backend_refusal ? NULL : &callsite_visible_ops_compiled;
#else
  return NULL;
#endif
}

callsite_code_set callsite_synthetic_codes = {NULL, 0, 0};

static int code_set_insert(callsite_code_set *set, const void *code) {
  size_t i = callsite_code_slot(code, set->mask);
  while (set->slots[i]) {
    if (set->slots[i] == code) return 0;
    i = (i + 1) & set->mask;
  }
  set->slots[i] = code;
  set->count++;
  return 1;
}

int callsite_register_synthetic_code(const void *code) {
  callsite_code_set *set = &callsite_synthetic_codes;
  if (!set->slots || 2 * (set->count + 1) > set->mask + 1) {
    const size_t capacity = set->slots ? 2 * (set->mask + 1) : 64;
    const void **slots = (const void **)PyMem_RawCalloc(capacity, sizeof(void *));
    if (!slots) {
      PyErr_NoMemory();
      return -1;
    }
    callsite_code_set grown = {slots, capacity - 1, 0};
    for (size_t i = 0; set->slots && i <= set->mask; ++i)
      if (set->slots[i]) code_set_insert(&grown, set->slots[i]);
    PyMem_RawFree((void *)set->slots);
    *set = grown;
  }
  code_set_insert(set, code);
  return 0;
}

/* Linear probing's deletion: later members of the same run move back into the hole. */
void callsite_unregister_synthetic_code(const void *code) {
  callsite_code_set *set = &callsite_synthetic_codes;
  if (!set->slots) return;
  size_t i = callsite_code_slot(code, set->mask);
  while (set->slots[i] != code) {
    if (!set->slots[i]) return;
    i = (i + 1) & set->mask;
  }
  set->slots[i] = NULL;
  set->count--;
  for (size_t j = (i + 1) & set->mask; set->slots[j]; j = (j + 1) & set->mask) {
    const size_t home = callsite_code_slot(set->slots[j], set->mask);
    /* Move j into the hole at i unless its home lies cyclically in (i, j]. */
    const int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      set->slots[i] = set->slots[j];
      set->slots[j] = NULL;
      i = j;
    }
  }
}
