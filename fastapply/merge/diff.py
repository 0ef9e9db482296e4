"""Edit distance (insertions + deletions only) between two line sequences, Myers O((N+M)D).

Placement costs are usually tiny (a region is mostly context), so the O(ND) algorithm with a cap
is far cheaper than a full dynamic program.
"""

from __future__ import annotations


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
    if n == 0 or m == 0:
        d = n + m
        return d if cap is None or d <= cap else None
    limit = n + m if cap is None else min(cap, n + m)
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

