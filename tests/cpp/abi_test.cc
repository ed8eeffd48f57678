// tests/cpp/abi_test.cc — the binary contract of callsite/abi.h frozen: every offset and size an
// extension module built against an older header relies on, and what api::import() accepts.
// A new table entry appends a row to kTableEntries (and raises CALLSITE_ABI_MINOR); a failure
// of any other row means the change needs a new CALLSITE_ABI_MAJOR.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "callsite/abi.h"
#include "callsite/api.h"
#include "callsite/frame.h"
#include "callsite/native_frame.h"

namespace {

using callsite::NativeAPI;

struct Field {
  const char *name;
  std::size_t offset, expected;
};

#define CALLSITE_FIELD(type, field, at) Field{#type "::" #field, offsetof(type, field), at}

// The LP64 layout (x86-64, AArch64: the platforms wheels are built for).
static_assert(sizeof(void *) == 8, "the frozen offsets below are LP64's");

const Field kTableEntries[] = {
    CALLSITE_FIELD(NativeAPI, version, 0),
    CALLSITE_FIELD(NativeAPI, size, 4),
    CALLSITE_FIELD(NativeAPI, push, 8),
    CALLSITE_FIELD(NativeAPI, misordered_pop, 16),
    CALLSITE_FIELD(NativeAPI, innermost, 24),
    CALLSITE_FIELD(NativeAPI, capture, 32),
    CALLSITE_FIELD(NativeAPI, capture_raw, 40),
    CALLSITE_FIELD(NativeAPI, symbolize, 48),
    CALLSITE_FIELD(NativeAPI, add_traceback, 56),
    CALLSITE_FIELD(NativeAPI, new_executable, 64),
    CALLSITE_FIELD(NativeAPI, executable_of, 72),
    CALLSITE_FIELD(NativeAPI, visible_code, 80),
    CALLSITE_FIELD(NativeAPI, push_visible, 88),
    CALLSITE_FIELD(NativeAPI, pop_visible, 96),
    CALLSITE_FIELD(NativeAPI, visible_set_state, 104),
    CALLSITE_FIELD(NativeAPI, open_boundary, 112),
    CALLSITE_FIELD(NativeAPI, close_boundary, 120),
    CALLSITE_FIELD(NativeAPI, set_locals, 128),
    CALLSITE_FIELD(NativeAPI, set_frame_locals, 136),
};

// The structs both sides read and write inline (a consumer's NativeFrame embeds NativeLink
// and VisibleSlot; RawFrame, FrameInfo and NativeLocation cross the table by pointer).
const Field kSharedLayouts[] = {
    CALLSITE_FIELD(callsite::RawFrame, tagged, 0),
    CALLSITE_FIELD(callsite::RawFrame, payload, 8),
    CALLSITE_FIELD(callsite::NativeLink, previous, 0),
    CALLSITE_FIELD(callsite::NativeLink, marker, 8),
    CALLSITE_FIELD(callsite::NativeLink, executable, 16),
    CALLSITE_FIELD(callsite::NativeLink, state, 24),
    CALLSITE_FIELD(callsite::Executable, name, 0),
    CALLSITE_FIELD(callsite::Executable, kind, 8),
    CALLSITE_FIELD(callsite::Executable, reify, 16),
    CALLSITE_FIELD(callsite::Executable, user_data, 24),
    CALLSITE_FIELD(callsite::Executable, owner, 32),
    CALLSITE_FIELD(callsite::NativeLocation, filename, 0),
    CALLSITE_FIELD(callsite::NativeLocation, name, 8),
    CALLSITE_FIELD(callsite::NativeLocation, qualname, 16),
    CALLSITE_FIELD(callsite::NativeLocation, lineno, 24),
    CALLSITE_FIELD(callsite::NativeLocation, end_lineno, 28),
    CALLSITE_FIELD(callsite::NativeLocation, colno, 32),
    CALLSITE_FIELD(callsite::NativeLocation, end_colno, 36),
    CALLSITE_FIELD(callsite::NativeLocation, code, 40),
    CALLSITE_FIELD(callsite::FrameInfo, kind, 0),
    CALLSITE_FIELD(callsite::FrameInfo, filename, 8),
    CALLSITE_FIELD(callsite::FrameInfo, name, 16),
    CALLSITE_FIELD(callsite::FrameInfo, qualname, 24),
    CALLSITE_FIELD(callsite::FrameInfo, code, 32),
    CALLSITE_FIELD(callsite::FrameInfo, lineno, 40),
    CALLSITE_FIELD(callsite::FrameInfo, end_lineno, 44),
    CALLSITE_FIELD(callsite::FrameInfo, colno, 48),
    CALLSITE_FIELD(callsite::FrameInfo, end_colno, 52),
    CALLSITE_FIELD(callsite::VisibleShard, code, 0),
    CALLSITE_FIELD(callsite::VisibleShard, first_state, 8),
    CALLSITE_FIELD(callsite::VisibleShard, first, 16),
    CALLSITE_FIELD(callsite::VisibleShard, states, 24),
    CALLSITE_FIELD(callsite::VisibleCode, states, 0),
    CALLSITE_FIELD(callsite::VisibleCode, states_per_shard, 8),
    CALLSITE_FIELD(callsite::VisibleCode, shard_count, 16),
    CALLSITE_FIELD(callsite::VisibleCode, shards, 24),
    CALLSITE_FIELD(callsite::VisibleSlot, frame, 0),
    CALLSITE_FIELD(callsite::VisibleSlot, ip, 8),
    CALLSITE_FIELD(callsite::VisibleSlot, shard, 16),
    CALLSITE_FIELD(callsite::VisibleSlot, thread, 24),
    CALLSITE_FIELD(callsite::ThreadStack, head, 0),
};

TEST(Abi, TableEntriesKeepTheirOffsets) {
  for (const Field &f : kTableEntries) EXPECT_EQ(f.offset, f.expected) << f.name;
  // The table ends after its last entry: a new one is appended as the next row.
  const Field &last = kTableEntries[std::size(kTableEntries) - 1];
  EXPECT_EQ(sizeof(NativeAPI), last.expected + sizeof(void *));
}

TEST(Abi, SharedLayoutsKeepTheirOffsets) {
  for (const Field &f : kSharedLayouts) EXPECT_EQ(f.offset, f.expected) << f.name;
}

TEST(Abi, SharedSizesAreFixed) {
  EXPECT_EQ(sizeof(callsite::RawFrame), 16u);
  EXPECT_EQ(sizeof(callsite::NativeLink), 32u);
  EXPECT_EQ(sizeof(callsite::Executable), 40u);
  EXPECT_EQ(sizeof(callsite::NativeLocation), 48u);
  EXPECT_EQ(sizeof(callsite::FrameInfo), 56u);
  EXPECT_EQ(sizeof(callsite::VisibleShard), 32u);
  EXPECT_EQ(sizeof(callsite::VisibleCode), 32u);
  EXPECT_EQ(sizeof(callsite::VisibleSlot), 32u);
  // A consumer's NativeFrame lives on its own stack: link, stack, slot, visible code.
  EXPECT_EQ(sizeof(callsite::NativeFrame), 80u);
}

TEST(Abi, ProviderTableCarriesTheMajorAndItsSize) {
  ASSERT_NE(callsite::detail::native_api, nullptr);
  EXPECT_EQ(callsite::detail::native_api->version, unsigned(CALLSITE_ABI_MAJOR));
  EXPECT_EQ(callsite::detail::native_api->size, sizeof(NativeAPI));
}

// A provider one minor ahead: the same table with one more entry after it.
struct NewerTable {
  NativeAPI api;
  void (*appended)();
};

std::string error_text() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  std::string text = "(no error)";
  if (value) {
    if (PyObject *s = PyObject_Str(value)) {
      text = PyUnicode_AsUTF8(s);
      Py_DECREF(s);
    }
  }
  if (type) text = std::string(reinterpret_cast<PyTypeObject *>(type)->tp_name) + ": " + text;
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return text;
}

TEST(Abi, AcceptsAnEqualMajorWithALargerTable) {
  NewerTable newer{*callsite::detail::native_api, nullptr};
  newer.api.size = sizeof(NewerTable);
  EXPECT_TRUE(callsite::api::accepts(&newer.api));
  EXPECT_FALSE(PyErr_Occurred());
}

TEST(Abi, AcceptsASmallerTableWhenTheConsumerNeedsLess) {
  NativeAPI older = *callsite::detail::native_api;
  older.size = offsetof(NativeAPI, visible_code);  // a provider from before visible frames
  EXPECT_TRUE(callsite::api::accepts(&older, offsetof(NativeAPI, executable_of) + sizeof(void *)));
  EXPECT_FALSE(PyErr_Occurred());
  EXPECT_FALSE(callsite::api::accepts(&older));
  EXPECT_EQ(error_text(),
            "RuntimeError: callsite C API mismatch: this module needs ABI major " +
                std::to_string(CALLSITE_ABI_MAJOR) + " with a table of at least " +
                std::to_string(sizeof(NativeAPI)) + " bytes, the installed callsite provides "
                "major " + std::to_string(CALLSITE_ABI_MAJOR) + " with 80 bytes");
}

TEST(Abi, RefusesAnotherMajor) {
  for (unsigned major : {unsigned(CALLSITE_ABI_MAJOR) - 1, unsigned(CALLSITE_ABI_MAJOR) + 1}) {
    NativeAPI other = *callsite::detail::native_api;
    other.version = major;
    EXPECT_FALSE(callsite::api::accepts(&other));
    const std::string text = error_text();
    EXPECT_NE(text.find("provides major " + std::to_string(major) + " "), std::string::npos)
        << text;
  }
}

TEST(Abi, HasEntryFollowsTheInstalledSize) {
  const NativeAPI *saved = callsite::detail::native_api;
  NativeAPI older = *saved;
  older.size = offsetof(NativeAPI, visible_code);
  callsite::detail::native_api = &older;
  EXPECT_TRUE(callsite::api::has_entry(offsetof(NativeAPI, executable_of)));
  EXPECT_FALSE(callsite::api::has_entry(offsetof(NativeAPI, visible_code)));
  callsite::detail::native_api = nullptr;
  EXPECT_FALSE(callsite::api::has_entry(offsetof(NativeAPI, push)));
  callsite::detail::native_api = saved;
  EXPECT_TRUE(callsite::api::has_entry(offsetof(NativeAPI, visible_set_state)));
}

// import() end to end: the capsule found under callsite._callsite as another extension finds
// it, served by stand-in modules in sys.modules.
class AbiImport : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_api_ = callsite::detail::native_api;
    callsite::detail::native_api = nullptr;
    PyObject *modules = PyImport_GetModuleDict();
    saved_package_ = PyDict_GetItemString(modules, "callsite");
    Py_XINCREF(saved_package_);
    saved_module_ = PyDict_GetItemString(modules, "callsite._callsite");
    Py_XINCREF(saved_module_);
  }
  void TearDown() override {
    PyObject *modules = PyImport_GetModuleDict();
    restore(modules, "callsite", saved_package_);
    restore(modules, "callsite._callsite", saved_module_);
    callsite::detail::native_api = saved_api_;
    PyErr_Clear();
  }
  static void restore(PyObject *modules, const char *name, PyObject *saved) {
    if (saved) {
      PyDict_SetItemString(modules, name, saved);
      Py_DECREF(saved);
    } else if (PyDict_GetItemString(modules, name)) {
      PyDict_DelItemString(modules, name);
    }
  }
  /// Publishes `table` as callsite._callsite._C_API.
  static void serve(const NativeAPI *table) {
    PyObject *package = PyModule_New("callsite");
    PyObject *module = PyModule_New("callsite._callsite");
    PyObject *capsule = PyCapsule_New(const_cast<NativeAPI *>(table),
                                      callsite::api::kCapsuleName, nullptr);
    ASSERT_TRUE(package && module && capsule);
    ASSERT_EQ(PyModule_AddObject(module, "_C_API", capsule), 0);
    ASSERT_EQ(PyModule_AddObject(package, "_callsite", module), 0);
    PyObject *modules = PyImport_GetModuleDict();
    ASSERT_EQ(PyDict_SetItemString(modules, "callsite", package), 0);
    ASSERT_EQ(PyDict_SetItemString(modules, "callsite._callsite", module), 0);
    Py_DECREF(package);
  }

  const NativeAPI *saved_api_ = nullptr;
  PyObject *saved_package_ = nullptr;
  PyObject *saved_module_ = nullptr;
};

TEST_F(AbiImport, InstallsANewerProvidersTable) {
  static NewerTable newer{*saved_api_, nullptr};
  newer.api.size = sizeof(NewerTable);
  serve(&newer.api);
  ASSERT_TRUE(callsite::api::import()) << error_text();
  EXPECT_EQ(callsite::detail::native_api, &newer.api);
  EXPECT_TRUE(callsite::api::import());  // a repeat call keeps it
}

TEST_F(AbiImport, RefusesAnotherMajorAndInstallsNothing) {
  static NativeAPI other = *saved_api_;
  other.version = CALLSITE_ABI_MAJOR + 1;
  serve(&other);
  EXPECT_FALSE(callsite::api::import());
  EXPECT_EQ(callsite::detail::native_api, nullptr);
  EXPECT_NE(error_text().find("RuntimeError: callsite C API mismatch"), std::string::npos);
}

// The helpers the installed headers compile into every extension that includes them.

TEST(AbiHelpers, ErrorSetAsidePutsThePendingErrorBackOverANewOne) {
  PyErr_SetString(PyExc_ValueError, "pending");
  {
    callsite::detail::ErrorSetAside pending;
    EXPECT_EQ(PyErr_Occurred(), nullptr);
    PyErr_SetString(PyExc_TypeError, "raised meanwhile");
  }
  EXPECT_TRUE(PyErr_ExceptionMatches(PyExc_ValueError));
  PyErr_Clear();
  {
    callsite::detail::ErrorSetAside nothing;
    PyErr_SetString(PyExc_TypeError, "raised meanwhile");
  }
  EXPECT_TRUE(PyErr_ExceptionMatches(PyExc_TypeError));  // nothing was pending: kept
  PyErr_Clear();
}

TEST(AbiHelpers, CallingThreadIsTheAttachedThreadState) {
  EXPECT_EQ(callsite::detail::calling_thread(), PyThreadState_Get());
}

TEST(AbiHelpers, AddTracebackGivesTheProvidersResult) {
  // 0, or -1 when nothing is being raised: a consumer can tell (NativeAPI::add_traceback).
  static_assert(std::is_same_v<decltype(callsite::api::add_traceback(
                                   std::declval<const callsite::Executable &>(), 0)),
                               int>);
}

}  // namespace
