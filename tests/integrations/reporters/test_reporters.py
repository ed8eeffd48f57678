"""The error reporters people run, on an exception raised at guest depth 3 inside a real
tree-walking interpreter from the package index (loxygen, a Lox interpreter, wired to callsite
from tests/support/guest_lox.py without touching its source).

Each tool must show every guest frame (the script, then fact three times) with its file and
line, the guest's own source line (never the pushing module's), and each activation's own
variables — or, where the tool cannot by its design, that is said in docs/native.md's table
and the test checks what it can show. The guest program is on disk, or held in memory
(`Executable(..., source=text)`: no file under its name) for the in-process tools.

One test per tool, skipped with the reason where the tool does not import. Guest frames are
real interpreter frames on 3.12+ only: on 3.10/3.11 the suite does not install these tools
(requirements/test-optional.txt)."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap

import pytest

from callsite import native

import guest_lox
import py_spy_support
from sentry_events import sentry_event
from guest_lox import CHECK_LINE, EXPECTED, LINES, guest_source

pytestmark = pytest.mark.skipif(
    not native.visible_frames_available(),
    reason=f"guest frames are interpreter frames only with visible frames "
           f"({native.visible_frames_refusal()})")

SUPPORT = os.path.dirname(os.path.abspath(guest_lox.__file__))
# inspect.findsource() of a code object starts at co_firstlineno on 3.13+; before, it walks
# back to the nearest line that looks like a Python def (line 1 of a guest file), a block
# without the frame's line. Frames that never run again (a traceback's) then have a code whose
# first line is their own line on 3.13+, and no Python block at all before (OSError): the tools
# that read the block (IPython, stackprinter, pytest) show the guest line on 3.13+ only.
INSPECT_BLOCK_AT_FRAME_LINE = sys.version_info >= (3, 13)
GUEST_FRAMES = [(name, line) for name, line, _ in EXPECTED]
GUEST_VARS = [variables for _, _, variables in EXPECTED[1:]]  # the fact activations


@pytest.fixture(scope="module", autouse=True)
def loxygen():
    return pytest.importorskip("loxygen.interpreter",
                               reason="loxygen (the Lox interpreter driven here) is not installed")


@pytest.fixture(params=["on-disk", "in-memory"])
def raised(request, tmp_path):
    """(the exception, the guest file's name): the program on disk or held in memory."""
    in_memory = request.param == "in-memory"
    path = tmp_path / ("memory" if in_memory else "disk") / "fact.lox"
    path.parent.mkdir()
    with guest_lox.Guest(path, in_memory) as guest:
        exc = guest.run()
    if in_memory:
        assert not path.exists()
    return exc, str(path)


def sections(text, header):
    """{(name, line): the text from that guest frame's header to the next frame's header}, in
    order, for the guest frames of `text`; `header` is a regex with the file name in it and
    groups (line, name)."""
    found = list(re.finditer(header, text))
    out = []
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        out.append(((m.group(2), int(m.group(1))), text[m.end():end]))
    return out


def until_next_frame(section, marker):
    """The part of a guest frame's section before the next (Python) frame's header."""
    return section.split(marker, 1)[0]


def test_rich_traceback_show_locals(raised):
    rich_traceback = pytest.importorskip("rich.traceback", reason="rich is not installed")
    from rich.console import Console

    exc, filename = raised
    tb = rich_traceback.Traceback.from_exception(type(exc), exc, exc.__traceback__,
                                                 show_locals=True, width=200)
    frames = [f for f in tb.trace.stacks[0].frames if f.filename == filename]
    assert [(f.name, f.lineno) for f in frames] == GUEST_FRAMES
    assert [{k: v.render() for k, v in f.locals.items()} for f in frames[1:]] == \
        [{k: repr(v) for k, v in variables.items()} for variables in GUEST_VARS]
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(tb)
    text = console.file.getvalue()
    for (name, line), section in sections(text, re.escape(filename) + r":(\d+) in (\S+)"):
        shown = until_next_frame(section, ".py:")
        assert re.search(rf"❱ {line} +{re.escape(guest_source(line))}", shown), shown
        if line > 1:  # the lines around it are the guest's too
            assert re.search(rf"\b{line - 1} +{re.escape(guest_source(line - 1))}", shown), shown


def test_loguru_diagnose(raised):
    loguru = pytest.importorskip("loguru", reason="loguru is not installed")
    exc, filename = raised
    out = io.StringIO()
    sink = loguru.logger.add(out, backtrace=True, diagnose=True, colorize=False,
                             format="{message}")
    try:
        loguru.logger.opt(exception=exc).error("guest failed")
    finally:
        loguru.logger.remove(sink)
    text = out.getvalue()
    found = sections(text, rf'File "{re.escape(filename)}", line (\d+), in (\S+)')
    assert [frame for frame, _ in found] == GUEST_FRAMES
    for (name, line), section in found:
        shown = until_next_frame(section, "File ")
        assert shown.lstrip().startswith(guest_source(line)), shown
    # diagnose: the values of the names on the guest line, from that activation only (the
    # innermost: n is 1.0); the guest's names are not looked up in the pushing module
    innermost = until_next_frame(found[-1][1], "File ")
    assert "-> 1.0" in innermost and "<function check" not in innermost, innermost


def test_ipython_verbose_tb(raised):
    ultratb = pytest.importorskip("IPython.core.ultratb", reason="IPython is not installed")
    exc, filename = raised
    text = ultratb.VerboseTB(theme_name="nocolor").text(type(exc), exc, exc.__traceback__)
    found = sections(text, rf"File {re.escape(filename)}:(\d+), in ([^\s(]+)\(\)")
    assert [frame for frame, _ in found] == GUEST_FRAMES
    for (name, line), section in found:
        shown = until_next_frame(section, "File ")
        if INSPECT_BLOCK_AT_FRAME_LINE:
            assert re.search(rf"----> {line} +{re.escape(guest_source(line))}", shown), shown
            # the lines around it are the guest's too
            if line > 1:
                assert re.search(rf"\b{line - 1} +{re.escape(guest_source(line - 1))}", shown)
        else:  # inspect has no source for the frame: the header only
            assert shown.strip() == "", shown
        # it lists no variables for a frame whose source is not Python; none from the
        # module that pushed the frame either
        assert not re.search(r"^\s+n = ", shown, re.M), shown
        assert "<function check" not in shown, shown


def test_sentry_sdk_event(raised):
    sentry_sdk = pytest.importorskip("sentry_sdk", reason="sentry_sdk is not installed")
    exc, filename = raised
    event = sentry_event(sentry_sdk, exc)  # what its transport would send, sent nowhere
    frames = [f for f in event["exception"]["values"][0]["stacktrace"]["frames"]
              if f.get("abs_path") == filename]
    assert [(f["function"], f["lineno"]) for f in frames] == GUEST_FRAMES
    for f in frames:
        line = f["lineno"]
        assert f["context_line"] == LINES[line - 1]
        assert f["pre_context"] == LINES[max(0, line - 6):line - 1]
        assert f["post_context"] == LINES[line:line + 5]
        assert f.get("module") != guest_lox.__name__  # not the module that pushed the frame
    # sentry_sdk sends a frame's variables as repr strings (its serializer's is_vars mode), as
    # for the Python frame of check() in the same event
    host = [f for f in event["exception"]["values"][0]["stacktrace"]["frames"]
            if f.get("function") == "check"]
    assert host and host[-1]["vars"]["n"] == repr(1.0)
    assert [f["vars"] for f in frames[1:]] == \
        [{k: repr(v) for k, v in variables.items()} for variables in GUEST_VARS]


def test_stackprinter(raised):
    stackprinter = pytest.importorskip("stackprinter", reason="stackprinter is not installed")
    exc, filename = raised
    # The detailed report only (a long one ends with a one-line summary of every frame), with
    # the values of the names on the lines it shows (its default; show_vals="all" lists the
    # names of a block's lines but its last, which for a one-line block is none).
    text = stackprinter.format(exc, add_summary=False)
    assert "Stackprinter failed" not in text, text
    found = sections(text, rf'File "{re.escape(filename)}", line (\d+), in (\S+)')
    assert [frame for frame, _ in found] == GUEST_FRAMES
    for ((name, line), section), variables in zip(found, [None] + GUEST_VARS):
        shown = [s.strip() for s in until_next_frame(section, "\nFile ").splitlines() if s.strip()]
        if not INSPECT_BLOCK_AT_FRAME_LINE:  # no source: the header only, and so no variables
            assert shown == [], shown
            continue
        # inspect's block is the guest line alone: printed without a line number
        assert shown[0] == guest_source(line), shown
        # the values of the names it finds on the line, this activation's
        names = set(re.findall(r"[A-Za-z_]\w*", guest_source(line)))
        listed = [s for s in shown[1:] if not set(s) <= {"."}]  # without its dotted rules
        assert listed == [f"{key} = {value!r}" for key, value in (variables or {}).items()
                          if key in names], shown


def test_better_exceptions(raised):
    better_exceptions = pytest.importorskip("better_exceptions",
                                            reason="better_exceptions is not installed")
    exc, filename = raised
    text = "".join(better_exceptions.format_exception(type(exc), exc, exc.__traceback__))
    found = sections(text, rf'File "{re.escape(filename)}", line (\d+), in (\S+)')
    assert [frame for frame, _ in found] == GUEST_FRAMES
    for (name, line), section in found:
        shown = until_next_frame(section, "File ")
        assert shown.lstrip().startswith(guest_source(line)), shown
        # It shows values only for a line that parses as Python (ast.parse): a Lox line does
        # not, so no values, and none looked up in the module that pushed the frame.
        assert "└" not in shown and "<function check" not in shown, shown
    # The Python frame of check() below them shows its values: the marker looked for above
    # is the one it prints. (The better_exceptions release tested shows no values for any
    # frame on 3.13+.)
    host = until_next_frame(re.split(r"guest_lox\.py\", line \d+, in check\n", text)[1], "File ")
    if sys.version_info < (3, 13):
        assert "└ 1.0" in host, host


# --- the tools that run in a process of their own (the program on disk) ----------------------

CHILD_PROGRAM = textwrap.dedent("""
    import pathlib, sys
    sys.path.insert(0, {support!r})
    import guest_lox
    with guest_lox.Guest(pathlib.Path({path!r}), in_memory=False) as guest:
        exc = guest.run()
""")


def child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SUPPORT] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    return env


def test_pytest_l(tmp_path):
    path = tmp_path / "fact.lox"
    test_file = tmp_path / "test_guest.py"
    test_file.write_text(textwrap.dedent(f"""
        import pathlib
        import guest_lox

        def test_guest():
            with guest_lox.Guest(pathlib.Path({str(path)!r}), in_memory=False) as guest:
                raise guest.run()
    """))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-l", "-p", "no:cacheprovider",
         "-p", "no:lox_tester_plugin", "--tb=long", str(test_file)],
        capture_output=True, text=True, cwd=tmp_path, env=child_env(), timeout=120)
    text = result.stdout
    assert result.returncode == 1, text + result.stderr
    # each of pytest's long entries ends with "path:line: " (relative to its directory)
    entry = rf"^(?:\S*/)?{re.escape(path.name)}:(\d+): "
    entries = list(re.finditer(entry, text, re.M))
    assert [int(m.group(1)) for m in entries] == [line for _, line in GUEST_FRAMES], text
    blocks = re.split(r"\n_ _ _[ _]*\n", text)
    guest_blocks = [b for b in blocks if re.search(entry, b, re.M)]
    assert len(guest_blocks) == len(GUEST_FRAMES), text
    for block, (name, line), variables in zip(guest_blocks, GUEST_FRAMES, [None] + GUEST_VARS):
        if INSPECT_BLOCK_AT_FRAME_LINE:
            assert re.search(rf"^>\s+{re.escape(guest_source(line))}$", block, re.M), block
        else:  # no source from inspect: pytest prints ??? for it
            assert re.search(r"^>\s+\?\?\?$", block, re.M), block
        for key, value in (variables or {}).items():
            assert re.search(rf"^{key}\s+= {re.escape(repr(value))}$", block, re.M), block


def test_pdb_post_mortem(tmp_path):
    """pdb scripted through its stdin: `where` lists the guest frames at their lines, `up`
    reaches each activation and `p n` prints that activation's own n."""
    path = tmp_path / "fact.lox"
    with guest_lox.Guest(path, in_memory=False) as guest:
        exc = guest.run()
    # pdb's post-mortem stack is the traceback's entries: count `up`s from the innermost.
    tb_frames = []
    tb = exc.__traceback__
    while tb:
        tb_frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    guest_at = [i for i, f in enumerate(tb_frames) if f == str(path)]
    commands, at = ["where"], len(tb_frames) - 1
    for i in reversed(guest_at[1:]):  # the fact activations, innermost first
        commands += [f"up {at - i}", "p n", "l"]
        at = i
    commands.append("q")
    script = CHILD_PROGRAM.format(support=SUPPORT, path=str(path)) + \
        "import pdb\npdb.post_mortem(exc.__traceback__)\n"
    result = subprocess.run([sys.executable, "-c", script], input="\n".join(commands) + "\n",
                            capture_output=True, text=True, env=child_env(), timeout=120)
    text = result.stdout
    where = [(m.group(2), int(m.group(1))) for m in
             re.finditer(rf"{re.escape(str(path))}\((\d+)\)(\S+)\(\)", text)]
    assert where[:len(GUEST_FRAMES)] == GUEST_FRAMES, text
    values = re.findall(r"^\(Pdb\) (\S+)$", text, re.M)
    assert values == ["1.0", "2.0", "3.0"], text
    # `l` lists the guest's own lines around each activation's line
    for line in (CHECK_LINE, 3, 3):
        assert re.search(rf"^\s*{line}\s+->\s+{re.escape(LINES[line - 1])}$", text, re.M), text


def test_py_spy_dump_locals(tmp_path):
    """py-spy reads the frame chain and line tables of another process: it shows the guest
    frames at their lines. It reads variables from a frame's fast locals only
    (co_varnames), which callsite's frames do not have: it shows no guest variables."""
    py_spy_support.py_spy_path()
    path, ready = tmp_path / "fact.lox", tmp_path / "ready"
    script = textwrap.dedent(f"""
        import pathlib, sys, time
        sys.path.insert(0, {SUPPORT!r})
        import guest_lox

        def check(n):
            open({str(ready)!r}, "w").close()
            time.sleep(60)

        guest_lox.check = check
        with guest_lox.Guest(pathlib.Path({str(path)!r}), in_memory=False) as guest:
            guest.run()
    """)
    child = subprocess.Popen([sys.executable, "-c", script], env=child_env())
    try:
        py_spy_support.wait_for(ready, timeout=20.0, child=child)
    except AssertionError:
        child.kill()
        child.wait()
        raise
    result = py_spy_support.dump(child, "--locals")
    shown = [(m.group(1), int(m.group(2))) for m in
             re.finditer(r"^\s*(\S+) \((?:\S*/)?fact\.lox:(\d+)\)$", result.stdout, re.M)]
    assert shown == GUEST_FRAMES[::-1], result.stdout  # py-spy lists innermost first

