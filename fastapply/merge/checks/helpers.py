"""Line helpers that rules in several modules share (a helper used by one module lives there)."""

from __future__ import annotations

from difflib import SequenceMatcher

from fastapply.merge.checks.base import RegionFit
from fastapply.merge.text import CLOSERS, is_blank, is_trivial

ATTRIBUTE_STARTS = ("@", "#[", "#![")  # line starts of attributes, decorators and annotations


def added_lines(lines: list[str], span: list[str]) -> list[str]:
    """A region's non-trivial lines that do not stand, as written, in the original span it covers:
    its new (or moved, or re-indented) lines."""
    kept = {x.rstrip() for x in span}
    return [x for x in lines if not is_trivial(x) and x.rstrip() not in kept]


def rests_on_common_lines(fit: RegionFit) -> bool:
    """Every original line that anchors the region, as written, is a common one (`try:`, `}`)."""
    span_keys = {x.rstrip() for x in fit.orig[fit.start:fit.end]}
    shown = {y.rstrip() for y in fit.c.lines}
    return all(is_trivial(x) for x in fit.orig[fit.c.start:fit.c.end + 1] if x.rstrip() in span_keys and
               x.rstrip() in shown)


def trim_blank_ends(lines: list[str]) -> list[str]:
    """The lines without the blank lines at either end."""
    code = [k for k, x in enumerate(lines) if not is_blank(x)]
    return [x.rstrip() for x in lines[code[0]:code[-1] + 1]] if code else []


def seam_runs(lines: list[str]) -> list[tuple[list[str], list[str]]]:
    """For each seam between two items in a region's lines: (the lines before it, the lines after
    it), right-stripped, blank ends trimmed. A seam is a blank gap between code, or the line after
    a closer (`}`, `},`, `});`): a region that shows the tail of one item and the head of the next
    spans one (tests set apart by blank lines; table entries, match arms, one after the other)."""
    code = trim_blank_ends(lines)
    gaps = [k for k in range(1, len(code)) if not is_blank(code[k - 1]) and
            (is_blank(code[k]) or code[k - 1].strip() in CLOSERS)]
    out = []
    for k in gaps:
        end = next(j for j in range(k, len(code)) if not is_blank(code[j]))
        out.append((code[:k], code[end:]))
    return out


def copies_before(keys: list[str], run: list[str], lo: int, hi: int, most: int) -> list[int]:
    """The indexes in [lo, hi) where `run` starts as consecutive lines of `keys`, nearest `hi` first."""
    return [t for t in range(hi - 1, max(lo, 0) - 1, -1) if keys[t:t + len(run)] == run][:most]


def copies_after(keys: list[str], run: list[str], lo: int, hi: int, most: int) -> list[int]:
    """The indexes in [lo, hi) where `run` ends as consecutive lines of `keys`, nearest `lo` first."""
    return [e for e in range(max(lo, len(run) - 1), min(hi, len(keys)))
            if keys[e - len(run) + 1:e + 1] == run][:most]


def seam_copies(keys: list[str], lines: list[str], top: int, bottom: int, lo: int, hi: int,
                most: int) -> list[tuple[str, list[str], int]]:
    """Other copies of a region's lines on either side of each of its blank-separated seams
    (`seam_runs`), the region's first code line standing at `top` of `keys` and its last at
    `bottom`: ("above", the lines before the seam, where a copy of them starts in [lo, top)) and
    ("below", the lines after it, where a copy ends in (bottom, hi)), seam by seam, nearest first,
    at most `most` per seam and side."""
    out = []
    for before, after in seam_runs(lines):
        out += [("above", before, t) for t in copies_before(keys, before, lo, top, most)]
        out += [("below", after, e) for e in copies_after(keys, after, bottom + 1, hi, most)]
    return out


def deletions_at_edges(a: list[str], b: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """Where a region (a, from its first to its last anchor) matched against its original span (b)
    starts (ends) with matching lines and then original lines it lacks: ("first" | "last", those
    matching lines, the deleted original lines), in that order."""
    ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    out = []
    for side, edge in (("first", ops[:2]), ("last", ops[::-1][:2])):
        if len(edge) == 2 and edge[0][0] == "equal" and edge[1][0] == "insert":
            _, i1, i2, _, _ = edge[0]
            _, _, _, k1, k2 = edge[1]
            out.append((side, a[i1:i2], b[k1:k2]))
    return out


def anchor_span(fit: RegionFit) -> tuple[list[str], list[str]]:
    """The region's lines from its first anchor to its last, and the original span they sit on."""
    c = fit.c
    return [x.rstrip() for x in c.lines[c.first:c.last + 1]], [x.rstrip() for x in fit.orig[c.start:c.end + 1]]
