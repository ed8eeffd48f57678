"""The table of start-up switches (callsite._switches): each row names an integration whose
subpackage has the parts the start-up hook calls, and values are read one way for every row."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

import callsite
from callsite import _switches


@pytest.mark.parametrize("switch", _switches.SWITCHES, ids=lambda s: s.variable)
def test_each_row_names_an_integration_with_the_hooks_parts(switch):
    package = os.path.dirname(callsite.__file__)
    assert os.path.isfile(os.path.join(package, *switch.detect.split("/")) + ".py")
    detect = importlib.import_module("callsite." + switch.detect.replace("/", "."))
    assert callable(detect.start)
    facade = importlib.import_module("callsite." + switch.integration)
    assert callable(facade._start_up_accelerate)
    assert switch.variable == "CALLSITE_" + switch.integration.upper()
    assert _switches.BY_INTEGRATION[switch.integration] is switch


@pytest.mark.parametrize("switch", _switches.SWITCHES, ids=lambda s: s.variable)
def test_values_are_read_alike(switch):
    assert switch.parse(None) is False
    for value in switch.on:
        assert switch.parse(value) is True and switch.parse(f" {value.upper()}\n") is True
    for value in switch.off:
        assert switch.parse(value) is False and switch.parse(f" {value.upper()} ") is False
    with pytest.raises(ValueError) as caught:
        switch.parse("banana")
    text = str(caught.value)
    assert text.startswith(f"{switch.variable}='banana' is not a switch value")
    assert all(value in text for value in switch.on + switch.off if value)


def test_doctor_describes_every_state_of_a_switch():
    switch = _switches.BY_INTEGRATION["mlir"]
    assert _switches.describe(switch, {}).startswith("unset: off (CALLSITE_MLIR=1: ")
    assert _switches.describe(switch, {"CALLSITE_MLIR": "yes"}, read=True).startswith(
        "'yes': on: ")
    assert _switches.describe(switch, {"CALLSITE_MLIR": "off"}) == "'off': off"
    assert _switches.describe(switch, {"CALLSITE_MLIR": "2"}).endswith(
        "; the mlir integration stays off")


@pytest.mark.parametrize("switch", _switches.SWITCHES, ids=lambda s: s.variable)
def test_every_switch_reads_the_one_vocabulary(switch):
    """1/true/on/yes and 0/false/off/no (any case, spaces around) mean the same for every
    switch."""
    for word in ("1", "true", "on", "yes", "True", " YES ", "On\n"):
        assert switch.parse(word) is True, word
    for word in ("0", "false", "off", "no", "", "FALSE", " No "):
        assert switch.parse(word) is False, word


def _switch_lines(*flags):
    """doctor's switch lines and torch status in a child run with `flags` and both switches
    set to 1 (callsite importable through PYTHONPATH, which -S leaves in place)."""
    package_parent = os.path.dirname(os.path.dirname(callsite.__file__))
    path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "CALLSITE_TORCH": "1", "CALLSITE_MLIR": "1"}
    probe = ("import json, callsite; r = callsite.doctor(); "
             "print(json.dumps([r['switches'], r['torch']['status']]))")
    result = subprocess.run([sys.executable, *flags, "-c", probe], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_doctor_says_a_switch_is_not_in_force_without_the_start_up_hook():
    """With python -S the start-up hook never runs: the switch line says so instead of "on",
    and the torch section agrees with it; with site the same switches are in force."""
    switches, torch_status = _switch_lines("-S")
    for variable in ("CALLSITE_TORCH", "CALLSITE_MLIR"):
        line = switches[variable]
        assert line.startswith("'1': not in force: the start-up hook did not run"), line
    assert torch_status.startswith("off: CALLSITE_TORCH is set but the start-up hook"), \
        torch_status
    switches, torch_status = _switch_lines()
    for variable in ("CALLSITE_TORCH", "CALLSITE_MLIR"):
        assert switches[variable].startswith("'1': on: "), switches[variable]
    assert not torch_status.startswith("off"), torch_status
