"""callsite.torch's native recorder (_callsite._TorchTexts) without torch, on every Python:
its texts against the traceback module's (the frames torch's default filter keeps, formatted
by StackSummary.format) for generated sources with unusual lines; the bound of its tables; no
code object kept; CPython's formatting and set members that call back into callsite.torch."""
from __future__ import annotations

import gc
import importlib.util
import linecache
import os
import sys
import traceback
import weakref

import pytest

import callsite
import callsite.torch as ct
from callsite.torch import _recording
from callsite._callsite import _TorchTexts


def new_texts(uninteresting=frozenset(), anchors=frozenset()):
    return _TorchTexts(uninteresting, anchors, _recording._Recorded)


#: The standard library's own, for the reference texts of a test that replaces it.
STACK_SUMMARY = traceback.StackSummary


def reference(frame, forward_only, uninteresting=frozenset(), anchors=frozenset()):
    """torch's text for the stack of `frame` (outermost first), from the traceback module."""
    frames = traceback.extract_stack(frame)
    if forward_only:
        kept = [f for f in frames if f.name == "forward" or f.filename.endswith(
            "torch/__init__.py") or (f.filename, f.name) in anchors]
    else:
        first = next((i for i, f in enumerate(frames) if f.name == "forward"), len(frames))
        kept = frames[first:]
    kept = [f for f in kept if f.filename not in uninteresting]
    if not kept:
        return None
    stack = STACK_SUMMARY()
    for f in kept:
        stack.append(traceback.FrameSummary(f.filename, f.lineno, f.name, lookup_line=False))
    return "".join(stack.format()).strip()


class Recorder:
    """`record` is what the generated code calls at its innermost frame (the create_node of
    these tests): the native recording, and torch's text for the same stack."""

    def __init__(self, texts, forward_only=False, keep=True, **rules):
        self.texts, self.forward_only, self.rules = texts, forward_only, rules
        self.keep = keep  # else the captures (and their code objects) are let go of
        self.results = []

    def record(self):
        meta = {}
        recorded = self.texts.record(meta, self.forward_only)
        theirs = reference(sys._getframe(1), self.forward_only, **self.rules)
        if self.keep:
            self.results.append((meta.get("stack_trace"), theirs, recorded, meta))
        else:
            self.results.append((meta.get("stack_trace"), theirs))
        return recorded


SOURCE = '''\
def forward(n):
    if n > 0:
        return forward(n - 1)
    return step()


def step():
    f = lambda: [helper(i) for i in range(1)][0]  # noqa: E731
    return f()


def helper(i):
    value = (i,
\t     rec.record())  # a tab, then spaces
    x = rec.record()  # ünïcode ✓ and trailing spaces   
    y = rec.record()  # a form feed: \x0c and a vertical tab: \x0b
    z = other()
    return value, x, y, z


def other():
    return rec.record()
'''


def load(path, name, source, encoding="utf-8", newline="\n", bom=False):
    data = source.replace("\n", newline).encode(encoding)
    with open(path, "wb") as f:
        f.write((b"\xef\xbb\xbf" if bom else b"") + data)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("forward_only", [False, True])
@pytest.mark.parametrize("newline,bom", [("\n", False), ("\r\n", True)])
def test_texts_are_the_traceback_modules(tmp_path, forward_only, newline, bom):
    """Frames recursing past the repetition cut-off, a lambda and a comprehension, lines with a
    tab, non-ASCII text, a form feed; a CRLF file with a BOM: the text of every record is
    StackSummary.format's, recorded again from the tables, and after the file is edited."""
    path = str(tmp_path / f"gen_{forward_only}_{bom}.py")
    module = load(path, f"gen_{forward_only}_{bom}", SOURCE, newline=newline, bom=bom)
    anchors = frozenset({(path, "other")})
    rec = module.rec = Recorder(new_texts(anchors=anchors), forward_only, anchors=anchors)
    for depth in (0, 6, 6):
        module.forward(depth)
    edited = SOURCE.replace("# a tab, then spaces", "# edited").replace(
        "return step()\n", "return step()  # edited\n")
    with open(path, "wb") as f:
        f.write(edited.replace("\n", newline).encode())
    st = os.stat(path)
    os.utime(path, (st.st_atime, st.st_mtime + 10))
    linecache.checkcache(path)
    module.forward(6)
    assert len(rec.results) == 16
    for ours, theirs, recorded, meta in rec.results:
        assert ours == theirs
        assert type(recorded) is _recording._Recorded and recorded[1] == theirs
        assert meta["_callsite_traceback"] is recorded
        assert recorded[0][0].name in ("helper", "other")  # the caller of the recording
    texts = [ours for ours, *_ in rec.results]
    assert any("# edited" in t for t in texts[-4:]), texts[-4]
    if not forward_only:
        assert any("[Previous line repeated" in t for t in texts)


def test_unusual_files_use_pythons_format(tmp_path):
    """A "<stdin>-N" file (3.13 writes "<stdin>"), a "<stdin-N>" one (3.14+ writes "<stdin>"),
    a file linecache has no copy of: Python's own format, the same text."""
    source = "def forward():\n    return rec.record()\n"
    module = {"rec": None}
    for name in ("<stdin>-3", "<stdin-4>", "<no such file>", str(tmp_path / "vanished.py")):
        code = compile(source, name, "exec")
        if name.startswith("<stdin"):
            linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        namespace = dict(module)
        exec(code, namespace)
        rec = namespace["rec"] = Recorder(new_texts())
        namespace["forward"]()
        namespace["forward"]()
        for ours, theirs, *_ in rec.results:
            assert ours == theirs, name
        linecache.cache.pop(name, None)


def test_no_code_object_kept(tmp_path):
    """The tables hold strings: the recorded module's code is freed with it."""
    path = str(tmp_path / "freed.py")
    module = load(path, "freed", "def forward():\n    return rec.record()\n")
    module.rec = Recorder(new_texts())
    module.forward()
    assert module.rec.results[0][0]
    code_ref = weakref.ref(module.forward.__code__)
    del module
    gc.collect()
    assert code_ref() is None, gc.get_referrers(code_ref())
    assert _TorchTexts.cached_texts() > 0


def test_tables_stay_bounded(tmp_path):
    """Stacks that never repeat (a record at every line of a long file, deep): past their
    bounds the tables of texts and of raw stacks start over instead of growing."""
    depth = 40
    lines = ["def forward():", "    return f0()", ""]
    for i in range(depth):
        lines += [f"def f{i}():", f"    return {f'f{i + 1}' if i + 1 < depth else 'at'}()", ""]
    lines += ["def at():"]
    lines += [f"    rec.record()  # {'x' * 200} {i}" for i in range(3000)]
    path = str(tmp_path / "many.py")
    module = load(path, "many", "\n".join(lines) + "\n")
    module.rec = Recorder(new_texts())
    module.rec.record = lambda: module.rec.texts.record(None, False)  # no reference: faster
    _TorchTexts.clear_tables()
    counts, stacks = [], []
    for _ in range(3):
        module.forward()
        counts.append(_TorchTexts.cached_texts())
        stacks.append(module.rec.texts.stack_count())
    assert max(counts) < 3000, counts
    assert max(stacks) < 3000, stacks  # the raw stacks too


def test_formatting_that_clears_everything(tmp_path, monkeypatch):
    """CPython's StackSummary.format (for a line it writes its own way, a run of repeated
    frames) calling clear_caches() and collecting, and set members whose __eq__ (run by the
    frozensets' lookups) clears the decisions: the texts are still the traceback module's."""
    path = str(tmp_path / "reentrant.py")
    source = ("def forward(n):\n    if n:\n        return forward(n - 1)\n"
              "    return rec.record()  # é \x1c a line break for str.splitlines\n")
    module = load(path, "reentrant", source)
    formatted = []

    class Clearing(traceback.StackSummary):
        def format(self):
            formatted.append(len(self))
            ct.clear_caches()
            _TorchTexts.clear_tables()
            gc.collect()
            return super().format()

    monkeypatch.setattr(traceback, "StackSummary", Clearing)

    holder = []

    class Collide:
        def __init__(self, like):
            self.like = like

        def __hash__(self):
            return hash(self.like)

        def __eq__(self, other):
            _TorchTexts.clear_tables()
            if holder:
                holder[0].clear()
            gc.collect()
            return False

    class Name(str):
        def __eq__(self, other):  # equal to nothing: the file stays interesting
            _TorchTexts.clear_tables()
            gc.collect()
            return False

        __hash__ = str.__hash__

    # Members colliding with the keys looked up: the test's own frame, the file's frames.
    anchors = frozenset({Collide((__file__, "test_formatting_that_clears_everything")),
                         Collide((path, "forward"))})
    texts = new_texts(uninteresting=frozenset({"unused", Name(path)}), anchors=anchors)
    holder.append(texts)
    module.rec = Recorder(texts, False)
    for depth in (0, 5, 5, 0):
        module.forward(depth)
    module.rec = Recorder(texts, True, anchors=frozenset())
    module.forward(5)
    for ours, theirs, *_ in module.rec.results:
        assert ours == theirs
    assert 1 in formatted and max(formatted) > 3  # one unusual line; a repeated run


def test_bad_arguments():
    with pytest.raises(TypeError, match="uninteresting"):
        _TorchTexts([], frozenset(), _recording._Recorded)
    with pytest.raises(TypeError, match="recorded must be a subclass of tuple"):
        _TorchTexts(frozenset(), frozenset(), dict)
    with pytest.raises(TypeError, match=r"text\(\): frames must be a list, not tuple"):
        _TorchTexts.text(())
    with pytest.raises(TypeError, match=r"summary\(\): frames must hold \(file, line, name\)"):
        _TorchTexts.summary([("f.py", -1, "g")])
    with pytest.raises(TypeError, match="line an int"):
        _TorchTexts.text([("f.py", "1", "g")])
    with pytest.raises(TypeError, match=r"kept\(\): .*file and name str"):
        new_texts().kept([(b"f.py", 1, "g")], False)
    with pytest.raises(TypeError, match="2 arguments"):
        new_texts().record({})


def test_code_replaced_at_the_same_address(tmp_path):
    """A function's code replaced by one with other first line (the same line table, file and
    name): a stack recorded before is not taken for the new one, even when the new code object
    reuses the freed one's address."""
    lines = ["def forward():", "    return rec.record()  # first", "    return rec.record()  # second",
             "    return rec.record()  # third", ""]
    path = str(tmp_path / "replaced.py")
    module = load(path, "replaced", "\n".join(lines * 12))
    rec = module.rec = Recorder(new_texts(), keep=False)
    addresses = set()
    for shift in range(10):
        module.forward()
        addresses.add(id(module.forward.__code__))
        code = module.forward.__code__
        module.forward.__code__ = code.replace(co_firstlineno=code.co_firstlineno + 1)
        del code
    for ours, theirs in rec.results:
        assert ours == theirs
    assert len({ours for ours, _ in rec.results}) == 10
    print(len(addresses), "addresses for 10 code objects")


def test_linecache_reading_that_clears_everything(tmp_path, monkeypatch):
    """A file linecache reads through its own getlines (a relative name), with getlines
    replaced by one that clears every cache, collects and reads again: the texts are still
    the traceback module's."""
    monkeypatch.chdir(tmp_path)
    source = "def forward(n):\n    if n:\n        return forward(n - 1)\n    return rec.record()\n"
    (tmp_path / "relative_model.py").write_text(source)
    real = linecache.getlines

    def clearing(*args, **kwargs):
        ct.clear_caches()
        _TorchTexts.clear_tables()
        gc.collect()
        return real(*args, **kwargs)

    monkeypatch.setattr(linecache, "getlines", clearing)
    namespace = {}
    exec(compile(source, "relative_model.py", "exec"), namespace)
    rec = namespace["rec"] = Recorder(new_texts())
    for depth in (0, 5, 0, 5):
        linecache.cache.pop("relative_model.py", None)  # read again each time
        namespace["forward"](depth)
    assert len(rec.results) == 4
    for ours, theirs, *_ in rec.results:
        assert ours == theirs and "return rec.record()" in ours


def test_a_frame_it_does_not_describe_is_left_to_python(tmp_path):
    """A code object whose file name is a str subclass: record() writes nothing and returns
    the capture, for callsite.torch's Python path."""
    class Name(str):
        pass

    path = str(tmp_path / "subclass_name.py")
    module = load(path, "subclass_name", "def forward():\n    return rec()\n")
    code = module.forward.__code__
    module.forward.__code__ = code.replace(co_filename=Name(code.co_filename))
    texts = new_texts()
    meta = {}
    module.rec = lambda: texts.record(meta, False)
    result = module.forward()
    assert type(result) is callsite.Traceback and meta == {}
    assert result[0].name == "forward"


def test_the_meta_entry_is_the_recorded_type_made_as_tuple_makes_it():
    """The entry is an instance of the recorded type holding (capture, text), made without a
    call when the type constructs as tuple does; a type with a __new__ of its own is called."""
    meta = {}
    recorded = new_texts().record(meta, False)
    assert type(recorded) is _recording._Recorded and meta["_callsite_traceback"] is recorded
    assert len(recorded) == 2 and isinstance(recorded[0], callsite.Traceback)
    assert recorded[1] == meta.get("stack_trace") and recorded == tuple(recorded)
    assert gc.is_tracked(recorded) and hash(recorded) == hash(tuple(recorded))

    calls = []

    class Counted(tuple):
        __slots__ = ()

        def __new__(cls, pair):
            calls.append(pair)
            return super().__new__(cls, pair)

    texts = _TorchTexts(frozenset(), frozenset(), Counted)
    meta = {}
    entry = texts.record(meta, False)
    assert type(entry) is Counted and calls == [tuple(entry)] and meta["_callsite_traceback"] is entry
    # A __new__ given to the type later is honoured too.
    Plain = type("Plain", (tuple,), {"__slots__": ()})
    texts = _TorchTexts(frozenset(), frozenset(), Plain)
    assert type(texts.record({}, False)) is Plain
    Plain.__new__ = lambda cls, pair: calls.append("later") or tuple.__new__(cls, pair)
    assert type(texts.record({}, False)) is Plain and calls[-1] == "later"


@pytest.mark.parametrize("forward_only", [False, True])
def test_kept_is_torchs_filter_for_the_python_path(forward_only):
    """kept() (what callsite.torch's Python path asks) keeps exactly the frames torch's default
    filter keeps, for generated stacks mixing forward frames, torch/__init__.py, anchors and
    uninteresting files; it reads the strs without keeping them."""
    import random

    rng = random.Random(7)
    files = ["/u/model.py", "/u/train.py", "/t/torch/__init__.py", "/t/torch/nn/module.py"]
    names = ["forward", "step", "helper", "__call__"]
    uninteresting = frozenset({"/t/torch/nn/module.py"})
    anchors = frozenset({("/u/train.py", "helper")})
    texts = new_texts(uninteresting, anchors)
    for _ in range(300):
        frames = [(rng.choice(files), rng.randint(1, 99), rng.choice(names))
                  for _ in range(rng.randint(0, 8))]
        if forward_only:
            want = [f for f in frames if f[2] == "forward" or
                    f[0].endswith("torch/__init__.py") or (f[0], f[2]) in anchors]
        else:
            first = next((i for i, f in enumerate(frames) if f[2] == "forward"), len(frames))
            want = frames[first:]
        want = [f for f in want if f[0] not in uninteresting]
        assert texts.kept(frames, forward_only) == want
    assert texts.decision_count() == 0  # looked up, never stored: Python's strs are transient


def test_kept_bad_arguments():
    texts = new_texts()
    with pytest.raises(TypeError, match="frames must be a list"):
        texts.kept((("f", 1, "forward"),), False)
    with pytest.raises(TypeError, match=r"\(file, line, name\) tuples"):
        texts.kept([("f", 1)], False)
    with pytest.raises(TypeError, match=r"\(file, line, name\) tuples"):
        texts.kept([(b"f", 1, "forward")], False)
    with pytest.raises(TypeError, match="2 arguments"):
        texts.kept([])
