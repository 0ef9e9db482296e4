"""Region rules (context: `RegionFit`): code a region shows at another indentation.

Moved into or out of a block (an unwrap), or pasted at another depth? Refused where the old copy
of the moved code would stay beside the new one (in the span, next to it, or in the gap), where a
re-indented paste is shorter than what it replaces, or where a `}` read at its new indentation is
another line of the original than the one the re-indented code ends at.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from fastapply.merge.checks.base import RegionFit
from fastapply.merge.checks.helpers import added_lines, rests_on_common_lines
from fastapply.merge.seams import opens_block
from fastapply.merge.text import indent_of, is_blank, is_trivial

KEPT_NEAR = 3  # non-blank original lines beyond a region's span that count as "next to it" (plus one per added line)
RUN_BESIDE = 12  # lines compared at each side of a span by reindented_run_beside


def reindented_and_shorter(fit: RegionFit) -> str | None:
    """A hand-pasted (re-indented) region that deletes more lines than it adds: abbreviated?"""
    c, r = fit.c, fit.region
    if c.lines[c.first] != r.lines[c.first]:
        kept = set(x.rstrip() for x in c.lines)
        span = set(x.rstrip() for x in fit.orig[fit.start:fit.end])
        region_dels = sum(1 for x in fit.orig[fit.start:fit.end] if not is_blank(x) and x.rstrip() not in kept)
        region_new = sum(1 for x in c.lines if not is_blank(x) and x.rstrip() not in span)
        if region_dels > region_new:
            return (f"region {fit.i + 1} is pasted at another indentation and is shorter than the "
                    "code it replaces: abbreviation or deletion?")
    return None


def reindented_copy_kept(fit: RegionFit) -> str | None:
    """Lines the region adds equal, but for their indentation, original lines next to them that the
    placement keeps: the snippet moved that code into or out of a block (unwrapped an `if`), and the
    merge would keep the old copy (and the block around it) beside the new one. At least half of the
    added lines must be such copies (a long new block may repeat a line or two by chance)."""
    o = fit.orig
    added = added_lines(fit.c.lines, o[fit.start:fit.end])
    if not added:
        return None
    # Anchored on common lines only (`try:`, `}`), the region has no place of its own: its copies
    # count anywhere in the gap, not just next to it (two of them at least, or one inside an anchor
    # that opens a block: one line appended after a file's last `}` may well repeat a statement).
    lone = rests_on_common_lines(fit)
    reach = fit.next_start - max(fit.prev_end, 0) if lone else KEPT_NEAR + len(added)
    near = _near_kept(o, fit.start, fit.end, max(fit.prev_end, 0), fit.next_start,
                      {x.rstrip() for x in fit.c.lines}, reach)
    copies = [(x, j) for x in added for j in near if o[j].strip() == x.strip() and indent_of(o[j]) != indent_of(x)]
    distinct = len({x for x, _ in copies})
    opener = any(opens_block(o[j], fit.lang) for j in (fit.c.start, fit.c.end))  # (`try:` then the copy)
    weak = lone and opener  # placed on a bare `try:` / `if (x) {` and nothing else: any copy counts
    if copies and (weak or 2 * distinct >= len(added) and (distinct >= 2 or not lone)):
        x, j = copies[0]
        return (f"region {fit.i + 1} adds `{x.strip()[:50]}` at another indentation next to the original's "
                f"(line {j + 1}), which stays: code moved out of or into a block? (the lines around it may "
                "be deleted)")
    return None


def copy_of_kept_neighbour(fit: RegionFit) -> str | None:
    """The region, re-indented to fit (or read as wrapped code), adds a line that stands exactly so
    a few lines beyond its span, where the original keeps it: the snippet's lines belong at that
    copy, one level in (an unwrapped `if` placed on a similar function instead), or the region's
    first line is a new opener that happens to match an original one (`try:`), and the merge would
    keep the wrapped lines above the new block and repeat them inside it. A region written as it
    stands may repeat a nearby line on purpose; one moved to fit has no such say. Nor has one whose
    edge lines were paired by similarity (a rename through a test's first block only, anchored on
    a comment that opens its last one too) when two or more of its new lines stand beside it.
    A moved region that rests on common lines only has no place of its own: then copies anywhere
    in its gap count, two of them at least (a wrap read back onto another `try:` than the one it
    adds)."""
    moved = fit.c.lines != fit.region.lines or fit.lowered
    if not moved and not fit.fuzzy:
        return None
    o = fit.orig
    added = {x.rstrip() for x in added_lines(fit.c.lines, o[fit.start:fit.end])}

    def copies(reach: int) -> tuple[list[int], int]:
        near = _near_kept(o, fit.start, fit.end, max(fit.prev_end, 0), fit.next_start, set(), reach)
        found = sorted(j for j in near if o[j].rstrip() in added)
        return found, len({o[j].rstrip() for j in found})

    found, distinct = copies(KEPT_NEAR + len(added))
    if not moved and distinct < 2:
        found = []
    if not found and moved and rests_on_common_lines(fit):
        # resting on common lines only, a moved region has no place of its own: copies anywhere in
        # the gap count, two at least (a wrap read back onto another `try:` than the one it adds)
        found, distinct = copies(fit.next_start - max(fit.prev_end, 0))
        found = found if distinct >= 2 else []
    if found:
        copy = found[0]
        return (f"region {fit.i + 1} would add `{o[copy].strip()[:50]}`, which stands just as written at line {copy + 1} "
                "and stays: the region belongs at that line, or the old copy should go?")
    return None


def reindented_run_beside(fit: RegionFit) -> str | None:
    """The region shows, in the same order but at another indentation, the lines that the original
    has right after (before) its span, and the placement keeps those originals: the snippet moved
    them into (out of) a block, and they would stand twice (a wrapped block's last lines, read as
    new lines before an original `}` that only looks like the block's closer; imports wrapped in a
    new `try {` whose last one alone was paired with its original; a wrap whose first re-indented
    lines were paired, by similarity, with themselves at the old depth, the rest of the run kept).
    Two non-trivial lines at least (one may repeat by chance), or one when the run ends the region at
    an anchor that is a common line (`}`), which places nothing by itself (a wrap's last statement and
    its new `}` read onto an original `}` one level deeper, the statement kept below too)."""
    o, c = fit.orig, fit.c
    shown = [x for x in c.lines if not is_blank(x)]
    keys = [x.strip() for x in shown]
    lead = sum(1 for x in c.lines[:c.first] if not is_blank(x))  # shown lines before the first anchor
    trail = sum(1 for x in c.lines[:c.last + 1] if not is_blank(x))  # ... up to the last one
    after = [o[j] for j in range(fit.end, min(fit.next_start, fit.end + 4 * RUN_BESIDE))]
    before = [o[j] for j in range(max(fit.prev_end, 0, fit.start - 4 * RUN_BESIDE), fit.start)]
    after = [x for x in after if not is_blank(x)][:RUN_BESIDE]
    before = [x for x in before if not is_blank(x)][-RUN_BESIDE:]
    # The run may begin inside the span, on edge lines the region replaced with themselves
    # re-indented (paired by similarity): the rest of the run, beyond the span, stays.
    in_span = {y.rstrip() for y in o[fit.start:fit.end]}
    moved = {x.strip() for x in shown if x.rstrip() not in in_span}
    def reindented(rows: range) -> list[str]:
        got = [o[j] for j in rows if not is_blank(o[j])]
        return got if all(y.strip() in moved for y in got) else []
    ins_after, ins_before = reindented(range(c.end + 1, fit.end)), reindented(range(fit.start, c.start))
    weak = {"after": c.last == len(c.lines) - 1 and is_trivial(c.lines[c.last]),
            "before": c.first == 0 and is_trivial(c.lines[0])}
    for side, inside, theirs in (("after", ins_after, ins_after + after), ("before", ins_before, before + ins_before)):
        for n in range(min(len(shown), len(theirs), RUN_BESIDE), max(1, len(inside)), -1):
            kept = theirs[:n] if side == "after" else theirs[-n:]
            if sum(1 for y in kept if not is_trivial(y)) < (1 if weak[side] else 2):
                continue
            want = [y.strip() for y in kept]
            # at the region's edge on that side, or among its new edge lines there (beyond its
            # anchors: the imports of a new `try {` whose last one alone was paired); a run amid
            # anchored code may repeat by chance in code written in a pattern
            at = [p for p in range(len(shown) - n + 1) if keys[p:p + n] == want and
                  (p + n == len(shown) or p >= trail if side == "after" else p == 0 or p + n <= lead)]
            if any(any(indent_of(x) != indent_of(y) for x, y in zip(shown[p:p + n], kept)) for p in at):
                return (f"region {fit.i + 1} shows {n} lines that the original has right {side} its place, at "
                        "another indentation, and they stay: code moved into or out of a block, kept twice?")
            if at:
                break
    return None


def common_edge_moved_by_reindent(fit: RegionFit) -> str | None:
    """The region's last (first) anchor is a common line (`}`), and the region re-indents lines
    (they occur in the original at another indentation). Read ignoring indentation, the region ends
    (starts) at an earlier (later) original line than its anchor, and original code between that the
    region does not show elsewhere (not only brackets, which an unwrap removes) would be deleted:
    that `}` is the re-indented block's own closer (the snippet wraps code in a new block), not the
    original `}` that happens to have its new indentation, and the marker next to it stands for
    those lines."""
    c, o = fit.c, fit.orig
    a = c.lines[c.first:c.last + 1]
    b = o[c.start:c.end + 1]
    exact = {x.rstrip() for x in b}
    if c.first == c.last or not any(not is_blank(x) and x.rstrip() not in exact and
                                    any(x.strip() == y.strip() for y in b) for x in a):
        return None  # no re-indented line
    blocks = [m for m in SequenceMatcher(None, [x.strip() for x in a], [y.strip() for y in b],
                                         autojunk=False).get_matching_blocks() if m.size]
    if not blocks:
        return None
    last, first = blocks[-1], blocks[0]
    shown = {x.strip() for x in a}

    def lost(lines: list[str]) -> bool:
        return any(not is_trivial(y) and y.strip() not in shown for y in lines)

    if fit.region.marker_after and is_trivial(a[-1]) and last.a + last.size == len(a) and lost(b[last.b + last.size:]):
        edge = o[c.start + last.b + last.size - 1].strip()
    elif fit.region.marker_before and is_trivial(a[0]) and first.a == 0 and first.b > 0 and lost(b[:first.b]):
        edge = o[c.start + first.b].strip()
    else:
        return None
    return (f"region {fit.i + 1}: read with its re-indented lines, its `{edge[:30]}` is another line of the "
            "original than the one its indentation matches; the lines between would be deleted: refusing to guess")


def _near_kept(o: list[str], start: int, end: int, lo: int, hi: int, kept: set[str], reach: int) -> list[int]:
    """Original lines the placement keeps in or next to the span [start, end): those in the span that
    the region repeats, and up to `reach` non-blank lines on either side (within [lo, hi))."""
    out = [j for j in range(start, end) if o[j].rstrip() in kept]
    for step, j in ((-1, start - 1), (1, end)):
        n = 0
        while lo <= j < hi and n < reach:
            if not is_blank(o[j]):
                out.append(j)
                n += 1
            j += step
    return out
