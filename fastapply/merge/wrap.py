"""The wrap reading of a marker indented deeper than the code it stands for.

    def f(url):                    An agent wraps code in a new block and elides part of it:
        a = 1                      the marker sits one level deeper than the code it stands for
        if enabled:                (`b = 2`), i.e. it means "this code, re-indented into the
            # ... existing code ...    new block". The shown lines after it (`c = 3`) are
            c = 3                  re-indented too.
        return a

The reading: for placement, the shown re-indented lines are put back at the new block opener's
level (where the wrapped code was), the regions are placed as usual, and then the shown lines get
their snippet indentation back and the elided lines between the two regions are re-indented by the
same step. It applies only when the original's elided code starts at the opener's level and stays
at or below it; otherwise the caller refuses (see checks.broken_indentation_seam).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fastapply.merge.anchor import Region
from fastapply.merge.seams import opens_block
from fastapply.merge.text import CLOSERS, indent_of, is_blank, occurrences


@dataclass(frozen=True)
class Wrap:
    """One marker read as wrapped code: after region `i`, the step `extra` added to the elided code."""

    i: int
    level: str  # indentation of the new block's opener (and of the wrapped code in the original)
    extra: str  # the marker's indentation beyond `level`


def shown_wrap(lines: list[str], orig: list[str], lang: str | None) -> tuple[int, int, str] | None:
    """A block opener in a region whose next lines are original lines one level deeper than the
    original has them (and never has them) (`if enabled:` / `    compressor = ...`): code wrapped in the block, shown.
    Returns (opener index, end of the wrapped run, the step) or None."""
    where: dict[str, set[str]] = {}
    for x in orig:
        if not is_blank(x):
            where.setdefault(x.strip(), set()).add(indent_of(x))
    for k, line in enumerate(lines):
        if is_blank(line) or not opens_block(line, lang):
            continue
        level = indent_of(line)
        nxt = next((j for j in range(k + 1, len(lines)) if not is_blank(lines[j])), None)
        if nxt is None:
            return None
        ind = indent_of(lines[nxt])
        at = where.get(lines[nxt].strip(), set())
        if not (len(ind) > len(level) and ind.startswith(level) and level in at):
            continue
        end = nxt
        while end < len(lines) and (is_blank(lines[end]) or len(indent_of(lines[end])) >= len(ind)):
            end += 1
        # the first wrapped line standing at the new depth too (by chance, elsewhere) is no counter-
        # sign when the opener is new and the whole run stands in the original one level out, and not
        # as written (an original opener re-indented with its body is no wrap: wrap_marker moves both)
        if ind not in at or not _opens_it_in_original(line, lines[nxt], orig) and \
                _stands_lowered(lines[nxt:end], ind[len(level):], orig):
            return k, end, ind[len(level):]
    return None


def _opens_it_in_original(opener: str, first: str, orig: list[str]) -> bool:
    """The original has `opener` (indentation aside) as the code line right before `first`: an
    original block re-indented with its body, not a new one (a common opener such as `try {`
    elsewhere in the file says nothing)."""
    code = [x.strip() for x in orig if not is_blank(x)]
    return any(code[j] == first.strip() and code[j - 1] == opener.strip() for j in range(1, len(code)))


def _stands_lowered(run: list[str], step: str, orig: list[str]) -> bool:
    """The run's lines (two of them at least, blank lines aside), with `step` taken off, are
    consecutive lines of the original, and as written they are not."""
    shown = [x.rstrip() for x in run if not is_blank(x)]
    if len(shown) < 2 or not all(x.startswith(step) for x in shown):
        return False
    keys = [x.rstrip() for x in orig if not is_blank(x)]
    return occurrences(keys, [x[len(step):] for x in shown]) > 0 and not occurrences(keys, shown)


def wrap_reading(regions: list[Region], orig: list[str], lang: str | None,
                 final: bool = False) -> tuple[list[Region], list[Wrap]] | None:
    """Regions to place under the wrap reading (their re-indented lines put back) and the wraps, or
    None when no marker or region reads as wrapped code. `final`: also a marker that ends the
    snippet inside a new block, which wraps "the rest of the block" or less: the snippet does not
    say how far, so only the readings take it (lineplace.line_readings), never the merge itself."""
    wraps: list[Wrap] = []
    lowered = list(regions)
    for i, r in enumerate(regions):  # wraps shown whole inside a region
        shown = shown_wrap(r.lines, orig, lang)
        if shown is not None and shown[1] >= len(r.lines) and r.marker_after and \
                len(r.after_indent or "") > len(indent_of(r.lines[shown[0]])):
            shown = None  # the block goes on into the elided code: a marker wrap (below), or none
        if shown is not None:
            k, end, extra = shown
            lines = list(r.lines)
            lines[k + 1:end] = [x[len(extra):] if x.startswith(extra) else x for x in lines[k + 1:end]]
            lowered[i] = replace(r, lines=lines, candidates=[], new_opener=k)
    orig_keys = {x.rstrip() for x in orig}
    for i in range(len(regions) - 1):
        r, nxt = regions[i], regions[i + 1]
        if not r.marker_after or r.after_indent is None or nxt.before_indent != r.after_indent:
            continue
        w = _wrap_after(i, r, orig_keys, lang)
        if w is None:
            continue
        wraps.append(w)
        # (a region inside a marker wrap is re-indented whole: an opener among its lines is original
        # code, one level in, not a new block of its own)
        lowered[i] = replace(lowered[i], lines=_lower_tail(lowered[i].lines, w), candidates=[], new_opener=None)
        lowered[i + 1] = replace(lowered[i + 1], lines=_lower_head(lowered[i + 1].lines, w), candidates=[],
                                 new_opener=None)
    last = len(regions) - 1
    r = regions[last]
    if final and r.marker_after and r.after_indent is not None and \
            (w := _wrap_after(last, r, orig_keys, lang)) is not None and _opener_is_new(r.lines, w, orig_keys):
        # the snippet ends inside a new block: the marker stands for the rest of the block it opens in
        # (an original opener shown with its body elided, `func TestRpad(t *testing.T) {`, is no wrap)
        wraps.append(w)
        lowered[last] = replace(lowered[last], lines=_lower_tail(lowered[last].lines, w), candidates=[],
                                new_opener=None)
    changed = wraps or any(a.lines is not b.lines for a, b in zip(lowered, regions))
    return (lowered, wraps) if changed else None


def marker_wrap(lines: list[str], marker: str, orig_keys: set[str], lang: str | None) -> tuple[str, str] | None:
    """(opener level, step) when a region (lines) ends in a block opener, then perhaps lines inside
    it, and the marker after it (indented `marker`) sits inside that block, deeper than the opener.
    The lines shown inside must be mostly new or re-indented (not original lines as they stand, which
    a common line such as `return None` may be by chance), unless the opener itself is new: an
    original opener shown with its own body (a class, then a marker for what follows) is no wrap."""
    inside = as_is = 0
    for line in reversed(lines):
        if is_blank(line):
            continue
        ind = indent_of(line)
        if ind.startswith(marker) and len(ind) >= len(marker):
            inside += 1  # a shown line inside the new block
            as_is += line.rstrip() in orig_keys
            continue
        new_opener = line.rstrip() not in orig_keys  # then lines shown as they stand are there by chance
        if opens_block(line, lang) and marker.startswith(ind) and len(marker) > len(ind) and \
                (new_opener or 2 * as_is <= inside):
            if new_opener:
                ind = _outer_new_openers(lines, line, ind, orig_keys, lang)
            return ind, marker[len(ind):]
        return None
    return None


def _outer_new_openers(lines: list[str], inner: str, ind: str, orig_keys: set[str], lang: str | None) -> str:
    """The level of the outermost of new openers nested right above each other around the marker
    (`for attempt in range(3):` / `try:` / marker): the code the marker stands for sits at the
    outer one's level, and the step covers them all. `inner` is the innermost opener, at `ind`."""
    k = max(j for j, x in enumerate(lines) if x is inner)
    while True:
        k -= 1
        while k >= 0 and is_blank(lines[k]):
            k -= 1
        if k < 0:
            return ind
        line = lines[k]
        outer = indent_of(line)
        if line.rstrip() in orig_keys or not opens_block(line, lang) or \
                not (ind.startswith(outer) and len(ind) > len(outer)):
            return ind
        ind = outer


def _opener_is_new(lines: list[str], w: Wrap, orig_keys: set[str]) -> bool:
    """The last line at the wrap's level (its opener) is not an original line as written."""
    opener = next((x for x in reversed(lines) if not is_blank(x) and indent_of(x) == w.level), None)
    return opener is not None and opener.rstrip() not in orig_keys


def _wrap_after(i: int, r: Region, orig_keys: set[str], lang: str | None) -> Wrap | None:
    found = marker_wrap(r.lines, r.after_indent or "", orig_keys, lang)
    return Wrap(i, found[0], found[1]) if found else None


def _lower(line: str, w: Wrap) -> str:
    return line[len(w.extra):] if line.startswith(w.level + w.extra) else line


def _lower_tail(lines: list[str], w: Wrap) -> list[str]:
    """The region's last lines inside the new block, put back at the opener's level."""
    out = list(lines)
    k = len(out) - 1
    while k >= 0 and (is_blank(out[k]) or out[k].startswith(w.level + w.extra)):
        out[k] = _lower(out[k], w)
        k -= 1
    return out


def _lower_head(lines: list[str], w: Wrap) -> list[str]:
    """The next region's first lines inside the new block, put back at the opener's level."""
    out = list(lines)
    k = 0
    while k < len(out) and (is_blank(out[k]) or out[k].startswith(w.level + w.extra)):
        out[k] = _lower(out[k], w)
        k += 1
    return out


def apply_wraps(spans: list[tuple[int, int, list[str]]], regions: list[Region], lowered: list[Region],
                wraps: list[Wrap], orig: list[str], final_end: str = "block",
                beside: frozenset[int] = frozenset()) -> list[tuple[int, int, list[str]]] | str:
    """The spans placed under the wrap reading, with the snippet's own lines back in place and the
    elided code of each wrap re-indented (appended to the span before it; a final wrap's reaches the
    end of its block, or its last statement with `final_end="before_last"`); or why the reading does
    not fit."""
    out = list(spans)
    for i, (start, end, repl) in enumerate(spans):
        if lowered[i].lines is regions[i].lines:
            continue
        n = len(repl)  # (a reading may leave out the region's blank lines before its marker)
        if repl != lowered[i].lines[:n] or any(not is_blank(x) for x in lowered[i].lines[n:]):
            # placed with a shift or extended: not the plain reading
            return f"region {i + 1}: the wrapped lines could not be placed at their old indentation"
        out[i] = (start, end, list(regions[i].lines[:n]))
    for w in wraps:
        start, lo, repl = out[w.i]
        if w.i + 1 < len(out):
            hi = out[w.i + 1][0]
        else:  # a final wrap: the rest of the block, or (final_end "before_last") all but its last statement
            hi = block_end(orig, lo, w.level)
            if final_end == "before_last":
                hi = last_statement(orig, lo, hi, w.level) or lo
        code = [x for x in orig[lo:hi] if not is_blank(x)]
        if not code or indent_of(code[0]) != w.level or not all(x.startswith(w.level) for x in code):
            return (f"the marker after region {w.i + 1} is indented deeper than the code it stands for, "
                    "which does not sit at the new block's level: cannot re-indent it")
        elided = orig[lo:hi]
        # (`beside`: wraps whose next region is read as all new, its lines beside the elided code's)
        shown = [] if w.i + 1 == len(regions) or w.i in beside else \
            _shown_after_closers(regions[w.i + 1].lines, orig[hi] if hi < len(orig) else None)
        if shown and [x.rstrip() for x in elided[-len(shown):]] == [x.rstrip() for x in shown]:
            # the snippet shows the elided code's last lines after the new block's closer (a blank
            # line, a `//`): they are those original lines, outside the block, not copies inside it
            elided = elided[:-len(shown)]
        if w.i + 1 < len(regions):
            elided = _separator_shown_after(elided, regions[w.i + 1].lines, w)
        # the elided code joins region i's span, re-indented: spans stay one per region
        out[w.i] = (start, hi, repl + [w.extra + x if not is_blank(x) else x for x in elided])
    return out


def block_end(orig: list[str], lo: int, level: str, hi: int | None = None) -> int:
    """Where the code from `lo` at `level` (or deeper) ends: after its last line before the first
    line indented less (the enclosing block's end; a closer, a dedent), blank lines after it left out."""
    hi = len(orig) if hi is None else hi
    end = lo
    for j in range(lo, hi):
        if is_blank(orig[j]):
            continue
        if len(indent_of(orig[j])) < len(level) or not orig[j].startswith(level):
            break
        end = j + 1
    return end


def last_statement(orig: list[str], lo: int, end: int, level: str) -> int | None:
    """The start of the last line at exactly `level` in orig[lo:end] (a wrap that leaves the block's
    last statement, `return rows`, after the new block), or None."""
    for j in range(end - 1, lo - 1, -1):
        if not is_blank(orig[j]) and indent_of(orig[j]) == level:
            return j
    return None


def _separator_shown_after(elided: list[str], nxt: list[str], w: Wrap) -> list[str]:
    """The wrapped code without its trailing blank lines when the next region goes on after the new
    block with code of its own at the block's level and then a run of blank lines as long: that run
    is the separator the wrapped code's blank lines were (`return None`, two blank lines, the next
    `def`), not a second one."""
    k = 0
    while k < len(elided) and is_blank(elided[len(elided) - 1 - k]):
        k += 1
    first = next((x for x in nxt if not is_blank(x)), None)
    if not k or first is None or indent_of(first) != w.level or is_blank(nxt[0]):
        return elided
    run = best = 0
    for x in nxt:
        run = run + 1 if is_blank(x) else 0
        best = max(best, run)
    return elided[:len(elided) - k] if best >= k else elided


def _shown_after_closers(lines: list[str], anchor: str | None) -> list[str]:
    """The lines a region shows after its leading closing brackets (`}`) and before the line it is
    placed on (`anchor`, the original line where its span starts); [] without closers or anchor."""
    k = 0
    while k < len(lines) and lines[k].strip() in CLOSERS:
        k += 1
    if k == 0 or anchor is None:
        return []
    end = next((t for t in range(k, len(lines)) if lines[t].rstrip() == anchor.rstrip()), None)
    return lines[k:end] if end is not None else []
