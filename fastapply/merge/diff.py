"""Edit distance (insertions + deletions only) between two line sequences: rapidfuzz's Indel.

This is the hot path of every placement tried (`merge/anchor.py`, `merge/checks/region_deletions.py`).
rapidfuzz computes it in C++ (common prefix/suffix trimmed, then a bit-parallel LCS whose work the
cap bounds), so a region that matches little where it is tried (a 400-line class wrapped whole in
`try {`, every line re-indented) costs no more than one that matches well.

rapidfuzz compares list elements by `hash()` (a one-character string by its code point): two
different lines count as equal only if their 64-bit hashes collide, which the property test in
tests/test_merge_diff.py would not notice and the merge can ignore.
"""

from __future__ import annotations

from rapidfuzz.distance import Indel


def edit_distance(a: list[str], b: list[str], cap: int | None = None) -> int | None:
    """Lines inserted plus lines deleted to turn a into b; None when it exceeds cap."""
    if cap is not None and cap < 0:
        return None  # no distance is at most a negative cap (rapidfuzz would reject the cutoff)
    d = Indel.distance(a, b, score_cutoff=cap)
    # past the cutoff rapidfuzz answers cap + 1, not the distance
    return None if cap is not None and d > cap else d
