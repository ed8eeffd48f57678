/* layouts/active.c — the active layout's storage (see active.h). */
#include "layouts/active.h"

const callsite_layout *callsite_active_layout = &callsite_layout_public;
