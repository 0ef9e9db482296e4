"""Splice edits into the original's lines: the one loop every placement strategy ends with."""

from __future__ import annotations

from collections.abc import Iterable


def apply_edits(orig: list[str], edits: Iterable[tuple[int, int, list[str]]]) -> list[str] | None:
    """`orig` with each edit (start, end exclusive, new lines) replacing orig[start:end], edits in
    order; None when an edit starts before the previous one ends (they overlap)."""
    out: list[str] = []
    pos = 0
    for start, end, new in edits:
        if start < pos:
            return None
        out.extend(orig[pos:start])
        out.extend(new)
        pos = end
    out.extend(orig[pos:])
    return out
