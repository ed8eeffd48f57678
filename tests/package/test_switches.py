"""The table of start-up switches (callsite._switches): each row names an integration whose
subpackage has the parts the start-up hook calls, and values are read one way for every row."""
from __future__ import annotations

import importlib
import os

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
    assert _switches.describe(switch, {"CALLSITE_MLIR": "yes"}).startswith("'yes': on: ")
    assert _switches.describe(switch, {"CALLSITE_MLIR": "off"}) == "'off': off"
    assert _switches.describe(switch, {"CALLSITE_MLIR": "2"}).endswith(
        "; the mlir integration stays off")
