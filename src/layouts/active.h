/* layouts/active.h — the layout every capture walks with: chosen at import (capture/backend.cc
 * picks it), read on every capture and every native frame push. */
#ifndef CALLSITE_LAYOUTS_ACTIVE_H
#define CALLSITE_LAYOUTS_ACTIVE_H

#include "layouts/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layout in use: &callsite_layout_public until the backend is selected. GIL-protected
 * writes; hot reads. */
extern const callsite_layout *callsite_active_layout;

#ifdef __cplusplus
}
#endif
#endif
