// torch/texts_type.h — callsite._callsite._TorchTexts, callsite.torch's one call per node.
#pragma once
#include <Python.h>

namespace callsite::torch {

/// Creates the type (once); nullptr with a Python error on failure.
PyTypeObject *init_texts_type() noexcept;

}  // namespace callsite::torch
