"""callsite.Filter: MLIR's include/exclude semantics, per-code caching, limits, bad input."""
import importlib.util
import os
import re
import sys
import traceback

import pytest

import callsite


def load_module(path, name, source):
    """Writes `source` to `path` and imports it as `name` (a distinct co_filename)."""
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def chain(tmp_path):
    """Three files calling each other: top.run(f) -> mid.call(f) -> low.call(f) -> f()."""
    low = load_module(tmp_path / "low.py", "flt_low", "def call(f):\n    return f()\n")
    mid = load_module(tmp_path / "mid.py", "flt_mid", "def call(f):\n\n    return down(f)\n")
    top = load_module(tmp_path / "top.py", "flt_top", "def run(f):\n    return down(f)\n")
    mid.down, top.down = low.call, mid.call
    return low, mid, top


def python_oracle(include, exclude):
    """The rule as MLIR states it, evaluated by Python on the filename."""
    def keeps(filename):
        if any(re.search(p, filename) for p in include):
            return True
        return not any(re.search(p, filename) for p in exclude)
    return keeps


def test_semantics_include_wins_else_no_exclude():
    f = callsite.Filter(include=[r"keep_me"], exclude=[r"/lib/", r"keep"], default_exclusions=False)
    oracle = python_oracle([r"keep_me"], [r"/lib/", r"keep"])
    for name in ["/lib/keep_me.py", "/lib/other.py", "/src/keep.py", "/src/user.py", "x.py",
                 "/lib/", "keep_me"]:
        assert f.keeps(name) is oracle(name), name
    assert f.keeps("/lib/keep_me.py") and not f.keeps("/lib/other.py")
    assert not f.keeps("/src/keep.py") and f.keeps("/src/user.py")


def test_no_rules_keeps_everything():
    f = callsite.Filter(default_exclusions=False)
    assert f.include == () and f.exclude == ()
    assert f.keeps("/anything/_arith_ops_gen.py") and f.keeps(callsite.__file__)


def test_default_exclusions_are_generated_modules_and_callsite_itself():
    f = callsite.Filter()
    assert not f.keeps("/site-packages/mlir/dialects/_arith_ops_gen.py")
    assert f.keeps("/site-packages/mlir/dialects/arith.py")  # hand-written: kept, as in MLIR
    assert not f.keeps(callsite.__file__)
    assert not f.keeps(os.path.join(os.path.dirname(callsite.__file__), "mlir", "__init__.py"))
    assert f.keeps(__file__)
    assert f.limit == 10  # MLIR's default frame limit


def test_default_filter_is_one_object():
    assert callsite.Filter.default() is callsite.Filter.default()
    assert isinstance(callsite.Filter.default(), callsite.Filter)


def test_file_helpers_are_literal_prefixes_like_mlir():
    f = callsite.Filter(default_exclusions=False)
    f.exclude_file("/a/b+c.py")  # '+' and '.' must be literal, as llvm::Regex::escape makes them
    assert f.exclude == ("^" + re.escape("/a/b+c.py"),)
    assert not f.keeps("/a/b+c.py") and not f.keeps("/a/b+c.pyc")  # a prefix, as in MLIR
    assert f.keeps("/a/bbc.py") and f.keeps("/x/a/b+c.py")
    f.include_file("/a/b+c.py")  # registering the other kind moves the pattern
    assert f.exclude == () and f.include == ("^" + re.escape("/a/b+c.py"),)
    f.exclude_file("/a/b+c.py")
    assert f.include == () and len(f.exclude) == 1


def test_dir_helpers(tmp_path):
    f = callsite.Filter(default_exclusions=False)
    f.exclude_dir(str(tmp_path))
    assert not f.keeps(str(tmp_path / "x.py"))
    assert f.keeps(str(tmp_path) + "_sibling/x.py")  # a directory, not a string prefix
    f.include_dir(str(tmp_path / "sub"))
    assert f.keeps(str(tmp_path / "sub" / "y.py")) and not f.keeps(str(tmp_path / "y.py"))


def test_duplicates_remove_clear_copy():
    f = callsite.Filter(exclude=["a", "a", "b"], default_exclusions=False)
    assert f.exclude == ("a", "b")
    g = f.copy()
    assert f.remove("a") is True and f.remove("a") is False
    assert f.exclude == ("b",) and g.exclude == ("a", "b")
    f.clear()
    assert f.exclude == () and f.include == ()
    assert g.keeps("/x/b.py") is False


def test_compiled_patterns_and_single_str():
    f = callsite.Filter(include=re.compile(r"inc"), exclude="exc", default_exclusions=False)
    assert f.include == ("inc",) and f.exclude == ("exc",)


def test_bad_regex_names_pattern_and_reason():
    with pytest.raises(ValueError, match=r"bad include pattern '\(': .*missing \)"):
        callsite.Filter(include=["("])
    f = callsite.Filter()
    with pytest.raises(ValueError, match=r"bad exclude pattern '\[a': .*unterminated"):
        f.add_exclude("[a")
    assert f.exclude == callsite.Filter().exclude  # nothing was added


@pytest.mark.parametrize("bad", [3, b"bytes", None.__class__, 1.5])
def test_wrong_rule_type_is_type_error(bad):
    with pytest.raises(TypeError, match="rules must be str"):
        callsite.Filter(exclude=[bad])
    with pytest.raises(TypeError, match="rules must be str"):
        callsite.Filter().add_include(bad)


def test_wrong_types_elsewhere():
    with pytest.raises(TypeError, match="must be str"):
        callsite.Filter(include=[re.compile(b"x")])
    with pytest.raises(TypeError, match="rules must be str"):
        callsite.Filter(include=7)
    with pytest.raises(TypeError, match="path must be a str"):
        callsite.Filter().exclude_file(3)
    with pytest.raises(TypeError, match="path must be a str"):
        callsite.Filter().include_dir(None)
    with pytest.raises(TypeError, match="keeps"):
        callsite.Filter().keeps(3)
    with pytest.raises(TypeError, match="limit must be an int or None"):
        callsite.Filter(limit="3")
    with pytest.raises(ValueError, match="limit must be >= 0"):
        callsite.Filter(limit=-1)
    with pytest.raises(TypeError, match="filter must be a callsite.Filter"):
        callsite.capture(filter="x")
    with pytest.raises(TypeError, match="callsite.Traceback"):
        callsite.Filter().apply([1])


def test_limit_property():
    f = callsite.Filter(limit=None)
    assert f.limit is None
    f.limit = 3
    assert f.limit == 3
    with pytest.raises(TypeError):
        f.limit = True
    with pytest.raises(AttributeError):
        del f.limit


def test_keeps_accepts_code_function_frame_and_callsite_frame():
    f = callsite.Filter(exclude=[re.escape(__file__)], default_exclusions=False)
    here = sys._getframe()
    assert f.keeps(test_keeps_accepts_code_function_frame_and_callsite_frame) is False
    assert f.keeps(here.f_code) is False and f.keeps(here) is False
    assert f.keeps(callsite.capture()[0]) is False
    assert f.keeps(pytest.main.__code__) is True


def test_capture_with_filter_matches_cpython_stack(chain, tmp_path):
    low, mid, top = chain
    exclude = [re.escape(str(tmp_path / "mid.py")), r"/site-packages/"]
    f = callsite.Filter(exclude=exclude, limit=None, default_exclusions=False)
    oracle = python_oracle([], exclude)
    tb = top.run(lambda: callsite.capture(filter=f))
    expected = [s for s in reversed(traceback.extract_stack()) if oracle(s.filename)]
    # The oracle's stack is this test function and its callers; ours starts at the lambda.
    names = [(fr.filename, fr.name) for fr in tb]
    assert names[0][1] == "<lambda>"
    assert names[1] == (str(tmp_path / "low.py"), "call")
    assert names[2] == (str(tmp_path / "top.py"), "run")
    assert all(fn != str(tmp_path / "mid.py") for fn, _ in names)
    assert names[3:] == [(s.filename, s.name) for s in expected]


def test_limit_counts_kept_frames(chain, tmp_path):
    low, mid, top = chain
    f = callsite.Filter(exclude=[re.escape(str(tmp_path / "low.py")),
                              re.escape(str(tmp_path / "mid.py"))],
                     limit=2, default_exclusions=False)
    tb = top.run(lambda: callsite.capture(filter=f))
    # low and mid are walked past without counting: <lambda> and top.run are the two kept.
    assert [fr.name for fr in tb] == ["<lambda>", "run"]
    assert tb[1].filename == str(tmp_path / "top.py")
    assert len(top.run(lambda: callsite.capture(1, filter=f))) == 2
    assert len(top.run(lambda: callsite.capture(limit=1, filter=f))) == 1  # the smaller limit
    f.limit = 0
    assert len(top.run(lambda: callsite.capture(filter=f))) == 0


def test_rule_change_invalidates_cached_decisions(chain, tmp_path):
    low, mid, top = chain
    f = callsite.Filter(limit=None, default_exclusions=False)
    grab = lambda: callsite.capture(filter=f)  # noqa: E731
    before = top.run(grab)
    assert str(tmp_path / "mid.py") in [fr.filename for fr in before]
    g0 = f.generation
    f.exclude_file(str(tmp_path / "mid.py"))
    assert f.generation != g0
    after = top.run(grab)
    assert str(tmp_path / "mid.py") not in [fr.filename for fr in after]
    assert len(after) == len(before) - 1
    f.include_file(str(tmp_path / "mid.py"))
    assert len(top.run(grab)) == len(before)
    f.clear()
    assert len(top.run(grab)) == len(before)


def test_many_filters_coexist_on_the_same_code_objects(chain, tmp_path):
    low, mid, top = chain
    mid_file = str(tmp_path / "mid.py")
    filters = [callsite.Filter(exclude=[re.escape(mid_file)] if i % 2 else [], limit=None,
                            default_exclusions=False) for i in range(9)]
    for _ in range(3):  # more filters than per-code slots: decisions are evicted, never wrong
        for i, f in enumerate(filters):
            tb = top.run(lambda: callsite.capture(filter=f))
            assert (mid_file in [fr.filename for fr in tb]) is (i % 2 == 0)


def test_first_user_frame(chain, tmp_path):
    low, mid, top = chain
    f = callsite.Filter(exclude=[re.escape(str(tmp_path / "low.py"))], default_exclusions=False)
    fr = top.run(f.first_user_frame)  # low.call invokes it: low is skipped, mid.call is first
    assert (fr.filename, fr.name) == (str(tmp_path / "mid.py"), "call")
    assert fr.lineno == 3
    here = f.first_user_frame()
    assert here.filename == __file__ and here.lineno == sys._getframe().f_lineno - 1
    assert f.first_user_frame(1).name == sys._getframe(1).f_code.co_name
    nothing = callsite.Filter(exclude=["."], default_exclusions=False)
    assert nothing.first_user_frame() is None
    with pytest.raises(TypeError):
        f.first_user_frame("x")


def test_first_user_frame_deep_stack():
    f = callsite.Filter(exclude=[re.escape(__file__)], default_exclusions=False)

    def recurse(n):
        return recurse(n - 1) if n else f.first_user_frame()

    fr = recurse(150)  # deeper than the first short walk
    assert fr is not None and fr.filename != __file__
    assert fr == callsite.Filter(exclude=[re.escape(__file__)], default_exclusions=False).first_user_frame()


def test_apply_to_a_traceback(chain, tmp_path):
    low, mid, top = chain
    tb = top.run(callsite.capture)
    f = callsite.Filter(exclude=[re.escape(str(tmp_path))], limit=None, default_exclusions=False)
    kept = f.apply(tb)
    assert [fr for fr in tb if not fr.filename.startswith(str(tmp_path))] == list(kept)
    f.limit = 1
    assert len(f.apply(tb)) == 1


def test_repr_round_trips():
    f = callsite.Filter(include=["a"], exclude=["b"], limit=4, default_exclusions=False)
    g = eval(repr(f), {"callsite": callsite})
    assert (g.include, g.exclude, g.limit) == (f.include, f.exclude, f.limit)
    assert "limit=None" in repr(callsite.Filter(limit=None))


def test_no_refcount_leak_on_filtered_capture(chain):
    low, mid, top = chain
    f = callsite.Filter(exclude=["low"], default_exclusions=False)
    code = low.call.__code__
    grab = lambda: callsite.capture(filter=f)  # noqa: E731
    top.run(grab)
    before = sys.getrefcount(code), sys.getrefcount(f)
    for _ in range(1000):
        top.run(grab)
    assert (sys.getrefcount(code), sys.getrefcount(f)) == before
