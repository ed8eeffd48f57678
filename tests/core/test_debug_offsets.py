"""The internal layout is refused when _PyRuntime.debug_offsets (CPython 3.13+) disagree with it.

The check is driven with images of debug offsets: this interpreter's own (accepted), another
minor version's (a real interpreter's where one is installed beside this one, else this image
with its version changed), and this image with one word changed at a time, which must name
every offset the walker reads.
"""
import ctypes
import shutil
import subprocess
import sys

import pytest

import callsite

_testing = pytest.importorskip(
    "callsite._callsite_testing", reason="a build without CALLSITE_TESTING=ON has no test hooks")

# More than any _Py_DebugOffsets (3.13-3.15 are well under 1 KiB); _PyRuntime is far larger.
IMAGE_SIZE = 2048
DUMP = ("import ctypes, sys; sys.stdout.write((ctypes.c_char * %d).in_dll(ctypes.pythonapi, "
        "'_PyRuntime').raw.hex())" % IMAGE_SIZE)
VERSION_AT, FREE_THREADED_AT = 8, 16  # cookie[8], uint64 version, uint64 free_threaded

pytestmark = [
    pytest.mark.skipif(sys.version_info < (3, 13), reason="_Py_DebugOffsets exist from 3.13"),
    pytest.mark.skipif(callsite.layout_name == "none", reason="this build has no internal layout"),
]

# What the walker reads and the layout file must check, per version.
WALKER_OFFSETS = {
    "thread_state.current_frame", "interpreter_frame.previous", "interpreter_frame.executable",
    "interpreter_frame.instr_ptr", "interpreter_frame.owner", "code_object.co_code_adaptive",
}
if sys.version_info >= (3, 15):
    WALKER_OFFSETS.add("thread_state.base_frame")


def own_image() -> bytes:
    try:
        return (ctypes.c_char * IMAGE_SIZE).in_dll(ctypes.pythonapi, "_PyRuntime").raw
    except (ValueError, AttributeError) as e:
        pytest.skip(f"_PyRuntime is not visible to ctypes here: {e}")


def with_word(image: bytes, at: int, value: int) -> bytes:
    return image[:at] + value.to_bytes(8, "little") + image[at + 8:]


def word(image: bytes, at: int) -> int:
    return int.from_bytes(image[at:at + 8], "little")


def test_own_offsets_are_accepted():
    image = own_image()
    assert image[:8] == b"xdebugpy"
    assert word(image, VERSION_AT) >> 16 == (sys.version_info.major << 8) | sys.version_info.minor
    assert _testing.debug_offsets_refusal(image) is None
    assert callsite.internal_backend_refusal() is None


def test_another_minor_versions_offsets_are_refused_simulated():
    image = own_image()
    other = word(image, VERSION_AT) + (1 << 16)  # same release, next minor
    why = _testing.debug_offsets_refusal(with_word(image, VERSION_AT, other))
    major, minor = sys.version_info[:2]
    assert why == (f"_PyRuntime.debug_offsets is from CPython {major}.{minor + 1}, "
                   f"the layout was compiled for {major}.{minor}")


def other_interpreters():
    major, minor = sys.version_info[:2]
    found = []
    for m in (minor - 1, minor + 1, minor + 2):
        exe = shutil.which(f"python{major}.{m}")
        if exe:
            found.append(pytest.param(exe, m, id=f"{major}.{m}"))
    return found or [pytest.param(None, None, id="none-installed")]


@pytest.mark.parametrize("exe,minor", other_interpreters())
def test_another_minor_versions_offsets_are_refused_real(exe, minor):
    if exe is None:
        pytest.skip("no interpreter of a neighbouring minor version on PATH")
    result = subprocess.run([exe, "-c", DUMP], capture_output=True, text=True, timeout=60)
    if result.returncode != 0 or not result.stdout:
        pytest.skip(f"{exe} cannot show its _PyRuntime: {result.stderr.strip()[-200:]}")
    image = bytes.fromhex(result.stdout)
    if image[:8] != b"xdebugpy":
        pytest.skip(f"{exe} publishes no _Py_DebugOffsets")
    why = _testing.debug_offsets_refusal(image)
    assert why == (f"_PyRuntime.debug_offsets is from CPython 3.{minor}, "
                   f"the layout was compiled for 3.{sys.version_info.minor}")


def test_a_bad_cookie_or_a_free_threaded_runtime_is_refused():
    image = own_image()
    assert "no valid cookie" in _testing.debug_offsets_refusal(b"ydebugpy" + image[8:])
    assert "free-threaded" in _testing.debug_offsets_refusal(with_word(image, FREE_THREADED_AT, 1))
    assert "truncated" in _testing.debug_offsets_refusal(image[:64])


def test_every_offset_the_walker_reads_is_checked():
    # Change one 8-byte word at a time (past the header): the refusals must name exactly the
    # fields the walker relies on, each once, and nothing else may be refused.
    image = own_image()
    named = []
    for at in range(24, IMAGE_SIZE - 8, 8):
        why = _testing.debug_offsets_refusal(with_word(image, at, word(image, at) + 8))
        if why is not None:
            assert why.startswith("_Py_DebugOffsets."), why
            assert "is %d in this interpreter" % (word(image, at) + 8) in why
            named.append(why.split()[0].removeprefix("_Py_DebugOffsets."))
    assert sorted(named) == sorted(WALKER_OFFSETS)


def test_bad_image_argument_is_a_type_error():
    with pytest.raises(TypeError):
        _testing.debug_offsets_refusal("xdebugpy")
