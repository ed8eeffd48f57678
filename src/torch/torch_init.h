// torch/torch_init.h — the torch wing's type, made at module import beside the MLIR wing's.
#pragma once
#include <Python.h>

namespace callsite::torch {

/// Creates callsite._callsite._TorchTexts (torch/texts_type.h). Once, at module init
/// (python/init.cc). GIL held; false with a Python error.
bool init() noexcept;

/// The type init() made (borrowed), for the module to publish; nullptr before init().
PyTypeObject *texts_type() noexcept;

}  // namespace callsite::torch
