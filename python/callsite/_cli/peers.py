"""The peers a benchmark compares with: each probed once, and one that cannot be measured here
(not installed, too old, broken) is skipped with its reason printed, never silently."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, TextIO


class Skip(Exception):
    """Raised by a peer's probe: why it cannot be measured here."""


@dataclass
class Peer:
    """A competitor: probe() returns the namespace its statements need, or raises Skip."""

    name: str
    probe: Callable[[], dict[str, Any]]
    ns: dict[str, Any] | None = None
    reason: str | None = None

    def available(self) -> bool:
        if self.ns is None and self.reason is None:
            try:
                self.ns = self.probe()
            except Skip as e:
                self.reason = str(e)
            except Exception as e:  # an import that fails otherwise is a skip too, with its message
                self.reason = f"{type(e).__name__}: {e}"
        return self.ns is not None


def report_peers(peers: Iterable[Peer], out: TextIO = sys.stdout) -> None:
    """One line per peer: available, or skipped and why."""
    for p in peers:
        if p.available():
            print(f"  peer {p.name}: available", file=out)
        else:
            print(f"  peer {p.name}: SKIPPED — {p.reason}", file=out)
