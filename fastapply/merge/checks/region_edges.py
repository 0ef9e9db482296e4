"""Region rules (context: `RegionFit`): the new lines at a region's edge, next to a marker.

Is an edge line new, or an edit of the original line just beyond the span (which would stay)?
An echo of the next original line, an edited version of it, a line that sets the same key, a
renamed block header, new definitions before a lone closing bracket (before or after the elided
members?).
"""

from __future__ import annotations

from fastapply.merge.checks.base import RegionFit
from fastapply.merge.defs import parse_definitions
from fastapply.merge.seams import opens_block
from fastapply.merge.text import CLOSERS, dedent, indent_of, is_blank, is_import_line, is_trivial, line_key, similar

EDITED_RATIO = 0.8  # similarity (0..1): lines this alike (same indentation) read as versions of each other
ECHO_REACH = 2  # original lines beyond an edge that an edge line may echo


def echoed_edge(fit: RegionFit) -> str | None:
    """The first snippet line left over after an edge equals an original line just beyond the edge:
    the lines in between may have been deleted, or the snippet line is new."""
    if _echo(fit.new_trail, fit.orig, fit.end, fit.next_start, +1) or \
            _echo(fit.new_lead[::-1], fit.orig, fit.start - 1, fit.prev_end - 1, -1):
        return (f"region {fit.i + 1}: a line at its edge also occurs just beyond it in the original; "
                "inserted, or are the lines between deleted?")
    return None


def _echo(left: list[str], orig: list[str], at: int, stop: int, step: int) -> bool:
    """The first non-blank leftover snippet line equals one of the next two original lines."""
    first = next((x for x in left if not is_blank(x)), None)
    if first is None:
        return False
    j = at + step
    for _ in range(ECHO_REACH):
        if not (j < stop if step > 0 else j > stop):
            return False
        if orig[j].rstrip() == first.rstrip():
            return True
        j += step
    return False


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


def edge_line_keyed_like_next(fit: RegionFit) -> str | None:
    """The region's last new line before a marker (its first after one) sets the same key as the
    original line just beyond its span, which would stay (`version = "0.2.0"` over `version =
    "0.1.0"`, `FROM node:22` over `FROM node:18`, `.PHONY: all lint` over `.PHONY: test`): an edit
    of that line, read as a new one because it changed too much to pair, or a new line beside it?
    Only where that key is the original's one line of it at that depth (a config key, an
    instruction); a key the original repeats (imports, rows, list items) is often added to."""
    for side, new, _, head in keyed_edges(fit):
        return (f"region {fit.i + 1}'s `{new.strip()[:40]}` sets `{edge_key(new)}` like the original's "
                f"{'next' if side == 'trail' else 'previous'} line `{fit.orig[head].strip()[:40]}`, which would stay: "
                "an edit of that line, or a new one beside it?")
    return None


def keyed_edges(fit: RegionFit) -> list[tuple[str, str, int, int]]:
    """(side, the region's edge line, the original line beyond it, that statement's first line) for
    each side where `edge_line_keyed_like_next` doubts: "trail" (before the marker after) or "lead". The lines are
    the heads of whole statements: a statement over several lines (`let x = match y {` ... `};`) is
    compared by its first line, and the original line returned is the last of the original
    statement beyond the span ("trail") or its first ("lead"), so that a reading that replaces it
    replaces all of it (the tree-language twin of the one-line case: Rust lets `x` be bound twice,
    so the file with both statements parses)."""
    o = fit.orig
    sides = []
    if fit.region.marker_after:
        code = [x for x in fit.new_trail if not is_blank(x)]
        beyond = next((j for j in range(fit.end, fit.next_start) if not is_blank(o[j])), None)
        if code and beyond is not None:
            last = statement_down(o, beyond, fit.next_start)
            sides.append(("trail", code[statement_up(code, len(code) - 1, 0)], beyond, last))
    if fit.region.marker_before:
        code = [x for x in fit.new_lead if not is_blank(x)]
        beyond = next((j for j in range(fit.start - 1, max(fit.prev_end, 0) - 1, -1) if not is_blank(o[j])), None)
        if code and beyond is not None:
            head = statement_up(o, beyond, max(fit.prev_end, 0))
            sides.append(("lead", code[0], head, head))
    out = []
    for side, new, key_at, j in sides:
        old = o[key_at]
        key = edge_key(new)
        if key and key == edge_key(old) and new.rstrip() != old.rstrip() and indent_of(new) == indent_of(old) and \
                not is_import_line(new) and sum(1 for x in o if indent_of(x) == indent_of(old) and edge_key(x) == key) == 1:
            out.append((side, new, j, key_at))
    return out


# A statement spans at most this many lines for `statement_up` / `statement_down` (past it: one line).
STATEMENT_REACH = 40


def _balance(line: str) -> int:
    """Brackets a line opens minus those it closes (strings not told apart: a heuristic for edges)."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def statement_up(lines: list[str], last: int, stop: int) -> int:
    """The first line of the statement that ends at `lines[last]`: upwards while brackets that line
    closes are open (`};` back to `let x = if y {`); `last` itself when it closes nothing."""
    need = -_balance(lines[last])
    j = last
    while need > 0 and j - 1 >= stop and last - j < STATEMENT_REACH:
        j -= 1
        need -= _balance(lines[j])
    return j if need <= 0 else last


def statement_down(lines: list[str], first: int, stop: int) -> int:
    """The last line of the statement that starts at `lines[first]`: downwards while brackets it
    opens are open; `first` itself when it opens nothing."""
    need = _balance(lines[first])
    j = first
    while need > 0 and j + 1 < stop and j - first < STATEMENT_REACH:
        j += 1
        need += _balance(lines[j])
    return j if need <= 0 else first


def edge_key(line: str) -> str:
    """The key a line sets, for `edge_line_keyed_like_next`: `line_key`, or an instruction's
    upper-case first word (`FROM`, `RUN`); "" for trivial keys."""
    key = line_key(line)
    first = line.split()[0] if line.split() else ""
    if " " in key and first.isupper() and first.isalpha():
        key = first
    return "" if len(key) < 2 or is_trivial(key) or is_blank(line) else key


def new_definition_before_closer(fit: RegionFit) -> str | None:
    """New definitions next to a marker followed only by a closing bracket: before or after the
    elided members? (Statements keep the order the snippet shows; a member's place is convention.)"""
    if any(not is_blank(x) for x in fit.new_trail) and fit.region.marker_after and fit.next_region is not None:
        nxt = [x.strip() for x in fit.next_region.lines if not is_blank(x)]
        if nxt and all(x in CLOSERS for x in nxt) and defines_something(fit.new_trail, fit.lang):
            return (f"region {fit.i + 1} ends with new lines next to a marker that is followed only "
                    "by a closing bracket: they could go before or after the elided code")
    return None


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
