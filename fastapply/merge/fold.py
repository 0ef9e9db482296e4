"""A wrap whose first lines are shown: fold them into the marker.

    try:                                        An agent wraps a loop in a new block and shows
        for line_no, row in enumerate(reader):  the loop's header (and, with braces, its closer)
            # ... existing code ...             re-indented one level, a marker for the body in
        except csv.Error as exc:                between. The shown lines are the wrapped code's
            raise                               own: the original's lines, one step deeper.

Read line by line, the re-indented header looks like a new opener and the merge refuses (a new
block next to the old one?). Folded, the snippet is `try:` / one marker one level deeper / (the
closer) / `except ...:`, the wrap `wrap.py` reads (the marker stands for the wrapped code,
re-indented). The caller merges the folded snippet and keeps the answer only when every line of
the snippet as written stands in it, in order and as indented (`keeps_snippet_lines`): the fold
changed how the snippet is read, never what it says.

Pure: lines in, lines out.
"""

from __future__ import annotations

from fastapply.merge.seams import opens_block
from fastapply.merge.text import indent_of, is_blank, occurrences


def fold_shown_wrap(upd: list[str], flags: list[bool], orig: list[str], lang: str | None) -> list[str] | None:
    """The snippet with each shown wrap edge folded into its marker, or None when it has none.

    A fold needs, in order: a new opener at indent I (not the line right above the shown code in
    the original); right after it, one or more lines that are a run of the original's lines as
    written at I, shown one step deeper; a marker at least that deep; then, optionally, more such
    lines (the wrapped code's closer or last lines) at that depth or deeper; then a line at I (the
    handler, `} else {`, the block's closer). The shown head and the marker become one marker at
    the step's depth."""
    out: list[str] = []
    i, folded = 0, False
    while i < len(upd):
        fold = _fold_at(i, upd, flags, orig, lang)
        if fold is None:
            out.append(upd[i])
            i += 1
            continue
        end, marker = fold
        out += [upd[i], marker]
        i, folded = end, True
    return out if folded else None


def _fold_at(i: int, upd: list[str], flags: list[bool], orig: list[str], lang: str | None) -> tuple[int, str] | None:
    """(index after the folded lines, the marker line that replaces them) for an opener at i."""
    opener = upd[i]
    if flags[i] or not opens_block(opener, lang) or i + 1 >= len(upd):
        return None
    level, inner = indent_of(opener), indent_of(upd[i + 1])
    if flags[i + 1] or is_blank(upd[i + 1]) or not (inner.startswith(level) and len(inner) > len(level)):
        return None
    step = len(inner) - len(level)
    head, k = _run(upd, flags, i + 1, step, len(inner))
    if not head or k >= len(upd) or not flags[k] or len(indent_of(upd[k])) < len(inner):
        return None
    tail, m = _run(upd, flags, k + 1, step, len(inner))
    if m >= len(upd) or flags[m] or is_blank(upd[m]) or indent_of(upd[m]) != level:
        return None
    if occurrences(orig, head) != 1 or (tail and not occurrences(orig, tail)):
        return None  # (the head must say which code is wrapped: one place in the original)
    at = next(p for p in range(len(orig)) if orig[p:p + len(head)] == head)
    above = next((x for x in reversed(orig[:at]) if not is_blank(x)), None)
    if above is not None and above.rstrip() == opener.rstrip():
        return None  # (the opener stands right above that code already: no new block)
    # (the tail stays: shown after the marker at the wrap's depth, wrap.py lowers it onto the
    # wrapped code's last lines, such as the loop's `}`, which a new closer after the handler
    # would otherwise take)
    return k + 1, inner + upd[k].strip()


def _run(upd: list[str], flags: list[bool], j: int, step: int, depth: int) -> tuple[list[str], int]:
    """The lines from j on, up to a marker, a blank line or a shallower line, `step` deeper than
    their original would stand: (those lines `step` shallower, the index after them; the caller
    checks that the original has them)."""
    out: list[str] = []
    while j < len(upd) and not flags[j] and not is_blank(upd[j]) and len(indent_of(upd[j])) >= depth:
        line = upd[j]
        if line[:step].strip():
            break
        out.append(line[step:])
        j += 1
    return out, j


def keeps_snippet_lines(upd: list[str], flags: list[bool], merged: list[str]) -> bool:
    """Every non-blank, non-marker line of the snippet stands in `merged` as written (indentation
    included), in the snippet's order."""
    k = 0
    for line in merged:
        while k < len(upd) and (flags[k] or is_blank(upd[k])):
            k += 1
        if k < len(upd) and line.rstrip() == upd[k].rstrip():
            k += 1
    while k < len(upd) and (flags[k] or is_blank(upd[k])):
        k += 1
    return k == len(upd)
