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


#: The one vocabulary of every switch: these words (case and surrounding spaces ignored) turn
#: it on or off; unset is off.
ON = ("1", "true", "on", "yes")
OFF = ("0", "false", "off", "no", "")

#: The name of the start-up hook's module (python/startup/_callsite_startup.py), imported by
#: callsite.pth when site.py processes site-packages.
START_UP_MODULE = "_callsite_startup"


class Switch:
    """One environment variable that switches an integration on at start-up.

    variable: its name; integration: the subpackage (callsite.<integration>); on/off: the
    values accepted (ON and OFF, the same for every switch); detect: the integration's
    detection module, loaded by the start-up hook without importing callsite (standard
    library only); what: what "on" does, in doctor's words."""

    __slots__ = ("variable", "integration", "detect", "what")

    on = ON
    off = OFF

    def __init__(self, variable: "str", integration: "str", detect: "str", what: "str") -> None:
        self.variable = variable
        self.integration = integration
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
    Switch("CALLSITE_MLIR", "mlir", detect="mlir/_detect",
           what="MLIR's own traceback switches of every MLIR bindings imported build "
                "callsite's locations (callsite.mlir.accelerate())"),
    Switch("CALLSITE_TORCH", "torch", detect="torch/_detect",
           what="torch.fx's node stack traces are recorded by callsite once torch.fx.proxy is "
                "imported (callsite.torch.accelerate())"),
)

BY_INTEGRATION = {s.integration: s for s in SWITCHES}

def read_at_start_up(switch: "Switch") -> "bool":
    """Whether this process's start-up hook read `switch`: it runs from callsite.pth, which
    site.py processes; with ``python -S`` or an embedded interpreter without site it never
    runs, and a switch set in the environment turns nothing on."""
    import sys

    hook = sys.modules.get(START_UP_MODULE)
    return switch.integration in getattr(hook, "_done", ())


def describe(switch: "Switch", environ: "Any", read: "bool | None" = None) -> "str":
    """doctor's line for a switch: set or not, and what is in force in this process. read:
    whether the start-up hook read it (default: read_at_start_up(switch))."""
    value = environ.get(switch.variable)
    try:
        on = switch.parse(value)
    except ValueError as error:
        return f"{error}; the {switch.integration} integration stays off"
    if value is None:
        return f"unset: off ({switch.variable}=1: {switch.what})"
    if not on:
        return f"{value!r}: off"
    if not (read_at_start_up(switch) if read is None else read):
        return (f"{value!r}: not in force: the start-up hook did not run in this process "
                f"(python -S, or an interpreter without site), so the switch turned nothing "
                f"on; callsite.{switch.integration}.accelerate() does it from code")
    return f"{value!r}: on: {switch.what}"
