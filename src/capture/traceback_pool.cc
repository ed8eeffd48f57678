// capture/traceback_pool.cc — size-class free lists for Traceback storage (see the header), and
// the two ends of a Traceback's storage that use them: adoption of walked frames, dealloc.
#include "capture/traceback_pool.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/frame_refs.h"

namespace callsite::detail {
namespace {

// Capacities are rounded up to multiples of kClassStep entries; stacks up to
// kClasses * kClassStep entries are recycled, deeper ones go straight to the allocator.
// At most kPerClass blocks wait per class: 4 × (8 + 16 + … + 256 entries) × 16 bytes ≈ 270 KiB
// in the worst case, and usually a few blocks of the depths a program actually captures at.
constexpr std::uint32_t kClassStep = 8;
constexpr std::uint32_t kClasses = 32;
constexpr int kPerClass = 4;
// Under AddressSanitizer every block is really freed, so a use after free of a Traceback is
// reported instead of reading a recycled block.
#ifdef __SANITIZE_ADDRESS__
constexpr bool kRecycle = false;
#else
constexpr bool kRecycle = true;
#endif

// Protected by the GIL, like every other Traceback operation (free-threaded builds are not
// supported; see CMakeLists.txt).
TracebackObject *free_blocks[kClasses][kPerClass];
int free_count[kClasses];

inline std::size_t bytes_for(std::uint32_t capacity) {
  return offsetof(TracebackObject, frames) + std::size_t(capacity) * sizeof(RawFrame);
}

}  // namespace

std::uint32_t traceback_capacity_for(Py_ssize_t n) noexcept {
  const std::size_t want = std::size_t(n);
  if (want > std::size_t(kClasses) * kClassStep) return std::uint32_t(want);
  return want ? std::uint32_t((want - 1) / kClassStep + 1) * kClassStep : kClassStep;
}

TracebackObject *take_traceback_storage(Py_ssize_t n) noexcept {
  const std::size_t want = std::size_t(n);
  TracebackObject *tb = nullptr;
  std::uint32_t capacity;
  if (want <= std::size_t(kClasses) * kClassStep) {
    capacity = traceback_capacity_for(n);
    const std::uint32_t cls = capacity / kClassStep - 1;
    if (free_count[cls]) tb = free_blocks[cls][--free_count[cls]];
  } else {
    if (want > (PY_SSIZE_T_MAX - offsetof(TracebackObject, frames)) / sizeof(RawFrame) ||
        want > UINT32_MAX) {
      PyErr_NoMemory();
      return nullptr;
    }
    capacity = std::uint32_t(want);
  }
  if (!tb) {
    tb = static_cast<TracebackObject *>(PyObject_Malloc(bytes_for(capacity)));
    if (!tb) {
      PyErr_NoMemory();
      return nullptr;
    }
    tb->capacity = capacity;
  }
  // PyObject_InitVar: type (and its reference: heap types are owned by their instances),
  // ob_size, refcount 1 — what PyObject_NewVar does after allocating.
  PyObject_InitVar(reinterpret_cast<PyVarObject *>(tb), traceback_type, n);
  tb->hash = -1;
  tb->may_have_native = false;
  tb->end = WalkEnd::complete;
  return tb;
}

void give_traceback_storage(TracebackObject *tb) noexcept {
  const std::uint32_t capacity = tb->capacity;
  if (kRecycle && capacity <= kClasses * kClassStep && capacity % kClassStep == 0) {
    const std::uint32_t cls = capacity / kClassStep - 1;
    if (free_count[cls] < kPerClass) {
      free_blocks[cls][free_count[cls]++] = tb;
      return;
    }
  }
  PyObject_Free(tb);
}

void traceback_dealloc(PyObject *self) {
  TracebackObject *tb = reinterpret_cast<TracebackObject *>(self);
  const Py_ssize_t n = Py_SIZE(tb);
  if (tb->may_have_native)
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!tb->frames[i].is_python()) release(tb->frames[i].executable());
  release_code_refs(tb->frames, std::size_t(n));
  PyTypeObject *type = Py_TYPE(self);
  give_traceback_storage(tb);
  Py_DECREF(type);  // heap type instances own a reference to their type
}

PyObject *adopt_traceback(const RawFrame *frames, Py_ssize_t n, bool may_have_native) noexcept {
  TracebackObject *tb = take_traceback_storage(n);
  if (!tb) {
    release_code_refs(frames, std::size_t(n));
    return nullptr;
  }
  if (n) std::memcpy(tb->frames, frames, size_t(n) * sizeof(RawFrame));
  if (may_have_native) retain_native_entries(tb);
  return reinterpret_cast<PyObject *>(tb);
}

}  // namespace callsite::detail

namespace callsite {

PyObject *new_traceback(const RawFrame *frames, std::size_t n) noexcept {
  detail::TracebackObject *tb = detail::take_traceback_storage(Py_ssize_t(n));
  if (!tb) return nullptr;
  if (n) std::memcpy(tb->frames, frames, n * sizeof(RawFrame));  // an empty vector's data() may be null
  for (std::size_t i = 0; i < n; ++i) {
    detail::retain(frames[i]);
    tb->may_have_native |= !frames[i].is_python();
  }
  return reinterpret_cast<PyObject *>(tb);
}

}  // namespace callsite
