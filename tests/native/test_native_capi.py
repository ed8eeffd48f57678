"""The C API other extensions use: the capsule, the CMake package, and (when callsite is an
installed wheel and a compiler is around) a real consumer built with find_package(callsite)."""
import ctypes
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import callsite
from callsite import _callsite


def _installed_cmake_dir():
    try:
        return callsite.cmake_dir()
    except FileNotFoundError:
        return None

from where import REPO  # noqa: E402


def test_capsule_is_exported():
    capsule = _callsite._C_API
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    assert api.PyCapsule_GetName(capsule) == b"callsite._callsite._C_API"
    table = api.PyCapsule_GetPointer(capsule, b"callsite._callsite._C_API")
    version, size = ctypes.cast(table, ctypes.POINTER(ctypes.c_uint32 * 2)).contents
    assert version == 1
    assert size == 8 + 17 * ctypes.sizeof(ctypes.c_void_p)  # two uint32 + seventeen functions


def test_cmake_helper():
    inc = callsite.include_dir()
    assert (pathlib.Path(inc) / "callsite" / "api.h").is_file()
    d = _installed_cmake_dir()
    assert d is None or (pathlib.Path(d) / "callsiteConfig.cmake").is_file()
    out = subprocess.run([sys.executable, "-m", "callsite", "--include-dir"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == inc
    cmake = subprocess.run([sys.executable, "-m", "callsite", "--cmake-dir"],
                           capture_output=True, text=True)
    if d is None:
        assert cmake.returncode == 1
        assert "not installed from a wheel (build one with `pip install .`)" in cmake.stderr
    else:
        assert cmake.returncode == 0 and cmake.stdout.strip() == d


@pytest.mark.skipif(_installed_cmake_dir() is None, reason="callsite is not an installed wheel")
@pytest.mark.skipif(not shutil.which("cmake") or not (REPO / "examples").is_dir(),
                    reason="needs cmake and the source tree's examples/")
def test_consumer_builds_against_the_installed_package(tmp_path):
    build = tmp_path / "build"
    # CMake's default generator needs make, which a minimal system (the sid chroot) lacks.
    generator = os.environ.get("CMAKE_GENERATOR") or ("Ninja" if shutil.which("ninja") else "")
    env = dict(os.environ, CMAKE_GENERATOR=generator)
    configure = subprocess.run(
        ["cmake", "-S", str(REPO / "examples" / "cpp_consumer"), "-B", str(build),
         f"-DPython_EXECUTABLE={sys.executable}"], capture_output=True, text=True, env=env)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    built = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    script = (
        "import callsite_consumer, callsite, traceback\n"
        "assert callsite_consumer.where() == ('kernel.dsl', 42, 'native')\n"
        "tb = callsite_consumer.capture()\n"
        "assert (tb[0].kind, tb[0].filename, tb[0].lineno) == ('native', 'kernel.dsl', 7)\n"
        "def cb(pc):\n"
        "    if pc == 3: raise KeyError(pc)\n"
        "try: callsite_consumer.run(cb, 5)\n"
        "except KeyError as e:\n"
        "    names = [f.name for f in traceback.extract_tb(e.__traceback__)]\n"
        "    assert names[-2:] == ['kernel', 'cb'], names\n"
        "    assert traceback.extract_tb(e.__traceback__)[-2].lineno == 4\n"
        "print('ok')\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(build)))
    assert run.stdout.strip() == "ok", run.stderr
