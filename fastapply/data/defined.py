"""Is the expected file determined by original + snippet? A check that needs no merge engine.

A snippet is kept only when a careful reader can rebuild the expected file from it and nothing
else: every change lies inside a shown region; splicing the regions into the original at their
spans gives the expected file exactly; and each region's span can be found. A context region is
found by its unchanged head and tail (the lines before its first and after its last change), each
of which must occur exactly once in the original (whitespace-insensitive) unless the file's start
or end anchors it; a whole definition by its header line, unique among the original's definitions
of its kind (regions.def_regions); a class's first line by being unique in the original; a class's
closing line by its class. Marker-shaped lines in the file itself would be misread, so such files
are skipped.
"""

from __future__ import annotations

from fastapply.data.hunks import Diff
from fastapply.data.regions import Region
from fastapply.data.snippets import Style
from fastapply.markers import looks_like_marker


def has_marker_lines(d: Diff) -> bool:
    return any(looks_like_marker(x) for x in d.orig) or any(looks_like_marker(x) for x in d.exp)


def _occurrences(hay: list[str], needle: list[str]) -> list[int]:
    n = len(needle)
    return [i for i in range(len(hay) - n + 1) if hay[i:i + n] == needle]


def _unique_at(stripped: list[str], block: list[str], at: int) -> bool:
    """The block has a non-blank line and occurs exactly once in the original, at line `at`."""
    key = [x.strip() for x in block]
    return any(key) and _occurrences(stripped, key) == [at]


def _spliced(d: Diff, regions: list[Region]) -> list[str]:
    out: list[str] = []
    pos = 0
    for r in regions:
        out += d.orig[pos:r.ostart] + d.exp[r.start:r.end]
        pos = r.oend
    return out + d.orig[pos:]


def _inside(d: Diff, regions: list[Region]) -> dict[int, list[tuple[int, int, int, int]]]:
    """Region index -> the hunks inside it; a hunk outside every region is under key -1."""
    by: dict[int, list] = {}
    for h in d.hunks:
        i1, i2, j1, j2 = h
        k = next((k for k, r in enumerate(regions)
                  if r.ostart <= i1 and i2 <= r.oend and r.start <= j1 and j2 <= r.end), -1)
        by.setdefault(k, []).append(h)
    return by


def _context_found(d: Diff, r: Region, hunks, stripped: list[str]) -> bool:
    """The region's unchanged head and tail each occur once in the original. A region may start (end)
    with a change only when it inserts at the very start (end) of the file: otherwise a reader cannot
    tell how much of the original's first (last) lines it replaces."""
    if not hunks:
        return _unique_at(stripped, d.exp[r.start:r.end], r.ostart)
    first, last = hunks[0], hunks[-1]
    head, tail = d.exp[r.start:first[2]], d.exp[last[3]:r.end]
    # an insertion at the top of a file that starts with blank lines could go before or after them
    head_ok = _unique_at(stripped, head, r.ostart) if head else (r.ostart == 0 and first[0] == first[1] == 0
                                                                   and bool(stripped) and bool(stripped[0]))
    n = len(d.orig)
    tail_ok = _unique_at(stripped, tail, r.oend - len(tail)) if tail else (r.oend == n and last[0] == last[1] == n)
    return head_ok and tail_ok


def why_undefined(d: Diff, regions: list[Region], style: Style) -> str | None:
    """None when the snippet determines the expected file; else the reason it does not."""
    if not regions:
        return "no region"
    for a, b in zip(regions, regions[1:]):
        if b.start < a.end or b.ostart < a.oend:
            return "overlapping regions"
    if _spliced(d, regions) != d.exp:
        return "the regions do not rebuild the expected file"
    by = _inside(d, regions)
    if -1 in by:
        return "a change outside every region"
    stripped = [x.strip() for x in d.orig]
    if style.markers and style.marker.strip() in stripped:
        return "the marker wording occurs in the original"
    for k, r in enumerate(regions):
        if r.kind == "context" and not _context_found(d, r, by.get(k, []), stripped):
            return f"region {k} cannot be placed uniquely"
        if r.kind == "header" and not _unique_at(stripped, d.exp[r.start:r.end], r.ostart):
            return f"class line of region {k} is not unique"
    return None
