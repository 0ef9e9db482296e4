"""Edit distance (insertions + deletions only) between two line sequences.

Placement costs are usually tiny (a region is mostly context), so Myers' O((N+M)D) algorithm with
a cap is far cheaper than a full dynamic program. A region that matches little where it is tried
(a 400-line class wrapped whole in `try {`, every line re-indented) makes D as large as N+M, and
Myers' loop in Python then takes ~70 ms per placement tried; past a few dozen edits the distance
comes from the longest common subsequence computed bit-parallel on Python integers (one pass of a
few big-integer operations per line), which gives the same number.
"""

from __future__ import annotations

SMALL_D = 32  # edits Myers' loop looks for before the bit-parallel count takes over


def edit_distance(a: list[str], b: list[str], cap: int | None = None) -> int | None:
    """Lines inserted plus lines deleted to turn a into b; None when it exceeds cap."""
    n, m = len(a), len(b)
    # trim the common prefix/suffix first: cheap and usually most of the work
    lo = 0
    while lo < n and lo < m and a[lo] == b[lo]:
        lo += 1
    hi_a, hi_b = n, m
    while hi_a > lo and hi_b > lo and a[hi_a - 1] == b[hi_b - 1]:
        hi_a -= 1
        hi_b -= 1
    a, b = a[lo:hi_a], b[lo:hi_b]
    n, m = len(a), len(b)
    limit = n + m if cap is None else min(cap, n + m)
    if n == 0 or m == 0:
        return n + m if n + m <= limit else None
    if abs(n - m) > limit:
        return None
    d = _myers(a, b, min(limit, SMALL_D))
    if d is not None or limit <= SMALL_D:
        return d
    d = n + m - 2 * lcs_length(a, b)
    return d if d <= limit else None


def _myers(a: list[str], b: list[str], limit: int) -> int | None:
    """Myers' greedy forward search for at most `limit` edits (a and b non-empty)."""
    n, m = len(a), len(b)
    offset = limit + 1
    v = [0] * (2 * limit + 3)
    for d in range(limit + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[offset + k] = x
            if x >= n and y >= m:
                return d
    return None


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of a and b, bit-parallel over b (Hyyrö's
    formulation of Allison-Dix): bit j of `v` is 0 where the LCS grows at b[j]."""
    masks: dict[str, int] = {}
    for j, x in enumerate(b):
        masks[x] = masks.get(x, 0) | (1 << j)
    full = (1 << len(b)) - 1
    v = full
    for x in a:
        u = v & masks.get(x, 0)
        v = ((v + u) | (v - u)) & full
    return len(b) - bin(v).count("1")
