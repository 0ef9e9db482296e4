"""Region rules (context: `RegionFit`): a new block around original code (the wrap reading, wrap.py).

A region that opens a block around lines the original has one level out is a wrap, not a paste
at another indentation, nor new code anchored on a few lines that repeat at the new depth; its new
opener is not an original one (`try:`), and a lone common opener may read both ways; a lone common
line it wraps may be another copy of that line, one level out.
"""

from __future__ import annotations

import re

from fastapply.merge.checks.base import RegionFit
from fastapply.merge.checks.helpers import rests_on_common_lines
from fastapply.merge.seams import opens_block
from fastapply.merge.text import indent_of, is_blank, is_trivial
from fastapply.merge.wrap import shown_wrap
from fastapply.merge.wrap_regions import clause_word


def shifted_around_new_block(fit: RegionFit) -> str | None:
    """The region is placed at another indentation than written, and it opens a new block around
    original lines written one level deeper (or writes a new opener at the level its shifted body
    has at its place: `_opener_at_wrapped_level`): it wraps that code (the wrap reading, wrap.py),
    it was not pasted at another indentation."""
    if fit.c.lines != fit.region.lines and (shown_wrap(fit.region.lines, fit.orig, fit.lang) is not None or
                                            _opener_at_wrapped_level(fit)):
        return (f"region {fit.i + 1} would be shifted to fit, but it wraps original code in a new block: "
                "re-indented code, not a paste at another indentation")
    return None


def shifted_onto_other_block(fit: RegionFit) -> str | None:
    """The region is placed at another indentation than written, and a line it adds there (not
    paired) is, as the snippet writes it, an original line one level deeper than the original has
    it elsewhere, where the placement keeps it: `try {` / `this.app = createApp()` / `} catch (e)
    {` anchored on another function's try/catch by its opener and handler, while the line it wraps
    stands (one level out) in a `before` block. The snippet wraps that code; the placement would
    copy it into another block. Refused (the wrap reading, or a refusal, follows)."""
    written, shifted, o = fit.region.lines, fit.c.lines, fit.orig
    if written == shifted:
        return None
    span = {x.strip() for x in o[fit.start:fit.end] if not is_blank(x)}
    outside: dict[str, list[str]] = {}
    for j in list(range(0, fit.start)) + list(range(fit.end, len(o))):
        if not is_blank(o[j]):
            outside.setdefault(o[j].strip(), []).append(indent_of(o[j]))
    for x in written:
        if is_blank(x) or is_trivial(x) or x.strip() in span:
            continue
        if any(len(ind) < len(indent_of(x)) for ind in outside.get(x.strip(), [])):
            return (f"region {fit.i + 1} would be shifted to fit and add `{x.strip()[:40]}`, which the original has "
                    "one level out elsewhere and would keep: that code wrapped where it stands, or copied here?")
    return None


STATEMENT_OPENER = re.compile(r"(\}\s*)?(try|with|async with|if|for|async for|while|else|elif|except|catch|finally|"
                              r"match|unsafe|loop|switch|do|synchronized|select|defer)\b")


def lone_statement_opener(fit: RegionFit) -> str | None:
    """The region is one statement that opens a block (`try:`, `with self._lock:`, `if (x) {`) and a
    marker inside it: placed on an original copy of that line, its body elided, or a new block
    around the code the marker stands for? One line places it, and it says neither. (A definition's
    header alone before a marker, `class X {`, is the usual way to show where the rest goes.)"""
    code = [x for x in fit.region.lines if not is_blank(x)]
    if len(code) != 1 or not _opener_then_deeper_marker(fit, code[0]):
        return None
    return (f"region {fit.i + 1} is only `{code[0].strip()[:40]}` and a marker inside it: the original's block "
            f"(line {fit.c.start + 1}) with its body elided, or a new block around the code the marker stands for?")


def opener_after_deleted_lines(fit: RegionFit) -> str | None:
    """The region shows a block's header, then a statement that opens a block (`try:`) and a deeper
    marker; the opener is placed on an original copy of it, which deletes the statements the block
    begins with before it (`thread.start()` between `def serve(...):` and the original's `try:`):
    those statements deleted and the original block's body elided, or a new block wrapped around
    the whole body, those statements included? (A new `try:` around a body that holds one.)"""
    o = fit.orig
    code = [x for x in fit.region.lines if not is_blank(x)]
    if len(code) < 2 or not _opener_then_deeper_marker(fit, code[-1]) or o[fit.end - 1].strip() != code[-1].strip():
        return None
    header, depth = code[-2], len(indent_of(code[-1]))
    if not opens_block(header, fit.lang) or len(indent_of(header)) >= depth:
        return None
    at = next((j for j in range(fit.end - 2, fit.start - 1, -1) if o[j].strip() == header.strip()), None)
    dropped = [x for x in o[at + 1:fit.end - 1] if not is_blank(x)] if at is not None else []
    if not dropped or any(len(indent_of(x)) < depth for x in dropped):
        return None
    return (f"region {fit.i + 1} shows `{code[-1].strip()[:40]}` right after `{header.strip()[:40]}` and a marker "
            f"inside it, placed on the original's (line {fit.end}), which deletes `{dropped[0].strip()[:40]}` "
            "before it: those statements deleted, or a new block around the whole body?")


def _opener_then_deeper_marker(fit: RegionFit, line: str) -> bool:
    """`line`, the region's last, is a statement that opens a block and the marker after the region
    stands inside that block."""
    r = fit.region
    return bool(r.marker_after) and r.after_indent is not None and STATEMENT_OPENER.match(line.strip()) is not None \
        and opens_block(line, fit.lang) and len(r.after_indent) > len(indent_of(line))


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


def opener_read_both_ways(fit: RegionFit) -> str | None:
    """The region rests on common lines only, its block opener (`try:`) among them, and that opener
    reads as a new block too: the line after it stands in the original one level out and never at
    its depth (wrap.shown_wrap: `return` wrapped in `try:`). An edit inside the original block, or a
    new block around that line? Nothing but a common line places it."""
    r, c, o = fit.region, fit.c, fit.orig
    if fit.lowered or c.lines != r.lines or not rests_on_common_lines(fit):
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


def wrapped_run_kept_elsewhere(fit: RegionFit) -> str | None:
    """The region, as written, opens a new block around lines that the original has, one level out,
    as one run in the region's gap, and the placement keeps that run, or its end: the wrap was read
    as new code anchored on a few lines that repeat by chance at their new depth (TypeScript
    overload headers wrapped in `try {`, the last lines paired with a type literal's; the context
    after the block, `store.setState(...)`, paired with the wrapped run's own first lines rather
    than the next call's), and the wrapped code would stand twice. Refused, the wrap reading
    (wrap.py) places it on its code."""
    r, o = fit.region, fit.orig
    if fit.lowered:
        return None
    shown = shown_wrap(r.lines, o, fit.lang)
    if shown is None:
        return None
    k, end, extra = shown
    inner = [x[len(extra):].rstrip() for x in r.lines[k + 1:end] if not is_blank(x)]
    # (two lines that are not trivial, or one the original has once: a lone common line such as
    # `return x` repeats by chance; held-out fuzz seed 57203 wrapped one unique statement, and the
    # region went onto another method's `try {`, a copy of it added there)
    solid = sum(1 for x in inner if not is_trivial(x))
    if solid < 2 and not (solid == 1 and len(inner) == 1 and
                          sum(1 for x in o if x.rstrip() == inner[0]) == 1 and len(inner[0].strip()) >= 16):
        return None
    rows = [j for j in range(max(fit.prev_end, 0), fit.next_start) if not is_blank(o[j])]
    keys = [o[j].rstrip() for j in rows]
    for p in range(len(keys) - len(inner) + 1):
        if keys[p:p + len(inner)] == inner and not fit.start <= rows[p] <= rows[p + len(inner) - 1] < fit.end:
            return (f"region {fit.i + 1} wraps `{inner[0].strip()[:40]}` and the lines after it in a new block, "
                    f"but the original has them at line {rows[p] + 1}, which would stay: which code is wrapped?")
    return None


def wrapped_common_line_elsewhere(fit: RegionFit) -> str | None:
    """The region rests on common lines only (`return null;`), one of them inside a new block the
    region opens (`try {`), and the original has another copy of that line at the new opener's
    depth: the snippet may have wrapped that copy (written one level deeper, inside the `try`),
    while the placement took the copy that already stands at the wrapped depth, inside some other
    block (held-out fuzz seed 56250, `wrap_shown` #1819: Java, no context lines)."""
    if not rests_on_common_lines(fit):
        return None
    c, o = fit.c, fit.orig
    span = {x.rstrip() for x in o[fit.start:fit.end]}
    for k in range(c.first, c.last + 1):
        x = c.lines[k]
        if is_blank(x) or x.rstrip() not in span or x.strip()[0] in ")]}":  # (a closer is the block's own)
            continue
        opener = next((y for y in reversed(c.lines[:k]) if not is_blank(y) and
                       len(indent_of(y)) < len(indent_of(x))), None)
        if opener is None or opener.rstrip() in span or not opens_block(opener, fit.lang):
            continue
        copy = next((j for j, y in enumerate(o) if not fit.start <= j < fit.end and y.strip() == x.strip() and
                     indent_of(y) == indent_of(opener)), None)
        if copy is not None:
            return (f"region {fit.i + 1} rests on `{x.strip()[:40]}`, inside its new `{opener.strip()[:30]}`; the "
                    f"original has that line at the opener's depth too (line {copy + 1}): which copy is wrapped?")
    return None


def clause_top_under_other_marker(fit: RegionFit) -> str | None:
    """The region ends with an original clause opener (`finally:`, `} catch (e) {`) and new lines
    below it, and the original lines kept right after them stand inside that clause's body, hidden
    by a marker written shallower than they are (a loose one, at column 0). The snippet may add the
    new lines to the old clause, or, its `try:` shown with the body elided, wrap a new `try` /
    `finally` around the old one: `finally:` / `lock.release()` after `try:` and a marker, over a
    body that is a `try:` / `finally: client.close()` (held-out fuzz seed 65123, `wrap_body` #916,
    wrong on 9b63fe1 too). Which it is, a marker at the clause's depth would have said."""
    r, o = fit.region, fit.orig
    if not r.marker_after or r.after_indent is None or not fit.new_trail or fit.end >= fit.next_start:
        return None
    anchor = fit.c.lines[fit.c.last]
    if clause_word(anchor) is None or not opens_block(anchor, fit.lang):
        return None
    depth = len(indent_of(anchor))
    new = [x for x in fit.new_trail if not is_blank(x)]
    kept = next((x for x in o[fit.end:fit.next_start] if not is_blank(x)), None)
    if not new or kept is None or any(len(indent_of(x)) <= depth for x in new) or \
            len(indent_of(kept)) <= depth or len(r.after_indent) >= len(indent_of(kept)):
        return None
    return (f"region {fit.i + 1} adds lines at the top of `{anchor.strip()[:40]}`'s body, and the original's "
            f"`{kept.strip()[:40]}` stays after them, hidden by a marker at another depth: added to the old "
            "clause, or a new block around the old one?")
