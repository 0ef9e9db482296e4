"""The merge's refusal rules, one named check each, run in order (Continue's `shouldRejectDiff`,
made into a list).

A check reads one context and returns a reason to refuse (a sentence the user sees) or None:
- `REGION_CHECKS(fit: RegionFit)`: one snippet region placed by its line anchors (`lineplace.py`);
- `FILE_CHECKS(plan: LinePlan)`: all regions placed, before they are spliced into the file;
- `TREE_CHECKS(match: DefinitionMatch)`, `DEFINITION_CHECKS(shown: ShownDefinition)`: a
  marker-free snippet whose definitions replace the original's by name (`tree.py`);
- `CONTAINER_CHECKS(members: MemberList)`, `DELETE_CHECKS(run: DeletedRun)`: a class's (or the
  file's) members aligned by name, and the members it deletes (`members.py`);
- `MEMBER_CHECKS(shown: ShownMember)`: a snippet member that replaces an original member, and
  `NEW_MEMBER_CHECKS(new: NewMember)`: a new member, in the member alignment.
The first reason wins. A new rule is a function here plus its place in the tuple. What every
accepted merge must pass besides (parse, empty body, marker leak, large deletion) is
`fastapply.validate`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from fastapply.merge.anchor import Candidate, Region
from fastapply.merge.diff import edit_distance
from fastapply.merge.defs import Definition, brace_off_indent, cut_inside_prefix, parse_definitions
from fastapply.merge.seams import broken_seam, opens_block, seam_pairs
from fastapply.merge.splice import apply_edits
from fastapply.merge.text import (
    CLOSERS, code_of, dedent, indent_of, is_blank, is_trivial, line_key, occurrences, reindent, similar,
)
from fastapply.merge.whole_defs import header_counts, original_definitions
from fastapply.merge.wrap import marker_wrap, shown_wrap

AMBIGUITY = 4  # an alternative placement this close in cost, explaining as many lines, is a tie
# lines: a repeat this close to a region's edge makes "these few lines were deleted too" a plausible reading
NEAR = 2
# A placement deleting more than max(DELETION_MIN, DELETION_RATIO x the region's lines) unshown lines
# next to an anchor that repeats inside the span is refused.
DELETION_MIN, DELETION_RATIO = 10, 3
REPEAT_COPIES = 5  # further copies of a deleting region's edge line checked for a tie
REORDER_MAX = 60  # regions up to this many lines are checked for being a nearby reorder

Ctx = TypeVar("Ctx")


def first_refusal(checks: Sequence[Callable[[Ctx], str | None]], ctx: Ctx) -> str | None:
    """The reason of the first check that refuses, or None."""
    for check in checks:
        reason = check(ctx)
        if reason:
            return reason
    return None


# -- one region placed by its line anchors ------------------------------------------------------------

@dataclass
class RegionFit:
    """A region at its cheapest placement, with the original span it would replace."""

    i: int  # index of the region in the snippet (reasons say `region {i + 1}`)
    region: Region
    c: Candidate  # the chosen placement
    orig: list[str]
    prev_end: int  # where the previous region's span ends (this one cannot start before)
    next_start: int  # where the next anchored region starts
    start: int  # the original span [start, end) the region replaces, its edge lines included
    end: int
    lead: list[str]  # region lines before its first anchor / after its last one
    trail: list[str]
    new_lead: list[str]  # those edge lines left over after pairing with original lines: new code
    new_trail: list[str]
    next_region: Region | None  # the snippet's next region, if any
    partial_ok: bool  # a marker-free snippet (what it does not show stays)
    lang: str | None
    fuzzy: int = 0  # edge lines paired with original lines by similarity rather than equality
    opened: int = 0  # brackets the snippet's new lines opened before this region's first anchor
    lowered: bool = False  # placed under the wrap reading: lines the snippet wrapped, put back (wrap.py)


def contested(fit: RegionFit) -> str | None:
    if fit.region.contested:
        return (f"region {fit.i + 1} also fits, more cheaply, at a place that matches only on common "
                "lines such as `}`: not certain")
    return None


def context_split(fit: RegionFit) -> str | None:
    if fit.c.context < fit.region.best_context:
        return (f"region {fit.i + 1}: the cheapest placement (line {fit.c.start + 1}) is not the one that "
                "keeps the snippet's context lines together; refusing to pick")
    return None


def edge_run_longer_elsewhere(fit: RegionFit) -> str | None:
    """The region's first (last) anchor line occurs again in its gap, and there more of the region's
    lines follow (precede) it as written than at the chosen place: the edge says "here", the
    cost (decided by the other anchor, which fits only at the chosen place as written) says
    "there" (a wrapped block's deeper line matches exactly in a similar function). Refuse."""
    c, o = fit.c, fit.orig
    keys = [x.rstrip() for x in o]
    lo, hi = max(fit.prev_end, 0), fit.next_start
    region = [x.rstrip() for x in c.lines]

    def run(k: int, j: int, step: int) -> int:
        n = 0
        while 0 <= k < len(region) and lo <= j < hi and region[k] == keys[j]:
            n, k, j = n + 1, k + step, j + step
        return n

    for at, k, step in ((c.start, c.first, 1), (c.end, c.last, -1)):
        here = run(k, at, step)
        for t in range(lo, hi):
            if t == at or keys[t] != keys[at]:
                continue
            there = run(k, t, step)
            extra = region[k + step * here:k + step * there:step] if step > 0 else \
                region[k - there + 1:k - here + 1]
            if there > here and any(not is_trivial(x) for x in extra):
                return (f"region {fit.i + 1}'s edge line `{keys[at].strip()[:40]}` occurs at line {at + 1} and at line "
                        f"{t + 1}, and more of the region's lines stand next to it at line {t + 1}: which is meant?")
    return None


def tied_alternative(fit: RegionFit) -> str | None:
    """Another placement in the same gap explains as many lines at about the same cost. One that
    shares an anchor with it must explain more, its other anchor on another copy of the region's
    edge line (`assert x == y` ending two blocks of a test), and the chosen placement must keep,
    between the two copies, a line the region adds: the old lines beside the region's new
    version of them (a rename through a whole function, anchored on its first block's end). The
    latter may cost more than the margin, by up to the number of lines it explains beyond the chosen
    one (a rename through many lines makes the longer span dear: each renamed line is a deletion
    too; so the lines between the two ends must be about half explained), and by twice that when it
    keeps as much of the snippet's context together as the chosen one (the function's `}` left to
    the marker in brace languages makes the span dearer still). The real commits_dev edit
    express@c9ecf7b65838 test/app.render.js, whose nearer end is right, keeps more: 15 lines to 10."""
    c = fit.c
    for alt in fit.region.candidates + fit.region.dearer:
        extra, shared = alt.cost - c.cost, alt.start == c.start or alt.end == c.end
        explained = (alt.matched - c.matched) * (2 if alt.context >= c.context else 1) if shared else 0
        if alt.start == c.start and alt.end == c.end or extra > max(AMBIGUITY, explained) or \
                not (fit.prev_end <= alt.start and alt.end < fit.next_start):
            continue
        if alt.start != c.start and alt.end != c.end and alt.matched >= c.matched and extra <= AMBIGUITY:
            return (f"region {fit.i + 1} fits at line {c.start + 1} and at line {alt.start + 1} alike "
                    "(same lines explained; they differ only in what the edit would delete)")
        if alt.matched > c.matched:  # one anchor shared, the other on another copy of its line
            kept = range(c.end + 1, alt.end) if alt.start == c.start else range(alt.start + 1, c.start)
            added = {x.rstrip() for x in _added(c.lines, fit.orig[c.start:c.end + 1])}
            copy = next((j for j in kept if fit.orig[j].rstrip() in added), None)
            if copy is not None:
                return (f"region {fit.i + 1} fits on lines {c.start + 1}-{c.end + 1} and, explaining more of its "
                        f"lines ({alt.matched} to {c.matched}), on lines {alt.start + 1}-{alt.end + 1}; the first would "
                        f"keep line {copy + 1} (`{fit.orig[copy].strip()[:40]}`), which the region adds again: "
                        "which is meant?")
    return None


def rests_on_repeated_lines(fit: RegionFit) -> str | None:
    """The region replaces original lines, and every line it shares with its place (besides common
    lines like `}`) occurs more than once in its gap: a function rewritten whole whose header repeats
    (`fn fmt` in several impls) fits each copy; the cheapest is only the shortest body."""
    o = fit.orig
    span = {x.rstrip() for x in o[fit.start:fit.end]}
    shared = {x.rstrip() for x in fit.c.lines if not is_blank(x) and not is_trivial(x) and x.rstrip() in span}
    shown = {x.rstrip() for x in fit.c.lines}
    if not shared or all(is_blank(x) or x.rstrip() in shown for x in o[fit.start:fit.end]):
        return None  # (it replaces no original line: an insertion next to repeated context)
    gap = [x.rstrip() for x in o[max(fit.prev_end, 0):fit.next_start]]
    if all(gap.count(x) > 1 for x in shared):
        line = sorted(shared)[0]
        return (f"region {fit.i + 1} shares only repeated lines with its place (`{line.strip()[:40]}` occurs "
                f"{gap.count(line)} times): which copy is meant?")
    return None


def repeated_edge(fit: RegionFit) -> str | None:
    weak = weak_edge(fit.c, fit.orig, fit.prev_end, fit.next_start)
    return f"region {fit.i + 1}: {weak}" if weak else None


# Blank lines at a region's edge (next to a marker) that the original does not have there:
# new blank lines, or context for a deletion next to them?

def new_blank_lines_at_start(fit: RegionFit) -> str | None:
    o, start = fit.orig, fit.start
    if fit.region.marker_before and start > fit.prev_end and not is_blank(o[start - 1]) and \
            blank_run(fit.lead, blank=True) > blank_run(o[start:fit.c.start], blank=True):
        return (f"region {fit.i + 1} starts with blank lines the original does not have there: "
                "new blank lines, or a deletion right after them?")
    return None


def new_blank_lines_at_end(fit: RegionFit) -> str | None:
    o, end = fit.orig, fit.end
    if fit.region.marker_after and end < fit.next_start and not is_blank(o[end]) and \
            blank_run(fit.trail[::-1], blank=True) > blank_run(o[fit.c.end + 1:end][::-1], blank=True):
        return (f"region {fit.i + 1} ends with blank lines the original does not have there: "
                "new blank lines, or a deletion right before them?")
    return None


# New lines followed (preceded) by fewer blank lines than the original has there: did they replace
# a blank line, or go in front of (after) all of them?

def new_lines_before_blanks(fit: RegionFit) -> str | None:
    trail, end = fit.trail, fit.end
    if fit.region.marker_after and end < fit.next_start and is_blank(fit.orig[end]) and trail and \
            is_blank(trail[-1]) and any(not is_blank(x) for x in trail):
        return (f"region {fit.i + 1}: new lines before blank lines that do not match the original's "
                "count: replacing a blank line, or inserted?")
    return None


def new_lines_after_blanks(fit: RegionFit) -> str | None:
    lead, start = fit.lead, fit.start
    if fit.region.marker_before and start > fit.prev_end and is_blank(fit.orig[start - 1]) and lead and \
            is_blank(lead[0]) and any(not is_blank(x) for x in lead):
        return (f"region {fit.i + 1}: new lines after blank lines that do not match the original's "
                "count: replacing a blank line, or inserted?")
    return None


def blank_then_new_lines(fit: RegionFit) -> str | None:
    """The region's new lines after its last paired line start with a blank line, and the original
    has a blank line right there, which stays: is the snippet's blank line that one (and the new
    lines go after it), or a new one (and the file gets two)?"""
    new_trail, end = fit.new_trail, fit.end
    if fit.region.marker_after and new_trail and is_blank(new_trail[0]) and end < fit.next_start and \
            is_blank(fit.orig[end]) and any(not is_blank(x) for x in new_trail):
        return (f"region {fit.i + 1}: its new lines start with a blank line where the original has one: "
                "the same blank line, or another?")
    return None


# New lines whose only context towards the marker is blank lines: they may also replace the next
# (previous) line or two of the original (a short run that ends at a blank line, like theirs).

def blank_bounded_end(fit: RegionFit) -> str | None:
    if fit.region.marker_after and _blank_bounded(fit.trail, fit.orig, fit.end, fit.next_start, +1):
        return (f"region {fit.i + 1} ends with new lines and only blank lines before the marker: "
                "do they also replace the original's next lines?")
    return None


def blank_bounded_start(fit: RegionFit) -> str | None:
    if fit.region.marker_before and _blank_bounded(fit.lead[::-1], fit.orig, fit.start - 1, fit.prev_end - 1, -1):
        return (f"region {fit.i + 1} starts with only blank lines before new lines: "
                "do they also replace the original's lines above?")
    return None


def echoed_edge(fit: RegionFit) -> str | None:
    """The first snippet line left over after an edge equals an original line just beyond the edge:
    the lines in between may have been deleted, or the snippet line is new."""
    if _echo(fit.new_trail, fit.orig, fit.end, fit.next_start, +1) or \
            _echo(fit.new_lead[::-1], fit.orig, fit.start - 1, fit.prev_end - 1, -1):
        return (f"region {fit.i + 1}: a line at its edge also occurs just beyond it in the original; "
                "inserted, or are the lines between deleted?")
    return None


EDITED_RATIO = 0.8  # lines this alike (same indentation) read as versions of each other


def edited_line_left_behind(fit: RegionFit) -> str | None:
    """The region edits lines at its edge (paired by similarity), and its first or last new line
    there is, by the same token, an edited version of the original line just beyond the span, which
    would stay: the edit reaches that line too (a rename through the last lines), or it is new."""
    if not fit.fuzzy:
        return None
    o = fit.orig
    sides = []
    if fit.region.marker_after:
        code = [x for x in fit.new_trail if not is_blank(x)]
        beyond = next((o[j] for j in range(fit.end, fit.next_start) if not is_blank(o[j])), None)
        sides += [(x, beyond) for x in code[:1] + code[-1:]]
    if fit.region.marker_before:
        code = [x for x in fit.new_lead if not is_blank(x)]
        beyond = next((o[j] for j in range(fit.start - 1, max(fit.prev_end, 0) - 1, -1) if not is_blank(o[j])), None)
        sides += [(x, beyond) for x in code[:1] + code[-1:]]
    for new, old in sides:
        if new is not None and old is not None and new.rstrip() != old.rstrip() and \
                indent_of(new) == indent_of(old) and not is_trivial(new) and similar(new, old, EDITED_RATIO):
            return (f"region {fit.i + 1} edits lines at its edge, and its `{new.strip()[:40]}` looks like an edit of "
                    f"the next original line `{old.strip()[:40]}`, which would stay: replaced, or added?")
    return None


def new_definition_before_closer(fit: RegionFit) -> str | None:
    """New definitions next to a marker followed only by a closing bracket: before or after the
    elided members? (Statements keep the order the snippet shows; a member's place is convention.)"""
    if any(not is_blank(x) for x in fit.new_trail) and fit.region.marker_after and fit.next_region is not None:
        nxt = [x.strip() for x in fit.next_region.lines if not is_blank(x)]
        if nxt and all(x in CLOSERS for x in nxt) and defines_something(fit.new_trail, fit.lang):
            return (f"region {fit.i + 1} ends with new lines next to a marker that is followed only "
                    "by a closing bracket: they could go before or after the elided code")
    return None


ATTRIBUTE_STARTS = ("@", "#[", "#![")


def edited_attribute(fit: RegionFit) -> str | None:
    """An edge line of the region that is an attribute / decorator / annotation was paired with a
    different one in the original (`#[cfg(test)]` over `#[test]`): an edit of that attribute, or a
    new one added above it? Attributes stack, so similar text decides nothing."""
    o = fit.orig
    pairs = list(zip(reversed(fit.lead), reversed(o[fit.start:fit.c.start]))) + \
        list(zip(fit.trail, o[fit.c.end + 1:fit.end]))
    for x, y in pairs:
        a, b = x.strip(), y.strip()
        if a != b and a.startswith(ATTRIBUTE_STARTS) and b.startswith(ATTRIBUTE_STARTS):
            return (f"region {fit.i + 1} shows `{a[:40]}` where the original has `{b[:40]}`: "
                    "a changed attribute, or one added next to it?")
    return None


def edge_header_renamed(fit: RegionFit) -> str | None:
    """An edge line that opens a definition or block was paired, by similarity, with an original
    one of another name (`g() {` over `h() {`): that renames `h`, which the snippet does not show;
    more likely `g` is new and goes next to it."""
    o = fit.orig
    pairs = list(zip(reversed(fit.lead), reversed(o[fit.start:fit.c.start]))) + \
        list(zip(fit.trail, o[fit.c.end + 1:fit.end]))
    for x, y in pairs:
        if x.strip() != y.strip() and opens_block(x, fit.lang) and opens_block(y, fit.lang) and \
                line_key(x) != line_key(y):
            return (f"region {fit.i + 1} would turn `{y.strip()[:40]}` into `{x.strip()[:40]}`: a rename the "
                    "snippet does not show, or a new block next to the old one?")
    return None


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


def shifted_around_new_block(fit: RegionFit) -> str | None:
    """The region is placed at another indentation than written, and it opens a new block around
    original lines written one level deeper: it wraps that code (the wrap reading, wrap.py), it
    was not pasted at another indentation."""
    if fit.c.lines != fit.region.lines and (shown_wrap(fit.region.lines, fit.orig, fit.lang) is not None or
                                            _opener_at_wrapped_level(fit)):
        return (f"region {fit.i + 1} would be shifted to fit, but it wraps original code in a new block: "
                "re-indented code, not a paste at another indentation")
    return None


def _opener_at_wrapped_level(fit: RegionFit) -> bool:
    """A new block opener of the region, as written, stands at the indentation that the line after
    it has, once shifted, at its place in the original: written as is, the opener wraps that line.
    (shown_wrap asks the file at large, and a line such as `request(app)` may stand at the deeper
    level elsewhere.)"""
    written, shifted = fit.region.lines, fit.c.lines
    span = {x.rstrip() for x in fit.orig[fit.start:fit.end]}
    for k, line in enumerate(written):
        if is_blank(line) or not opens_block(line, fit.lang) or shifted[k].rstrip() in span:
            continue  # (an original opener, placed on itself, wraps nothing new)
        nxt = next((j for j in range(k + 1, len(written)) if not is_blank(written[j])), None)
        if nxt is not None and len(indent_of(written[nxt])) > len(indent_of(line)) and \
                shifted[nxt].rstrip() in span and indent_of(shifted[nxt]) == indent_of(line):
            return True
    return False


def marker_free_drops_lines(fit: RegionFit) -> str | None:
    """A snippet without markers is a targeted edit: it does not silently drop what it skips over."""
    if fit.partial_ok:
        shown = set(x.strip() for x in fit.c.lines)
        dropped = sum(1 for x in fit.orig[fit.start:fit.end] if not is_blank(x) and x.strip() not in shown)
        if dropped > max(3, (fit.end - fit.start) // 4):
            return (f"the snippet has no markers but would replace {dropped} original lines it "
                    "does not show: a partial snippet, or a deletion?")
    return None


def reindented_copy_kept(fit: RegionFit) -> str | None:
    """Lines the region adds equal, but for their indentation, original lines next to them that the
    placement keeps: the snippet moved that code into or out of a block (unwrapped an `if`), and the
    merge would keep the old copy (and the block around it) beside the new one. At least half of the
    added lines must be such copies (a long new block may repeat a line or two by chance)."""
    o = fit.orig
    added = _added(fit.c.lines, o[fit.start:fit.end])
    if not added:
        return None
    # Anchored on common lines only (`try:`, `}`), the region has no place of its own: its copies
    # count anywhere in the gap, not just next to it (two of them at least, or one inside an anchor
    # that opens a block: one line appended after a file's last `}` may well repeat a statement).
    lone = _rests_on_common_lines(fit)
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


def opener_read_both_ways(fit: RegionFit) -> str | None:
    """The region rests on common lines only, its block opener (`try:`) among them, and that opener
    reads as a new block too: the line after it stands in the original one level out and never at
    its depth (wrap.shown_wrap: `return` wrapped in `try:`). An edit inside the original block, or a
    new block around that line? Nothing but a common line places it."""
    r, c, o = fit.region, fit.c, fit.orig
    if fit.lowered or c.lines != r.lines or not _rests_on_common_lines(fit):
        return None
    shown = shown_wrap(r.lines, o, fit.lang)
    if shown is None or shown[0] not in (c.first, c.last):
        return None
    at = c.start if shown[0] == c.first else c.end
    if o[at].rstrip() != r.lines[shown[0]].rstrip():
        return None
    inner = next(x for x in r.lines[shown[0] + 1:] if not is_blank(x))  # (shown_wrap found it)
    return (f"region {fit.i + 1} rests only on `{o[at].strip()[:30]}` (line {at + 1}), which reads as a new block "
            f"around `{inner.strip()[:30]}` as well: an edit inside the original block, or a new one?")


def wrapped_run_kept_elsewhere(fit: RegionFit) -> str | None:
    """The region, as written, opens a new block around lines that the original has, one level out,
    as one run in the region's gap, and the placement keeps that run, or its end: the wrap was read
    as new code anchored on a few lines that repeat by chance at their new depth (TypeScript
    overload headers wrapped in `try {`, the last lines paired with a type literal's; the context
    after the block, `store.setState(...)`, paired with the wrapped run's own first lines rather
    than the next call's), and the wrapped code would stand twice. Refused, the wrap reading
    (wrap.py) places it on its code."""
    r, c, o = fit.region, fit.c, fit.orig
    if fit.lowered or c.lines != r.lines:
        return None
    shown = shown_wrap(r.lines, o, fit.lang)
    if shown is None:
        return None
    k, end, extra = shown
    inner = [x[len(extra):].rstrip() for x in r.lines[k + 1:end] if not is_blank(x)]
    if sum(1 for x in inner if not is_trivial(x)) < 2:
        return None
    rows = [j for j in range(max(fit.prev_end, 0), fit.next_start) if not is_blank(o[j])]
    keys = [o[j].rstrip() for j in rows]
    for p in range(len(keys) - len(inner) + 1):
        if keys[p:p + len(inner)] == inner and not fit.start <= rows[p] <= rows[p + len(inner) - 1] < fit.end:
            return (f"region {fit.i + 1} wraps `{inner[0].strip()[:40]}` and the lines after it in a new block, "
                    f"but the original has them at line {rows[p] + 1}, which would stay: which code is wrapped?")
    return None


def wrap_opener_anchored(fit: RegionFit) -> str | None:
    """Under the wrap reading of a block shown whole (wrap.shown_wrap), its opener is new: the
    lines after it stand in the original at the opener's level, outside any such block. Placed with
    that opener as its first or last anchor, the region rests on another block's `try:` (elsewhere,
    or deleting the lines between it and the wrapped code)."""
    k, c = fit.region.new_opener, fit.c
    if not fit.lowered or k is None or k not in (c.first, c.last):
        return None
    return (f"region {fit.i + 1} wraps code in a new `{c.lines[k].strip()[:30]}` block, but that line would be "
            f"placed on the original's line {(c.start if k == c.first else c.end) + 1}: which block is new?")


def copy_of_kept_neighbour(fit: RegionFit) -> str | None:
    """The region, re-indented to fit (or read as wrapped code), adds a line that stands exactly so
    a few lines beyond its span, where the original keeps it: the snippet's lines belong at that
    copy, one level in (an unwrapped `if` placed on a similar function instead), or the region's
    first line is a new opener that happens to match an original one (`try:`), and the merge would
    keep the wrapped lines above the new block and repeat them inside it. A region written as it
    stands may repeat a nearby line on purpose; one moved to fit has no such say. Nor has one whose
    edge lines were paired by similarity (a rename through a test's first block only, anchored on
    a comment that opens its last one too) when two or more of its new lines stand beside it."""
    moved = fit.c.lines != fit.region.lines or fit.lowered
    if not moved and not fit.fuzzy:
        return None
    o = fit.orig
    added = {x.rstrip() for x in _added(fit.c.lines, o[fit.start:fit.end])}

    def copies(reach: int) -> tuple[list[int], int]:
        near = _near_kept(o, fit.start, fit.end, max(fit.prev_end, 0), fit.next_start, set(), reach)
        found = sorted(j for j in near if o[j].rstrip() in added)
        return found, len({o[j].rstrip() for j in found})

    found, distinct = copies(KEPT_NEAR + len(added))
    if not moved and distinct < 2:
        found = []
    if not found and moved and _rests_on_common_lines(fit):
        # resting on common lines only, a moved region has no place of its own: copies anywhere in
        # the gap count, two at least (a wrap read back onto another `try:` than the one it adds)
        found, distinct = copies(fit.next_start - max(fit.prev_end, 0))
        found = found if distinct >= 2 else []
    if found:
        copy = found[0]
        return (f"region {fit.i + 1} would add `{o[copy].strip()[:50]}`, which stands just as written at line {copy + 1} "
                "and stays: the region belongs at that line, or the old copy should go?")
    return None


RUN_BESIDE = 12  # lines compared at each side of a span by reindented_run_beside


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


def _deleted(fit: RegionFit) -> int:
    """Net deletion the placement implies: non-blank original lines in the span that the region does
    not show, less the new lines it adds (an edited line is a replacement, not a deletion)."""
    shown = {x.rstrip() for x in fit.c.lines}
    span = {x.rstrip() for x in fit.orig[fit.start:fit.end]}
    gone = sum(1 for x in fit.orig[fit.start:fit.end] if not is_blank(x) and x.rstrip() not in shown)
    added = sum(1 for x in fit.c.lines if not is_blank(x) and x.rstrip() not in span)
    return max(0, gone - added)


def _deletions_at_edges(a: list[str], b: list[str]) -> list[tuple[str, list[str], list[str]]]:
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


def _anchor_span(fit: RegionFit) -> tuple[list[str], list[str]]:
    """The region's lines from its first anchor to its last, and the original span they sit on."""
    c = fit.c
    return [x.rstrip() for x in c.lines[c.first:c.last + 1]], [x.rstrip() for x in fit.orig[c.start:c.end + 1]]


def deletion_after_common_anchor(fit: RegionFit) -> str | None:
    """The region's first (last) anchor is a common line (`}`, blank lines), the placement deletes
    original code right after (before) it, and the snippet's new lines left a bracket open: that `}`
    may as well be new (closing the block the snippet opened), and then nothing is deleted."""
    if fit.c.first == fit.c.last or fit.opened <= 0:
        return None
    for _, run, gone in _deletions_at_edges(*_anchor_span(fit)):
        if all(is_blank(x) or is_trivial(x) for x in run) and any(not is_blank(x) for x in gone):
            return (f"region {fit.i + 1} would delete original code next to `{run[0].strip() or run[-1].strip()}`, "
                    "a common line that may as well be new: refusing to guess")
    return None


def deletion_after_attribute(fit: RegionFit) -> str | None:
    """The region's first (last) anchors are only attributes (`@Override`, `#[test]`) and the
    placement deletes original code right after (before) them: attributes stack above many
    definitions, so the region's attribute may as well be a new one, deleting nothing."""
    if fit.c.first == fit.c.last:
        return None
    for _, run, gone in _deletions_at_edges(*_anchor_span(fit)):
        if all(x.strip().startswith(ATTRIBUTE_STARTS) for x in run if x) and any(gone):
            return (f"region {fit.i + 1} would delete original code next to `{run[0].strip()[:40]}`, an attribute "
                    "that may as well be a new one: refusing to guess")
    return None


def new_attribute_read_as_anchor(fit: RegionFit) -> str | None:
    """The region's first anchor is an attribute (`@Override`), and the region adds, after it, the
    original line right above its span, as written, which stays: the attribute is a new one put on
    top of the original's stack (`@Override` / `@SerializedName("a")` / `@Override` ...), and the
    merge would pair it with the one further down and repeat the line above (`@SerializedName`
    twice). Attributes stack, so an equal one proves nothing."""
    c, o = fit.c, fit.orig
    j = fit.start - 1
    if j < max(fit.prev_end, 0) or is_blank(o[j]) or not c.lines[c.first].strip().startswith(ATTRIBUTE_STARTS):
        return None
    if o[j].rstrip() in {x.rstrip() for x in _added(c.lines[c.first + 1:c.last + 1], o[c.start:c.end + 1])}:
        return (f"region {fit.i + 1} starts on `{c.lines[c.first].strip()[:40]}`, an attribute that may as well be a "
                f"new one, and adds `{o[j].strip()[:40]}`, which stands right above it (line {j + 1}) and stays: "
                "which attribute is new?")
    return None


def line_doubled(fit: RegionFit) -> str | None:
    """The region shows a line twice in a row (`#[doc(hidden)]` / `#[doc(hidden)]`, blank lines
    between or not) while its span holds it fewer times, and its lines up to the first (from the
    second) stand, as a run, before (after) its place too: a doubled line, or the ends of two runs
    (one definition's attributes and the next one's; two tests' last asserts) with the lines between
    deleted? Which copies are meant is not shown. (Where the lines up to the first are unique, only
    the doubled reading places them; a common line such as `}` proves nothing either way.) Other
    lines than attributes count only when the region shows nothing else: a literal's item copied
    next to itself, shown with its neighbours, is placed by them."""
    lines, o = fit.c.lines, fit.orig
    keys = [x.rstrip() for x in o]
    have = Counter(keys[fit.start:fit.end])
    want = Counter(x.rstrip() for x in lines)
    code = [p for p, x in enumerate(lines) if not is_blank(x)]  # (a blank line between them changes nothing)
    for p, q in zip(code, code[1:]):
        k = lines[p].rstrip()
        if k != lines[q].rstrip() or is_trivial(k) or want[k] <= have[k]:
            continue
        if not k.strip().startswith(ATTRIBUTE_STARTS) and any(lines[j].rstrip() != k for j in code):
            continue  # (a statement or an item doubled among other lines is an edit like any other)
        head = _trim([x.rstrip() for x in lines[:p + 1]])
        tail = _trim([x.rstrip() for x in lines[q:]])
        if occurrences(keys[max(fit.prev_end, 0):fit.start], head) or \
                occurrences(keys[fit.end:fit.next_start], tail):
            return (f"region {fit.i + 1} shows `{k.strip()[:40]}` twice in a row, once more than the original "
                    "has there: a doubled line, or the ends of two runs with the code between them deleted?")
    return None


def deletion_edge_repeats(fit: RegionFit) -> str | None:
    """The placement deletes lines right next to its last (first) anchor, with no more context
    beyond the deletion than the lone line (or, for a large deletion, the run of lines) at that
    edge, and that line (run) occurs again, whole, further down (up) in the gap, where the region
    would fit as well (explaining as many of its lines): where the deletion ends is a tie between
    the copies, not a choice."""
    c = fit.c
    if c.first == c.last:
        return None
    keys = [x.rstrip() for x in fit.orig]
    rk, span = _anchor_span(fit)
    # A run of several lines identifies its place better than a lone line: it ties only when the
    # deletion is large (whole tests between copies of a shared tail: deleting a family of similar
    # tests shows the tail they share, so the nearest copy, the reading that deletes least, is a
    # guess as often as not). A closer (`}`) adds nothing to a run (`return x` / `}` is as common as
    # `return x`), and a blank line next to the deletion belongs to either side of it, so neither
    # counts or is matched.
    big = _deleted(fit) > sum(1 for x in rk if x)
    alts = []
    for side, run, _ in reversed(_deletions_at_edges(rk, span)):  # (the last anchor's copies first)
        if sum(1 for x in run if not is_trivial(x)) > 1 and not big:
            continue
        run = _trim(run)  # (its other end is an anchor, never blank)
        if not run:
            continue
        if side == "last":
            alts += [(c.start, e) for e in range(c.end + 1, fit.next_start)
                     if keys[e - len(run) + 1:e + 1] == run][:REPEAT_COPIES]
        else:
            alts += [(t, c.end) for t in range(c.start - 1, max(fit.prev_end, 0) - 1, -1)
                     if keys[t:t + len(run)] == run][:REPEAT_COPIES]
    for s, e in alts:
        d = edit_distance(rk, keys[s:e + 1])
        if d is not None and (len(rk) + e - s + 1 - d) // 2 >= c.matched:
            edge = keys[c.end if s == c.start else c.start].strip()
            return (f"region {fit.i + 1} deletes lines up to `{edge[:40]}`, which occurs again at line "
                    f"{(e if s == c.start else s) + 1}: which copy ends the deletion?")
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


def only_blank_lines_added(fit: RegionFit) -> str | None:
    """Where it fits, the region only adds blank lines, and its context is not unique in the file: a
    snippet is rarely sent to add a blank line; more likely it shows a deletion (the lines between
    two blank lines gone) up to another copy of its first or last line (`@Override`)."""
    c, o = fit.c, fit.orig
    shown = [x.rstrip() for x in c.lines if not is_blank(x)]
    span = [x.rstrip() for x in o[fit.start:fit.end] if not is_blank(x)]
    if shown != span or sum(1 for x in c.lines if is_blank(x)) <= sum(1 for x in o[fit.start:fit.end] if is_blank(x)):
        return None
    for edge, which in ((o[c.start].rstrip(), "first"), (o[c.end].rstrip(), "last")):
        if sum(1 for x in o if x.rstrip() == edge) > 1:
            return (f"region {fit.i + 1} only adds blank lines where it fits, and its {which} line occurs elsewhere "
                    "too: does it show a deletion at another place?")
    return None


def implied_deletion_too_large(fit: RegionFit) -> str | None:
    """A short region whose placement deletes many more lines than it shows, with an anchor line that
    repeats inside the span (so a nearer copy could end it): a two-line region spanning 32 lines is a
    guess, not an edit the snippet shows."""
    c, o = fit.c, fit.orig
    shown = sum(1 for x in c.lines if not is_blank(x))
    deleted = _deleted(fit)
    if deleted <= max(DELETION_MIN, DELETION_RATIO * shown):
        return None
    keys = [x.rstrip() for x in o[c.start:c.end + 1]]
    if keys.count(keys[0]) > 1 or keys.count(keys[-1]) > 1:
        return (f"region {fit.i + 1} shows {shown} lines but its placement would delete {deleted} original lines "
                "it does not show, between anchors that repeat inside that span: refusing to guess")
    # Each anchor is the nearest copy; the lines that bound the largest deleted run must be unique in
    # the file, even at another indentation (a re-indented line matching a deeper copy further down,
    # or a lone `@Override` that stands above many methods, is no bound). A `}` there is the nearest
    # at its indentation (checked above): the end of the block the region rewrites.
    region = [x.rstrip() for x in c.lines[c.first:c.last + 1]]
    runs = [(j1, j2) for tag, _, _, j1, j2 in SequenceMatcher(None, region, keys, autojunk=False).get_opcodes()
            if tag in ("insert", "replace")]
    j1, j2 = max(runs, key=lambda r: sum(1 for x in keys[r[0]:r[1]] if x), default=(0, 0))
    stripped = [x.strip() for x in keys]
    everywhere = Counter(x.strip() for x in o)
    for j in (j1 - 1, j2):
        if 0 <= j < len(keys) and not is_trivial(keys[j]) and everywhere[stripped[j]] > 1:
            return (f"region {fit.i + 1} shows {shown} lines but its placement would delete {deleted} original "
                    f"lines it does not show, up to `{stripped[j][:40]}`, which occurs elsewhere too: "
                    "refusing to guess")
    return None


def moved_across_opener(fit: RegionFit) -> str | None:
    """A line the region adds is, at another indentation, an original line the placement deletes on
    the other side of a block opener both share (`# note` above `try:` in the original, below it in
    the snippet): either the code moved into that block, or the snippet's opener is a new one
    wrapping the code (the wrap reading). Which one, the lines do not say."""
    a = [x.rstrip() for x in fit.c.lines]
    b = [x.rstrip() for x in fit.orig[fit.start:fit.end]]
    sm = SequenceMatcher(None, a, b, autojunk=False)
    pairs = [(m.a + k, m.b + k) for m in sm.get_matching_blocks() for k in range(m.size)]
    kept_b = {j for _, j in pairs}
    kept_a = {i for i, _ in pairs}
    openers = [(i, j) for i, j in pairs if opens_block(a[i], fit.lang)]
    for i, x in enumerate(a):
        if i in kept_a or is_blank(x) or is_trivial(x):
            continue
        for j, y in enumerate(b):
            if j in kept_b or y.strip() != x.strip() or y == x:
                continue
            for oi, oj in openers:
                if (i > oi) != (j > oj):
                    return (f"region {fit.i + 1} moves `{x.strip()[:40]}` across `{a[oi].strip()[:30]}` at another "
                            "indentation: into that block, or is the block new, wrapping it?")
    return None


def reordered_run(fit: RegionFit) -> str | None:
    """The region's lines are, in another order, a run of original lines (in the region's gap), but
    the placement replaces something else: the snippet swapped lines there (a reorder shown with
    little context), while its anchors (which must come in order) placed it so as to delete or
    repeat lines instead."""
    c, o = fit.c, fit.orig
    lines = [x.rstrip() for x in c.lines if not is_blank(x)]
    n = len(lines)
    if n < 2 or n > REORDER_MAX:
        return None
    want = Counter(lines)
    span = [x.rstrip() for x in o[fit.start:fit.end] if not is_blank(x)]
    code = [o[j].rstrip() for j in range(max(fit.prev_end, 0), fit.next_start) if not is_blank(o[j])]
    for k in range(len(code) - n + 1):
        if code[k] not in want or code[k + n - 1] not in want:
            continue
        window = code[k:k + n]
        if window != lines and window != span and Counter(window) == want:
            return (f"region {fit.i + 1}'s lines occur in the original in another order "
                    f"(from `{window[0].strip()[:40]}`): "
                    "a reorder the line anchors cannot place; refusing rather than deleting or repeating lines")
    return None


def added_line_at_other_anchor(fit: RegionFit) -> str | None:
    """The region's first anchor occurs again in its gap, and a line the region adds is already
    there, just below that other copy, at another indentation: the region may be meant for that
    place (an `if` removed around that line), not for the one where it costs least."""
    c, o = fit.c, fit.orig
    first = o[c.start].rstrip()
    if is_trivial(first):
        return None
    others = [j for j in range(max(fit.prev_end, 0), fit.next_start) if j != c.start and o[j].rstrip() == first]
    if not others:
        return None
    added = {x.strip(): indent_of(x) for x in _added(c.lines, o[fit.start:fit.end])}
    width = (c.end - c.start) + len(c.lines) + NEAR
    region = [x.strip() for x in c.lines if not is_blank(x)]
    for j in others:
        there = [x.strip() for x in o[j:min(fit.next_start, j + width)] if not is_blank(x)]
        explained = sum(m.size for m in SequenceMatcher(None, region, there, autojunk=False).get_matching_blocks())
        if explained <= c.matched:
            continue  # (ignoring indentation) the region explains no more lines there
        for k in range(j + 1, min(fit.next_start, j + 1 + width)):
            if added.get(o[k].strip(), indent_of(o[k])) != indent_of(o[k]):
                return (f"region {fit.i + 1} fits at line {c.start + 1}, but its first line also occurs at line "
                        f"{j + 1}, where its new line `{o[k].strip()[:40]}` already is: which place is meant?")
    return None


REGION_CHECKS: tuple[Callable[[RegionFit], str | None], ...] = (
    contested,
    context_split,
    tied_alternative,
    rests_on_repeated_lines,
    repeated_edge,
    new_blank_lines_at_start,
    new_blank_lines_at_end,
    new_lines_before_blanks,
    new_lines_after_blanks,
    blank_then_new_lines,
    blank_bounded_end,
    blank_bounded_start,
    echoed_edge,
    edited_line_left_behind,
    new_definition_before_closer,
    edited_attribute,
    edge_header_renamed,
    reindented_and_shorter,
    shifted_around_new_block,
    marker_free_drops_lines,
    reindented_copy_kept,
    opener_read_both_ways,
    wrap_opener_anchored,
    copy_of_kept_neighbour,
    reindented_run_beside,
    wrapped_run_kept_elsewhere,
    deletion_edge_repeats,
    deletion_after_attribute,
    new_attribute_read_as_anchor,
    line_doubled,
    common_edge_moved_by_reindent,
    only_blank_lines_added,
    implied_deletion_too_large,
    deletion_after_common_anchor,
    reordered_run,
    moved_across_opener,
    added_line_at_other_anchor,
    edge_run_longer_elsewhere,
)


# -- all regions placed ----------------------------------------------------------------------------------

@dataclass
class LinePlan:
    """Every region's span in the original, in snippet order, before the splice."""

    spans: list[tuple[int, int, list[str]]]  # (start, end exclusive, replacement lines)
    regions: list[Region]
    orig: list[str]
    defs: list[Definition]  # the original's definitions, flattened
    partial_ok: bool
    loose: bool  # the snippet writes its markers loosely (see lineplace._loose_markers)
    lang: str | None = None
    wrapped: bool = False  # the wrap reading (wrap.py): the wrapped code joined the span before its marker
    head: bool = field(init=False)  # code above the first region, which has no marker before it
    tail: bool = field(init=False)  # code below the last region, which has no marker after it

    def __post_init__(self) -> None:
        edges = not self.partial_ok and bool(self.spans)
        self.head = edges and not self.regions[0].marker_before and \
            any(not is_blank(x) for x in self.orig[:self.spans[0][0]])
        self.tail = edges and not self.regions[-1].marker_after and \
            any(not is_blank(x) for x in self.orig[self.spans[-1][1]:])

    @cached_property
    def merged_defs(self) -> list[Definition] | None:
        """The definitions of the file as the plan would splice it (parsed once for every check
        that compares them with the original's), or None when the spans overlap."""
        merged = apply_edits(self.orig, self.spans)
        return None if merged is None else original_definitions(merged, self.lang)


def defined_twice(plan: LinePlan) -> str | None:
    """In a marker-free snippet (which keeps what it does not show), a region that shows the header
    of a definition (unique in the original) while it is placed away from it: the merge would keep
    the old definition and add the region's, defining it twice."""
    if not plan.partial_ok:
        return None
    count: dict[str, int] = {}
    for d in plan.defs:
        count[d.header] = count.get(d.header, 0) + 1
    for i, (start, end, repl) in enumerate(plan.spans):
        shown = {x.strip() for x in repl}
        for d in plan.defs:
            if count[d.header] == 1 and d.name in d.header and d.header in shown and not (start <= d.node_start < end):
                return (f"region {i + 1} shows `{d.header[:60]}` but is placed away from it (line {d.node_start + 1}): "
                        "the definition would be there twice")
    return None


def unmarked_head(plan: LinePlan) -> str | None:
    """Markers elsewhere but none before the first region: the lines above may be kept or deleted
    (unless the markers are loose: then they are kept, with a doubt, but not when the snippet starts
    with more blank lines than the original has right above the region's place: those are new, or
    the file's own first lines, the code between them and the region deleted)."""
    if not plan.head:
        return None
    above = 0
    while above < plan.spans[0][0] and is_blank(plan.orig[plan.spans[0][0] - above - 1]):
        above += 1
    if not plan.loose or plan.regions[0].blank_head > above:
        return ("the snippet has markers but none before its first region, which is not at the "
                "top of the file: keep or delete the lines above it?")
    return None


def unmarked_tail(plan: LinePlan) -> str | None:
    if plan.tail and not plan.loose:
        return ("the snippet has markers but none after its last region, which is not at the "
                "end of the file: keep or delete the lines below it?")
    return None


def regions_shifted_apart(plan: LinePlan) -> str | None:
    """Two regions on either side of an indented marker are placed shifted by different amounts:
    the snippet wrote them at depths relative to each other (and to the marker), and the placement
    breaks that (a new `try:` placed on another `try:` far away, the code it wraps shifted out
    of it to fit its own place). A column-0 marker is loose and relates nothing."""
    def shift(k: int) -> int | None:
        written = next((x for x in plan.regions[k].lines if not is_blank(x)), None)
        placed = next((x for x in plan.spans[k][2] if not is_blank(x)), None)
        if written is None or placed is None or written.strip() != placed.strip():
            return None
        return len(indent_of(placed)) - len(indent_of(written))

    if plan.wrapped:  # (the wrap reading re-indents on purpose; its regions are the lowered ones)
        return None
    for i in range(len(plan.regions) - 1):
        if not plan.regions[i].after_indent:
            continue
        a, b = shift(i), shift(i + 1)
        if a is not None and b is not None and a != b:
            return (f"regions {i + 1} and {i + 2} would be placed at depths {a:+d} and {b:+d} from where the snippet "
                    "writes them, around an indented marker: not where the snippet puts them?")
    return None


def marker_deeper_than_code(plan: LinePlan) -> str | None:
    """A marker inside a new block (wrap.marker_wrap), indented deeper than the first line of the
    code it stands for, says "this code, one level deeper": wrapped in the block. The plain reading
    keeps that code where it was, so it is refused here (the wrap reading, wrap.py, is tried next).
    Placed so that it stands for no code at all (a shown line of the wrapped code paired, by
    similarity, with the line it stood for), it wraps nothing: refused too. A column-0 marker is
    loose and says nothing about depth."""
    orig_keys = {x.rstrip() for x in plan.orig}
    for i, r in enumerate(plan.regions):
        if not r.marker_after or not r.after_indent or \
                marker_wrap(r.lines, r.after_indent, orig_keys, plan.lang) is None:
            continue
        lo = plan.spans[i][1]
        hi = plan.spans[i + 1][0] if i + 1 < len(plan.spans) else len(plan.orig)
        first = next((x for x in plan.orig[lo:hi] if not is_blank(x)), None)
        if first is None and i + 1 < len(plan.spans) and not plan.wrapped:
            return (f"the marker after region {i + 1} sits inside a new block but stands for no original line "
                    "(the regions around it meet): which code does the block wrap?")
        if first is not None and len(r.after_indent) > len(indent_of(first)) and \
                r.after_indent.startswith(indent_of(first)):
            return (f"the marker after region {i + 1} is indented deeper than the code it stands for "
                    f"(`{first.strip()[:50]}`): is that code re-indented (wrapped in a new block)?")
    return None


def edited_opener_or_wrap(plan: LinePlan) -> str | None:
    """A new block opener placed as an edit of the original opener it resembles (`for (int i = 0;
    i < 2; i++) {` over `for (int i = 0, size = ...) {`), with a deeper marker after it (its body),
    while the next region starts with the line that follows that block in the original, one level
    deeper: read instead as a new block wrapping the old one (the marker standing for it,
    re-indented) and that line, the snippet fits as well. Edited header, or wrap?"""
    for i, r in enumerate(plan.regions[:-1]):
        start, end, repl = plan.spans[i]
        shown = [x for x in repl if not is_blank(x)]
        if not r.marker_after or not shown or end - start < 1:
            continue
        new, old = shown[-1], plan.orig[end - 1]
        if new.rstrip() == old.rstrip() or not opens_block(new, plan.lang) or not opens_block(old, plan.lang) or \
                indent_of(new) != indent_of(old) or len(r.after_indent) <= len(indent_of(new)):
            continue
        after = _line_after_block(plan.orig, end - 1, plan.lang)
        nxt = next((x for x in plan.regions[i + 1].lines if not is_blank(x)), None)
        if after is None or nxt is None or is_trivial(nxt):
            continue
        if plan.orig[after].strip() == nxt.strip() and indent_of(plan.orig[after]) == indent_of(new) and \
                len(indent_of(nxt)) > len(indent_of(new)):
            return (f"region {i + 1}'s `{new.strip()[:40]}` edits `{old.strip()[:40]}`, or opens a new block around "
                    f"it and `{nxt.strip()[:30]}` (line {after + 1}), which the next region shows one level deeper?")
    return None


def _line_after_block(orig: list[str], opener: int, lang: str | None) -> int | None:
    """The first non-blank line after the block that orig[opener] opens (after its `}`)."""
    depth = len(indent_of(orig[opener]))
    rows = [j for j in range(opener + 1, len(orig)) if not is_blank(orig[j])]
    for n, j in enumerate(rows):
        if len(indent_of(orig[j])) <= depth:
            if lang != "python" and orig[j].strip().startswith("}"):
                return rows[n + 1] if n + 1 < len(rows) else None
            return j
    return None


def quoted_marker_for_nothing(plan: LinePlan) -> str | None:
    """A marker that, as placed, stands for no original line (it ends the snippet after a region
    that reaches the file's end, starts it before one at the top, or sits between regions that
    meet), while the original has that very line (`        # ...`) as a comment: the snippet may
    quote that comment with its new code, and then the merge would drop it. A marker for nothing
    is harmless only if it is one; here the snippet does not say."""
    have = {x.rstrip() for x in plan.orig}
    n = len(plan.spans)
    for i, r in enumerate(plan.regions):
        gaps = []
        if r.marker_before and i == 0:
            gaps.append((r.before_line, plan.orig[:plan.spans[0][0]]))
        if r.marker_after:
            hi = plan.spans[i + 1][0] if i + 1 < n else len(plan.orig)
            gaps.append((r.after_line, plan.orig[plan.spans[i][1]:hi]))
        for line, stands_for in gaps:
            if line in have and all(is_blank(x) for x in stands_for):
                return (f"the marker `{line.strip()[:40]}` stands for no original line where the snippet is placed, "
                        "and the original has that very line as a comment: the comment, or a marker?")
    return None


def broken_indentation_seam(plan: LinePlan) -> str | None:
    """Where a region meets the kept original lines, the indentation must still make sense: a new
    block opener followed by code outside it, or code deeper than a line that ends a statement, is
    code the snippet re-indented (wrapped in, or taken out of, a block) but did not show whole."""
    for a, b in seam_pairs(plan.orig, plan.spans):
        why = broken_seam(a, b, plan.lang)
        if why:
            return (f"{why}: the snippet re-indents code it does not show (a block added or removed "
                    "around elided lines?)")
    return None


def header_names_other_definition(plan: LinePlan) -> str | None:
    """A definition's name vanishes while a name the original already defines gains a copy: a
    region showing the header of an existing definition (`public int getAsInt() {`) was placed on
    another one (its annotations matched there), renaming it. Such a header anchors to its own
    definition or not at all."""
    if plan.lang is None or not plan.defs or plan.merged_defs is None:
        return None
    before = Counter((d.kind, d.name) for d in plan.defs)
    after = Counter((d.kind, d.name) for d in plan.merged_defs)
    lost = before - after
    gained = [k for k in after - before if before[k] > 0]
    if lost and gained:
        (kind, name), (_, old) = gained[0], next(iter(lost))
        return (f"the snippet's `{name}` would replace `{old}`, although `{name}` is defined elsewhere in the "
                "original: which definition does it show?")
    return None


def definition_added_again(plan: LinePlan) -> str | None:
    """The merge would add a definition whose header is an original one (same enclosing names and
    name) with only a comment or spacing changed (`def test_brotli():  # beta` beside
    `def test_brotli():`), while the original one stays: the snippet showed that definition edited,
    and its region was placed elsewhere (a loose snippet's last region pulled to the file's end, on
    a repeated line). (A header copied verbatim may be a deliberate copy; an edited one is an edit.)"""
    if plan.lang is None or not plan.defs or plan.merged_defs is None:
        return None
    before, after = header_counts(plan.defs), header_counts(plan.merged_defs)

    def by_code(counts: Counter) -> Counter:
        out: Counter = Counter()
        for (path, name, header), n in counts.items():
            out[(path, name, code_of(header))] += n
        return out

    code_before, code_after = by_code(before), by_code(after)
    for path, name, header in after:
        k = (path, name, code_of(header))
        if before[(path, name, header)] == 0 and code_after[k] > code_before[k] >= 1:
            return (f"`{header[:60]}` would define `{name}` a second time beside the original's: the snippet's "
                    "edit of it placed elsewhere?")
    return None


def header_deleted_body_kept(plan: LinePlan) -> str | None:
    """A region's span deletes the header of a definition (the line is not among the region's
    lines), while the definition goes on past the span: its body would be kept under whatever
    precedes it. A snippet deletes a definition whole, or shows its header changed; a header
    dropped alone is a misplacement (a new block line paired with it). A header shown edited names
    the definition in the region."""
    for i, (start, end, repl) in enumerate(plan.spans):
        shown = {x.rstrip() for x in repl}
        for d in plan.defs:
            if start <= d.node_start < end and d.end >= end and plan.orig[d.node_start].rstrip() not in shown and \
                    not any(_short_name(d) in x for x in repl) and \
                    any(not is_blank(x) for x in plan.orig[end:d.end + 1]):
                return (f"region {i + 1} would delete the header `{d.header[:50]}` (line {d.node_start + 1}) but keep "
                        "the rest of that definition: misplaced?")
    return None


def reindented_copy_beside(plan: LinePlan) -> str | None:
    """The original lines right before and right after a span, which stay, are both among the
    span's new lines at another indentation: the snippet moved that code into (out of) a block and
    the old copies would stay around the new ones (under any reading, the wrap reading's included).
    One side alone is often chance (`return (` in a new block next to the original's)."""
    o = plan.orig
    for i, (start, end, repl) in enumerate(plan.spans):
        lo = plan.spans[i - 1][1] if i else 0
        hi = plan.spans[i + 1][0] if i + 1 < len(plan.spans) else len(o)
        before = next((o[j] for j in range(start - 1, lo - 1, -1) if not is_blank(o[j])), None)
        after = next((o[j] for j in range(end, hi) if not is_blank(o[j])), None)
        added = {x.strip(): x for x in repl if not is_trivial(x) and x.rstrip() not in
                 {y.rstrip() for y in o[start:end]}}
        copies = [added[k.strip()] for k in (before, after) if k is not None and k.strip() in added and
                  indent_of(added[k.strip()]) != indent_of(k)]
        if len(copies) == 2:
            return (f"region {i + 1} adds `{copies[0].strip()[:40]}` and `{copies[1].strip()[:40]}` at another "
                    "indentation right next to the original's, which stay: code moved into or out of a block, "
                    "with the old copies kept?")
    return None


def _short_name(d: Definition) -> str:
    """The definition's own name, without the receiver or type it is qualified with (`Project.License`)."""
    return re.split(r"[.:]+", d.name)[-1]


def changes_nothing(plan: LinePlan) -> str | None:
    """A snippet with markers is sent to change something: placed where it changes nothing, it may
    belong elsewhere (two swapped lines shown without context read as the original's order). An
    edit already applied is the exception: when every region occurs once in the original, verbatim
    (at the indentation it is written with), there is nowhere else it could go, and the file comes
    back unchanged (an agent's retry or a re-run codemod is idempotent)."""
    if plan.partial_ok or not all(plan.orig[start:end] == repl for start, end, repl in plan.spans):
        return None
    if all(occurrences(plan.orig, repl) == 1 and _trim(repl) == _trim(r.lines)
           for (_, _, repl), r in zip(plan.spans, plan.regions)):
        return None  # (as written: a region shifted to fit was not written for that place)
    return "placed where it fits, the snippet changes nothing: is it meant for another place?"


def _trim(lines: list[str]) -> list[str]:
    """The lines without the blank lines at either end."""
    code = [k for k, x in enumerate(lines) if not is_blank(x)]
    return [x.rstrip() for x in lines[code[0]:code[-1] + 1]] if code else []


def unmarked_edge_tie(plan: LinePlan) -> str | None:
    """A first (last) region with no marker before (after) it fits as well elsewhere as at the file's
    top (end): only the missing marker chose the edge, and a missing edge marker is itself no
    statement (see unmarked_head: writers leave them out), so it cannot pick between two copies."""
    spans = plan.spans
    for i, r in enumerate(plan.regions):
        lo = spans[i - 1][1] if i > 0 else 0
        hi = spans[i + 1][0] if i + 1 < len(spans) else len(plan.orig)
        tie = next((s for s, e in r.edge_ties if lo <= s and e < hi), None)  # in order with the other regions
        if tie is not None:
            edge = "end" if i == len(spans) - 1 and not r.marker_after else "top"  # (as lineplace claims it)
            return (f"region {i + 1} fits at line {tie + 1} as well as at the {edge} of the file, where only the "
                    "missing marker puts it: which copy does it edit?")
    return None


FILE_CHECKS: tuple[Callable[[LinePlan], str | None], ...] = (
    changes_nothing,
    defined_twice,
    unmarked_head,
    unmarked_tail,
    unmarked_edge_tie,
    marker_deeper_than_code,
    edited_opener_or_wrap,
    quoted_marker_for_nothing,
    regions_shifted_apart,
    broken_indentation_seam,
    header_names_other_definition,
    definition_added_again,
    header_deleted_body_kept,
    reindented_copy_beside,
)


# -- a marker-free snippet placed by definition names (tree.py) ---------------------------------------------

@dataclass
class DefinitionMatch:
    """The snippet's definitions and the original definition each names (None: a new one)."""

    matched: list[tuple[Definition, Definition | None]]
    duplicate: tuple[Definition, int] | None  # the first one naming several, and how many (matching stops there)
    u_lines: list[str]
    orig: list[str]


def defined_several_times(m: DefinitionMatch) -> str | None:
    if m.duplicate is not None:
        u, n = m.duplicate
        return f"`{u.name}` is defined {n} times in the original; cannot tell which one"
    return None


def definitions_reordered(m: DefinitionMatch) -> str | None:
    last_end = -1
    for _, o in m.matched:
        if o is None:
            continue
        if o.start <= last_end:
            return "the snippet's definitions are in a different order than in the original"
        last_end = o.end
    return None


def definition_brace_off_indent(m: DefinitionMatch) -> str | None:
    for u, _ in m.matched:
        if brace_off_indent(m.u_lines, u):
            return f"the closing brace of `{u.name}` is not indented like its header: a line missing?"
    return None


def attributes_left_out_beside_shown(m: DefinitionMatch) -> str | None:
    """A definition shown without the attributes (decorators) it has in the original, right after
    its original neighbour, which the snippet shows with attributes of its own, as the original
    has them back to back: the author writes attributes, and the lines between the two are all
    shown, so were these deleted, or left out (a bare definition keeps what it leaves out)?"""
    pairs = [(u, o) for u, o in m.matched if o is not None]
    for (pu, po), (u, o) in zip(pairs, pairs[1:]):
        if pu.attr_start == pu.node_start or u.attr_start != u.node_start or o.attr_start == o.node_start:
            continue
        if all(is_blank(x) for x in m.u_lines[pu.end + 1:u.start]) and \
                all(is_blank(x) for x in m.orig[po.end + 1:o.start]):
            return (f"`{u.name}` is shown right after `{pu.name}` without the attributes it has in the original "
                    f"(`{m.orig[o.attr_start].strip()[:40]}`), while `{pu.name}` shows its own: deleted, or left out?")
    return None


TREE_CHECKS: tuple[Callable[[DefinitionMatch], str | None], ...] = (
    defined_several_times,
    definitions_reordered,
    definition_brace_off_indent,
    attributes_left_out_beside_shown,
)


@dataclass
class ShownDefinition:
    """A snippet definition `u` that replaces the original's `o`."""

    u: Definition
    o: Definition
    u_lines: list[str]
    orig: list[str]
    partial: bool = field(init=False)  # a class shown with only some of its members (the others stay)

    def __post_init__(self) -> None:
        u, o = self.u, self.o
        shown = {(m.kind, m.name) for m in u.members}
        self.partial = u.kind in ("type", "impl", "test") and bool(o.members) and bool(u.members) and \
            any((m.kind, m.name) not in shown for m in o.members) and not self._renamed_in_place()

    def _renamed_in_place(self) -> bool:
        """Every original member the snippet does not name stands in it renamed: in the same place
        among the members, every line the same but one, which is like the original's (a typo fixed
        in the names of two tests; in Java the `@Test` above counts as the method's). The definition
        is shown whole then, not partially beside new members (which kept both copies)."""
        u, o = self.u, self.o
        if len(u.members) != len(o.members):
            return False
        names = {(m.kind, m.name) for m in o.members}
        for a, b in zip(o.members, u.members):
            if (a.kind, a.name) == (b.kind, b.name):
                continue
            was = [x.strip() for x in self.orig[a.node_start:a.end + 1]]
            now = [x.strip() for x in self.u_lines[b.node_start:b.end + 1]]
            changed = [(x, y) for x, y in zip(was, now) if x != y]
            if a.kind != b.kind or (b.kind, b.name) in names or len(was) != len(now) or len(changed) != 1 or \
                    not similar(*changed[0], 0.8):
                return False
        return True


def partial_with_changed_header(d: ShownDefinition) -> str | None:
    if d.partial and d.u_lines[d.u.node_start].strip() != d.orig[d.o.node_start].strip():
        return f"`{d.u.name}` is shown partially with a changed header"
    return None


DEFINITION_CHECKS: tuple[Callable[[ShownDefinition], str | None], ...] = (
    partial_with_changed_header,
)


# -- the member alignment (members.py) -------------------------------------------------------------------

@dataclass
class MemberList:
    """One container's snippet items (('def', Definition) / ('marker', row) / ('other', node)) and
    the original members they name."""

    items: list
    o_members: list[Definition]
    container: Definition | None  # None: the file's top level
    matched: dict[int, Definition]  # item index -> the original member it names
    duplicate: tuple[Definition, int] | None  # the first item naming several members, and how many


def statement_among_members(ms: MemberList) -> str | None:
    for kind, x in ms.items:
        if kind == "other":
            return f"the snippet has a statement the member alignment cannot place (line {x.start_point.row + 1})"
    return None


def ambiguous_member(ms: MemberList) -> str | None:
    if ms.duplicate is not None:
        u, n = ms.duplicate
        return f"`{u.name}` occurs {n} times in the original"
    return None


def members_reordered(ms: MemberList) -> str | None:
    order = [ms.o_members.index(o) for _, o in sorted(ms.matched.items())]
    if order != sorted(order) or len(set(order)) != len(order):
        return "the snippet names members in another order than the original"
    return None


def nothing_matches(ms: MemberList) -> str | None:
    if ms.container is not None and not ms.matched and not any(k == "marker" for k, _ in ms.items):
        return f"nothing in the snippet's `{ms.container.name}` matches its original members"
    return None


CONTAINER_CHECKS: tuple[Callable[[MemberList], str | None], ...] = (
    statement_among_members,
    ambiguous_member,
    members_reordered,
    nothing_matches,
)


@dataclass
class DeletedRun:
    """Original members the snippet skips without a marker between its neighbours: deleted."""

    run: list[Definition]
    last: Definition | None  # the original member kept or replaced just before the run
    k: int  # index of the member after the run
    o_members: list[Definition]
    container: Definition | None
    orig: list[str]
    start: int = field(init=False)  # the original lines [start, end) that go
    end: int = field(init=False)

    def __post_init__(self) -> None:
        self.start = (self.last.end + 1) if self.last is not None else self.run[0].start
        end = self.run[-1].end + 1
        if self.last is None:  # also the blank lines after the run
            while end < len(self.orig) and is_blank(self.orig[end]) and \
                    (self.k >= len(self.o_members) or end < self.o_members[self.k].start):
                end += 1
        self.end = end


def unmarked_top_level_edge(d: DeletedRun) -> str | None:
    if d.container is None and (d.last is None or d.k >= len(d.o_members)):
        return "no marker at the snippet's start or end: keep or delete the file's other definitions?"
    return None


def deletes_code_between(d: DeletedRun) -> str | None:
    for line_no in range(d.start, d.end):
        if not is_blank(d.orig[line_no]) and not any(m.start <= line_no <= m.end for m in d.run):
            return "deleting members would also delete other code between them"
    return None


DELETE_CHECKS: tuple[Callable[[DeletedRun], str | None], ...] = (
    unmarked_top_level_edge,
    deletes_code_between,
)


@dataclass
class ShownMember:
    """A snippet member (no marker inside) that replaces the original member it names."""

    u: Definition
    o: Definition
    next_item: tuple | None  # the snippet's next item in the container, if any
    upd: list[str]
    orig: list[str]
    markers: set[int]
    brace: bool  # the language closes definitions with `}`
    new_lines: list[str] | None = field(init=False)  # u's lines re-indented for o's place; None: impossible

    def __post_init__(self) -> None:
        u = self.u
        self.new_lines = reindent(self.upd[u.start:u.end + 1], self.upd[u.node_start], self.orig[self.o.node_start])


def marker_inside_member(m: ShownMember) -> str | None:
    if any(m.u.start < row < m.u.end for row in m.markers):
        return f"`{m.u.name}` has a marker inside that the member alignment cannot place"
    return None


def closing_brace_off_indent(m: ShownMember) -> str | None:
    if brace_off_indent(m.upd, m.u):
        return f"the closing brace of `{m.u.name}` is not indented like its header: a line missing?"
    return None


def member_not_shown_to_its_end(m: ShownMember) -> str | None:
    """E.g. a Python def followed by a marker: it may go on in the original."""
    u, upd = m.u, m.upd
    nxt = m.next_item[0] if m.next_item is not None else None
    closed = nxt == "def" or (m.brace and upd[u.end].strip()[:1] == "}")
    if nxt == "marker":  # a marker indented deeper than the header is still inside it
        if len(indent_of(upd[m.next_item[1]])) > len(indent_of(upd[u.node_start])):
            closed = False
    return None if closed else f"`{u.name}` is not shown to its end"


def member_not_reindentable(m: ShownMember) -> str | None:
    return f"cannot re-indent `{m.u.name}`" if m.new_lines is None else None


def cut_comment_differs(m: ShownMember) -> str | None:
    """Comments and attributes that open the snippet or follow a marker may be the cut-off end of
    the original's: when they are its last lines, the marker stands for the rest (restate() keeps
    the original's). Otherwise they must equal the original's."""
    u, o, upd = m.u, m.o, m.upd
    u_pre = [x.strip() for x in upd[u.start:u.node_start]]
    o_pre = [x.strip() for x in m.orig[o.start:o.node_start]]
    after_marker = (u.start - 1) in m.markers
    cut_off = cut_inside_prefix(u, upd[u.start:], o, m.orig)
    if u_pre != o_pre and not cut_off and u.start < u.attr_start and \
            (after_marker or all(is_blank(x) for x in upd[:u.start])):
        return (f"the comment above `{u.name}` starts the snippet or follows a marker and "
                "differs from the original's: is it shown whole?")
    return None


def attributes_left_out(m: ShownMember) -> str | None:
    """The snippet shows the member bare while the original's has attributes (`#[test]`,
    `@Override`), and right above it the snippet shows code, not a marker: read that way the
    attributes are deleted; read as a bare member (which keeps them) they are elided. Refuse."""
    u, o = m.u, m.o
    if o.node_start <= o.attr_start or u.node_start > u.attr_start:
        return None
    above = next((row for row in range(u.start - 1, -1, -1) if not is_blank(m.upd[row])), None)
    if above is None or above in m.markers:
        return None
    return (f"`{u.name}` is shown without the original's `{m.orig[o.attr_start].strip()[:40]}` and right below "
            "other code: are its attributes deleted, or left out?")


MEMBER_CHECKS: tuple[Callable[[ShownMember], str | None], ...] = (
    marker_inside_member,
    closing_brace_off_indent,
    member_not_shown_to_its_end,
    member_not_reindentable,
    cut_comment_differs,
    attributes_left_out,
)


@dataclass
class NewMember:
    """A snippet member that names no original member."""

    u: Definition
    rest: list[tuple[str, bool]]  # the items after it: (kind, names an original member)
    marker_open: bool  # a marker comes right before it (after the last shown member)
    container: Definition | None


def new_member_after_top_level_marker(m: NewMember) -> str | None:
    if m.marker_open and m.container is None:
        return f"new `{m.u.name}` follows a marker at the top level: its place in the file is unknown"
    return None


def new_member_among_elided(m: NewMember) -> str | None:
    if m.marker_open and any(kind != "def" or named for kind, named in m.rest):
        return (f"new `{m.u.name}` sits between a marker and more of the snippet: its place among the "
                "elided members is unknown")
    return None


def new_member_before_marker(m: NewMember) -> str | None:
    if not m.marker_open and m.rest and m.rest[-1][0] == "marker" and \
            all(kind == "def" and not named for kind, named in m.rest[:-1]):
        return f"new `{m.u.name}` is followed by a marker: it could go before or after the elided members"
    return None


NEW_MEMBER_CHECKS: tuple[Callable[[NewMember], str | None], ...] = (
    new_member_after_top_level_marker,
    new_member_among_elided,
    new_member_before_marker,
)


# -- helpers of the line checks ----------------------------------------------------------------------------

KEPT_NEAR = 3  # non-blank original lines beyond a region's span that count as "next to it" (plus one per added line)


def _rests_on_common_lines(fit: RegionFit) -> bool:
    """Every original line that anchors the region, as written, is a common one (`try:`, `}`)."""
    span_keys = {x.rstrip() for x in fit.orig[fit.start:fit.end]}
    shown = {y.rstrip() for y in fit.c.lines}
    return all(is_trivial(x) for x in fit.orig[fit.c.start:fit.c.end + 1] if x.rstrip() in span_keys and
               x.rstrip() in shown)


def _added(lines: list[str], span: list[str]) -> list[str]:
    """A region's non-trivial lines that do not stand, as written, in the original span it covers:
    its new (or moved, or re-indented) lines."""
    kept = {x.rstrip() for x in span}
    return [x for x in lines if not is_trivial(x) and x.rstrip() not in kept]


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


def _echo(left: list[str], orig: list[str], at: int, stop: int, step: int) -> bool:
    """The first non-blank leftover snippet line equals one of the next two original lines."""
    first = next((x for x in left if not is_blank(x)), None)
    if first is None:
        return False
    j = at + step
    for _ in range(2):
        if not (j < stop if step > 0 else j > stop):
            return False
        if orig[j].rstrip() == first.rstrip():
            return True
        j += step
    return False


def _blank_bounded(edge: list[str], orig: list[str], at: int, stop: int, step: int) -> bool:
    """edge (snippet lines from the anchor outwards) is new lines then only blank lines, and the
    original, from `at` outwards, has a short run of 1-2 non-blank lines ending at a blank line."""
    if not edge or not is_blank(edge[-1]):
        return False
    k = len(edge)
    while k > 0 and is_blank(edge[k - 1]):
        k -= 1
    if k == 0:
        return False  # only blank lines: handled by the blank-line checks
    j, run = at, 0
    while (j < stop if step > 0 else j > stop) and not is_blank(orig[j]) and run < 3:
        j += step
        run += 1
    return 0 < run <= 2 and (j < stop if step > 0 else j > stop) and is_blank(orig[j])


def defines_something(lines: list[str], lang: str | None) -> bool:
    """Whether new lines contain a whole definition (a method, a function). Statements keep the
    order the snippet shows; where a new member goes relative to elided members is a matter of
    convention, so that case is refused. Without a grammar, assume it does."""
    body = [x for x in lines if not is_blank(x)]
    while body and body[0].strip() in CLOSERS:
        body.pop(0)
    if not body:
        return False
    if lang is None:
        return True
    found = parse_definitions(dedent(body)[0], lang)
    return found is None or bool(found)


def blank_run(lines: list[str], blank: bool) -> int:
    """Length of the leading run of lines that are blank (blank=True) or not (blank=False)."""
    n = 0
    while n < len(lines) and is_blank(lines[n]) == blank:
        n += 1
    return n


SHORT_LINE, SHORT_NEAR = 8, 8  # a lone opener line this short (`if (`) identifies nothing this far


def _reach(context: list[str]) -> int:
    """How far a copy of a region's edge context counts as "just beyond" it: a lone short line that
    only opens a bracket (`if (`, the head of a multi-line condition) says little about where it
    is, so a copy a few statements away ties. (Attributes such as `@Test` stack above every test
    and are handled by their own checks; a `}` is always a few lines away.)"""
    lone = context[0].strip() if len(context) == 1 else ""
    opener = lone.endswith(("(", "[", "{")) and not is_trivial(lone)
    return SHORT_NEAR if opener and len(lone) <= SHORT_LINE else NEAR


def weak_edge(c, orig: list[str], lo: int, hi: int) -> str | None:
    """A region whose context lines on one side occur again a line or two away, with an edit right
    next to them: the edit could sit after either copy, i.e. it may also delete the lines between
    (the cost model would decide alone, and it favours the reading that deletes less). Refuse."""
    lines = c.lines
    if c.first == c.last:
        return None
    head = []
    k, j = c.first, c.start
    while k <= c.last and j <= c.end and lines[k].rstrip() == orig[j].rstrip():
        head.append(lines[k].rstrip())
        k += 1
        j += 1
    tail = []
    k, j = c.last, c.end
    while k >= c.first and j >= c.start and lines[k].rstrip() == orig[j].rstrip():
        tail.append(lines[k].rstrip())
        k -= 1
        j -= 1
    tail.reverse()
    keys = [x.rstrip() for x in orig]
    near = NEAR
    if c.matched >= c.last - c.first + 1 and c.end - c.start == c.last - c.first:
        # The whole region is context, in one piece: it changes nothing where it fits best. But a
        # region is shown for a reason: if its first or last line repeats just outside, it may be
        # showing that the lines up to that copy were deleted.
        first, last = lines[c.first].rstrip(), lines[c.last].rstrip()
        for t in range(max(lo, c.start - 1 - near), c.start):
            if keys[t] == first:
                return f"it changes nothing where it fits, and its first line also occurs at line {t + 1}, just above: " \
                       "does it delete the lines in between?"
        for t in range(c.end + 1, min(hi, c.end + 2 + near)):
            if keys[t] == last:
                return f"it changes nothing where it fits, and its last line also occurs at line {t + 1}, just below: " \
                       "does it delete the lines in between?"
        return None
    if head:
        n = len(head)
        near = _reach(head)
        for t in range(max(lo, c.start - n - near), c.start):
            if keys[t:t + n] == head:
                return (f"its first context lines ({' / '.join(x.strip() for x in head)[:60]}) also occur at line "
                        f"{t + 1}, just above: the edit may also delete the lines in between")
    if tail:
        n = len(tail)
        near = _reach(tail)
        end0 = c.end - n + 1
        for t in range(end0 + 1, min(hi - n + 1, c.end + 1 + near + 1)):
            if keys[t:t + n] == tail:
                return (f"its last context lines ({' / '.join(x.strip() for x in tail)[:60]}) also occur at line "
                        f"{t + 1}, just below: the edit may also delete the lines in between")
    return None
