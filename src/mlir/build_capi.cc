// mlir/build_capi.cc — raw MLIR locations per frame and per call-site link, cached per context;
// an ir.Location only for the final location of a stack.
//
// The same locations as MLIR's tracebackToLocation (mlir/lib/Bindings/Python/IRCore.cpp,
// LLVM 20–22) builds with the same C API: 3.11+ mlirLocationNameGet(ctx, co_qualname,
// mlirLocationFileLineColRangeGet(ctx, file, line, col, end_line, end_col)), 3.10
// mlirLocationNameGet(ctx, co_name, mlirLocationFileLineColGet(ctx, file, line, 0)), chained
// innermost first by mlirLocationCallSiteGet(callee, caller).
#include "mlir/build_capi.h"

#include <exception>
#include <vector>

#include "core/compat.h"
#include "mlir/bindings.h"
#include "render/mlir_text.h"
#include "symbolize/symbolize.h"

namespace callsite::mlir {
namespace {

using capi::MlirContext;
using capi::MlirLocation;
using capi::MlirStringRef;

inline const capi::Api &api_of(const ContextCache &cc) { return *cc.bindings->capi; }
inline MlirContext context_of(const ContextCache &cc) { return {cc.mlir_context}; }

// The bytes MLIR copies into the context (an identifier, a file name): UTF-8, as the bindings
// convert a str argument. {nullptr} + error.
MlirStringRef utf8(PyObject *s) {
  Py_ssize_t n = 0;
  const char *data = PyUnicode_AsUTF8AndSize(s, &n);
  return {data, data ? std::size_t(n) : 0};
}

MlirLocation build_frame(ContextCache &cc, const RawFrame &frame) {
  FrameInfo info;
  if (!symbolize(frame, &info)) return {nullptr};
  // Borrowed from caches (the reifier's, the code object's) that Python code may clear; held
  // while used, as the Python API path does.
  PyObject *name = Py_XNewRef(compat::mlir_frame_name(info));
  PyObject *filename = Py_XNewRef(info.filename);
  MlirLocation loc{nullptr};
  if (name && filename) {
    const MlirStringRef name_ref = utf8(name), file_ref = utf8(filename);
    if (name_ref.data && file_ref.data) {
      const capi::Api &api = api_of(cc);
      const MlirPositions p = mlir_positions(info);
      // MLIR receives the positions as `unsigned`: a missing -1 arrives as 4294967295 there too.
      const MlirLocation file =
          compat::kHasColumns
              ? api.file_line_col_range(context_of(cc), file_ref, unsigned(p.line),
                                        unsigned(p.col), unsigned(p.end_line),
                                        unsigned(p.end_col))
              : api.file_line_col(context_of(cc), file_ref, unsigned(p.line), 0);
      loc = api.name(context_of(cc), name_ref, file);
    }
  } else if (!PyErr_Occurred()) {
    PyErr_SetString(PyExc_RuntimeError, "callsite.mlir: a frame without a file or a name");
  }
  Py_XDECREF(name);
  Py_XDECREF(filename);
  return loc;
}

MlirLocation frame_location_raw(ContextCache &cc, const RawFrame &frame) {
  if (const void *hit = cc.find_raw_frame(frame)) return {hit};
  const MlirLocation loc = build_frame(cc, frame);
  if (loc.ptr && !cc.store_raw_frame(frame, loc.ptr)) {
    PyErr_NoMemory();
    return {nullptr};
  }
  return loc;
}

// The ir.Location of a final raw location: one per distinct location per context.
PyObject *final_location(ContextCache &cc, MlirLocation raw, bool *repeated) {
  if (PyObject *hit = cc.find_final(raw.ptr)) {
    if (repeated) *repeated = true;
    return hit;
  }
  PyObject *loc = wrap_location(cc.bindings, raw);
  // Looked up again inside: the call ran Python code, which may have stored it.
  return loc ? cc.store_final(raw.ptr, loc) : nullptr;
}

}  // namespace

PyObject *kept_location_capi(ContextCache &cc, const RawFrame *kept, std::size_t m,
                             bool *repeated) {
  // Only raw handles are held across the calls into Python below (a native frame's reifier):
  // they stay valid while the context lives, and the caller holds the context.
  const capi::Api &api = api_of(cc);
  MlirLocation loc{nullptr};
  if (m == 0) {
    loc = api.unknown(context_of(cc));
  } else if (m == 1) {
    loc = frame_location_raw(cc, kept[0]);
  } else {
    // From the outermost kept frame in: S_{m-1} = f_{m-1}, S_i = callsite(f_i at S_{i+1}), each
    // link looked up by (f_i, S_{i+1}); an op whose stack shares its outer frames with an
    // earlier op's builds only its new inner links. The outer frames it shares with the
    // previous chain built take their S_i from that chain (no probe).
    ContextCache::ChainMemo &memo = cc.chain_memo;
    const std::uint64_t epoch = cc.chain_epoch;
    const void *locs[ContextCache::kChainMemo];
    const bool remember = m <= ContextCache::kChainMemo;
    std::size_t shared = 0;
    if (remember)
      while (shared < m && shared < memo.n &&
             kept[m - 1 - shared] == memo.frames[memo.n - 1 - shared])
        ++shared;
    std::size_t i = m - shared;  // S_i known from here on
    if (shared) {
      for (std::size_t j = i; j < m; ++j) locs[j] = memo.locs[memo.n - m + j];
      loc = {locs[i]};
    } else {
      loc = frame_location_raw(cc, kept[--i]);
      if (remember) locs[i] = loc.ptr;
    }
    while (loc.ptr && i-- > 0) {
      if (const void *hit = cc.find_raw_link(kept[i], loc.ptr)) {
        loc = {hit};
      } else {
        const MlirLocation callee = frame_location_raw(cc, kept[i]);
        if (!callee.ptr) return nullptr;
        const MlirLocation link = api.call_site(callee, loc);
        if (!cc.store_raw_link(kept[i], loc.ptr, link.ptr)) return PyErr_NoMemory();
        loc = link;
      }
      if (remember) locs[i] = loc.ptr;
    }
    // Only a chain whose frames are all still keys of the raw tables (no clear ran meanwhile).
    if (loc.ptr && remember && cc.chain_epoch == epoch) {
      ContextCache::ChainMemo &out = cc.chain_memo;
      for (std::size_t j = 0; j < m; ++j) {
        out.frames[j] = kept[j];
        out.locs[j] = locs[j];
      }
      out.n = m;
    }
  }
  return loc.ptr ? final_location(cc, loc, repeated) : nullptr;
}

PyObject *typed_location_capi(ContextCache &cc, PyObject *loc) {
  BindingsObject *b = cc.bindings;
  // Only the cache's own locations, which _CAPICreate made plain.
  if (Py_TYPE(loc) != reinterpret_cast<PyTypeObject *>(b->location_type)) return loc;
  if (PyObject *hit = cc.find_typed(loc)) {
    Py_DECREF(loc);
    return Py_NewRef(hit);
  }
  // Python code runs from here on (the _CAPIPtr property, the typed class's constructor): `loc`
  // is held, and so is its context; the tables are looked up again in store_typed.
  const MlirLocation raw = location_pointer(b, loc);
  if (!raw.ptr) {
    Py_DECREF(loc);
    return nullptr;
  }
  const capi::Api &api = api_of(cc);
  PyObject *type = nullptr;
  for (int i = 0; i < BindingsObject::kTypedLocations && !type; ++i)
    if (b->typed_location_types[i] && api.is_a_typed[i] && api.is_a_typed[i](raw))
      type = b->typed_location_types[i];
  if (!type) return loc;
  Py_INCREF(type);  // held: the call may run any code
  PyObject *typed = PyObject_CallOneArg(type, loc);
  Py_DECREF(type);
  PyObject *r = typed ? cc.store_typed(raw.ptr, loc, typed) : nullptr;
  Py_DECREF(loc);
  return r;
}

PyObject *nameloc_wrap_capi(ContextCache &cc, PyObject *current, PyObject *inner,
                            bool own_inner) {
  if (PyObject *hit = cc.find_wrap(current, inner)) return hit;
  // Both calls run Python code (the _CAPIPtr properties); `current` and `inner` are held by
  // the caller, and so are their contexts, which the handles belong to.
  const MlirLocation cur = location_pointer(cc.bindings, current);
  if (!cur.ptr) return nullptr;
  const MlirLocation in = location_pointer(cc.bindings, inner);
  if (!in.ptr) return nullptr;
  // MLIR's NAMELOC_WRAP: the names of Location.current while it is a NameLoc (outermost
  // first), around the traceback location, whatever the Python class of `current`.
  const capi::Api &api = api_of(cc);
  std::vector<MlirStringRef> names;
  try {
    for (MlirLocation l = cur; api.is_a_name(l); l = api.name_get_child(l))
      names.push_back(api.identifier_str(api.name_get_name(l)));
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    return PyErr_NoMemory();
  }
  MlirLocation loc = in;
  for (auto it = names.rbegin(); it != names.rend(); ++it) loc = api.name(context_of(cc), *it, loc);
  PyObject *wrapped = loc.ptr == in.ptr ? Py_NewRef(inner) : wrap_location(cc.bindings, loc);
  if (!wrapped) return nullptr;
  // The tables are looked up again inside: making the ir.Location called into the bindings.
  return cc.store_wrap(current, inner, wrapped, own_inner);
}

}  // namespace callsite::mlir
