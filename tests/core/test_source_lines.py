"""symbolize/source_lines.cc against linecache itself: the same lines and the same cache entry,
for generated files of every shape detect_encoding and TextIOWrapper treat specially, for the
names linecache resolves its own way, and for every .py file of the running Python's stdlib."""
import contextlib
import fractions
import linecache
import os
import subprocess
import sys
import textwrap
import tokenize
import types

import pytest

from callsite import _callsite

native = _callsite._source_lines


@contextlib.contextmanager
def counting_reads():
    """Counts linecache's own reads (tokenize.open, which updatecache calls): none when the
    native reader read the file itself."""
    calls = []
    real = tokenize.open

    def counting_open(filename):
        calls.append(filename)
        return real(filename)

    tokenize.open = counting_open
    try:
        yield calls
    finally:
        tokenize.open = real


def outcome(reader, name):
    """What a reader gives for `name` from an empty cache: its result (or exception type) and the
    cache it leaves."""
    linecache.clearcache()
    try:
        result = reader(name)
    except Exception as e:  # linecache may raise for a name that is not a path: so must we
        result = type(e)
    return result, dict(linecache.cache)


def assert_same(name):
    """Both readers give the same lines and leave equal entries (element for element, with the
    same types); returns whether the native reader read the file itself."""
    with counting_reads() as calls:
        got, got_cache = outcome(native, name)
    expected, expected_cache = outcome(linecache.getlines, name)
    assert got == expected, name
    assert got_cache == expected_cache, name
    for key, entry in expected_cache.items():
        assert [type(x) for x in got_cache[key]] == [type(x) for x in entry]
    if isinstance(expected, list):
        assert all(type(line) is str for line in got)
    return not calls


@pytest.fixture(autouse=True)
def fresh_linecache():
    saved = dict(linecache.cache)
    yield
    linecache.clearcache()
    linecache.cache.update(saved)


# (id, bytes, whether the native reader reads it itself)
FILES = [
    ("plain", b"x = 1\ny = 2\n", True),
    ("utf8 text", "s = 'héllo €𝄞'\n".encode(), True),
    ("bom", b"\xef\xbb\xbfx = 1\n", True),
    ("bom no newline", b"\xef\xbb\xbfx = 1", True),
    ("bom twice", b"\xef\xbb\xbf\xef\xbb\xbfx = 1\n", True),
    ("bom only", b"\xef\xbb\xbf", False),  # an empty text: [] before 3.13, ['\n'] after
    ("empty", b"", False),
    ("only newline", b"\n", True),
    ("only cr", b"\r", True),
    ("cookie utf-8", b"# -*- coding: utf-8 -*-\nx = '\xc3\xa9'\n", True),
    ("cookie UTF_8", b"# vim: set fileencoding=UTF_8 :\nx = 1\n", True),
    ("cookie utf-8-unix", b"# coding=utf-8-unix\nx = 1\n", True),
    ("cookie utf8 (another name)", b"# coding: utf8\nx = '\xc3\xa9'\n", False),
    ("bom and cookie utf-8", b"\xef\xbb\xbf# coding: utf-8\nx = 1\n", True),
    ("bom and cookie utf8", b"\xef\xbb\xbf# coding: utf8\nx = 1\n", False),  # SyntaxError: []
    ("bom and cookie latin-1", b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", False),
    ("cookie latin-1", b"# coding: latin-1\nx = '\xe9'\n", False),
    ("cookie unknown", b"# coding: no-such-codec\nx = 1\n", False),
    ("cookie after shebang", b"#!/usr/bin/env python\n# coding: latin-1\nx = '\xe9'\n", False),
    ("cookie utf-8 after shebang", b"#!/usr/bin/python\n# coding: utf-8\nx = '\xc3\xa9'\n", True),
    ("cookie after blank", b"  \t\n# coding: latin-1\nx = '\xe9'\n", False),
    ("cookie after form feed", b"\f\n\f# coding: latin-1\nx = '\xe9'\n", False),
    ("cookie after code is ignored", b"x = 1\n# coding: latin-1\ny = '\xc3\xa9'\n", True),
    ("ignored cookie, latin-1 byte", b"x = 1\n# coding: latin-1\ny = '\xe9'\n", True),
    ("cookie on line 3 is ignored", b"#!/x\n#\n# coding: latin-1\ny = '\xe9'\n", True),
    ("cookie needs a name", b"# coding: !coding: latin-1\nx = '\xe9'\n", False),
    ("cookie needs a name, utf-8", b"# coding: !coding=utf-8\nx = 1\n", True),
    ("cookie not in a comment", b"x = 'coding: latin-1'\n", True),
    ("cookie in a CR-only first line", b"# hi\rcoding: latin-1\rx = '\xe9'\r", False),
    ("CR-only, blank first", b"\r# coding: latin-1\rx = '\xe9'\r", True),  # one line: no cookie
    ("crlf", b"a\r\nb\r\n", True),
    ("crlf, no last newline", b"a\r\nb", True),
    ("lone cr", b"a\rb\r", True),
    ("mixed", b"a\r\nb\rc\nd", True),
    ("cr cr lf", b"a\r\r\nb\n\r", True),
    ("no last newline", b"a\nb", True),
    ("blank lines", b"\n\n\n", True),
    ("not utf-8 in line 1", b"x = '\xff'\n", True),
    ("not utf-8 later", b"x = 1\n\n\ny = '\xff'\n", True),
    ("surrogate", b"x = '\xed\xa0\x80'\n", True),
    ("truncated sequence", b"x = 1\n\xe2\x82", True),
    ("sequence cut by newline", b"x = '\xe2\x82\n'\n", True),
    ("not line breaks for readlines", "a\fb\vc\x1cd\x1de\x1ef\x85g\u2028h\u2029i\n".encode(), True),
    ("nul in line 1", b"x = 1\x00\ny = 2\n", False),  # a SyntaxError from 3.14
    ("nul later", b"x = 1\ny = 2\nz = '\x00'\n", True),
    ("long line", b"x = '" + b"y" * 1_000_000 + b"'\n", True),
    ("many lines", b"".join(b"line %d\r\n" % i for i in range(100_000)), True),
]


@pytest.mark.parametrize("data, reads_natively", [pytest.param(d, r, id=i) for i, d, r in FILES])
def test_generated_file(tmp_path, data, reads_natively):
    path = tmp_path / "source.py"
    path.write_bytes(data)
    assert assert_same(str(path)) == reads_natively


def test_str_splitlines_would_differ(tmp_path):
    """The separators readlines() keeps inside a line: a reader built on str.splitlines (as
    linecache's lazy path is) would split them, so this file checks which one is reproduced."""
    text = "a\fb\vc\x1cd\u2028e\n"
    path = tmp_path / "seps.py"
    path.write_bytes(text.encode())
    assert native(str(path)) == [text] != [line + "\n" for line in text.splitlines()]


def test_a_cached_name_is_returned_as_it_is(tmp_path):
    path = str(tmp_path / "absent.py")
    lines = ["not the file\n"]
    linecache.cache[path] = (1, 2.0, lines, path)
    assert native(path) is lines
    # getlines does not check staleness: an entry for an existing file is returned unread
    real = str(tmp_path / "real.py")
    with open(real, "w") as f:
        f.write("x = 1\n")
    linecache.cache[real] = (0, 0.0, lines, real)
    assert native(real) is lines


def test_a_non_list_in_the_cache_is_a_type_error(tmp_path):
    path = str(tmp_path / "absent.py")
    linecache.cache[path] = (1, 2.0, "lines", path)
    with pytest.raises(TypeError, match="expected a list"):
        native(path)


def test_a_lazy_entry_is_linecache_s(tmp_path):
    name = str(tmp_path / "lazy_module.py")  # no such file: the loader gives the source

    asked = []

    class Loader:
        def get_source(self, fullname):
            asked.append(fullname)
            return f"# {fullname}\nx = 1\x0cy = 2"

    loader = Loader()
    module_globals = {"__name__": "lazy_module", "__loader__": loader,
                      "__spec__": types.SimpleNamespace(name="lazy_module", loader=loader)}
    linecache.clearcache()
    assert linecache.lazycache(name, module_globals)
    got = native(name)
    got_entry = linecache.cache[name]
    assert asked == ["lazy_module"]
    linecache.clearcache()
    assert linecache.lazycache(name, module_globals)
    assert got == linecache.getlines(name)
    assert got_entry == linecache.cache[name]


@pytest.mark.parametrize("name", [
    "<string>", "<stdin>", "<frozen os>", "", "os.py", "callsite_no_such_file.py",
    "/callsite/no/such/file.py", "/", "/dev/null", "relative/../x.py", "/tmp/a\x00b.py",
    "/tmp/\udcff.py",
])
def test_names_linecache_resolves(name):
    assert_same(name)


@pytest.mark.parametrize("name", [b"/etc/hostname", 1, None, ("a",)])
def test_names_that_are_not_str(name):
    assert_same(name)


def test_str_subclass_is_linecache_s():
    class Name(str):
        pass

    name = Name(os.__file__)
    assert not assert_same(name)


def test_directory_symlink_and_unusual_names(tmp_path):
    assert not assert_same(str(tmp_path))
    target = tmp_path / "target.py"
    target.write_text("x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    assert assert_same(str(link))
    odd = tmp_path / "é \udcff.py"
    with open(os.fsencode(odd), "wb") as f:
        f.write(b"y = 2\n")
    assert assert_same(str(odd))


def test_source_line_is_getline(tmp_path):
    path = tmp_path / "lines.py"
    path.write_bytes(b"a\nb\r\nc")
    name = str(path)
    for lineno in (-1, 0, 1, 2, 3, 4, 2**40):
        linecache.clearcache()
        expected = linecache.getline(name, lineno)
        linecache.clearcache()
        assert _callsite._source_line(name, lineno) == expected
    assert _callsite._source_line("<string>", 1) == ""


def test_checkcache_keeps_and_drops_native_entries(tmp_path):
    path = tmp_path / "changing.py"
    path.write_text("x = 1\n")
    name = str(path)
    linecache.clearcache()
    native(name)
    linecache.checkcache(name)
    assert name in linecache.cache  # size and st_mtime are os.stat's
    path.write_text("x = 10\n")
    linecache.checkcache(name)
    assert name not in linecache.cache


def fused(sec, nsec):
    """sec + 1e-9*nsec with one rounding (a fused multiply-add), computed exactly."""
    return float(fractions.Fraction(sec) + fractions.Fraction(1e-9) * nsec)


def test_mtime_where_one_or_two_roundings_differ(tmp_path):
    """st_mtime is `sec + 1e-9*nsec` computed by CPython's compiler: with two roundings, or
    one where it fused them. For an mtime where the two differ the native reader asks os.stat
    (they rarely differ for today's dates, often for the first seconds of 1970)."""
    sec = 1
    nsec = next(n for n in range(1, 10_000_000) if sec + 1e-9 * n != fused(sec, n))
    path = tmp_path / "stamped.py"
    path.write_text("x = 1\n")
    os.utime(path, ns=(sec * 10**9 + nsec, sec * 10**9 + nsec))
    assert assert_same(str(path))
    assert linecache.getlines(str(path)) and linecache.cache[str(path)][1] == os.stat(path).st_mtime


def test_reentrant_cache_key(tmp_path):
    """A key of linecache.cache whose __eq__ (run by the lookup) empties the cache."""
    path = tmp_path / "x.py"
    path.write_text("x = 1\n")
    name = str(path)

    class Colliding:
        def __hash__(self):
            return hash(name)

        def __eq__(self, other):
            linecache.cache.clear()
            return False

    linecache.clearcache()
    linecache.cache[Colliding()] = (1, None, ["y\n"], "y")
    assert native(name) == ["x = 1\n"]
    assert linecache.cache[name][2] == ["x = 1\n"]


def test_fallback_returning_a_non_list_is_a_type_error():
    real = linecache.getlines
    linecache.getlines = lambda filename, module_globals=None: "nope"
    try:
        with pytest.raises(TypeError, match="expected a list"):
            native("<string>")
    finally:
        linecache.getlines = real


def test_replaced_getlines_and_updatecache_are_called(tmp_path):
    """A linecache whose getlines (doctest's patch, a wrapper) or updatecache is not its own
    gives what the replacement gives, for a file the native reader would read."""
    path = tmp_path / "x.py"
    path.write_text("x = 1\n")
    name = str(path)
    real_getlines, real_updatecache = linecache.getlines, linecache.updatecache
    linecache.clearcache()
    try:
        linecache.getlines = lambda filename, module_globals=None: ["replaced\n"]
        assert native(name) == ["replaced\n"] and name not in linecache.cache
        linecache.getlines = real_getlines
        linecache.updatecache = lambda filename, module_globals=None: ["updated\n"]
        assert native(name) == ["updated\n"] and name not in linecache.cache
    finally:
        linecache.getlines, linecache.updatecache = real_getlines, real_updatecache
    assert native(name) == ["x = 1\n"]


def test_replaced_cache_dict_is_used(tmp_path):
    path = tmp_path / "x.py"
    path.write_text("x = 1\n")
    saved = linecache.cache
    linecache.cache = {}
    try:
        native(str(path))
        assert str(path) in linecache.cache and str(path) not in saved
    finally:
        linecache.cache = saved


def test_audit_hook_sees_the_open_and_may_refuse_it(tmp_path):
    """The native read raises tokenize.open's audit event; a hook raising OSError makes both
    readers give [] (linecache catches it), one raising another error propagates from both."""
    good, refused, failing = (tmp_path / n for n in ("good.py", "refused.py", "failing.py"))
    for p in (good, refused, failing):
        p.write_text("x = 1\n")
    script = textwrap.dedent(f"""
        import linecache, sys
        from callsite import _callsite
        events = []
        def hook(event, args):
            if event == "open" and str(args[0]).endswith(".py") and {str(tmp_path)!r} in str(args[0]):
                events.append(args)
                if args[0].endswith("refused.py"):
                    raise PermissionError("refused")
                if args[0].endswith("failing.py"):
                    raise RuntimeError("failing")
        sys.addaudithook(hook)
        def run(reader, name):
            linecache.clearcache()
            try:
                return reader(name), dict(linecache.cache)
            except RuntimeError as e:
                return str(e), dict(linecache.cache)
        for name in ({str(good)!r}, {str(refused)!r}, {str(failing)!r}):
            events.clear()
            got = run(_callsite._source_lines, name), list(events)
            events.clear()
            expected = run(linecache.getlines, name), list(events)
            assert got[0] == expected[0], (got, expected)
            assert got[1][:1] == expected[1][:1], (got, expected)
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def stdlib_sources():
    root = os.path.dirname(os.__file__)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "site-packages")
        for f in sorted(filenames):
            if f.endswith(".py"):
                yield os.path.join(dirpath, f)


def test_every_stdlib_source():
    """Thousands of real files, among them the test suite's deliberately odd ones (other
    encodings, bad cookies, BOMs)."""
    files = list(stdlib_sources())
    assert len(files) > 500
    native_reads = sum(assert_same(f) for f in files)
    assert native_reads > 0.9 * len(files)


def test_traceback_format_reads_files_natively(tmp_path, monkeypatch):
    """Traceback.format() reads its frames' files through the native reader before traceback
    asks linecache for their lines: linecache's own reading path (tokenize.open) is not used,
    and the lines and the cache entry are what traceback alone gives."""
    import tokenize

    import callsite

    path = tmp_path / "formatted_module.py"
    path.write_text("import callsite\n\ndef where():\n    return callsite.capture(limit=1)\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    tb = namespace["where"]()
    assert isinstance(tb, callsite.Traceback) and tb[0].filename == str(path)
    opened = []
    real_open = tokenize.open

    def counting_open(filename):
        opened.append(filename)
        return real_open(filename)

    monkeypatch.setattr(tokenize, "open", counting_open)
    linecache.clearcache()
    got = tb.format()
    got_cache = dict(linecache.cache)
    assert str(path) not in opened
    monkeypatch.undo()
    linecache.clearcache()
    expected = tb.as_stack_summary().format()  # traceback reading through linecache
    assert got == expected
    assert "return callsite.capture(limit=1)" in "".join(got)
    assert got_cache == linecache.cache
