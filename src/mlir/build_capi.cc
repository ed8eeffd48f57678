// mlir/build_capi.cc — raw MLIR locations per frame and per call-site link, cached per Context;
// an ir.Location only for the final location of a stack.
//
// The same locations as MLIR's tracebackToLocation (mlir/lib/Bindings/Python/IRCore.cpp,
// LLVM 20–22) builds with the same C API: 3.11+ mlirLocationNameGet(ctx, co_qualname,
// mlirLocationFileLineColRangeGet(ctx, file, line, col, end_line, end_col)), 3.10
// mlirLocationNameGet(ctx, co_name, mlirLocationFileLineColGet(ctx, file, line, 0)), chained
// innermost first by mlirLocationCallSiteGet(callee, caller).
#include "mlir/build_capi.h"

#include <exception>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "core/compat.h"
#include "core/flat_map.h"
#include "core/frame_refs.h"
#include "core/stack_table.h"
#include "mlir/bindings.h"
#include "mlir/capi.h"
#include "mlir/wrap_table.h"
#include "render/mlir_text.h"
#include "symbolize/symbolize.h"

namespace callsite::mlir {
namespace {

using capi::MlirContext;
using capi::MlirLocation;
using capi::MlirStringRef;
using detail::release;
using detail::retain;

// The bytes MLIR copies into the context (an identifier, a file name): UTF-8, as the bindings
// convert a str argument. {nullptr} + error.
MlirStringRef utf8(PyObject *s) {
  Py_ssize_t n = 0;
  const char *data = PyUnicode_AsUTF8AndSize(s, &n);
  return {data, data ? std::size_t(n) : 0};
}

struct PointerHash {
  std::size_t operator()(const void *p) const noexcept {
    return std::size_t(reinterpret_cast<std::uintptr_t>(p) >> 3);
  }
};

/// A call-site link: callsite(`callee`'s location at `caller`, the raw location of its callers).
struct LinkKey {
  RawFrame callee;
  const void *caller;
  friend bool operator==(const LinkKey &a, const LinkKey &b) noexcept {
    return a.callee == b.callee && a.caller == b.caller;
  }
};
struct LinkKeyHash {
  std::size_t operator()(const LinkKey &k) const noexcept {
    return detail::RawFrameHash()(k.callee) ^
           std::size_t(reinterpret_cast<std::uintptr_t>(k.caller) * 0xC2B2AE3D27D4EB4Full);
  }
};

class CapiBuilder final : public LocationBuilder {
 public:
  CapiBuilder(BindingsObject *b, PyObject *ctx, void *mlir_context) noexcept
      : LocationBuilder(b, ctx, false), api_(*b->capi), mlir_context_{mlir_context},
        chain_memo_(new (std::nothrow) ChainMemo) {}
  ~CapiBuilder() override { clear_all(); }

  PyObject *kept_location(const RawFrame *kept, std::size_t m, bool *made_before) override;
  PyObject *explicit_location(PyObject *loc) override;
  PyObject *nameloc_wrap(PyObject *current, PyObject *inner, bool own_inner) override;
  std::size_t frame_count() const noexcept override { return raw_frames_.size(); }
  BuilderCounts counts() const noexcept override {
    return {raw_frames_.size(), raw_links_.size(), wraps_.size(), finals_.size(), typed_.size(),
            held_ + wraps_.held()};
  }
  void clear_sequences() noexcept override;
  void clear_all() noexcept override;

 private:
  MlirLocation build_frame(const RawFrame &frame);
  MlirLocation frame_location(const RawFrame &frame);
  PyObject *final_location(MlirLocation raw, bool *made_before);

  const capi::Api &api_;
  const MlirContext mlir_context_;
  std::size_t held_ = 0;  ///< ir.Location objects owned by finals_ and typed_
  /// (code, lasti) -> NameLoc handle; keys retained.
  detail::FlatMap<RawFrame, const void *, detail::RawFrameHash, 128> raw_frames_;
  /// A chain is a path in a trie of links keyed by (frame, the raw location of its callers), so
  /// a lookup is one probe per frame and storing copies no frame sequence (MLIR's locations are
  /// uniqued: equal chains are one pointer). Holds no references: every callee frame is a key
  /// of raw_frames_, which is cleared only after it.
  detail::FlatMap<LinkKey, const void *, LinkKeyHash, 512> raw_links_;
  /// The previous chain built (kept frames innermost first, and each S_i, the raw location of
  /// kept[i..]): the next op of a kernel shares its outer frames, whose links it then takes
  /// from here instead of probing the trie. Its frames are keys of the raw tables (which hold
  /// their code), so it is emptied whenever those are (`chain_epoch_` counts that). Allocated
  /// on its own (nullptr: out of memory, no memo) so that the builder, made once per Context,
  /// stays below glibc malloc's large requests (1024 bytes and up), which first consolidate
  /// the fast bins (malloc.c, _int_malloc) that a dead Context's teardown has just filled.
  static constexpr std::size_t kChainMemo = 32;
  struct ChainMemo {
    std::size_t n = 0;
    RawFrame frames[kChainMemo];
    const void *locs[kChainMemo];
  };
  const std::unique_ptr<ChainMemo> chain_memo_;
  std::uint64_t chain_epoch_ = 0;
  /// raw final location -> its ir.Location (owned).
  detail::FlatMap<const void *, PyObject *, PointerHash, 256> finals_;
  /// A final ir.Location (borrowed from finals_) -> its typed location (owned), what an explicit
  /// location() returns. A node-based map: empty in every Context whose locations no explicit
  /// location() asked for. Keyed by final ones: emptied with them, so a key is alive while here.
  std::unordered_map<PyObject *, PyObject *> typed_;
  WrapTable wraps_;
};

MlirLocation CapiBuilder::build_frame(const RawFrame &frame) {
  FrameInfo info;
  if (!symbolize(frame, &info)) return {nullptr};
  // Borrowed from caches (the reifier's, the code object's) that Python code may clear; held
  // while used, as the Python API builder does.
  PyObject *name = Py_XNewRef(compat::mlir_frame_name(info));
  PyObject *filename = Py_XNewRef(info.filename);
  MlirLocation loc{nullptr};
  if (name && filename) {
    const MlirStringRef name_ref = utf8(name), file_ref = utf8(filename);
    if (name_ref.data && file_ref.data) {
      const MlirPositions p = mlir_positions(info);
      // MLIR receives the positions as `unsigned`: a missing -1 arrives as 4294967295 there too.
      const MlirLocation file =
          compat::kHasColumns
              ? api_.file_line_col_range(mlir_context_, file_ref, unsigned(p.line),
                                         unsigned(p.col), unsigned(p.end_line),
                                         unsigned(p.end_col))
              : api_.file_line_col(mlir_context_, file_ref, unsigned(p.line), 0);
      loc = api_.name(mlir_context_, name_ref, file);
    }
  } else if (!PyErr_Occurred()) {
    PyErr_SetString(PyExc_RuntimeError, "callsite.mlir: a frame without a file or a name");
  }
  Py_XDECREF(name);
  Py_XDECREF(filename);
  return loc;
}

MlirLocation CapiBuilder::frame_location(const RawFrame &frame) {
  if (const void *const *hit = raw_frames_.find(frame)) return {*hit};
  const MlirLocation loc = build_frame(frame);
  if (!loc.ptr) return loc;
  const auto [stored, inserted] = raw_frames_.insert(frame, loc.ptr);
  if (!stored) {
    PyErr_NoMemory();
    return {nullptr};
  }
  if (inserted) retain(frame);  // the key's reference, released with the entry
  return loc;  // else a re-entrant call's: the same location (uniqued)
}

// The ir.Location of a final raw location: one per distinct location per Context.
PyObject *CapiBuilder::final_location(MlirLocation raw, bool *made_before) {
  if (PyObject *const *hit = finals_.find(raw.ptr)) {
    if (made_before) *made_before = true;
    return *hit;
  }
  PyObject *loc = wrap_location(bindings, raw);
  if (!loc) return nullptr;
  // Looked up again: the call ran Python code, which may have stored it.
  const auto [stored, inserted] = finals_.insert(raw.ptr, loc);
  if (!stored) {  // out of memory
    Py_DECREF(loc);
    return PyErr_NoMemory();
  }
  if (!inserted) {  // made meanwhile by a re-entrant call: keep the first
    Py_DECREF(loc);
    return *stored;
  }
  ++held_;
  return loc;
}

PyObject *CapiBuilder::kept_location(const RawFrame *kept, std::size_t m, bool *made_before) {
  // Only raw handles are held across the calls into Python below (a native frame's reifier):
  // they stay valid while the context lives, and the caller holds the context.
  MlirLocation loc{nullptr};
  if (m == 0) {
    loc = api_.unknown(mlir_context_);
  } else if (m == 1) {
    loc = frame_location(kept[0]);
  } else {
    // From the outermost kept frame in: S_{m-1} = f_{m-1}, S_i = callsite(f_i at S_{i+1}), each
    // link looked up by (f_i, S_{i+1}); an op whose stack shares its outer frames with an
    // earlier op's builds only its new inner links. The outer frames it shares with the
    // previous chain built take their S_i from that chain (no probe).
    ChainMemo *const memo = chain_memo_.get();
    const std::uint64_t epoch = chain_epoch_;
    const void *locs[kChainMemo];
    const bool remember = memo && m <= kChainMemo;
    std::size_t shared = 0;
    if (remember)
      while (shared < m && shared < memo->n &&
             kept[m - 1 - shared] == memo->frames[memo->n - 1 - shared])
        ++shared;
    std::size_t i = m - shared;  // S_i known from here on
    if (shared) {
      for (std::size_t j = i; j < m; ++j) locs[j] = memo->locs[memo->n - m + j];
      loc = {locs[i]};
    } else {
      loc = frame_location(kept[--i]);
      if (remember) locs[i] = loc.ptr;
    }
    while (loc.ptr && i-- > 0) {
      if (const void *const *hit = raw_links_.find(LinkKey{kept[i], loc.ptr})) {
        loc = {*hit};
      } else {
        const MlirLocation callee = frame_location(kept[i]);
        if (!callee.ptr) return nullptr;
        const MlirLocation link = api_.call_site(callee, loc);
        // No reference: the callee was looked up in, or stored into, raw_frames_ just before
        // (no Python code ran since), and raw_frames_ is cleared only after the links.
        if (!raw_links_.insert(LinkKey{kept[i], loc.ptr}, link.ptr).first)
          return PyErr_NoMemory();
        loc = link;
      }
      if (remember) locs[i] = loc.ptr;
    }
    // Only a chain whose frames are all still keys of the raw tables (no clear ran meanwhile).
    if (loc.ptr && remember && chain_epoch_ == epoch) {
      for (std::size_t j = 0; j < m; ++j) {
        memo->frames[j] = kept[j];
        memo->locs[j] = locs[j];
      }
      memo->n = m;
    }
  }
  return loc.ptr ? final_location(loc, made_before) : nullptr;
}

PyObject *CapiBuilder::explicit_location(PyObject *loc) {
  BindingsObject *b = bindings;
  // Only the cache's own locations, which _CAPICreate made plain.
  if (Py_TYPE(loc) != reinterpret_cast<PyTypeObject *>(b->location_type)) return loc;
  if (auto it = typed_.find(loc); it != typed_.end()) {
    Py_DECREF(loc);
    return Py_NewRef(it->second);
  }
  // Python code runs from here on (the _CAPIPtr property, the typed class's constructor): `loc`
  // is held, and so is its context; the tables are looked up again below.
  const MlirLocation raw = location_pointer(b, loc);
  if (!raw.ptr) {
    Py_DECREF(loc);
    return nullptr;
  }
  PyObject *type = nullptr;
  for (int i = 0; i < BindingsObject::kTypedLocations && !type; ++i)
    if (b->typed_location_types[i] && api_.is_a_typed[i] && api_.is_a_typed[i](raw))
      type = b->typed_location_types[i];
  if (!type) return loc;
  Py_INCREF(type);  // held: the call may run any code
  PyObject *typed = PyObject_CallOneArg(type, loc);
  Py_DECREF(type);
  if (!typed) {
    Py_DECREF(loc);
    return nullptr;
  }
  // Stored only while `loc` is still the final location of `raw` (the final table may have
  // been cleared meanwhile).
  PyObject *const *plain = finals_.find(raw.ptr);
  PyObject *r = typed;
  if (plain && *plain == loc) {
    try {
      auto [it, inserted] = typed_.emplace(loc, typed);
      if (!inserted) {  // made meanwhile by a re-entrant call: keep the first
        Py_DECREF(typed);
        r = Py_NewRef(it->second);
      } else {
        ++held_;
        r = Py_NewRef(typed);
      }
    } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
      Py_DECREF(typed);
      r = PyErr_NoMemory();
    }
  }
  Py_DECREF(loc);
  return r;
}

PyObject *CapiBuilder::nameloc_wrap(PyObject *current, PyObject *inner, bool own_inner) {
  if (PyObject *hit = wraps_.find(current, inner)) return hit;
  // Both calls run Python code (the _CAPIPtr properties); `current` and `inner` are held by
  // the caller, and so are their contexts, which the handles belong to.
  const MlirLocation cur = location_pointer(bindings, current);
  if (!cur.ptr) return nullptr;
  const MlirLocation in = location_pointer(bindings, inner);
  if (!in.ptr) return nullptr;
  // MLIR's NAMELOC_WRAP: the names of Location.current while it is a NameLoc (outermost
  // first), around the traceback location, whatever the Python class of `current`.
  std::vector<MlirStringRef> names;
  try {
    for (MlirLocation l = cur; api_.is_a_name(l); l = api_.name_get_child(l))
      names.push_back(api_.identifier_str(api_.name_get_name(l)));
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    return PyErr_NoMemory();
  }
  MlirLocation loc = in;
  for (auto it = names.rbegin(); it != names.rend(); ++it) loc = api_.name(mlir_context_, *it, loc);
  PyObject *wrapped = loc.ptr == in.ptr ? Py_NewRef(inner) : wrap_location(bindings, loc);
  if (!wrapped) return nullptr;
  // The table is looked up again inside: making the ir.Location called into the bindings.
  return wraps_.store(current, inner, wrapped, own_inner);
}

void CapiBuilder::clear_sequences() noexcept {
  wraps_.clear();
  if (chain_memo_) chain_memo_->n = 0;
  ++chain_epoch_;
  // The tables are emptied before anything is released (a release may run Python code). The
  // links hold no references of their own: each link's callee frame is a key of raw_frames_,
  // which is cleared only after them. The typed locations are keyed by final ones: emptied
  // with them.
  std::vector<PyObject *> drop;
  for (auto &kv : typed_) drop.push_back(kv.second);
  finals_.for_each([&](const void *, PyObject *loc) { drop.push_back(loc); });
  typed_.clear();
  raw_links_.clear();
  finals_.clear();
  held_ -= drop.size();
  for (PyObject *o : drop) Py_DECREF(o);
}

void CapiBuilder::clear_all() noexcept {
  clear_sequences();  // the links' callees are keys of the frame table
  std::vector<RawFrame> keys;
  raw_frames_.for_each([&](const RawFrame &k, const void *) { keys.push_back(k); });
  raw_frames_.clear();
  for (const RawFrame &k : keys) release(k);
}

}  // namespace

std::unique_ptr<LocationBuilder> make_capi_builder(BindingsObject *b, PyObject *context,
                                                   void *mlir_context) noexcept {
  std::unique_ptr<LocationBuilder> builder(new (std::nothrow) CapiBuilder(b, context, mlir_context));
  if (!builder) PyErr_NoMemory();
  return builder;
}

}  // namespace callsite::mlir
