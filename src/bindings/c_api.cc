// bindings/c_api.cc — the function table behind callsite/api.h, installed for _callsite's own
// use at load time and exported to other extension modules as the capsule
// callsite._callsite._C_API.
#include "bindings/c_api.h"

#include "callsite/api.h"
#include "capture/boundary.h"
#include "capture/capture.h"
#include "native/exception_entry.h"
#include "native/executable.h"
#include "native/frame_locals.h"
#include "native/shadow_stack.h"
#include "native/visible_frames.h"
#include "symbolize/symbolize.h"

namespace callsite::bindings {
namespace {

using namespace callsite::native;

int symbolize_c(const RawFrame *frame, FrameInfo *out) {
  return callsite::symbolize(*frame, out) ? 0 : -1;
}

constexpr NativeAPI kTable = {
    CALLSITE_ABI_MAJOR, sizeof(NativeAPI), &push, &misordered_pop, &innermost,
    &callsite::capture,         &callsite::capture_raw, &symbolize_c,   &add_traceback,
    &new_executable,         &executable_of,         &visible_code,  &push_visible,
    &pop_visible,            &visible_set_state,     &callsite::open_boundary,
    &callsite::close_boundary, &callsite::native::set_locals,        &api_set_frame_locals,
};

// NativeFrames created inside _callsite (and in the C++ tests) use the table too.
[[maybe_unused]] const bool installed = (detail::native_api = &kTable, true);

}  // namespace

const NativeAPI *api_table() noexcept { return &kTable; }

PyObject *new_api_capsule() noexcept {
  return PyCapsule_New(const_cast<NativeAPI *>(&kTable), api::kCapsuleName, nullptr);
}

}  // namespace callsite::bindings
