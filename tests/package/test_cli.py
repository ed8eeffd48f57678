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
    from callsite.mlir._detect import KNOWN_IR_MODULES

    mlir = report["mlir"]
    assert set(mlir["bindings"]) | set(mlir["installed"]) | set(mlir["other_known"]) >= set(
        KNOWN_IR_MODULES)
    from callsite._switches import SWITCHES

    assert list(report["switches"]) == [s.variable for s in SWITCHES]
    assert all(isinstance(line, str) and "\n" not in line for line in report["switches"].values())
    assert set(report["caches"]) == {"mlir_location_contexts", "native_reification"}
    json.dumps(report)  # JSON-ready


def doctor_in_a_fresh_process(*, path=(), env=None):
    """callsite.doctor() in a fresh process of this interpreter (this callsite, `path` first
    on sys.path), with the MLIR and torch modules it imported."""
    probe = ("import json, sys, callsite; r = callsite.doctor();"
             "print(json.dumps(dict(report=r, imported=sorted(m for m in sys.modules if "
             "m.partition('.')[0] in ('iree', 'jaxlib', 'mlir', 'circt', 'pycde', 'cutlass', "
             "'torch', 'torch_mlir', 'mydsl')))))")
    environ = {**os.environ, **(env or {})}
    environ["PYTHONPATH"] = os.pathsep.join([*path, *os.environ.get("PYTHONPATH", "").split(
        os.pathsep)]).strip(os.pathsep)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=environ, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_doctor_reports_mlir_bindings_without_importing_them():
    result = doctor_in_a_fresh_process()
    assert result["imported"] == []
    installed = result["report"]["mlir"]["installed"]
    try:
        import iree.compiler  # noqa: F401
    except ImportError:
        assert "iree.compiler.ir" not in installed
    else:
        assert installed["iree.compiler.ir"]["imported"] is False
        assert installed["iree.compiler.ir"]["distribution"].startswith("iree-base-compiler ")


def test_doctor_finds_bindings_a_dsl_ships_under_its_own_package(tmp_path):
    """<dsl>._mlir: a package no list names, found by its layout (an `ir` module beside a
    `_mlir_libs` folder of extension modules), not imported; a folder without an extension
    module in `_mlir_libs`, or without `ir`, is not bindings."""
    for package, extension, ir in (("mydsl/_mlir", True, True), ("mydsl/other", False, True),
                                   ("mydsl/noir", True, False)):
        libs = tmp_path.joinpath(*package.split("/"), "_mlir_libs")
        libs.mkdir(parents=True)
        (libs / "__init__.py").write_text("raise ImportError('imported')\n")
        if extension:
            (libs / "_mlir.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
        if ir:
            (libs.parent / "ir.py").write_text("raise ImportError('imported')\n")
    (tmp_path / "mydsl" / "__init__.py").write_text("raise ImportError('imported')\n")
    result = doctor_in_a_fresh_process(path=[str(tmp_path)])
    mlir = result["report"]["mlir"]
    assert result["imported"] == []
    assert mlir["installed"]["mydsl._mlir.ir"] == {
        "folder": str(tmp_path / "mydsl" / "_mlir"), "distribution": None, "imported": False}
    assert not any(name.startswith("mydsl.") and name != "mydsl._mlir.ir"
                   for name in mlir["installed"])
    assert mlir["hint"] is None


def test_doctor_prints_one_line_per_switch():
    for value, said in ((None, "unset: off"), ("1", "'1': on:"), ("0", "'0': off"),
                        ("banana", "'banana' is not a switch value")):
        env = {} if value is None else {"CALLSITE_MLIR": value}
        switches = doctor_in_a_fresh_process(env=env)["report"]["switches"]
        assert said in switches["CALLSITE_MLIR"], switches
        assert switches["CALLSITE_TORCH"].startswith("unset: off") or "CALLSITE_TORCH" in os.environ


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
