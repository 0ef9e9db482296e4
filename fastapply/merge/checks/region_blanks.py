"""Region rules (context: `RegionFit`): blank lines at a region's edge, next to a marker.

Blank-line runs that do not match the original's there: new blank lines, or context for a
deletion next to them? New lines before (after) fewer blank lines than the original has: did they
replace one? New lines bounded only by blank lines: do they replace the original's next lines too?
"""

from __future__ import annotations

from fastapply.merge.checks.base import RegionFit
from fastapply.merge.checks.region_edges import defines_something
from fastapply.merge.seams import opens_block
from fastapply.merge.text import CLOSERS, indent_of, is_blank, is_import_line
from fastapply.merge.unanchored import bracket_delta

BLANK_BOUNDED_RUN = 2  # lines: an original run this short, up to a blank line, may be replaced by new lines


def new_blank_lines_at_start(fit: RegionFit) -> str | None:
    """The region starts, after a marker, with more blank lines than the original has before its first
    anchor, at a place not preceded by a blank line: new blank lines, or context for a deletion right after
    them?"""
    o, start = fit.orig, fit.start
    if fit.region.marker_before and start > fit.prev_end and not is_blank(o[start - 1]) and \
            blank_run(fit.lead, blank=True) > blank_run(o[start:fit.c.start], blank=True):
        return (f"region {fit.i + 1} starts with blank lines the original does not have there: "
                "new blank lines, or a deletion right after them?")
    return None


def new_blank_lines_at_end(fit: RegionFit) -> str | None:
    """The region ends, before a marker, with more blank lines than the original has after its last anchor,
    at a place not followed by a blank line: new blank lines, or context for a deletion right before them?"""
    o, end = fit.orig, fit.end
    if fit.region.marker_after and end < fit.next_start and not is_blank(o[end]) and \
            blank_run(fit.trail[::-1], blank=True) > blank_run(o[fit.c.end + 1:end][::-1], blank=True):
        return (f"region {fit.i + 1} ends with blank lines the original does not have there: "
                "new blank lines, or a deletion right before them?")
    return None


def new_lines_before_blanks(fit: RegionFit) -> str | None:
    """New lines followed, before the marker, by fewer blank lines than the original has there: did they
    replace a blank line, or go in front of all of them?"""
    trail, end = fit.trail, fit.end
    if fit.region.marker_after and end < fit.next_start and is_blank(fit.orig[end]) and trail and \
            is_blank(trail[-1]) and any(not is_blank(x) for x in trail):
        return (f"region {fit.i + 1}: new lines before blank lines that do not match the original's "
                "count: replacing a blank line, or inserted?")
    return None


def new_lines_after_blanks(fit: RegionFit) -> str | None:
    """New lines preceded, after the marker, by fewer blank lines than the original has there: did they
    replace a blank line, or go after all of them?"""
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


# Lines that belong to the item below them: a comment, a decorator, an attribute.
_ATTACHED = ("#", "//", "/*", "*", "@", "--")


def new_item_against_next_item(fit: RegionFit) -> str | None:
    """The region ends, at a marker, with new lines the snippet set off by a blank line, and the
    original goes on right there with the next item of a blank-separated run (an item of several
    lines at the same depth: `it('…', () => {`, `function g() {`, `type T = ReturnType<`; or a
    top-level line after the blank line: `type T = U`). A new definition gets the blank
    line back after it (`lineplace._separator_after`); other new code (`const limit = 2;`) may be
    an item of its own, which keeps a blank line before the next one, or the first lines of that
    next item: the readings hold both (the flipped separator)."""
    o, end, new = fit.orig, fit.end, [x for x in fit.new_trail if not is_blank(x)]
    if not fit.region.marker_after or not new or is_blank(fit.new_trail[-1]) or end >= len(o) or \
            end >= fit.next_start or is_blank(o[end]) or o[end].strip() in CLOSERS or not is_blank(o[end - 1]):
        return None
    if not fit.trail or not is_blank(fit.trail[0]) or indent_of(new[0]) != indent_of(o[end]) or \
            not _item_of_lines(o, end, fit.lang) or new[0].lstrip().startswith(_ATTACHED) or \
            sum(bracket_delta(x) for x in new) != 0 or opens_block(new[-1], fit.lang) or \
            defines_something(fit.new_trail, fit.lang):
        return None  # (an opener left open, `try {`, wraps what follows: no item of its own)
    return (f"region {fit.i + 1} ends with new code set off by a blank line, right before the original's "
            f"`{o[end].strip()[:40]}`: an item of its own (a blank line after it too), or the start of that one?")


def blank_lines_dropped_between_kept_lines(fit: RegionFit) -> str | None:
    """Without a grammar (text: no definitions to keep apart), a region that shows two lines the
    original has with only blank lines between them, with fewer blank lines between them than the
    original has: is the snippet's spacing meant (blank lines deleted), or only how it was written
    (functions pasted bare with one blank line where the file has two)? The tree merge keeps the
    file's own spacing around the definitions it places; the line merge cannot tell."""
    if fit.lang is not None:
        return None
    region = [x for x in fit.c.lines]
    span = fit.orig[fit.start:fit.end]
    j = 0
    prev = None  # (the region's previous non-blank line's index in span, blank lines after it in the region)
    blanks = 0
    for x in region:
        if is_blank(x):
            blanks += 1
            continue
        k = next((t for t in range(j, len(span)) if span[t].strip() == x.strip()), None)
        if k is None:
            prev, blanks = None, 0
            continue
        if prev is not None and all(is_blank(y) for y in span[prev + 1:k]) and k - prev - 1 > blanks:
            return (f"region {fit.i + 1} shows `{span[prev].strip()[:30]}` and `{x.strip()[:30]}` with "
                    f"{blanks} blank line(s) between them where the original has {k - prev - 1}: deleted, or "
                    "only how the snippet was written?")
        prev, j, blanks = k, k + 1, 0
    return None


def _item_of_lines(orig: list[str], at: int, lang: str | None) -> bool:
    """Line `at` starts an item of a blank-separated run: it opens a block, or the next line is
    deeper (an item of several lines), or it stands at the top level (after a blank line there)."""
    if opens_block(orig[at], lang):
        return True
    nxt = next((x for x in orig[at + 1:] if not is_blank(x)), None)
    if nxt is not None and len(indent_of(nxt)) > len(indent_of(orig[at])):
        return True
    return not indent_of(orig[at])


def blank_bounded_end(fit: RegionFit) -> str | None:
    """New lines whose only context towards the marker after them is blank lines: they may also replace the
    original's next line or two (a short run that ends at a blank line)."""
    if fit.region.marker_after and _blank_bounded(fit.trail, fit.orig, fit.end, fit.next_start, +1):
        return (f"region {fit.i + 1} ends with new lines and only blank lines before the marker: "
                "do they also replace the original's next lines?")
    return None


def blank_bounded_start(fit: RegionFit) -> str | None:
    """New lines whose only context towards the marker before them is blank lines: they may also replace the
    original's line or two above (a short run after a blank line)."""
    if fit.region.marker_before and _blank_bounded(fit.lead[::-1], fit.orig, fit.start - 1, fit.prev_end - 1, -1):
        return (f"region {fit.i + 1} starts with only blank lines before new lines: "
                "do they also replace the original's lines above?")
    return None


def _blank_bounded(edge: list[str], orig: list[str], at: int, stop: int, step: int) -> bool:
    """edge (snippet lines from the anchor outwards) is new lines then only blank lines, and the
    original, from `at` outwards, has a short run of 1-2 non-blank lines ending at a blank line.
    Not when the new lines are imports and the run is none (an import added at the end of the
    import block, the constants after it: an agent's most common edit, which replaces no code)."""
    if not edge or not is_blank(edge[-1]):
        return False
    k = len(edge)
    while k > 0 and is_blank(edge[k - 1]):
        k -= 1
    if k == 0:
        return False  # only blank lines: handled by the blank-line checks
    j, run = at, 0
    while (j < stop if step > 0 else j > stop) and not is_blank(orig[j]) and run <= BLANK_BOUNDED_RUN:
        j += step
        run += 1
    if not (0 < run <= BLANK_BOUNDED_RUN and (j < stop if step > 0 else j > stop) and is_blank(orig[j])):
        return False
    ran = orig[at:j] if step > 0 else orig[j + 1:at + 1]  # the short run, from `at` to the blank line
    return not (all(is_import_line(x) for x in edge[:k]) and not any(is_import_line(x) for x in ran))


def blank_run(lines: list[str], blank: bool) -> int:
    """Length of the leading run of lines that are blank (blank=True) or not (blank=False)."""
    n = 0
    while n < len(lines) and is_blank(lines[n]) == blank:
        n += 1
    return n
