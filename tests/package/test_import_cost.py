"""``import callsite`` loads the extension and nothing else: every further module of the package,
the submodules, re and typing wait for first use (the import time itself is measured by
``python -m callsite bench``, not asserted)."""
import subprocess
import sys

PROBE = (
    "import sys\n"
    "before = set(sys.modules)\n"
    "import callsite\n"
    "new = set(sys.modules) - before\n"
    "print(' '.join(sorted(new)))\n"
)


def newly_imported(extra=""):
    out = subprocess.run([sys.executable, "-c", PROBE + extra], capture_output=True, text=True,
                         check=True)
    return out.stdout.split("\n")


# What `import callsite` may load: the package, its extension (with the submodules the extension
# creates itself), the warning categories the extension derives its own from, and the builtin
# modules the extension registers hooks with. Before 3.12 the main-interpreter check needs the
# private subinterpreters module.
ALLOWED = {"callsite", "callsite._callsite", "callsite._callsite.mlir", "callsite._callsite.native",
           "callsite._callsite.tracking", "callsite._warnings", "atexit", "gc"}
if sys.version_info < (3, 12):
    ALLOWED |= {"_xxsubinterpreters", "_interpreters"}


def test_import_loads_the_extension_and_nothing_else():
    new = set(newly_imported()[0].split())
    assert {"callsite", "callsite._callsite"} <= new
    assert new <= ALLOWED, f"import callsite also imported {sorted(new - ALLOWED)}"


def test_lazy_names_load_their_module_on_first_use_once():
    out = newly_imported("import callsite as c\n"
                         "print('callsite._backend' in sys.modules, c.get_backend(),\n"
                         "      'get_backend' in vars(c), c.__version__ == c._version.__version__)\n")
    assert out[1].split() == ["False", c_backend(), "True", "True"]


def test_submodules_load_on_first_use():
    out = newly_imported("import callsite as c\n"
                         "print(c.tracking.__name__, c.native.__name__, 'callsite.mlir' in sys.modules)\n")
    assert out[1] == "callsite.tracking callsite.native False"


def c_backend():
    import callsite

    return callsite.get_backend()


def test_unknown_attribute_is_an_attribute_error():
    import callsite
    import pytest

    with pytest.raises(AttributeError, match="module 'callsite' has no attribute 'nope'"):
        callsite.nope  # noqa: B018
    assert {"mlir", "tracking", "native", "doctor", "__version__", "get_backend",
            "set_backend", "internal_backend_refusal"} <= set(dir(callsite))
