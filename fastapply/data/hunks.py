"""The line diff of one file edit and the map between expected and original line numbers."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


def lines_of(text: str) -> list[str]:
    """Lines without their "\\n" (only "\\n" splits: str.splitlines would also split on \\f, \\x1c, ...)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class Diff:
    orig: list[str]
    exp: list[str]
    ops: list[tuple[str, int, int, int, int]]  # difflib opcodes: (tag, i1, i2, j1, j2)

    @property
    def hunks(self) -> list[tuple[int, int, int, int]]:
        return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in self.ops if tag != "equal"]

    def changed_lines(self) -> int:
        return sum((i2 - i1) + (j2 - j1) for i1, i2, j1, j2 in self.hunks)

    def map_start(self, j: int) -> int | None:
        """The original line where an expected region starting at line j starts (None inside a change)."""
        if j >= len(self.exp):
            return len(self.orig)
        for tag, i1, _, j1, j2 in self.ops:
            if j1 <= j < j2:
                return i1 + (j - j1) if tag == "equal" else (i1 if j == j1 else None)
        return None

    def map_end(self, e: int) -> int | None:
        """The original line (exclusive) where an expected region ending before line e ends."""
        if e <= 0:
            return 0
        for tag, i1, i2, j1, j2 in self.ops:
            if j1 < e <= j2:
                return i1 + (e - j1) if tag == "equal" else (i2 if e == j2 else None)
        return None


def diff(original: str, expected: str) -> Diff:
    a, b = lines_of(original), lines_of(expected)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return Diff(a, b, ops)


def whitespace_only(d: Diff) -> bool:
    """Every change only re-indents or re-spaces lines (the merge cannot tell such edits from noise)."""
    strip = [s.split() for s in d.orig], [s.split() for s in d.exp]
    return all(strip[0][i1:i2] == strip[1][j1:j2] for i1, i2, j1, j2 in d.hunks) or \
        [x for x in strip[0] if x] == [x for x in strip[1] if x]
