// native/hooks_stub.cc — placeholder until the native-frame subsystem lands (issue 6).
#include "native/hooks.h"

namespace locus::native {

const NativeLink *innermost() noexcept { return nullptr; }
void retain(const Executable *) noexcept {}
void release(const Executable *) noexcept {}
bool symbolize(const RawFrame &, FrameInfo *) noexcept {
  PyErr_SetString(PyExc_NotImplementedError, "native frames are not implemented yet");
  return false;
}

}  // namespace locus::native
