// native/visible_code.h — the synthetic code object of a visible executable: instruction 1+k
// carries the location of state k, so readers that never call callsite (faulthandler, py-spy,
// a frame's f_lineno) find the line in the code object's own line table.
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/native_frame.h"

namespace callsite::native {

/// States one code object maps; later states share the "no location" slot. Below the line
/// table limits of out-of-process readers (py-spy: ~60 KB of table, 3.15's sampler: 65 536
/// entries), with room for the long entry form.
inline constexpr std::size_t kMaxVisibleStates = 8192;

/// Builds the code of `executable` for states [0, states), each reified through the
/// executable's reifier (and cache); states whose location is unknown or in another file than
/// the first known one get "no location". A new VisibleCode (owning its code object) or
/// nullptr + error. GIL held.
VisibleCode *build_visible_code(const Executable *executable, std::size_t states);

/// Releases what build_visible_code made. GIL held.
void free_visible_code(VisibleCode *code) noexcept;

}  // namespace callsite::native
