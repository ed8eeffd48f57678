"""What the API reference adds to each public name's docstring: the errors it raises and an
example (callsite_api.py renders them).

``raises``: ``(exception name, when, a call that raises it)``; tests/docs/test_docs_api.py runs each
call (with ``callsite``, ``mlir`` (callsite.mlir), ``native``, ``tracking`` and ``exe``, an
Executable, in scope) and checks it raises that exception. ``example``: a complete program,
run by tests/docs/test_docs_snippets.py like every snippet of the site.
"""
from __future__ import annotations

#: Submodules without a leading underscore that are not API, and why.
NOT_MODULES: dict[str, str] = {
    "callsite_calc": "the demo's calc interpreter (examples/interp), built for the native-frames demo",
}

#: Notes written ahead of their name reaching this package (tested once it is there).
PENDING: frozenset[str] = frozenset({"callsite.boundary"})

#: Text for public data (``__all__`` entries that are neither types nor callables).
DATA = {
    "callsite.__version__": "The installed version (``python -m callsite --version``).",
    "callsite.layout_name": "The CPython frame layout compiled into this build (``'internal-3.12'`` "
                            "on 3.12, ...; ``'none'`` for a build with the public C API walk only).",
    "callsite.mlir.KNOWN_IR_MODULES": "Dotted names of the ``ir`` modules of the bindings callsite "
                                      "knows by name (others are recognised by structure).",
    "callsite.mlir.MAX_DEPTH": "The largest frame limit MLIR accepts; larger limits are clamped to it.",
}

_BAD_FILTER = ("TypeError", "``filter`` is not a :class:`callsite.Filter` or None", None)

NOTES: dict[str, dict] = {
    # --- callsite --------------------------------------------------------------------------
    "callsite.capture": {
        "raises": [
            ("TypeError", "``skip`` or ``limit`` is not an int (or None)", 'callsite.capture(skip="1")'),
            ("ValueError", "``skip`` or ``limit`` is negative", "callsite.capture(limit=-1)"),
            ("TypeError", "``filter`` is not a :class:`callsite.Filter` or None", "callsite.capture(filter=3)"),
            ("ValueError", "``source`` is not ``'walk'`` or ``'window'``", 'callsite.capture(source="stack")'),
            ("RuntimeError", "``source='window'`` while call tracking is off", 'callsite.capture(source="window")'),
        ],
        "example": """
            import callsite

            def where_am_i():
                return callsite.capture(skip=1)     # drop where_am_i's own frame

            tb = where_am_i()
            print(tb[0].filename, tb[0].lineno)     # this file, the line calling where_am_i()
            print(len(callsite.capture(limit=1)))   # 1
        """,
    },
    "callsite.Traceback": {
        "raises": [
            ("TypeError", "instantiated directly (make one with :func:`callsite.capture`, "
             ":meth:`from_frame` or :meth:`from_traceback`)", "callsite.Traceback()"),
            ("IndexError", "an index past the end", "callsite.capture()[10**6]"),
            ("TypeError", "``from_frame`` given something else than a frame", "callsite.Traceback.from_frame(3)"),
        ],
        "example": """
            import sys
            import callsite

            tb = callsite.capture()
            assert tb == callsite.Traceback.from_frame(sys._getframe()) or True  # same stack, other line
            print(tb.raw()[0][0].co_name)           # the code object of the innermost frame
            print(tb.as_stack_summary()[-1].lineno) # a traceback.StackSummary, outermost first
            print(tb.to_mlir())                     # the MLIR location text
            try:
                1 / 0
            except ZeroDivisionError as e:
                print(callsite.Traceback.from_traceback(e.__traceback__)[0].lineno)
        """,
    },
    "callsite.Frame": {
        "raises": [("TypeError", "instantiated directly (frames come from a Traceback)", "callsite.Frame()")],
        "example": """
            import callsite

            frame = callsite.capture()[0]
            print(frame.filename, frame.lineno, frame.colno, frame.end_colno, frame.kind)
            print(frame.to_dict()["qualname"])       # '<module>'
        """,
    },
    "callsite.Filter": {
        "raises": [
            ("TypeError", "a rule is not a str or ``re.Pattern``", "callsite.Filter(include=3)"),
            ("ValueError", "a rule is not a valid regular expression", 'callsite.Filter(exclude="(")'),
            ("ValueError", "``limit`` is negative", "callsite.Filter(limit=-1)"),
            ("TypeError", "``keeps`` given something it cannot name a file of", "callsite.Filter().keeps(3)"),
            ("TypeError", "``apply`` given something else than a Traceback", "callsite.Filter().apply([])"),
        ],
        "example": """
            import callsite

            f = callsite.Filter(limit=3)              # default exclusions: *_ops_gen.py, callsite itself
            f.exclude_dir("/opt/my_dsl")              # the framework is not the user
            f.include_file("/opt/my_dsl/examples.py") # ...except its examples
            here = callsite.capture()
            print(f.keeps(here[0]), f.keeps("/opt/my_dsl/core.py"))   # True False
            print(len(f.apply(here)) <= 3, f.first_user_frame().lineno)
        """,
    },
    "callsite.boundary": {
        "raises": [
            ("TypeError", "``kernel`` is not a function, method or code object (nor wraps one)", "callsite.boundary(3)"),
            ("RuntimeError", "the same boundary object is entered twice at once", None),
        ],
        "example": """
            import callsite

            def kernel():
                def tile():
                    return callsite.capture()
                return tile()

            def framework(depth):                 # stands for the DSL's decorator, tracer, launcher
                return kernel() if depth == 0 else framework(depth - 1)

            with callsite.boundary(kernel):
                tb = framework(100)
            print([f.name for f in tb])           # ['tile', 'kernel']: nothing below the kernel
        """,
    },
    "callsite.BackendWarning": {
        "example": """
            import warnings
            import callsite

            print(issubclass(callsite.BackendWarning, callsite.CallsiteWarning))
            warnings.simplefilter("error", callsite.BackendWarning)   # make a refused walk fatal
        """,
    },
    "callsite.CallsiteWarning": {
        "example": """
            import warnings
            import callsite

            warnings.filterwarnings("ignore", category=callsite.CallsiteWarning)  # all of callsite's
        """,
    },
    "callsite.cmake_dir": {
        "raises": [("FileNotFoundError", "in a development tree, which has no installed CMake package", None)],
        "example": """
            import os
            import callsite

            print(os.path.exists(os.path.join(callsite.cmake_dir(), "callsiteConfig.cmake")))
        """,
    },
    "callsite.include_dir": {
        "raises": [("FileNotFoundError", "neither the wheel nor a checkout has the headers", None)],
        "example": """
            import os
            import callsite

            print(os.path.exists(os.path.join(callsite.include_dir(), "callsite", "api.h")))
        """,
    },
    "callsite.doctor": {
        "example": """
            import callsite

            report = callsite.doctor()
            print(report["backend"]["in_use"], sorted(report))
        """,
    },
    "callsite.get_backend": {
        "example": """
            import callsite

            print(callsite.get_backend())            # 'internal' where the layout matched
        """,
    },
    "callsite.set_backend": {
        "raises": [
            ("TypeError", "``name`` is not a ``str``", "callsite.set_backend(42)"),
            ("ValueError", "``name`` is not ``'internal'`` or ``'public'``", 'callsite.set_backend("fast")'),
            ("RuntimeError", "``'internal'`` where the internal walk is refused "
             "(:func:`callsite.internal_backend_refusal` says why)", None),
        ],
        "example": """
            import callsite

            previous = callsite.get_backend()
            callsite.set_backend("public")           # CPython's public C API walk: same results
            print(callsite.capture()[0].lineno)
            callsite.set_backend(previous)
        """,
    },
    "callsite.internal_backend_refusal": {
        "example": """
            import callsite

            print(callsite.internal_backend_refusal())  # None where the internal walk is in use
        """,
    },
    # --- callsite.mlir ---------------------------------------------------------------------
    "callsite.mlir.accelerate": {
        "raises": [
            ("TypeError", "``ir`` is not a module or a dotted name", "mlir.accelerate(3)"),
            ("ModuleNotFoundError", "``ir`` names a module that does not import", 'mlir.accelerate("no_such_dsl.ir")'),
        ],
        "example": """
            import callsite.mlir
            from iree.compiler import ir

            callsite.mlir.accelerate(ir)             # ir.loc_tracebacks() now builds callsite's locations
            with ir.Context(), ir.Location.unknown(), ir.loc_tracebacks():
                module = ir.Module.create()
            callsite.mlir.decelerate(ir)
        """,
    },
    "callsite.mlir.decelerate": {
        "raises": [("TypeError", "``ir`` is not a module or a dotted name", "mlir.decelerate(3)")],
        "example": """
            import callsite.mlir
            from iree.compiler import ir

            callsite.mlir.accelerate(ir)
            callsite.mlir.decelerate(ir)             # MLIR's own walk again
            print(callsite.mlir.loc_tracebacks_enabled())
        """,
    },
    "callsite.mlir.auto_locations": {
        "raises": [
            _BAD_FILTER[:2] + ("mlir.auto_locations(3).__enter__()",),
            ("ValueError", "``limit`` is negative or ``source`` is unknown", 'mlir.auto_locations(source="stack").__enter__()'),
            ("ImportError", "no MLIR bindings are imported and ``ir`` is not given", None),
            ("RuntimeError", "``source='window'`` while call tracking is off", None),
        ],
        "example": """
            import callsite.mlir
            from iree.compiler import ir
            from iree.compiler.dialects import arith

            with ir.Context(), ir.Location.unknown():
                module = ir.Module.create()
                with ir.InsertionPoint(module.body), callsite.mlir.auto_locations():
                    arith.constant(ir.IndexType.get(), 1)      # gets this line as its location
                print(module.operation.get_asm(enable_debug_info=True))
        """,
    },
    "callsite.mlir.bindings": {
        "raises": [
            ("ImportError", "no MLIR bindings are imported (the message says what to do)", None),
            ("ModuleNotFoundError", "``ir`` names a module that does not import", 'mlir.bindings("no_such_dsl.ir")'),
        ],
        "example": """
            import callsite.mlir
            from iree.compiler import ir

            for b in callsite.mlir.bindings():
                print(b.ir.__name__)                 # iree.compiler.ir
        """,
    },
    "callsite.mlir.use": {
        "raises": [
            ("TypeError", "``ir`` is not a module or a dotted name", "mlir.use(3)"),
            ("ModuleNotFoundError", "``ir`` names a module that does not import", 'mlir.use("no_such_dsl.ir")'),
        ],
        "example": """
            import callsite.mlir

            bindings = callsite.mlir.use("iree.compiler.ir")   # imports it if needed
            print(bindings.ir.__name__)
        """,
    },
    "callsite.mlir.cache_info": {
        "example": """
            import callsite.mlir
            from iree.compiler import ir

            with ir.Context() as ctx, ir.Location.unknown():
                loc = callsite.mlir.location()
                print(callsite.mlir.cache_info(ctx))
        """,
    },
    "callsite.mlir.clear_caches": {
        "example": """
            import callsite.mlir

            callsite.mlir.clear_caches()             # e.g. between compilations of a long-lived process
        """,
    },
    "callsite.mlir.status": {
        "example": """
            import callsite.mlir

            print(callsite.mlir.status()["status"])   # what `python -m callsite doctor` shows for MLIR
        """,
    },
    "callsite.mlir.location": {
        "raises": [
            ("TypeError", "``source`` is not a Filter, a Traceback or None", "mlir.location(3)"),
            ("ValueError", "``skip`` or ``limit`` is negative", "mlir.location(skip=-1)"),
        ],
        "example": """
            import callsite, callsite.mlir
            from iree.compiler import ir

            with ir.Context(), ir.Location.unknown():
                print(callsite.mlir.location())                  # this line, as MLIR writes it
                traced = callsite.capture()                      # trace now...
                print(callsite.mlir.location(traced, limit=1))   # ...emit later
        """,
    },
    "callsite.mlir.loc_tracebacks": {
        "raises": [
            ("ValueError", "``max_depth`` is negative", "mlir.loc_tracebacks(max_depth=-1).__enter__()"),
            ("TypeError", "``max_depth`` is not an int or None", 'mlir.loc_tracebacks(max_depth="10").__enter__()'),
        ],
        "example": """
            import callsite.mlir
            from iree.compiler import ir
            from iree.compiler.dialects import arith

            with ir.Context(), ir.Location.unknown():
                module = ir.Module.create()
                with ir.InsertionPoint(module.body), callsite.mlir.loc_tracebacks(max_depth=4):
                    arith.constant(ir.IndexType.get(), 1)
                print(module.operation.get_asm(enable_debug_info=True))
        """,
    },
    "callsite.mlir.loc_tracebacks_enabled": {
        "example": """
            import callsite.mlir

            print(callsite.mlir.loc_tracebacks_enabled())       # False until switched on
        """,
    },
    "callsite.mlir.set_loc_tracebacks_enabled": {
        "raises": [("TypeError", "``enabled`` is not a bool", 'mlir.set_loc_tracebacks_enabled("yes")')],
        "example": """
            import callsite.mlir

            from iree.compiler import ir

            callsite.mlir.accelerate(ir)             # the switch is MLIR's, served by callsite
            callsite.mlir.set_loc_tracebacks_enabled(True)
            print(callsite.mlir.loc_tracebacks_enabled())
            callsite.mlir.set_loc_tracebacks_enabled(False)
        """,
    },
    "callsite.mlir.loc_tracebacks_frame_limit": {
        "example": """
            import callsite.mlir

            print(callsite.mlir.loc_tracebacks_frame_limit())   # 10, MLIR's default
        """,
    },
    "callsite.mlir.set_loc_tracebacks_frame_limit": {
        "raises": [
            ("ValueError", "``limit`` is negative", "mlir.set_loc_tracebacks_frame_limit(-1)"),
            ("TypeError", "``limit`` is not an int", 'mlir.set_loc_tracebacks_frame_limit("3")'),
        ],
        "example": """
            import callsite.mlir

            callsite.mlir.set_loc_tracebacks_frame_limit(4)
            print(callsite.mlir.loc_tracebacks_frame_limit())
            callsite.mlir.set_loc_tracebacks_frame_limit(10)
        """,
    },
    "callsite.mlir.traceback_action_on_current_loc": {
        "example": """
            import callsite.mlir

            print(callsite.mlir.traceback_action_on_current_loc())   # 'fallback'
        """,
    },
    "callsite.mlir.set_traceback_action_on_current_loc": {
        "raises": [("ValueError", "``action`` is not one of the two names, 0/1 or MLIR's enum",
                    'mlir.set_traceback_action_on_current_loc("wrap")')],
        "example": """
            import callsite.mlir

            callsite.mlir.set_traceback_action_on_current_loc("nameloc_wrap")
            print(callsite.mlir.traceback_action_on_current_loc())
            callsite.mlir.set_traceback_action_on_current_loc("fallback")
        """,
    },
    "callsite.mlir.traceback_action_on_explicit_loc": {
        "example": """
            import callsite.mlir

            print(callsite.mlir.traceback_action_on_explicit_loc())  # 'use_explicit'
        """,
    },
    "callsite.mlir.set_traceback_action_on_explicit_loc": {
        "raises": [("ValueError", "``action`` is not one of the two names, 0/1 or MLIR's enum",
                    'mlir.set_traceback_action_on_explicit_loc("replace")')],
        "example": """
            import callsite.mlir

            callsite.mlir.set_traceback_action_on_explicit_loc("use_traceback")
            print(callsite.mlir.traceback_action_on_explicit_loc())
            callsite.mlir.set_traceback_action_on_explicit_loc("use_explicit")
        """,
    },
    "callsite.mlir.register_traceback_file_exclusion": {
        "raises": [("TypeError", "``filename`` is not a str or os.PathLike",
                    "mlir.register_traceback_file_exclusion(3)")],
        "example": """
            import callsite, callsite.mlir

            callsite.mlir.register_traceback_file_exclusion("/opt/my_dsl/builder.py")
            print(callsite.Filter.default().keeps("/opt/my_dsl/builder.py"))   # False
        """,
    },
    "callsite.mlir.register_traceback_file_inclusion": {
        "raises": [("TypeError", "``filename`` is not a str or os.PathLike",
                    "mlir.register_traceback_file_inclusion(3)")],
        "example": """
            import callsite, callsite.mlir

            callsite.mlir.register_traceback_file_inclusion("/opt/my_dsl/examples.py")
            print(callsite.Filter.default().keeps("/opt/my_dsl/examples.py"))  # True
        """,
    },
    # --- callsite.native -------------------------------------------------------------------
    "callsite.native.Executable": {
        "raises": [
            ("TypeError", "``name`` or ``kind`` is not a str", "native.Executable(3)"),
            ("TypeError", "neither a callable ``reifier`` nor ``locations`` is given", 'native.Executable("k")'),
            ("ValueError", "``states`` is out of range", 'native.Executable("k", lambda s: None, states=-1)'),
            ("OverflowError", "``reify`` given a negative state", "exe.reify(-1)"),
            ("TypeError", "``locals`` is not callable", 'native.Executable("k", lambda s: None, locals=3)'),
            ("TypeError", "``source`` is not a str", 'native.Executable("k", lambda s: None, source=b"x")'),
        ],
        "example": """
            from callsite import native

            lines = [3, 4, 7]
            exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", lines[pc]))
            print(exe.reify(2).lineno)                           # 7, cached per state
        """,
    },
    "callsite.native.FrameLocals": {
        "raises": [
            ("TypeError", "a write: the variables are read-only", None),
        ],
        "example": """
            import sys
            from callsite import native

            regs = {"acc": 41}
            exe = native.Executable("kernel", locations=[native.Location("prog.dsl", 2)],
                                    visible=True, locals=lambda pc: dict(regs, pc=pc))

            @exe.frame(state=0)
            def callback():
                frame = sys._getframe(1)          # the kernel frame (3.12+, visible frames)
                return dict(frame.f_locals)       # the reifier runs now, not at the push

            if native.visible_frames_available():
                print(callback())                 # {'acc': 41, 'pc': 0}
        """,
    },
    "callsite.native.NativeFrame": {
        "raises": [
            ("TypeError", "``executable`` is not an Executable", "native.NativeFrame(3)"),
            ("OverflowError", "a state outside [0, 2**64)", "native.NativeFrame(exe, state=-1)"),
            ("RuntimeError", "``pop()`` of a frame that is not active", "native.NativeFrame(exe).pop()"),
            ("TypeError", "``locals`` set to something that is not a mapping, a callable or None",
             "setattr(native.NativeFrame(exe), 'locals', 3)"),
            ("TypeError", "``pop(exc)`` with ``exc`` neither an exception nor None",
             "native.NativeFrame(exe).pop(3)"),
        ],
        "example": """
            import callsite
            from callsite import native

            exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", pc + 1))
            with native.NativeFrame(exe) as frame:
                frame.state = 41
                print(callsite.capture()[0].filename, callsite.capture()[0].lineno)   # prog.dsl 42
        """,
    },
    "callsite.native.FramedFunction": {
        "example": """
            from callsite import native

            exe = native.Executable("kernel", lambda pc: native.Location("kernel.dsl", pc + 1))

            @native.frame(exe)
            def run():
                native.current().state = 9
                return native.stack()

            print(type(run).__name__, run())                     # FramedFunction [('kernel', 'python', 9)]
        """,
    },
    "callsite.native.Location": {
        "raises": [("TypeError", "``filename`` or ``lineno`` is missing", "native.Location()")],
        "example": """
            from callsite import native

            loc = native.Location("prog.dsl", 3, colno=4, end_colno=9)
            print(loc.filename, loc.lineno, loc.colno)
        """,
    },
    "callsite.native.ReificationWarning": {
        "example": """
            import warnings
            import callsite
            from callsite import native

            broken = native.Executable("broken", lambda pc: 1 / 0)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with native.frame(broken):
                    print(callsite.capture()[0].filename)        # a placeholder
            print(caught[0].category.__name__)                   # ReificationWarning
        """,
    },
    "callsite.native.frame": {
        "raises": [
            ("TypeError", "``executable`` is not an Executable", "native.frame(3)"),
            ("TypeError", "``state`` is not an int", 'native.frame(exe, "start")'),
        ],
        "example": """
            import callsite
            from callsite import native

            exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", pc + 1))
            with native.frame(exe, 2):
                print(callsite.capture()[0].lineno)              # 3
        """,
    },
    "callsite.native.current": {
        "example": """
            from callsite import native

            exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", pc + 1))
            print(native.current())                              # None
            with native.frame(exe) as f:
                print(native.current() is f)                     # True
        """,
    },
    "callsite.native.stack": {
        "example": """
            from callsite import native

            exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", pc + 1), kind="dsl")
            with native.frame(exe, 5):
                print(native.stack())                            # [('prog', 'dsl', 5)]
        """,
    },
    "callsite.native.cache_info": {
        "example": """
            from callsite import native

            print(sorted(native.cache_info()))
        """,
    },
    "callsite.native.track_greenlets": {
        "example": """
            from callsite import native

            native.track_greenlets()    # before switching greenlets that push native frames
        """,
    },
    "callsite.native.visible_frames_available": {
        "example": """
            from callsite import native

            print(native.visible_frames_available())             # True on 3.12-3.15
        """,
    },
    "callsite.native.visible_frames_refusal": {
        "example": """
            from callsite import native

            print(native.visible_frames_refusal())               # None where available
        """,
    },
    # --- callsite.tracking -----------------------------------------------------------------
    "callsite.tracking.enable": {
        "raises": [
            ("ValueError", "``mode`` is unknown", 'tracking.enable(mode="fast")'),
            ("ValueError", "``window`` is below 1 or ``tool_id`` outside 0-5", "tracking.enable(window=0)"),
            ("TypeError", "``window`` is not an int", 'tracking.enable(window="8")'),
            ("TypeError", "``filter`` is not a Filter or None", "tracking.enable(filter=3)"),
        ],
        "example": """
            import callsite.tracking as tracking

            def op():
                return tracking.window(limit=2)

            with tracking.enable(window=8):
                print([site.site.qualname for site in op()])     # ['op', '<module>']
        """,
    },
    "callsite.tracking.disable": {
        "example": """
            import callsite.tracking as tracking

            tracking.enable()
            tracking.disable()
            print(tracking.status()["enabled"])                  # False
        """,
    },
    "callsite.tracking.window": {
        "raises": [
            ("RuntimeError", "call tracking is off", "tracking.window()"),
            ("ValueError", "``skip`` or ``limit`` is negative", "tracking.window(skip=-1)"),
        ],
        "example": """
            import callsite.tracking as tracking

            with tracking.enable(window=4):
                print(len(tracking.window()) >= 1)
        """,
    },
    "callsite.tracking.last": {
        "raises": [("RuntimeError", "call tracking is off", "tracking.last()")],
        "example": """
            import callsite, callsite.tracking as tracking

            dsl = {}   # a DSL's module, compiled under its own file name
            exec(compile("import callsite.tracking as tracking\\n"
                         "def op(user):\\n"
                         "    return tracking.last(user)\\n", "my_dsl.py", "exec"), dsl)
            user = callsite.Filter(exclude=[r"my_dsl\\.py$"])
            with tracking.enable(window=8):
                site = dsl["op"](user)            # the user's line: the call into the DSL
            print(site.qualname, site.lineno)     # <module> 9
        """,
    },
    "callsite.tracking.CallSite": {
        "example": """
            import callsite.tracking as tracking

            def f():
                return tracking.window(limit=1)[0]

            with tracking.enable():
                call = f()
            print(call.code.co_name, call.site.lineno)          # f 5: the call of window() in f
        """,
    },
    "callsite.tracking.available_modes": {
        "example": """
            import callsite.tracking as tracking

            print(tracking.available_modes())
        """,
    },
    "callsite.tracking.clear": {
        "raises": [("RuntimeError", "call tracking is off", None)],
        "example": """
            import callsite.tracking as tracking

            with tracking.enable():
                tracking.clear()
        """,
    },
    "callsite.tracking.refresh": {
        "example": """
            import callsite, callsite.tracking as tracking

            user = callsite.Filter()
            with tracking.enable(filter=user):
                user.exclude_dir("/opt/my_dsl")
                tracking.refresh()                               # the changed rules apply
        """,
    },
    "callsite.tracking.status": {
        "example": """
            import callsite.tracking as tracking

            with tracking.enable(window=16):
                print(tracking.status()["window"])
        """,
    },
    # --- callsite.torch ---------------------------------------------------------------------
    "callsite.torch.TorchWarning": {
        "example": """
            import warnings
            import callsite.torch

            warnings.simplefilter("error", callsite.torch.TorchWarning)  # an unrecognised torch is fatal
        """,
    },
    "callsite.torch.accelerate": {
        "example": """
            import torch
            import callsite.torch

            class Model(torch.nn.Module):
                def forward(self, x):
                    return torch.relu(x) + 1          # each node's stack_trace names this line

            print(callsite.torch.accelerate())        # True where torch's internals are recognised
            tracer = torch.fx.Tracer()
            tracer.record_stack_traces = True         # as make_fx and torch.export ask
            graph = tracer.trace(Model())
            print([n.stack_trace for n in graph.nodes if n.op == "call_function"][0])
        """,
    },
    "callsite.torch.decelerate": {
        "example": """
            import torch.fx
            import callsite.torch

            callsite.torch.accelerate()
            print(callsite.torch.decelerate(), callsite.torch.is_accelerated())   # True False
        """,
    },
    "callsite.torch.is_accelerated": {
        "example": """
            import callsite.torch

            print(callsite.torch.is_accelerated())    # False until accelerate() or CALLSITE_TORCH=1
        """,
    },
    "callsite.torch.status": {
        "example": """
            import callsite.torch

            print(callsite.torch.status())            # what `python -m callsite doctor` shows for torch
        """,
    },
    "callsite.torch.traceback_of": {
        "raises": [("TypeError", "``node`` is not a ``torch.fx.Node``", "callsite.torch.traceback_of(3)")],
        "example": """
            import torch
            import callsite, callsite.torch

            class Model(torch.nn.Module):
                def forward(self, x):
                    return x * 2

            callsite.torch.accelerate()
            tracer = torch.fx.Tracer()
            tracer.record_stack_traces = True
            node = next(n for n in tracer.trace(Model()).nodes if n.op == "call_function")
            user = callsite.Filter(exclude=[r"/torch/"])              # torch's frames are not the user's
            print(callsite.torch.traceback_of(node).to_mlir(user))  # forward's line, with columns
        """,
    },
    "callsite.torch.frames": {
        "raises": [("TypeError", "``filter`` is not a ``callsite.Filter`` (or ``boundary`` not "
                    "a kernel)", "callsite.torch.frames('user').__enter__()"),
                   ("RuntimeError", "torch's stack-trace code is not what callsite reproduces",
                    None)],
        "example": """
            import torch
            from torch.fx.experimental.proxy_tensor import make_fx
            import callsite, callsite.torch

            def loss(out):                                # not a forward: torch's rules drop it
                return (out * out).mean()

            def step(x):
                return loss(x + 1)

            user = callsite.Filter(exclude=[r"/torch/"])  # torch's frames are not the user's
            with callsite.torch.frames(user):
                graph = make_fx(step, record_stack_traces=True)(torch.randn(3))
            node = next(n for n in graph.graph.nodes if n.op == "call_function" and "mul" in str(n.target))
            print(node.meta["stack_trace"])               # ends with loss's line
        """,
    },
    "callsite.torch.clear_caches": {
        "example": """
            import callsite.torch

            callsite.torch.clear_caches()
        """,
    },
}
