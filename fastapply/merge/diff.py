"""Edit distance (insertions + deletions only) between two line sequences: rapidfuzz's Indel; and
which lines of one sequence stand for which of another (`line_pairs`).

This is the hot path of every placement tried (`merge/anchor.py`, `merge/checks/region_deletions.py`).
rapidfuzz computes it in C++ (common prefix/suffix trimmed, then a bit-parallel LCS whose work the
cap bounds), so a region that matches little where it is tried (a 400-line class wrapped whole in
`try {`, every line re-indented) costs no more than one that matches well.

rapidfuzz compares list elements by `hash()` (a one-character string by its code point): two
different lines count as equal only if their 64-bit hashes collide, which the property test in
tests/test_merge_diff.py would not notice and the merge can ignore.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from rapidfuzz.distance import Indel


def edit_distance(a: list[str], b: list[str], cap: int | None = None) -> int | None:
    """Lines inserted plus lines deleted to turn a into b; None when it exceeds cap."""
    if cap is not None and cap < 0:
        return None  # no distance is at most a negative cap (rapidfuzz would reject the cutoff)
    d = Indel.distance(a, b, score_cutoff=cap)
    # past the cutoff rapidfuzz answers cap + 1, not the distance
    return None if cap is not None and d > cap else d


def line_pairs(a: list, b: list, *, replaced: bool = False, pin_head: bool = True,
               pin_tail: bool = True) -> dict[int, int]:
    """Index in `a` -> index in `b` of the lines that stand for each other: the common head and tail
    first (a line diff alone may pair a kept `}` with one in new code, and the matcher then runs on
    the edited middle only), then the equal runs of a line diff of the rest; with `replaced`, a
    replaced run's lines too, one for one in order (a changed line in its old line's place).
    Without `pin_head` (`pin_tail`) the common head (tail) is left to the diff."""
    head = 0
    while pin_head and head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while pin_tail and tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    pairs = {k: k for k in range(head)}
    pairs.update({len(a) - 1 - k: len(b) - 1 - k for k in range(tail)})
    middle = SequenceMatcher(None, a[head:len(a) - tail], b[head:len(b) - tail], autojunk=False)
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        if tag == "equal" or replaced and tag == "replace":
            pairs.update({head + i1 + k: head + j1 + k for k in range(min(i2 - i1, j2 - j1))})
    return pairs
