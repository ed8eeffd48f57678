// native/api_table.cc — the function table behind callsite/api.h, installed for _callsite's own use
// at load time and exported to other extension modules as the capsule callsite._callsite._C_API.
#include "native/api_table.h"

#include "callsite/capture.h"
#include "native/exception_entry.h"
#include "native/executable_object.h"
#include "native/shadow_stack.h"

namespace callsite::native {
namespace {

int symbolize_c(const RawFrame *frame, FrameInfo *out) noexcept {
  return callsite::symbolize(*frame, out) ? 0 : -1;
}

constexpr NativeAPI kTable = {
    CALLSITE_NATIVE_API_VERSION, sizeof(NativeAPI), &push, &misordered_pop, &visible_innermost,
    &callsite::capture,         &callsite::capture_raw, &symbolize_c,   &add_traceback,
    &new_executable,         &executable_of,
};

// NativeFrames created inside _callsite (the demo interpreter, C++ tests) use the table too.
[[maybe_unused]] const bool installed = (detail::native_api = &kTable, true);

}  // namespace

const NativeAPI *api_table() noexcept { return &kTable; }

PyObject *new_api_capsule() noexcept {
  return PyCapsule_New(const_cast<NativeAPI *>(&kTable), "callsite._callsite._C_API", nullptr);
}

}  // namespace callsite::native
