"""``python -m callsite``: help, --version, C++ paths, doctor (and callsite.doctor()), bench, demo."""
import json
import os
import subprocess
import sys

import pytest

import callsite


def cli(*args, env=None, cwd=None):
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "callsite", *args], capture_output=True,
                          text=True, env=environ, cwd=cwd, timeout=600)


def test_no_argument_prints_help_and_succeeds():
    r = cli()
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: python -m callsite")
    for command in ("demo", "doctor", "bench", "--version", "--cmake-dir", "--include-dir"):
        assert command in r.stdout


def test_version_is_the_package_version():
    from importlib.metadata import version

    r = cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"callsite {callsite.__version__}"
    assert version("callsite") == callsite.__version__


def test_include_dir_holds_the_headers():
    r = cli("--include-dir")
    assert r.returncode == 0, r.stderr
    assert os.path.isfile(os.path.join(r.stdout.strip(), "callsite", "api.h"))
    assert r.stdout.strip() == callsite.include_dir()


def test_path_options_take_no_command():
    r = cli("--cmake-dir", "doctor")
    assert r.returncode == 2 and "--cmake-dir takes no command" in r.stderr


def test_unknown_demo_section_names_the_choices():
    r = cli("demo", "nope")
    assert r.returncode == 2
    assert "unknown demo section 'nope' (choose from switch, dsl, native, pycde)" in r.stderr


def test_doctor_dict():
    report = callsite.doctor()
    assert report["callsite"]["version"] == callsite.__version__
    assert report["backend"]["in_use"] == callsite.get_backend()
    assert report["backend"]["internal_refusal"] == callsite.internal_backend_refusal()
    assert report["backend"]["layout"] == callsite.layout_name
    modes = callsite.tracking.available_modes()
    auto = modes.pop("auto")
    assert report["tracking"]["auto"] == auto
    for mode, why in modes.items():
        assert report["tracking"]["modes"][mode] == ("available" if why is None
                                                     else f"unavailable: {why}")
    assert report["native"]["supported"] is True
    build = report["build"]
    assert build["python_headers"].startswith("%d.%d." % sys.version_info[:2])
    assert build["internal_layout_compiled"] == (callsite.layout_name != "none")
    assert build["compiler"].split()[0] in ("gcc", "clang") and build["cplusplus"] >= 202002
    from callsite._mlir_detect import KNOWN_IR_MODULES

    mlir = report["mlir"]
    assert set(mlir["bindings"]) | set(mlir["other_known"]) >= set(KNOWN_IR_MODULES)
    assert set(report["caches"]) == {"mlir_location_contexts", "native_reification"}
    json.dumps(report)  # JSON-ready


def test_doctor_reports_mlir_bindings_without_importing_them():
    probe = ("import sys, callsite; r = callsite.doctor()['mlir']['other_known'];"
             "print(r['iree.compiler.ir'], 'iree.compiler.ir' in sys.modules, 'jaxlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    try:
        import iree.compiler  # noqa: F401
        expected = "importable"
    except ImportError:
        expected = "not"  # "not installed"
    assert out[0] == expected and out[-2:] == ["False", "False"]


def test_doctor_command_prints_the_report():
    r = cli("doctor")
    assert r.returncode == 0, r.stderr
    for line in ("callsite:", "backend:", "tracking:", "native:", "mlir:", "caches:"):
        assert f"\n{line}" in "\n" + r.stdout
    assert f"in_use:                  {callsite.get_backend()}" in r.stdout
    as_json = json.loads(cli("doctor", "--json").stdout)
    assert as_json["backend"] == callsite.doctor()["backend"]


def test_doctor_explains_a_refused_layout(callsite_testing):  # the switch: test builds only
    if callsite.layout_name == "none":
        pytest.skip("this build has no internal layout to refuse")
    r = cli("doctor", "--json", env={"CALLSITE_TEST_REFUSE_LAYOUT": "offsets differ here"})
    backend = json.loads(r.stdout)["backend"]
    assert backend["in_use"] == "public"
    assert backend["why"] == "the internal walk was refused: offsets differ here"


def test_doctor_explains_the_environment_choice():
    if callsite.layout_name == "none":
        pytest.skip("this build has no internal layout")
    backend = json.loads(cli("doctor", "--json", env={"CALLSITE_BACKEND": "public"}).stdout)["backend"]
    assert (backend["in_use"], backend["why"]) == ("public", "CALLSITE_BACKEND=public")


def test_bench_quick_json(tmp_path):
    out = tmp_path / "bench.json"
    r = cli("bench", "--quick", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "[ 1/5] import callsite" in r.stderr and "[ 5/5] done" in r.stderr  # progress
    data = json.loads(out.read_text())
    # The reused stack's rows: the fresh stack's group repeats the method names, net of building
    # the stack, which a loaded machine can leave at zero (its ratios then read "noise").
    methods = {row["method"]: row for row in data["rows"]
               if not row["group"].startswith("capture, depth 20, fresh")}
    assert methods["import callsite"]["unit"] == "ms" and data["import_ms"] > 0
    base = methods["callsite.capture() (internal walk)"]
    assert base["ratio"] == 1.0
    assert methods["traceback.extract_stack()"]["ratio"] > 0
    assert "import callsite:" in r.stdout and "ratio" in r.stdout
    groups = [row["group"] for row in data["rows"]]
    assert "tracked windows" in groups and "query: the most recent user frame" in groups


def test_bench_plot_without_matplotlib_says_what_to_install(tmp_path):
    try:
        import matplotlib  # noqa: F401
        pytest.skip("matplotlib is installed")
    except ImportError:
        pass
    r = cli("bench", "--plot", str(tmp_path / "x.png"))
    assert r.returncode == 2
    assert r.stderr.strip() == 'callsite bench: --plot needs matplotlib: pip install "callsite[plot]"'
