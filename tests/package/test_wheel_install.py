"""A wheel built from this checkout, installed into clean virtual environments outside it:
``--version``, ``doctor`` and ``demo`` run from there, with and without MLIR's bindings.

Slow (a wheel build, two venvs, iree-base-compiler in one), so it runs on the default Python
only, and keeps its venvs in ~/.cache/callsite-wheel-test (CALLSITE_WHEEL_TEST_CACHE) between runs:
only the wheel is reinstalled. CALLSITE_SKIP_WHEEL_TEST=1 skips it."""
import os
import pathlib
import shutil
import subprocess
import sys
import venv

import pytest

import callsite

from where import REPO  # noqa: E402
DEFAULT_PYTHON = (3, 11)  # scripts/common.sh: CALLSITE_DEFAULT_MINOR

pytestmark = [
    pytest.mark.skipif(sys.version_info[:2] != DEFAULT_PYTHON,
                       reason="slow: runs on the default Python 3.11 only"),
    pytest.mark.skipif(os.environ.get("CALLSITE_SKIP_WHEEL_TEST") == "1",
                       reason="CALLSITE_SKIP_WHEEL_TEST=1"),
    pytest.mark.skipif(not (REPO / "pyproject.toml").is_file(), reason="needs the checkout"),
]


def run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=1800, **kw)
    assert r.returncode == 0, f"{cmd} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: the build tools of this venv, and its incremental build directory.
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
         "-w", out, REPO], cwd=REPO)
    (found,) = out.glob("callsite-*.whl")
    return found


def clean_venv(name, extra=()):
    cache = pathlib.Path(os.environ.get("CALLSITE_WHEEL_TEST_CACHE",
                                        pathlib.Path.home() / ".cache" / "callsite-wheel-test"))
    where = cache / f"py{sys.version_info[0]}.{sys.version_info[1]}-{name}"
    assert REPO not in where.resolve().parents, "the venv must live outside the checkout"
    stamp = where / ".ready"
    if not stamp.is_file():
        shutil.rmtree(where, ignore_errors=True)
        venv.create(where, with_pip=True)
        if extra:
            run([where / "bin" / "python", "-m", "pip", "install", "-q",
                 "--disable-pip-version-check", *extra])
        stamp.write_text(" ".join(extra))
    return where / "bin" / "python"


def installed(python, wheel, tmp_path):
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall",
         "--no-deps", wheel])
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "CALLSITE_EXAMPLES", "CALLSITE_BACKEND", "VIRTUAL_ENV")}

    def callsite_cli(*args):
        return run([python, "-m", "callsite", *args], cwd=tmp_path, env=env)

    return callsite_cli


def test_without_mlir(wheel, tmp_path):
    cli = installed(clean_venv("plain"), wheel, tmp_path)
    assert cli("--version").stdout.strip() == f"callsite {callsite.__version__}"
    doctor = cli("doctor").stdout
    assert "iree.compiler.ir:" in doctor and 'pip install "callsite[mlir]"' in doctor
    assert str(REPO) not in doctor  # the wheel's copy, not the checkout's
    demo = cli("demo").stdout
    assert "##### callsite demo: dsl" in demo
    assert 'pip install "callsite[mlir]"' in demo
    assert "##### callsite demo: native" in demo
    assert "ValueError: total" in demo  # the native section ran to its end
    cmake_dir = pathlib.Path(cli("--cmake-dir").stdout.strip())
    assert (cmake_dir / "callsiteConfig.cmake").is_file()
    assert (pathlib.Path(cli("--include-dir").stdout.strip()) / "callsite" / "api.h").is_file()


def test_the_start_up_hook_is_installed_and_runs(wheel, tmp_path):
    python = clean_venv("plain")
    installed(python, wheel, tmp_path)
    site = python.parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    assert (site / "site-packages" / "callsite.pth").is_file()
    assert (site / "site-packages" / "_callsite_startup.py").is_file()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    probe = "import sys; print(sorted(m for m in sys.modules if 'callsite' in m))"
    on = run([python, "-c", probe], env={**env, "CALLSITE_TORCH": "1"}, cwd=tmp_path)
    assert on.stdout.split() == ["['_callsite_startup',", "'callsite._import_watch',",
                                 "'callsite._switches',", "'callsite.torch._detect']"]
    bad = run([python, "-c", probe], env={**env, "CALLSITE_MLIR": "banana"}, cwd=tmp_path)
    assert bad.stderr.count("CALLSITE_MLIR='banana'") == 1, bad.stderr


def test_with_mlir(wheel, tmp_path):
    python = clean_venv("mlir", ["iree-base-compiler"])
    cli = installed(python, wheel, tmp_path)
    doctor = cli("doctor").stdout
    # Found by structure under `installed`, not imported to find out.
    installed_part = doctor.split("\n  installed:\n", 1)[1]
    assert installed_part.lstrip().startswith("iree.compiler.ir:")
    assert "distribution:            iree-base-compiler " in installed_part
    demo = cli("demo", "dsl").stdout
    assert "pip install" not in demo
    assert "== every op of the optimised module" in demo
    # The kernels shipped in the wheel, as data outside the package, are what the locations name.
    assert "share/callsite/examples/dsl/kernels.py" in demo
    site = python.parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    assert not list((site / "site-packages" / "callsite").rglob("kernels.py"))
