// torch/torch_init.cc — the torch wing's init (see torch_init.h).
#include "torch/torch_init.h"

#include "torch/texts_type.h"

namespace callsite::torch {

bool init() noexcept { return init_texts_type() != nullptr; }

PyTypeObject *texts_type() noexcept { return init_texts_type(); }

}  // namespace callsite::torch
