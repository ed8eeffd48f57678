"""Errors a user can act on: every bad argument of a public entry point names the argument,
what was expected and what was given; paths accept os.PathLike, ``~`` and relative
directories; warnings have callsite's categories and point at the user's line."""
import os
import pathlib
import re
import subprocess
import sys
import warnings

import pytest

import callsite
import callsite.mlir
import callsite.tracking
from callsite import native


def error(exc_type, call):
    with pytest.raises(exc_type) as info:
        call()
    return str(info.value)


# --- capture and Traceback ---------------------------------------------------------------------

def test_capture_arguments():
    assert error(ValueError, lambda: callsite.capture(-1)) == "skip must be >= 0, got -1"
    assert error(ValueError, lambda: callsite.capture(-10**30)) == (
        "skip must be >= 0, got -1000000000000000000000000000000")
    assert error(TypeError, lambda: callsite.capture("1")) == "skip must be an int or None, not str"
    assert error(ValueError, lambda: callsite.capture(limit=-1)) == "limit must be >= 0, got -1"
    assert error(TypeError, lambda: callsite.capture(limit="x")) == (
        "limit must be an int or None, not str")
    assert error(TypeError, lambda: callsite.capture(filter=3)) == (
        "filter must be a callsite.Filter or None, not int")
    assert error(ValueError, lambda: callsite.capture(source="wlk")) == (
        "source must be 'walk' or 'window', not 'wlk'")
    assert error(TypeError, lambda: callsite.capture(1, 2, 3)) == (
        "capture() takes at most 2 positional arguments (3 given)")
    assert error(TypeError, lambda: callsite.capture(nope=1)) == (
        "capture() got an unexpected keyword argument 'nope'")


def test_huge_counts_mean_everything():
    # Beyond any stack: skip drops every frame, limit keeps every frame.
    assert len(callsite.capture(10**30)) == 0
    assert len(callsite.capture(limit=10**30)) == len(callsite.capture())


def test_traceback_arguments():
    tb = callsite.capture()
    assert error(TypeError, lambda: tb["x"]) == (
        "Traceback indices must be integers or slices, not str")
    assert error(IndexError, lambda: tb[len(tb)]) == "Traceback index out of range"
    assert error(TypeError, lambda: tb.to_mlir(3)) == (
        "filter must be a callsite.Filter or None, not int")
    assert error(TypeError, lambda: callsite.Traceback.from_frame(3)) == (
        "from_frame() expected a frame object, got int")
    assert error(TypeError, lambda: callsite.Traceback.from_traceback(3)) == (
        "from_traceback() expected a traceback object (exc.__traceback__), got int")
    assert error(ValueError, lambda: tb.index("not a frame")) == (
        "Traceback.index(x): x not in traceback")


def test_backend_arguments():
    # A wrong type is a TypeError naming the argument; a wrong str a ValueError.
    assert error(TypeError, lambda: callsite.set_backend(None)) == (
        "set_backend(): name must be a str ('internal' or 'public'), not NoneType")
    assert error(TypeError, lambda: callsite.set_backend(42)) == (
        "set_backend(): name must be a str ('internal' or 'public'), not int")
    assert error(ValueError, lambda: callsite.set_backend("publc")) == (
        "set_backend(): name must be 'internal' or 'public', not 'publc'")


def test_unknown_backend_in_the_environment_fails_at_import():
    env = dict(os.environ, CALLSITE_BACKEND="publc")
    r = subprocess.run([sys.executable, "-c", "import callsite"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == (
        "ImportError: CALLSITE_BACKEND must be 'internal' or 'public' (or unset), not 'publc'")


# --- Filter ------------------------------------------------------------------------------------

def test_filter_arguments():
    f = callsite.Filter()
    assert error(TypeError, lambda: callsite.Filter(include=3)) == (
        "callsite.Filter: include rules must be str (regular expressions) or re.Pattern, not int")
    assert error(ValueError, lambda: callsite.Filter(limit=-1)) == "limit must be >= 0, got -1"
    assert error(ValueError, lambda: f.add_exclude("(")).startswith(
        "callsite.Filter: bad exclude pattern '(': missing )")
    assert error(TypeError, lambda: f.exclude_dir(3)) == (
        "callsite.Filter.exclude_dir(): path must be a str or os.PathLike, not int")
    assert error(TypeError, lambda: f.include_file(b"/x.py")) == (
        "callsite.Filter.include_file(): path must be a str or os.PathLike, not bytes")
    assert error(ValueError, lambda: f.include_dir("")) == (
        "callsite.Filter.include_dir(): path must not be empty")
    assert error(TypeError, lambda: f.remove(3)) == (
        "callsite.Filter.remove() expects a str pattern, not int")
    assert error(TypeError, lambda: f.keeps(3)) == (
        "Filter.keeps() expects a code object, function, frame, callsite.Frame or filename str, "
        "not int")
    assert error(ValueError, lambda: f.first_user_frame(-1)) == "skip must be >= 0, got -1"
    assert error(TypeError, lambda: f.first_user_frame(skip="x")) == (
        "skip must be an int or None, not str")
    assert error(TypeError, lambda: f.apply(3)) == (
        "Filter.apply() expects a callsite.Traceback, not int")
    with pytest.raises(TypeError, match="^limit must be an int or None, not str$"):
        f.limit = "x"


def test_first_user_frame_takes_skip_by_keyword():
    f = callsite.Filter(default_exclusions=False)
    by_keyword, by_position = f.first_user_frame(skip=0), f.first_user_frame(0)
    assert (by_keyword.filename, by_keyword.lineno) == (by_position.filename, by_position.lineno)
    assert f.first_user_frame(skip=10**6) is None


def prefix(path):
    return "^" + re.escape(path)


def test_paths_accept_pathlike_tilde_and_relative_dirs(tmp_path, monkeypatch):
    f = callsite.Filter(default_exclusions=False)
    f.exclude_dir(pathlib.Path("/opt/dsl"))
    f.exclude_file(pathlib.PurePosixPath("/opt/dsl.py"))
    assert f.exclude == (prefix("/opt/dsl" + os.sep), prefix("/opt/dsl.py"))

    monkeypatch.setenv("HOME", str(tmp_path))
    f.clear()
    f.exclude_dir("~/dsl")
    assert f.exclude == (prefix(str(tmp_path / "dsl") + os.sep),)

    monkeypatch.chdir(tmp_path)
    f.clear()
    f.include_dir("relative/dir")
    f.include_file("kernels.py")
    assert f.include == (prefix(str(tmp_path / "relative" / "dir") + os.sep),
                         prefix(str(tmp_path / "kernels.py")))
    # Pseudo-filenames stay as given.
    f.exclude_file("<string>")
    assert f.exclude == (prefix("<string>"),)


def test_a_relative_dir_rule_matches_the_files_in_it(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    mod = tmp_path / "pkg" / "user_mod.py"
    mod.write_text("import callsite\ndef here():\n    return callsite.capture()\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    import user_mod

    f = callsite.Filter(default_exclusions=False)
    f.exclude_dir("pkg")
    tb = user_mod.here()
    assert tb[0].filename == str(mod)
    assert not f.keeps(tb[0]) and f.keeps(__file__)


# --- mlir (no bindings needed: the arguments are checked first) --------------------------------

def test_mlir_arguments():
    assert error(ValueError, lambda: callsite.mlir.loc_tracebacks(max_depth=-1)) == (
        "loc_tracebacks(): max_depth must be an int >= 0 or None, not -1")
    assert error(TypeError, lambda: callsite.mlir.loc_tracebacks(max_depth="10")) == (
        "loc_tracebacks(): max_depth must be an int >= 0 or None, not '10'")
    assert error(TypeError, lambda: callsite.mlir.location(3)) == (
        "source must be a callsite.Filter, a callsite.Traceback or None, not int")
    assert error(TypeError, lambda: callsite.mlir.location(filter=3)) == (
        "filter must be a callsite.Filter or None, not int")
    assert error(ValueError, lambda: callsite.mlir.location(skip=-1)) == (
        "skip must be >= 0, got -1")
    assert error(TypeError, lambda: callsite.mlir.register_traceback_file_exclusion(3)) == (
        "callsite.Filter.exclude_file(): path must be a str or os.PathLike, not int")
    with pytest.raises(ValueError) as info:
        with callsite.mlir.auto_locations(on_explicit="x"):
            pass
    assert str(info.value) == ("on_explicit must be one of ('use_explicit', 'use_traceback'), "
                               "0/1 or MLIR's enum, not 'x'")


# --- tracking ----------------------------------------------------------------------------------

def test_tracking_arguments():
    assert error(ValueError, lambda: callsite.tracking.enable(mode="x")) == (
        "enable(): mode must be one of 'auto', 'monitoring', 'profile', not 'x'")
    assert error(TypeError, lambda: callsite.tracking.enable(filter=3)) == (
        "enable(): filter must be a callsite.Filter or None, not int")
    assert error(ValueError, lambda: callsite.tracking.enable(window=0)) == (
        "window must be >= 1, got 0")
    assert error(TypeError, lambda: callsite.tracking.enable(window="8")) == (
        "window must be an int, not str")
    assert error(ValueError, lambda: callsite.tracking.enable(tool_id=9)) == (
        "tool_id must be 0-5, got 9")
    assert not callsite.tracking.status()["enabled"]  # nothing was half-enabled
    assert error(RuntimeError, lambda: callsite.tracking.last()) == (
        "callsite.tracking.last() needs call tracking, which is off: "
        "call callsite.tracking.enable() first")
    # last()'s filter is positional: the error names the public function, not the module
    # that implements it.
    message = error(TypeError, lambda: callsite.tracking.last(filter=3))
    assert message.startswith("callsite.tracking.last() takes no keyword arguments"), message
    assert "_callsite" not in message
    message = error(TypeError, lambda: callsite.tracking.last(None, None))
    assert message == "callsite.tracking.last() takes at most 1 argument (2 given)"
    with callsite.tracking.enable(mode="profile"):
        assert error(TypeError, lambda: callsite.tracking.last(3)) == (
            "filter must be a callsite.Filter or None, not int")
        assert error(TypeError, lambda: callsite.tracking.window(filter=3)) == (
            "filter must be a callsite.Filter or None, not int")
        assert error(ValueError, lambda: callsite.tracking.window(-1)) == (
            "skip must be >= 0, got -1")


# --- native ------------------------------------------------------------------------------------

def test_native_arguments():
    exe = native.Executable("x", lambda s: None)
    assert error(TypeError, lambda: native.Executable(3, lambda s: None)) == (
        "Executable name must be a str, not int")
    assert error(TypeError, lambda: native.Executable("x", 3)) == (
        "Executable reifier must be callable (state: int) -> Location, not int")
    assert error(TypeError, lambda: native.frame("x")) == (
        "frame(): executable must be a callsite.native.Executable, not str")
    assert error(TypeError, lambda: native.NativeFrame(3)) == (
        "NativeFrame executable must be a callsite.native.Executable, not int")
    assert error(TypeError, lambda: exe.frame(state="x")) == (
        "a native frame's state must be an int, not str")
    assert error(OverflowError, lambda: exe.frame(state=-1)) == (
        "a native frame's state must be in [0, 2**64), got -1")


# --- warnings ----------------------------------------------------------------------------------

def test_warning_categories():
    assert issubclass(callsite.BackendWarning, callsite.CallsiteWarning)
    assert issubclass(callsite.BackendWarning, RuntimeWarning)
    assert issubclass(native.ReificationWarning, callsite.CallsiteWarning)
    assert issubclass(native.ReificationWarning, RuntimeWarning)


@pytest.mark.skipif(callsite.layout_name == "none", reason="this build has no internal layout")
def test_a_refused_layout_warns_at_the_importing_line(tmp_path, callsite_testing):
    script = tmp_path / "user.py"
    script.write_text("import sys\n\nimport callsite\nprint(callsite.get_backend())\n")
    env = dict(os.environ, CALLSITE_TEST_REFUSE_LAYOUT="offsets differ")
    r = subprocess.run([sys.executable, "-W", "always", str(script)], capture_output=True,
                       text=True, env=env)
    assert r.stdout.strip() == "public"
    assert (f"{script}:3: BackendWarning: callsite: using the public C API frame walk: "
            "offsets differ") in r.stderr
    assert r.stderr.count("BackendWarning") == 1 and "RuntimeWarning" not in r.stderr


def test_a_failing_reifier_warns_at_the_line_that_symbolized():
    def broken(state):
        raise KeyError(state)

    exe = native.Executable("broken_for_warning", broken)
    with exe.frame(7):
        tb = callsite.capture()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        tb[0].filename
    (w,) = [w for w in caught if issubclass(w.category, native.ReificationWarning)]
    assert (w.filename, w.lineno) == (__file__, line)
