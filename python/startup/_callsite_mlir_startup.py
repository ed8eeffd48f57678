"""Start-up hook of callsite (run from callsite-mlir.pth when CALLSITE_MLIR is set and not 0).

Imports nothing heavy: it loads callsite's small import watcher (callsite/_mlir_detect.py,
standard library only) without importing the callsite package, and waits. The first time MLIR
Python bindings are imported (an `ir` module beside a `_mlir_libs` package that is an
upstream-style `ir`), it imports callsite.mlir and calls accelerate(): MLIR's own traceback
switches of those bindings, and of every set imported afterwards, then produce callsite-built
locations. Nothing in the program changes; no other module's loader is touched.

A value of CALLSITE_MLIR that is neither on nor off (_mlir_detect.switch_value) is reported
once, naming the variable, and leaves the integration off.
"""
import sys

# A venv's site-packages can be processed twice (seen under two paths), running the .pth twice:
# this module is imported once, so the second run finds the first one's work done.
_mlir_done = False


def _load_detect(stem):
    """callsite/<stem>.py (a detector: standard library only) as callsite.<stem>, without
    importing the callsite package; None when callsite is not installed."""
    name = "callsite." + stem
    if name in sys.modules:
        return sys.modules[name]
    import os

    # The path machinery site.py already uses (importlib.util would pull in contextlib,
    # functools, collections... into every process).
    machinery = sys.modules["_frozen_importlib_external"]
    spec = machinery.PathFinder.find_spec("callsite")
    if spec is None or not spec.submodule_search_locations:
        return None
    for directory in spec.submodule_search_locations:
        path = os.path.join(directory, stem + ".py")
        if os.path.exists(path):
            loader = machinery.SourceFileLoader(name, path)
            module = type(sys)(name)
            module.__spec__ = machinery.spec_from_file_location(name, path, loader=loader)
            module.__file__, module.__loader__ = path, loader
            # Registered under its package name: `from . import _mlir_detect` in callsite.mlir
            # then uses this very module (one watcher, one listener list).
            sys.modules[name] = module
            loader.exec_module(module)
            return module
    return None


def _accelerate(_module):
    import callsite.mlir

    callsite.mlir.accelerate()


def install():
    """Watches imports; accelerates the first MLIR bindings imported (and all later ones)."""
    global _mlir_done
    if _mlir_done:
        return
    _mlir_done = True
    try:
        import os

        detect = _load_detect("_mlir_detect")
        if detect is None:
            return
        try:
            if not detect.switch_value(os.environ):
                return
        except ValueError as error:
            print(f"callsite: {error}; the MLIR integration stays off", file=sys.stderr)
            return
        if detect.loaded_ir_modules():  # imported by an earlier .pth
            _accelerate(None)
        else:
            detect.watch_imports(_accelerate)
    except Exception as error:  # a start-up hook must never stop the interpreter
        print(f"callsite: CALLSITE_MLIR start-up hook disabled: {error!r}", file=sys.stderr)


def install_torch():
    """CALLSITE_TORCH=1: serves torch.fx's node stack traces once torch.fx.proxy is imported
    (callsite.torch.accelerate); nothing is imported before that."""
    try:
        import os

        detect = _load_detect("_torch_detect")
        if detect is None:
            return
        detect.switch_value(os.environ)  # any value but 0/1: the error names the variable

        def _accelerate(proxy):
            import callsite.torch

            callsite.torch._install(proxy)

        detect.when_proxy_imported(_accelerate)
    except Exception as error:  # a start-up hook must never stop the interpreter
        print(f"callsite: CALLSITE_TORCH start-up hook disabled: {error}", file=sys.stderr)
