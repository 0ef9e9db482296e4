"""Placing a region none of whose lines anchors it: closing brackets, an edited head or tail of the
file, one edited line, or a definition's header or final `return` restated."""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapply.merge.defs import Definition, name_row, names_header, restates_header
from fastapply.merge.edge_lines import consume_back, consume_forward
from fastapply.merge.text import CLOSERS, indent_of, is_blank, is_trivial, same_subject

def bracket_delta(line: str) -> int:
    return sum(line.count(c) for c in "{([") - sum(line.count(c) for c in "})]")


def place_closers(lines: list[str], orig: list[str], lo: int, hi: int) -> tuple[int, int, list[str]] | None:
    """A region of closing brackets only (`}` after `// ... existing code ...`): it closes what the
    snippet opened before the marker, i.e. the first original line after the previous region that
    closes a bracket opened before it."""
    body = [x for x in lines if not is_blank(x)]
    if not body or not all(x.strip() in CLOSERS for x in body):
        return None
    depth = 0
    for j in range(lo, hi):
        depth += bracket_delta(orig[j])
        if depth < 0:
            if orig[j].strip() != body[0].strip():
                return None
            k = j
            for x in body[1:]:
                k += 1
                if k >= hi or orig[k].strip() != x.strip():
                    return None
            first = next(i for i, x in enumerate(lines) if not is_blank(x))
            after = lines[first + len(body):]  # blank lines (the body is all closers)
            # the blank lines after the closers stand for the original's blank lines there, as many
            # as there are: `}`, a blank line, then a marker keeps the file's one blank line
            paired = 0
            while paired < len(after) and k + 1 + paired < hi and is_blank(orig[k + 1 + paired]):
                paired += 1
            return j, k + 1 + paired, [orig[t] for t in range(j, k + 1)] + after
    return None


def place_by_subject(lines: list[str], orig: list[str], lo: int, hi: int) -> tuple[int, int, list[str]] | None:
    """A region none of whose lines occur in the original (an edited line between markers, such as
    `FEATURE_05: true,`): its first line must be a version of exactly one original line between the
    neighbouring regions (same key, similar text); following lines that equal the next original lines
    replace them, the others are insertions."""
    body = [x for x in lines if not is_blank(x)]
    if not body:
        return None
    first = next(i for i, x in enumerate(lines) if not is_blank(x))
    hits = [j for j in range(lo, hi) if same_subject(lines[first], orig[j])]
    if len(hits) != 1:
        return None
    start = j = hits[0]
    j += 1
    for x in lines[first + 1:]:
        if j < hi and (x.rstrip() == orig[j].rstrip() or (is_blank(x) and is_blank(orig[j]))
                       or same_subject(x, orig[j])):
            j += 1
    return start, j, lines[first:]


def place_unanchored(i: int, lines: list[str], marker_before: bool, marker_after: bool, last: bool,
                     orig: list[str], lo: int, hi: int, defs: Callable[[], list[Definition]] = list,
                     after_indent: str | None = None) -> tuple[tuple[int, int, list[str]], int] | str:
    """Place region `i` (its `lines`), which has no anchored placement, between original lines lo
    and hi: ((start, end exclusive, replacement), edge lines matched by similarity), or the reason
    it cannot be placed. `last`: it is the snippet's last region. `defs`: the original's
    definitions, flattened (computed when needed); `after_indent`: the marker after it's (used
    only when there is one)."""
    placed = _place_unanchored(i, lines, marker_before, marker_after, last, orig, lo, hi, defs, after_indent)
    if isinstance(placed, str):
        return placed
    copy = _reindented_copy_kept(lines, orig, lo, hi, placed[0])
    if copy is not None:
        return (f"region {i + 1} shows `{copy.strip()[:50]}`, which the original has at another indentation and "
                "would keep beside it: code wrapped in or taken out of a block, which no line of the region anchors")
    return placed


def _reindented_copy_kept(lines: list[str], orig: list[str], lo: int, hi: int,
                          span: tuple[int, int, list[str]]) -> str | None:
    """A region line (not a bracket) that is, at another indentation, an original line between the
    neighbouring regions that the placement keeps (outside its span)."""
    start, end, _ = span
    kept: dict[str, set[str]] = {}
    for j in list(range(lo, start)) + list(range(end, hi)):
        if not is_blank(orig[j]):
            kept.setdefault(orig[j].strip(), set()).add(orig[j].rstrip())
    for x in lines:
        if not is_trivial(x) and x.strip() in kept and x.rstrip() not in kept[x.strip()]:
            return x
    return None


def _place_unanchored(i: int, lines: list[str], marker_before: bool, marker_after: bool, last: bool,
                      orig: list[str], lo: int, hi: int, defs: Callable[[], list[Definition]],
                      after_indent: str | None) -> tuple[tuple[int, int, list[str]], int] | str:
    if marker_before:
        closed = place_closers(lines, orig, lo, hi)
        if closed is not None:
            return closed, 0
    if i == 0 and not marker_before:  # the file's head, edited
        end, fuzzy = consume_forward(lines, orig, 0, hi)
        if fuzzy == 0:
            return f"region {i + 1} of the snippet matches nothing in the original"
        return (0, end, list(lines)), fuzzy
    if last and not marker_after:  # the file's tail, edited
        start, fuzzy = consume_back(lines, orig, len(orig), lo)
        if fuzzy == 0:
            return f"region {i + 1} of the snippet matches nothing in the original"
        return (start, len(orig), list(lines)), fuzzy
    placed = place_by_subject(lines, orig, lo, hi)
    if placed is None:
        placed = restated_header(lines, orig, lo, hi, defs()) or \
            (restated_return(lines, orig, lo, hi, defs(), after_indent if marker_after else None)
             if marker_before else None)
        if placed is not None:
            return placed, 1
    if placed is None:
        return f"region {i + 1} of the snippet matches nothing in the original (starts {lines[0].strip()[:60]!r})"
    # An edited line keeps its depth; one the snippet writes at another depth than the only similar
    # original line is as likely a new line (a lone `for (...) {` opening a new block around elided
    # code), and placing it there would re-indent one line of a block.
    head = placed[2][0]
    if indent_of(head) != indent_of(orig[placed[0]]):
        return (f"region {i + 1}'s first line `{head.strip()[:50]}` is like original line {placed[0] + 1} but at another "
                "indentation: that line edited, or a new one?")
    return placed, 1


def restated_header(lines: list[str], orig: list[str], lo: int, hi: int,
                    defs: list[Definition]) -> tuple[int, int, list[str]] | None:
    """A region whose first line is the header of exactly one original definition between the
    neighbouring regions, edited (`func (m *Mixer) Render() ([]float32, float32) {` for
    `... Render() []float32 {`: a new return type): same name right before its parameters, same
    first word, same indentation. It replaces that header line; the lines after it that equal
    the next original lines replace them, the others are insertions (as `place_by_subject`)."""
    first = next((k for k, x in enumerate(lines) if not is_blank(x)), None)
    if first is None:
        return None
    head = lines[first]
    hits = []
    for d in defs:
        row = name_row(d)
        if lo <= row < hi and restates_header(d, head, orig[row]) and names_header(d, orig[row]):
            hits.append(row)
    if len(set(hits)) != 1:
        return None
    start = j = hits[0]
    j += 1
    for x in lines[first + 1:]:
        if j < hi and (x.rstrip() == orig[j].rstrip() or (is_blank(x) and is_blank(orig[j]))):
            j += 1
    return start, j, lines[first:]


_RETURN = re.compile(r"\s*return\b")


def restated_return(lines: list[str], orig: list[str], lo: int, hi: int, defs: list[Definition],
                    after_indent: str | None = None) -> tuple[int, int, list[str]] | None:
    """A region after a marker that the previous region's definition holds (its header shown
    before the marker), made of a `return` statement and then, at most, that definition's closing
    lines as they stand: the definition's final `return`, edited. A function does not end with
    two returns, so the new one replaces the last statement of the body when that is a `return`
    at the same indentation (and the closing lines pair with the definition's own). Without
    closing lines (Python), the marker after it must be shallower than the `return`, or absent:
    a marker at the body's depth stands for more of the body, and the `return` may be an early one."""
    body = [x for x in lines if not is_blank(x)]
    if not body or not _RETURN.match(body[0]) or lo == 0:
        return None
    inside = [d for d in defs if d.node_start < lo <= d.end + 1 and name_row(d) < lo]
    if not inside:
        return None
    d = min(inside, key=lambda d: d.end - d.start)  # the innermost
    closers = body[1:]
    if not closers and after_indent is not None and len(after_indent) >= len(indent_of(body[0])):
        return None
    end = d.end + 1
    if closers and [x.strip() for x in closers] != [x.strip() for x in orig[d.end - len(closers) + 1:d.end + 1]]:
        return None
    last = d.end - len(closers)  # the body's last line, above the closers shown
    while last >= lo and is_blank(orig[last]):
        last -= 1
    if last < lo or last >= hi or not _RETURN.match(orig[last]) or indent_of(orig[last]) != indent_of(body[0]):
        return None
    first = next(k for k, x in enumerate(lines) if not is_blank(x))
    shown = lines[first:first + len(body)]
    if any(is_blank(x) for x in shown):
        return None  # (a blank line between the return and the closers: not the shape this reads)
    after = lines[first + len(body):]  # blank lines, as in `place_closers`: paired where the original has them
    stop = end if closers else last + 1
    paired = 0
    while paired < len(after) and stop + paired < len(orig) and is_blank(orig[stop + paired]):
        paired += 1
    return last, stop + paired, shown + after
