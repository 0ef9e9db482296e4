"""File rules (context: `LinePlan`): indentation where the placed regions meet the kept file.

An edited block header that may be a new block wrapping the old one, regions around an indented
marker placed at different shifts, a seam whose indentation breaks (`seams.py`), and moved code
whose old copies stay on both sides of a span.
"""

from __future__ import annotations

from fastapply.merge.checks.base import LinePlan
from fastapply.merge.defs import name_row, names_header
from fastapply.merge.seams import broken_seam, opens_block, seam_pairs
from fastapply.merge.text import indent_of, is_blank, is_trivial


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


def edited_opener_before_marker(plan: LinePlan) -> str | None:
    """A new block opener placed as an edit of the original opener it resembles (`if (isReady())
    {` over `if (user) {`, `if err := validate(); err == nil {` over `if err := scanner.Err(); ...`)
    and right after it a marker one level deeper: the marker stands for the old block's body (the
    header edited), or for the old statement itself, re-indented into a new block around it? The
    lines say both; the deeper marker is what a wrap writes. Refused, with the readings."""
    for i, r in enumerate(plan.regions[:-1]):
        start, end, repl = plan.spans[i]
        shown = [x for x in repl if not is_blank(x)]
        if not r.marker_after or r.after_indent is None or not shown or end - start < 1:
            continue
        new, old = shown[-1], plan.orig[end - 1]
        if new.rstrip() != old.rstrip() and opens_block(new, plan.lang) and opens_block(old, plan.lang) and \
                indent_of(new) == indent_of(old) and len(r.after_indent) > len(indent_of(new)) and \
                not _same_definition_header(new, end - 1, plan):
            return (f"region {i + 1}'s `{new.strip()[:40]}` edits `{old.strip()[:40]}` and a deeper marker follows: "
                    "that block's header edited, or a new block around the old one?")
    return None


def _same_definition_header(new: str, row: int, plan: LinePlan) -> bool:
    """`new` restates the header of the definition named on original line `row`: the same name
    right before its parameters (a return type or a parameter changed). No block wraps a
    definition under its own name, so that is an edit of the header."""
    for d in plan.defs:
        if name_row(d) == row and names_header(d, new):
            return True
    return False


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
