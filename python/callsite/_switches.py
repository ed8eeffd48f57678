"""The start-up switches: one row per integration, read by the start-up hook
(python/startup/_callsite_startup.py) and by ``python -m callsite doctor``. A new integration
is one subpackage of callsite and one row here.

Standard library only, nothing that site.py has not already imported: the start-up hook loads
this file in every process, without importing the callsite package. Hence no
``from __future__ import annotations`` and every annotation is a string.
"""
TYPE_CHECKING = False  # typing is not imported at start-up: the annotations are strings
if TYPE_CHECKING:
    from typing import Any


class Switch:
    """One environment variable that switches an integration on at start-up.

    variable: its name; integration: the subpackage (callsite.<integration>); on/off: the
    values accepted, compared without surrounding whitespace and case (unset is off); detect:
    the integration's detection module, loaded by the start-up hook without importing callsite
    (standard library only); what: what "on" does, in doctor's words."""

    __slots__ = ("variable", "integration", "on", "off", "detect", "what")

    def __init__(self, variable: "str", integration: "str", on: "tuple[str, ...]",
                 off: "tuple[str, ...]", detect: "str", what: "str") -> None:
        self.variable = variable
        self.integration = integration
        self.on = on
        self.off = off
        self.detect = detect
        self.what = what

    def accepted(self) -> "str":
        """The accepted values in words, for errors."""
        off = [v for v in self.off if v] + (["empty"] if "" in self.off else []) + ["unset"]
        return (f"on: {', '.join(self.on)}; off: {', '.join(off)} (case and surrounding "
                f"spaces ignored)")

    def parse(self, value: "str | None") -> "bool":
        """True for an on-value, False for an off-value or None (unset); any other value is a
        ValueError naming the variable, the value and the accepted values."""
        if value is None:
            return False
        word = value.strip().lower()
        if word in self.on or word in self.off:
            return word in self.on
        raise ValueError(f"{self.variable}={value!r} is not a switch value: {self.accepted()}")


SWITCHES = (
    Switch("CALLSITE_MLIR", "mlir", on=("1", "true", "on", "yes"),
           off=("0", "false", "off", "no", ""), detect="mlir/_detect",
           what="MLIR's own traceback switches of every MLIR bindings imported build "
                "callsite's locations (callsite.mlir.accelerate())"),
    Switch("CALLSITE_TORCH", "torch", on=("1",), off=("0", ""), detect="torch/_detect",
           what="torch.fx's node stack traces are recorded by callsite once torch.fx.proxy is "
                "imported (callsite.torch.accelerate())"),
)

BY_INTEGRATION = {s.integration: s for s in SWITCHES}

def describe(switch: "Switch", environ: "Any") -> "str":
    """doctor's line for a switch: set or not, and what it does in this process."""
    value = environ.get(switch.variable)
    try:
        on = switch.parse(value)
    except ValueError as error:
        return f"{error}; the {switch.integration} integration stays off"
    if value is None:
        return f"unset: off ({switch.variable}=1: {switch.what})"
    return f"{value!r}: on: {switch.what}" if on else f"{value!r}: off"
