// native/api_table.cc — the function table behind locus/api.h, installed for _locus's own use
// at load time and exported to other extension modules as the capsule locus._locus._C_API.
#include "native/api_table.h"

#include "locus/capture.h"
#include "native/exception_entry.h"
#include "native/executable_object.h"
#include "native/shadow_stack.h"

namespace locus::native {
namespace {

int symbolize_c(const RawFrame *frame, FrameInfo *out) noexcept {
  return locus::symbolize(*frame, out) ? 0 : -1;
}

constexpr NativeAPI kTable = {
    LOCUS_NATIVE_API_VERSION, sizeof(NativeAPI), &push, &misordered_pop, &visible_innermost,
    &locus::capture,         &locus::capture_raw, &symbolize_c,   &add_traceback,
    &new_executable,         &executable_of,
};

// NativeFrames created inside _locus (the demo interpreter, C++ tests) use the table too.
[[maybe_unused]] const bool installed = (detail::native_api = &kTable, true);

}  // namespace

const NativeAPI *api_table() noexcept { return &kTable; }

PyObject *new_api_capsule() noexcept {
  return PyCapsule_New(const_cast<NativeAPI *>(&kTable), "locus._locus._C_API", nullptr);
}

}  // namespace locus::native
