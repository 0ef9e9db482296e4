"""A region's edge lines (before its first / after its last anchor): which original lines they replace.

New lines at a region's edge either are inserted next to the anchor or replace original lines there
(an edited first/last line, the blank lines around a marker). These walks decide which.
"""

from __future__ import annotations

from fastapply.merge.text import CLOSERS, indent_of, is_blank, is_trivial, same_subject, similar


def _matches(x: str, o: str) -> str | None:
    """How a snippet line pairs with an original line: 'blank', 'weak' (an equal trivial line such as
    `}`), 'strong' (an equal line, or an edited version of it), or None."""
    if is_blank(x) or is_blank(o):
        return "blank" if is_blank(x) and is_blank(o) else None
    if x.rstrip() == o.rstrip():
        return "weak" if is_trivial(x) else "strong"
    return "strong" if same_subject(x, o) else None


def _consume(new: list[str], orig: list[str], begin: int, stop: int, step: int) -> tuple[int, int]:
    """Pair a region's edge lines (beyond its anchors) with the original lines next to the anchor,
    walking away from it (step -1: upwards from begin-1; +1: downwards from begin). Each original
    line must pair with a snippet line (in order, snippet lines may be skipped as insertions); the
    paired original lines are replaced. Trivial and blank pairings count only below a real pairing,
    or as blank lines directly at the anchor. Returns (boundary, number of edited-line pairings)."""
    order = list(range(len(new) - 1, -1, -1)) if step < 0 else list(range(len(new)))
    j = begin - 1 if step < 0 else begin
    k = 0  # position in `order`
    kept_j, fuzzy, kept_fuzzy = j, 0, 0
    kept_k = -1  # position in `order` of the last real pairing
    adjacent = True  # still in the run of blank pairings right at the anchor
    while k < len(order) and (j >= stop if step < 0 else j < stop):
        found = None
        for kk in range(k, len(order)):
            kind = _matches(new[order[kk]], orig[j])
            if kind == "strong" and step > 0 and _inside_skipped_opener(new[kk], new[k:kk], orig[j]):
                break  # (the walk ends at its last real pairing; walking down, order[i] == i)
            if kind:
                found = (kk, kind)
                break
            if adjacent and is_blank(orig[j]):
                break
        if found is None:
            break
        kk, kind = found
        if kind == "blank" and adjacent and kk == k:
            kept_j = j + step
        else:
            adjacent = False
        if kind == "strong":
            if new[order[kk]].rstrip() != orig[j].rstrip():
                fuzzy += 1
            kept_j, kept_fuzzy, kept_k = j + step, fuzzy, kk
        k = kk + 1
        j += step
    boundary = kept_j + 1 if step < 0 else kept_j
    if step > 0 and kept_k >= 0:
        boundary += _blank_before_new_closer([new[i] for i in order[kept_k + 1:]], orig, boundary, stop)
    # blank lines at the far end of the snippet's edge (right after/before a marker) stand for the
    # original's blank lines there, not for new ones
    far = 0
    while far < len(order) and is_blank(new[order[len(order) - 1 - far]]):
        far += 1
    if far < len(order):
        while far > 0:
            o = boundary - 1 if step < 0 else boundary
            if not (stop <= o if step < 0 else o < stop) or not is_blank(orig[o]):
                break
            boundary += step
            far -= 1
    return boundary, kept_fuzzy


def _inside_skipped_opener(x: str, skipped: list[str], o: str) -> bool:
    """An edited line `x` (like original `o`, not equal) that stands inside a block a line the walk
    skipped as new opens (`} catch (e) {` / `throw e;`, the end of a wrap, after its wrapped run):
    the new block's own line, not an edit of the original line after the run (`throw err`)."""
    if x.strip() == o.strip():  # (the same line re-indented: a wrap's own reading, see wrap.py)
        return False
    depth = len(indent_of(x))
    return any(y.rstrip().endswith(("{", ":")) and len(indent_of(y)) < depth for y in skipped)


def _blank_before_new_closer(rest: list[str], orig: list[str], at: int, stop: int) -> int:
    """How many of the original's blank lines at `at` (right after the edge's last real pairing) the
    snippet's `rest` (its edge lines after that pairing) moves inside a block it closes: `rest` is
    blank lines, then only closers the original does not have there (`}` of a new block wrapped round
    the paired lines). The blank line is then the wrapped code's own, not a new one beside it."""
    n = 0
    while n < len(rest) and is_blank(rest[n]):
        n += 1
    closers = rest[n:]
    if not n or not closers or any(x.strip() not in CLOSERS for x in closers) or at + n > stop or \
            any(not is_blank(x) for x in orig[at:at + n]):
        return 0
    if at + n < stop and orig[at + n].strip() == closers[0].strip():
        return 0  # the original's own closer follows: nothing new closes here
    return n


def _contiguous(new: list[str], orig: list[str], begin: int, stop: int, step: int) -> tuple[int, int]:
    """The plain walk: pair edge lines with adjacent original lines while they are equal, blank or
    similar (an edited first/last line of a region that has no context on that side)."""
    order = list(range(len(new) - 1, -1, -1)) if step < 0 else list(range(len(new)))
    j = begin - 1 if step < 0 else begin
    fuzzy = 0
    for k in order:
        if not (j >= stop if step < 0 else j < stop):
            break
        x, o = new[k], orig[j]
        if (is_blank(x) and is_blank(o)) or x.rstrip() == o.rstrip():
            pass
        elif not is_blank(x) and not is_blank(o) and not is_trivial(o) and similar(x, o):
            fuzzy += 1
        else:
            break
        j += step
    return (j + 1 if step < 0 else j), fuzzy


def _best_consume(new, orig, begin, stop, step) -> tuple[int, int]:
    b, f = _consume(new, orig, begin, stop, step)
    lo, hi = (b, begin) if step < 0 else (begin, b)
    if any(not is_blank(x) for x in orig[lo:hi]):
        return b, f
    b2, f2 = _contiguous(new, orig, begin, stop, step)
    lo2, hi2 = (b2, begin) if step < 0 else (begin, b2)
    return (b2, f2) if any(not is_blank(x) for x in orig[lo2:hi2]) else (b, f)


def consume_back(new: list[str], orig: list[str], hi: int, lo: int) -> tuple[int, int]:
    return _best_consume(new, orig, hi, lo, -1)


def consume_forward(new: list[str], orig: list[str], lo: int, hi: int) -> tuple[int, int]:
    return _best_consume(new, orig, lo, hi, 1)

