"""Filter.first_user_frame() and capture(filter=, limit=n) walk growing prefixes of the stack
and stop once they hold what was asked for: the answer must be the same as a whole walk's,
whatever the depth of the user frame relative to the prefix sizes (16, 64, 256, ...)."""
import sys
import textwrap

import pytest

import callsite

LIBRARY = textwrap.dedent('''
    def descend(n, fn):
        if n:
            return descend(n - 1, fn)
        return fn()
''')


@pytest.fixture
def library(tmp_path):
    path = tmp_path / "framework_lib.py"
    path.write_text(LIBRARY)
    namespace = {}
    exec(compile(LIBRARY, str(path), "exec"), namespace)
    return str(path), namespace["descend"]


@pytest.mark.parametrize("depth", [0, 1, 14, 15, 16, 17, 63, 64, 65, 255, 256, 300])
def test_first_user_frame_at_every_prefix_boundary(library, depth):
    path, descend = library
    f = callsite.Filter()
    f.exclude_file(path)
    frame = descend(depth, f.first_user_frame)
    assert (frame.filename, frame.name) == (__file__, sys._getframe().f_code.co_name)
    assert frame.lineno == sys._getframe().f_lineno - 2


@pytest.mark.parametrize("depth", [0, 15, 16, 70, 300])
@pytest.mark.parametrize("limit", [1, 2, 5])
def test_capture_limit_with_filter_equals_the_whole_walk(library, depth, limit):
    path, descend = library
    f = callsite.Filter()
    f.exclude_file(path)

    def both():  # one line: the same positions for both
        return callsite.capture(filter=f, limit=limit), f.apply(callsite.capture())

    short, whole = descend(depth, both)
    assert len(whole) > limit
    assert [(fr.filename, fr.name, fr.lineno) for fr in short] == \
        [(fr.filename, fr.name, fr.lineno) for fr in whole][:limit]


def test_first_user_frame_none_when_nothing_is_kept(library):
    path, descend = library
    nothing = callsite.Filter(include=(), exclude=(".*",), default_exclusions=False)
    assert descend(100, nothing.first_user_frame) is None
