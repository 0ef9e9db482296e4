"""File rules (context: `LinePlan`): what the snippet's markers, and the missing ones, say.

A snippet placed where it changes nothing, code above the first or below the last region with no
marker there (kept above when it holds imports or definitions the snippet never names), a region
that only the missing marker put at the file's edge, a marker deeper than the code it stands for
(wrapped?), a marker that stands for nothing but is an original comment, and a marker that hides a
line which would take the re-indented lines after it into its block.
"""

from __future__ import annotations

import re

from fastapply.merge.checks.base import LinePlan
from fastapply.merge.checks.helpers import seam_copies, trim_blank_ends
from fastapply.merge.text import CLOSERS, indent_of, is_blank, is_import_line, occurrences
from fastapply.merge.wrap import marker_wrap
from fastapply.merge.wrap_regions import clause_word


def changes_nothing(plan: LinePlan) -> str | None:
    """A snippet with markers is sent to change something: placed where it changes nothing, it may
    belong elsewhere (two swapped lines shown without context read as the original's order). An
    edit already applied is the exception: when every region occurs once in the original, verbatim
    (at the indentation it is written with), there is nowhere else it could go, and the file comes
    back unchanged (an agent's retry or a re-run codemod is idempotent), but only as written, never
    shifted to fit. Not when a region spans a seam between items (`seam_runs`: a blank gap, or the
    line after a closer such as `},`) and all its lines before it stand again above it (after it,
    below): an item deleted from a family whose items end alike shows the previous item's tail and
    the next one's head, and read at the nearest copy of that tail it deletes nothing. Closers
    alone at the seam (`}`, `})`) show no item's edge. The readings hold the deletion
    (`lineplace._at_seam_copies`). (An edit applied again whose region shows such a seam is refused
    too: the file cannot tell the two apart; `evals.reapply` counts those re-runs.)"""
    if plan.partial_ok or not all(plan.orig[start:end] == repl for start, end, repl in plan.spans):
        return None
    if all(occurrences(plan.orig, repl) == 1 and trim_blank_ends(repl) == trim_blank_ends(r.lines)
           for (_, _, repl), r in zip(plan.spans, plan.regions)):
        seam = _seam_run_elsewhere(plan)
        if seam is None:
            return None  # (as written: a region shifted to fit was not written for that place)
        return (f"placed where it fits, the snippet changes nothing, but its lines `{seam[0][:40]}` also stand "
                f"at line {seam[1] + 1}: does it delete the lines between?")
    return "placed where it fits, the snippet changes nothing: is it meant for another place?"


SEAM_COPIES = 3  # copies of a seam's run looked for on each side


def _telling(run: list[str]) -> bool:
    """A run that can be an item's tail (head) as shown: one line besides closers and the shortest
    (`}` / `})` stand at every item's end, and an edit applied again beside them shows no
    deletion; `return this;` / `}` is a builder method's tail)."""
    return any(x.strip() not in CLOSERS and len(x.strip()) > 2 for x in run)


def _seam_run_elsewhere(plan: LinePlan) -> tuple[str, int] | None:
    """(the first line of a region's lines before (after) one of its blank-separated seams, where
    a copy of all those lines stands above (below) the region, in the gap before the neighbouring
    region), or None."""
    keys = [x.rstrip() for x in plan.orig]
    for k, (start, end, repl) in enumerate(plan.spans):
        lo = plan.spans[k - 1][1] if k else 0
        hi = plan.spans[k + 1][0] if k + 1 < len(plan.spans) else len(keys)
        code = [j for j, x in enumerate(repl) if not is_blank(x)]
        for side, run, at in seam_copies(keys, repl, start + code[0], start + code[-1], lo, hi, SEAM_COPIES):
            if _telling(run):
                return run[0].strip(), at if side == "above" else at - len(run) + 1
    return None


def unmarked_head(plan: LinePlan) -> str | None:
    """Markers elsewhere but none before the first region: the lines above may be kept or deleted
    (unless the markers are loose, or the lines above hold imports or definitions the snippet
    never names, `head_holds_unnamed_code`: then they are kept, with a doubt, but not when the
    snippet starts with more blank lines than the original has right above the region's place:
    those are new, or the file's own first lines, the code between them and the region deleted)."""
    if not plan.head:
        return None
    above = 0
    while above < plan.spans[0][0] and is_blank(plan.orig[plan.spans[0][0] - above - 1]):
        above += 1
    if plan.regions[0].blank_head > above or not (plan.loose or head_holds_unnamed_code(plan)):
        return ("the snippet has markers but none before its first region, which is not at the "
                "top of the file: keep or delete the lines above it?")
    return None


def head_holds_unnamed_code(plan: LinePlan) -> bool:
    """The unshown head holds an import or package line, or a whole definition the snippet never
    names. An agent that starts its snippet at the function it edits (`def f(...):`, a marker,
    the changed lines) leaves the leading marker out; one that means to delete the file's imports
    and other functions does not write it that way. (Not the tail: commits end a snippet where they
    delete the rest, whole functions included: httpx `_urlparse.py` in commits_dev.)"""
    end = plan.spans[0][0]
    if any(is_import_line(x) for x in plan.orig[:end]):
        return True
    shown = "\n".join(x for r in plan.regions for x in r.lines)
    return any(d.end < end and d.name and not re.search(rf"\b{re.escape(d.name)}\b", shown) for d in plan.defs)


def unmarked_tail(plan: LinePlan) -> str | None:
    """Markers elsewhere but none after the last region, which does not reach the file's end: the lines
    below may be kept or deleted (loose markers keep them, with a doubt)."""
    if plan.tail and not plan.loose:
        return ("the snippet has markers but none after its last region, which is not at the "
                "end of the file: keep or delete the lines below it?")
    return None


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


TRY_OPENERS = ("try {", "try:")
HANDLERS = ("catch", "except", "finally", "} catch", "} finally", "}catch", "}finally")


def handler_rewritten_or_wrapped(plan: LinePlan) -> str | None:
    """A region that ends with a `try` the original has as written, a marker one level inside it,
    and a next region that goes on with a handler at the `try`'s depth which the original does not
    have there (`} catch (IllegalStateException e) {`), or which deletes a line of the original's
    handler it does not show (`throw ...`): the snippet edits that try (a handler added or
    rewritten), or wraps the whole try in a new one (the agent's "add error handling" around a
    body that already is a try)? Both read the lines; only the intent differs. Refused, with both
    readings."""
    if plan.wrapped:
        return None
    orig_keys = {x.rstrip() for x in plan.orig}
    for i in range(len(plan.regions) - 1):
        r = plan.regions[i]
        # (the regions as placed: a region shifted to fit is compared at its new indentation)
        code = [x for x in plan.spans[i][2] if not is_blank(x)]
        start, end, placed_next = plan.spans[i + 1]
        first_next = next((x for x in placed_next if not is_blank(x)), None)
        if not code or first_next is None or not r.marker_after or r.after_indent is None:
            continue
        opener, written = code[-1], next(x for x in reversed(r.lines) if not is_blank(x))
        if opener.rstrip() not in orig_keys or not opener.strip().startswith(TRY_OPENERS) or \
                len(r.after_indent) <= len(indent_of(written)) or not first_next.strip().startswith(HANDLERS) or \
                indent_of(first_next) != indent_of(opener):
            continue
        shown = {x.rstrip() for x in placed_next}
        gone = next((x for x in plan.orig[start:end] if not is_blank(x) and x.rstrip() not in shown), None)
        if first_next.rstrip() not in orig_keys or gone is not None:
            change = f"`{gone.strip()[:40]}` deleted" if gone is not None else f"`{first_next.strip()[:40]}` added"
            return (f"`{opener.strip()}` pairs with the original's, with {change} after the marker inside it: an "
                    "edit of that try's handlers, or a new try of the same shape around it (the original kept inside)?")
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


def _handler_of_shown_opener(before: list[str], marker_indent: str | None, depth: int, hidden: str) -> bool:
    """The snippet shows a block opener (`try:`), then a marker at its body's depth, then the region
    at that depth too, as the opener's body goes on; and the hidden line that ends that body is the
    opener's own next clause (`except LookupError:` at the `try:`'s depth). The region would go into
    that clause, not the body shown (held-out seed 95308: a `try:` wrapped around a `try:`, the
    region's first line an edit). A hidden line of another kind (the next `def`) is a loose
    marker's, which commits write (httpx `_utils.py`)."""
    if not before or marker_indent is None:
        return False
    last = before[-1].rstrip()
    return last.endswith((":", "{")) and len(indent_of(last)) < depth == len(marker_indent) and \
        indent_of(hidden) == indent_of(last) and clause_word(hidden) is not None


def shown_under_hidden_opener(plan: LinePlan) -> str | None:
    """The first line after a marker is an original line indented deeper (the snippet moves it
    into a block) and belongs, in the snippet, to a block shown above the marker (the nearest line
    shallower than it there is shown). Spliced as planned, a line the marker stands for is
    shallower than it, so in the file it would belong to that hidden line's block instead: `try:`
    / marker / `self.clear()` placed after the original's `except TimeoutError:` / `continue`,
    which the marker stands for, runs the shown lines in the handler. The snippet's structure and
    the file's disagree: refused (held-out fuzz seed 15497, a `try:` wrapped around a `try:`; the
    wrap reading, wrap.py, is tried next). Only for re-indented lines, or where the snippet shows
    the block's opener right before a marker at its body's depth and hides its next clause
    (`_handler_of_shown_opener`): a marker written at a loose depth before lines at their own
    depth is common and says nothing about blocks."""
    if plan.wrapped:
        return None
    for i in range(1, len(plan.regions)):
        if not plan.regions[i].marker_before:
            continue
        start, end, repl = plan.spans[i]
        first = next((x for x in repl if not is_blank(x)), None)
        was = next((x for x in plan.orig[start:end] if not is_blank(x)), None)
        if first is None or was is None:
            continue
        depth = len(indent_of(first))
        before = [x for _, _, repl in plan.spans[:i] for x in repl if not is_blank(x)]
        parent = next((x for x in reversed(before) if len(indent_of(x)) < depth), None)
        if parent is None:
            continue
        hidden = plan.orig[plan.spans[i - 1][1]:plan.spans[i][0]]
        opener = next((x for x in hidden if not is_blank(x) and len(indent_of(x)) < depth), None)
        if opener is not None and (first.strip() == was.strip() and depth > len(indent_of(was)) or
                                   _handler_of_shown_opener(before, plan.regions[i].before_indent, depth, opener)):
            return (f"region {i + 1} starts inside `{parent.strip()[:40]}`, shown above the marker before it, but "
                    f"the marker stands for `{opener.strip()[:40]}`, which is shallower: its lines would go "
                    "into that block instead")
    return None
