"""Start-up hook of callsite (run from callsite.pth when a start-up switch is set: the table
callsite/_switches.py, e.g. CALLSITE_MLIR, CALLSITE_TORCH).

Imports nothing heavy: it loads callsite's switch table, its import watcher and each switched-on
integration's detection module (callsite/_switches.py, callsite/_import_watch.py,
callsite/<integration>/_detect.py: standard library only) without importing the callsite
package, and calls that module's ``start(accelerate)``, which waits for what the integration
serves (MLIR bindings, torch.fx) to be imported, and only then imports callsite.<integration>
and calls its ``_start_up_accelerate``. Nothing in the program changes; no other module's
loader is touched.

A value of a switch that is neither on nor off is reported once per process, naming the
variable, the value and the accepted values, and leaves that integration off.
"""
import sys

# A venv's site-packages can be processed twice (seen under two paths), running the .pth twice:
# this module is imported once, so the second run finds the first one's work done.
_done: "set[str]" = set()


def _load(relative, name):
    """callsite/<relative>.py (standard library only) as the module `name`, without importing
    the callsite package; None when callsite is not installed."""
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
        path = os.path.join(directory, *relative.split("/")) + ".py"
        if os.path.exists(path):
            loader = machinery.SourceFileLoader(name, path)
            module = type(sys)(name)
            module.__spec__ = machinery.spec_from_file_location(name, path, loader=loader)
            module.__file__, module.__loader__ = path, loader
            # Registered under its package name: `from . import _detect` in callsite.mlir then
            # uses this very module (one watcher, one listener list).
            sys.modules[name] = module
            loader.exec_module(module)
            return module
    return None


def _accelerator(integration):
    def accelerate(module):
        package = __import__("callsite." + integration, fromlist=["_start_up_accelerate"])
        package._start_up_accelerate(module)
    return accelerate


def install():
    """Starts every integration whose switch is on."""
    import os

    try:
        switches = _load("_switches", "callsite._switches")
    except Exception as error:  # a start-up hook must never stop the interpreter
        print(f"callsite: start-up hook disabled: {error!r}", file=sys.stderr)
        return
    for switch in switches.SWITCHES if switches is not None else ():
        if switch.variable not in os.environ or switch.integration in _done:
            continue
        _done.add(switch.integration)
        try:
            try:
                if not switch.parse(os.environ[switch.variable]):
                    continue
            except ValueError as error:
                print(f"callsite: {error}; the {switch.integration} integration stays off",
                      file=sys.stderr)
                continue
            _load("_import_watch", "callsite._import_watch")
            detect = _load(switch.detect, "callsite." + switch.detect.replace("/", "."))
            if detect is not None:
                detect.start(_accelerator(switch.integration))
        except Exception as error:  # a start-up hook must never stop the interpreter
            print(f"callsite: {switch.variable} start-up hook disabled: {error!r}",
                  file=sys.stderr)
