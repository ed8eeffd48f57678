"""What a native (guest) frame tells CPython's introspection about its source. Tools read a
frame's source through its globals (linecache.lazycache asks f_globals["__loader__"],
sentry_sdk reads __name__ and __loader__), so a guest frame runs with its own guest file's
globals, never those of the Python module that pushed it; `Executable(source=text)` holds the
guest's text in memory. Oracles: the guest text itself, CPython's traceback, linecache,
inspect, warnings and pdb, and the real reporters (sentry_sdk, stackprinter, IPython) where
installed. Every form of native frame is run: visible frames (3.12+), and the shadow entries
added to tracebacks by the decorator and the with block (every version)."""
import datetime
import gc
import inspect
import io
import linecache
import pdb
import re
import sys
import traceback
import warnings

import guest_pusher
import pytest
from sentry_events import sentry_event

import callsite
from callsite import native

# A traceback entry's frame object reports the entry's line as f_lineno from 3.11 on; 3.10's
# frame reports its code's first line unless it is being traced (frameobject.c,
# PyFrame_GetLineNumber), and before 3.13 that first line is kept past any file so that inspect
# refuses a block it cannot give. Readers of tb_lineno see the right line on every version.
FRAME_LINE_SETTABLE = sys.version_info >= (3, 11)

GUEST = "fn check(x)\n  let y = x + 1\n  assert y > 5, y\n  return y\nend\n"
GUEST_LINES = GUEST.splitlines()
RAISE_LINE = 3  # the guest line of state 1, where the callback raises

FORMS = ["visible", "decorated", "with"]

# inspect.findsource() of a code object starts at co_firstlineno on 3.13+; before, it walks
# back to the nearest line that looks like a Python def (line 1 of a guest file).
INSPECT_BLOCK_AT_FRAME_LINE = sys.version_info >= (3, 13)


def _skip_unless_form_runs(form):
    if form == "visible" and not native.visible_frames_available():
        pytest.skip(f"no visible frames here: {native.visible_frames_refusal()}")


def _guest(tmp_path, *, on_disk, source=None, visible=False):
    """An executable of guest function `check` in <tmp>/prog.dsl: state 0 at line 2, state 1
    at line 3. The file is written only `on_disk`."""
    path = tmp_path / "prog.dsl"
    if on_disk:
        path.write_text(GUEST)
    locations = [native.Location(str(path), 2, name="check"),
                 native.Location(str(path), RAISE_LINE, name="check")]
    extra = {} if source is None else {"source": source}
    return native.Executable("check", locations=locations, visible=visible, **extra), str(path)


def _run_in(form, exe, callback):
    """Runs `callback` inside a frame of `exe` at state 1, in the given form, pushed from a
    module with an ordinary loader (guest_pusher)."""
    return guest_pusher.run_in(form, exe, callback)


def _raise():
    raise ValueError("raised inside the guest frame")


def _raised(form, exe):
    try:
        _run_in(form, exe, _raise)
    except ValueError as e:
        return e
    raise AssertionError("nothing raised")


def _make(tmp_path, form, *, on_disk, source=None):
    _skip_unless_form_runs(form)
    return _guest(tmp_path, on_disk=on_disk, source=source, visible=form == "visible")


def _line_after_entry(text, path, line):
    """The source line traceback printed under the guest entry, or None when it printed
    none."""
    lines = text.splitlines()
    i = lines.index(f'  File "{path}", line {line}, in check')
    following = lines[i + 1] if i + 1 < len(lines) else "  File (none)"
    return None if following.startswith("  File ") else following.strip()


def _guest_tb(exc):
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_name != "check":
        tb = tb.tb_next
    assert tb is not None, "no guest entry in the traceback"
    return tb


# --- tracebacks and linecache -----------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("on_disk,with_source", [(True, False), (False, False), (False, True),
                                                 (True, True)])
def test_traceback_shows_the_guest_line_or_none(tmp_path, form, on_disk, with_source):
    exe, path = _make(tmp_path, form, on_disk=on_disk, source=GUEST if with_source else None)
    exc = _raised(form, exe)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 3.15's linecache warns about a spec without a loader
        text = "".join(traceback.format_exception(exc))
    expected = GUEST_LINES[RAISE_LINE - 1].strip() if on_disk or with_source else None
    assert _line_after_entry(text, path, RAISE_LINE) == expected


@pytest.mark.parametrize("form", FORMS)
def test_no_wrong_linecache_entry_is_left_behind(tmp_path, form):
    """A guest file with no text anywhere: after a traceback was printed, linecache holds
    nothing for it, also after checkcache (an entry with the pusher's loader had no mtime and
    stayed for the process), and callsite's own Traceback.format() prints no line for it."""
    exe, path = _make(tmp_path, form, on_disk=False)
    traceback.format_exception(_raised(form, exe))
    linecache.checkcache()
    assert linecache.getline(path, RAISE_LINE) == ""
    assert path not in linecache.cache
    tb = _run_in(form, exe, callsite.capture)
    text = "".join(tb.format())
    assert _line_after_entry(text, path, RAISE_LINE) is None


@pytest.mark.parametrize("form", FORMS)
def test_source_held_in_memory_reaches_linecache_and_callsite_format(tmp_path, form):
    exe, path = _make(tmp_path, form, on_disk=False, source=GUEST)
    assert exe.source == GUEST
    # callsite's own format: linecache learns the text from the executable.
    tb = _run_in(form, exe, callsite.capture)
    expected = GUEST_LINES[RAISE_LINE - 1].strip()
    assert _line_after_entry("".join(tb.format()), path, RAISE_LINE) == expected
    # Once a tool saw the frame, linecache.getline finds the text, also after checkcache.
    linecache.checkcache()
    assert linecache.getlines(path) == [line + "\n" for line in GUEST_LINES]


def test_guest_globals_are_the_guest_files(tmp_path):
    exe, path = _guest(tmp_path, on_disk=False, source=GUEST)
    frame = _guest_tb(_raised("decorated", exe)).tb_frame
    g = frame.f_globals
    assert (g["__name__"], g["__file__"]) == (path, path)
    assert g["__spec__"].loader is g["__loader__"] and g["__spec__"].name == path
    assert g["__loader__"].get_source(path) == GUEST
    with pytest.raises(ImportError):
        g["__loader__"].get_source("another.module")
    other, _ = _guest(tmp_path, on_disk=False)  # the same file without a text
    g = _guest_tb(_raised("decorated", other)).tb_frame.f_globals
    assert g["__loader__"] is None and "__spec__" not in g


def test_source_must_be_a_str():
    for bad in (b"bytes", 3, ["line\n"]):
        with pytest.raises(TypeError, match=r"source must be a str .* not "
                                            + type(bad).__name__):
            native.Executable("check", lambda s: None, source=bad)
    assert native.Executable("check", lambda s: None, source=None).source is None


def test_a_new_text_under_the_same_name_replaces_the_old(tmp_path):
    """A program redefined under the same file name (a notebook cell run again): its frames
    show the new text, not what linecache kept of the old one."""
    exe, path = _guest(tmp_path, on_disk=False, source=GUEST)
    first = "".join(traceback.format_exception(_raised("decorated", exe)))
    assert _line_after_entry(first, path, RAISE_LINE) == GUEST_LINES[RAISE_LINE - 1].strip()
    changed = GUEST.replace("y > 5", "y > 7")
    exe, _ = _guest(tmp_path, on_disk=False, source=changed)
    again = "".join(traceback.format_exception(_raised("decorated", exe)))
    assert _line_after_entry(again, path, RAISE_LINE) == "assert y > 7, y"


@pytest.mark.parametrize("form", FORMS)
def test_the_text_is_released_with_its_executables(tmp_path, form):
    """Nothing of callsite's keeps the text once its executables, frames and linecache's lazy
    entry are gone (a program per notebook cell must not accumulate)."""
    text = "".join(["fn check(x)\n", "  let y = x + 1\n", "  assert y > 5, y\n"])
    baseline = sys.getrefcount(text)
    exe, path = _make(tmp_path, form, on_disk=False, source=text)
    traceback.format_exception(_raised(form, exe))
    assert linecache.getline(path, RAISE_LINE).strip() == "assert y > 5, y"  # read: not lazy
    del exe
    gc.collect()
    assert sys.getrefcount(text) == baseline


def test_a_second_file_of_an_executable_gets_no_text(tmp_path):
    """source= is the text of the executable's file: a location in another file never shows
    it."""
    first, second = str(tmp_path / "a.dsl"), str(tmp_path / "b.dsl")
    exe = native.Executable("check", locations=[native.Location(first, 3, name="check"),
                                                native.Location(second, 3, name="check")],
                            source=GUEST)
    for state, path, expected in ((0, first, GUEST_LINES[2].strip()), (1, second, None)):
        try:
            native.frame(exe, state)(_raise)()
        except ValueError as e:
            text = "".join(traceback.format_exception(e))
        assert _line_after_entry(text, path, 3) == expected


# --- inspect ----------------------------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("on_disk", [True, False])
def test_inspect_block_of_a_guest_frame_holds_its_own_line(tmp_path, form, on_disk):
    """inspect's source of a code object is the Python block from co_firstlineno. A traceback's
    guest frame never runs again, so its code starts at the frame's own line: on 3.13+ the
    block is that line (getblock finds no def/class/lambda and keeps one line); before 3.13
    inspect would walk back to line 1, a block without the frame's line, so it raises OSError
    (which tools handle) instead."""
    exe, path = _make(tmp_path, form, on_disk=on_disk, source=None if on_disk else GUEST)
    exc = _raised(form, exe)
    traceback.format_exception(exc)  # linecache has the guest's lines now
    assert linecache.getline(path, RAISE_LINE).strip() == GUEST_LINES[RAISE_LINE - 1].strip()
    frame = _guest_tb(exc).tb_frame
    for subject in (frame, frame.f_code):
        if INSPECT_BLOCK_AT_FRAME_LINE:
            assert inspect.getsourcelines(subject) == ([GUEST_LINES[RAISE_LINE - 1] + "\n"],
                                                       RAISE_LINE)
        else:
            with pytest.raises(OSError):
                inspect.getsourcelines(subject)
    contexts = [info.code_context for info in inspect.getinnerframes(exc.__traceback__)
                if info.filename == path]
    assert contexts == [[GUEST_LINES[RAISE_LINE - 1] + "\n"] if INSPECT_BLOCK_AT_FRAME_LINE
                        else None]


def _tokenizes_from(text, line):
    """The oracle: whether inspect.getblock returns for the text's lines from `line`."""
    try:
        inspect.getblock(text.splitlines(True)[line - 1:])
    except Exception:
        return False
    return True


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("variant", ["unclosed-bracket", "lone-quote"])
def test_inspect_refuses_a_block_python_cannot_tokenize(tmp_path, form, variant):
    """inspect.getblock tokenizes the guest text from the code's first line as Python: a
    bracket the guest line opens and never closes (every version), or a lone quote after it
    (a comment in the guest's language; 3.13, whose getblock reads to the end), makes it raise
    tokenize's error, which tools (IPython's VerboseTB) let escape. There the frame's code has
    no Python block at all (OSError), and every tool keeps its whole report."""
    _skip_unless_form_runs(form)
    text = (GUEST.replace("assert y > 5, y", "assert y > 5, (y") if variant == "unclosed-bracket"
            else GUEST.replace("  return y\n", "  return y  -- don't\n"))
    tokenizes = _tokenizes_from(text, RAISE_LINE)
    if variant == "unclosed-bracket" or sys.version_info[:2] == (3, 13):
        assert not tokenizes
    path = tmp_path / "prog.dsl"
    exe = native.Executable("check", visible=form == "visible", source=text,
                            locations=[native.Location(str(path), 2, name="check"),
                                       native.Location(str(path), RAISE_LINE, name="check")])
    exc = _raised(form, exe)
    entry = _guest_tb(exc)
    frame = entry.tb_frame
    assert entry.tb_lineno == RAISE_LINE
    assert frame.f_lineno == RAISE_LINE or not FRAME_LINE_SETTABLE
    if INSPECT_BLOCK_AT_FRAME_LINE and tokenizes:
        assert inspect.getsourcelines(frame) == ([text.splitlines(True)[RAISE_LINE - 1]],
                                                 RAISE_LINE)
    else:
        with pytest.raises(OSError):
            inspect.getsourcelines(frame)
    ultratb = pytest.importorskip("IPython.core.ultratb", reason="IPython is not installed")
    report = ultratb.VerboseTB(theme_name="nocolor").text(type(exc), exc, exc.__traceback__)
    assert f"{path}:{RAISE_LINE}, in check()" in report
    assert report.rstrip().endswith("ValueError: raised inside the guest frame")


@pytest.mark.parametrize("form", FORMS)
def test_inspect_block_is_not_asked_for_past_2000_lines(tmp_path, form):
    """3.13's inspect.getblock tokenizes a guest file from the frame's line to its end:
    callsite asks it (on a raise) only for at most 2000 lines; past that the frame has no block
    (OSError). 3.14+ getblock stops at the end of the line's logical line: no limit."""
    _skip_unless_form_runs(form)
    found = {}
    for tail in (2000 - 3, 2000 - 2):  # lines 3.. to the end: 2000, then 2001
        path = tmp_path / f"tail{tail}.dsl"
        exe = native.Executable(
            "check", visible=form == "visible", source=GUEST + "  y\n" * tail,
            locations=[native.Location(str(path), 2, name="check"),
                       native.Location(str(path), RAISE_LINE, name="check")])
        frame = _guest_tb(_raised(form, exe)).tb_frame
        try:
            found[tail] = inspect.getsourcelines(frame)[1]
        except OSError:
            found[tail] = None
    block_at = RAISE_LINE if INSPECT_BLOCK_AT_FRAME_LINE else None
    assert found == {2000 - 3: block_at,
                     2000 - 2: block_at if sys.version_info >= (3, 14) else None}


def test_inspect_block_of_each_traceback_entry_is_its_own_line(tmp_path):
    """Two entries of one guest function at different lines: each one's block is its line."""
    exe, path = _make(tmp_path, "with", on_disk=False, source=GUEST)
    blocks = []
    for state in (0, 1):
        try:
            with exe.frame(state):
                raise ValueError(state)
        except ValueError as e:
            entry = _guest_tb(e)
            frame = entry.tb_frame
        assert entry.tb_lineno == state + 2
        assert frame.f_lineno == state + 2 or not FRAME_LINE_SETTABLE
        if INSPECT_BLOCK_AT_FRAME_LINE:
            blocks.append(inspect.getsourcelines(frame))
        else:
            with pytest.raises(OSError):
                inspect.getsourcelines(frame)
    if INSPECT_BLOCK_AT_FRAME_LINE:
        assert blocks == [([GUEST_LINES[1] + "\n"], 2), ([GUEST_LINES[2] + "\n"], 3)]


def test_live_visible_frame_keeps_its_code_context_and_the_kept_frame_its_lines(tmp_path):
    """A live visible frame's code starts at its first located line (what 3.14+ instrumentation
    needs), so inspect.stack() shows the guest line as code context; the frame object kept past
    the pop runs a copy whose first line is past any file: same lines and positions, no Python
    block."""
    exe, path = _visible(tmp_path, on_disk=False, source=GUEST)

    def look():
        guest = sys._getframe(1)
        info = inspect.getframeinfo(guest)
        return guest, guest.f_code, list(guest.f_code.co_positions()), info.code_context

    kept, live_code, live_positions, context = guest_pusher.run_in("visible", exe, look)
    assert live_code.co_firstlineno == 2
    assert context == [GUEST_LINES[RAISE_LINE - 1] + "\n"]
    assert kept.f_code is not live_code and kept.f_code.co_name == "check"
    assert kept.f_lineno == RAISE_LINE
    assert list(kept.f_code.co_positions()) == live_positions
    if INSPECT_BLOCK_AT_FRAME_LINE:  # the kept frame's code starts at its own line
        assert kept.f_code.co_firstlineno == RAISE_LINE
        assert inspect.getsourcelines(kept) == ([GUEST_LINES[RAISE_LINE - 1] + "\n"], RAISE_LINE)
    else:
        with pytest.raises(OSError):
            inspect.getsourcelines(kept)


# --- warnings, globals() and imports from C inside a visible frame ------------------------------

def _visible(tmp_path, **kwargs):
    _skip_unless_form_runs("visible")
    return _guest(tmp_path, visible=True, **kwargs)


def test_warning_attributed_to_the_guest_frame(tmp_path):
    exe, path = _visible(tmp_path, on_disk=False, source=GUEST)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        guest_pusher.run_in("visible", exe, lambda: warnings.warn("from the guest", UserWarning, 2))
    assert [(w.filename, w.lineno) for w in caught] == [(path, RAISE_LINE)]
    # The module filter matches the guest's name, and the line shown is the guest's.
    with warnings.catch_warnings():
        warnings.filterwarnings("error", module=re.escape(path))
        with pytest.raises(UserWarning):
            guest_pusher.run_in("visible", exe, lambda: warnings.warn("from the guest", UserWarning, 2))
    # The registry is the guest module's (warnings keeps it in the frame's globals).
    assert "__warningregistry__" in native.frame(exe, 1)(globals)()


@pytest.mark.parametrize("with_source", [False, True])
def test_linecache_read_through_a_live_frames_globals(tmp_path, with_source):
    """linecache.getline(file, line, frame.f_globals), as pdb, the pure-Python warnings and
    traceback's lazycache read a live frame: the guest's text or nothing, never the pusher's
    module."""
    exe, path = _visible(tmp_path, on_disk=False, source=GUEST if with_source else None)

    def read_the_guest_frame():
        guest = sys._getframe(1)
        return guest.f_lineno, linecache.getline(path, guest.f_lineno, guest.f_globals)

    line, text = guest_pusher.run_in("visible", exe, read_the_guest_frame)
    assert line == RAISE_LINE
    assert text == (GUEST_LINES[RAISE_LINE - 1] + "\n" if with_source else "")


def test_globals_and_imports_from_c_inside_a_visible_frame(tmp_path):
    """Builtins called directly inside the frame read its globals (PyEval_GetGlobals):
    globals() is the guest's, and an import made from C (PyImport_Import, through the
    globals' __builtins__) works."""
    exe, path = _visible(tmp_path, on_disk=False)
    assert native.frame(exe, 1)(globals)()["__name__"] == path
    parsed = native.frame(exe, 1)(datetime.datetime.strptime)("2024-05-06", "%Y-%m-%d")
    assert parsed == datetime.datetime(2024, 5, 6)
    assert native.frame(exe, 1)(sys._getframemodulename)(0) == path


# --- pdb --------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS)
def test_pdb_where_and_list_show_the_guest_text(tmp_path, form):
    exe, path = _make(tmp_path, form, on_disk=False, source=GUEST)
    exc = _raised(form, exe)
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO("up\nwhere\nlist 1,5\nquit\n"), stdout=out,
                       nosigint=True)
    debugger.reset()
    debugger.interaction(None, exc.__traceback__)
    text = out.getvalue()
    assert f"{path}({RAISE_LINE})check()" in text
    where = text.split(f"{path}({RAISE_LINE})check()", 1)[1].splitlines()
    assert where[1].strip() == "-> " + GUEST_LINES[RAISE_LINE - 1].strip()
    for number, line in enumerate(GUEST_LINES, 1):  # `list 1,5`: every line of the guest
        assert re.search(rf"\b{number} +(->)?\t{re.escape(line)}$", text, re.M), line


# --- the reporters people run -----------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("on_disk,with_source", [(True, False), (False, False), (False, True)])
def test_sentry_sdk_context_lines_are_the_guests(tmp_path, form, on_disk, with_source):
    sentry_sdk = pytest.importorskip("sentry_sdk", reason="sentry_sdk is not installed")
    exe, path = _make(tmp_path, form, on_disk=on_disk, source=GUEST if with_source else None)
    exc = _raised(form, exe)
    frames = sentry_event(sentry_sdk, exc)["exception"]["values"][0]["stacktrace"]["frames"]
    guest = [f for f in frames if f["function"] == "check"]
    assert len(guest) == 1 and guest[0]["lineno"] == RAISE_LINE
    assert guest[0]["module"] == path
    if on_disk or with_source:
        assert guest[0]["context_line"] == GUEST_LINES[RAISE_LINE - 1]
        assert guest[0]["pre_context"] == GUEST_LINES[:RAISE_LINE - 1]
    else:
        assert guest[0].get("context_line") is None and not guest[0].get("pre_context")
    raiser = [f for f in frames if f["function"] == "_raise"]
    assert raiser[0]["context_line"].strip() == 'raise ValueError("raised inside the guest frame")'


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("on_disk", [True, False])
def test_stackprinter_prints_the_whole_report(tmp_path, form, on_disk):
    stackprinter = pytest.importorskip("stackprinter", reason="stackprinter is not installed")
    exe, path = _make(tmp_path, form, on_disk=on_disk, source=None if on_disk else GUEST)
    exc = _raised(form, exe)
    traceback.format_exception(exc)  # linecache has the guest's lines, as after a print
    text = stackprinter.format(exc)
    assert "Picked an invalid source context" not in text and "Stackprinter failed" not in text
    header = f'File "{path}", line {RAISE_LINE}, in check'
    section = text.split(header, 1)[1].split('File "', 1)[0]
    shown = [line.strip() for line in section.splitlines() if line.strip()]
    # the frame's own line (its summary form: a frame that is not the last one), no other
    assert shown == ([GUEST_LINES[RAISE_LINE - 1].strip()] if INSPECT_BLOCK_AT_FRAME_LINE
                     else []), shown
    assert 'raise ValueError("raised inside the guest frame")' in text
    assert text.rstrip().endswith("ValueError: raised inside the guest frame")


@pytest.mark.parametrize("form", FORMS)
def test_ipython_verbose_traceback_keeps_every_frame(tmp_path, form):
    pytest.importorskip("IPython", reason="IPython is not installed")
    from IPython.core.ultratb import VerboseTB

    exe, path = _make(tmp_path, form, on_disk=False, source=GUEST)
    exc = _raised(form, exe)
    text = VerboseTB().text(type(exc), exc, exc.__traceback__)
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert f"{path}:{RAISE_LINE}, in check()" in text
    assert 'raise ValueError("raised inside the guest frame")' in text
