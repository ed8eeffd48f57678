"""The benchmarks' tables: markdown, times in ns or µs, ratios against a row of the same run."""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence


def fmt_ns(ns: float | None) -> str:
    if ns is None or math.isnan(ns):
        return "—"
    if ns >= 100_000:
        return f"{ns / 1000:,.0f} µs"
    if ns >= 10_000:
        return f"{ns / 1000:,.1f} µs"
    if ns >= 100:
        return f"{ns:,.0f}"
    return f"{ns:.1f}"


def fmt_ratio(r: float | None) -> str:
    if r is None or math.isnan(r):
        return "—"
    return f"{r:,.0f}×" if r >= 100 else f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def fmt_noise(noise: float | None) -> str:
    return "—" if noise is None else f"{100 * noise:.0f}%"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]],
                   align: str | None = None) -> str:
    """A GitHub-flavoured markdown table; align: "l" or "r" per column (default: the first
    column left, the others right)."""
    cells = [[str(c) for c in r] for r in rows]
    align = align or "l" + "r" * (len(header) - 1)
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(header)]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if a == "l" else c.rjust(w)
                                 for c, w, a in zip(row, widths, align)) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else (":" + "-" * (w + 1))
                          for w, a in zip(widths, align)) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in cells)])
