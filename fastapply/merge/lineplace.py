"""Assemble a merged file from line-anchored regions (see anchor.py for how they are placed)."""

from __future__ import annotations

from dataclasses import dataclass

from fastapply.merge.anchor import OriginalIndex, Region, order_regions, place_region
from fastapply.merge.text import is_blank, is_trivial, same_subject, similar

AMBIGUITY = 4  # an alternative placement this close in cost, explaining as many lines, is a tie
CLOSERS = frozenset({"}", "};", "},", ")", ");", "]", "];", "})", "});", "end"})


@dataclass
class LineMerge:
    lines: list[str] | None
    reasons: list[str]
    margin: int = 0
    fuzzy: int = 0  # edge lines matched by similarity rather than equality
    reaches_end: bool = False  # the last region replaces the end of the file


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
    adjacent = True  # still in the run of blank pairings right at the anchor
    while k < len(order) and (j >= stop if step < 0 else j < stop):
        found = None
        for kk in range(k, len(order)):
            kind = _matches(new[order[kk]], orig[j])
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
            kept_j, kept_fuzzy = j + step, fuzzy
        k = kk + 1
        j += step
    boundary = kept_j + 1 if step < 0 else kept_j
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


def _consume_back(new: list[str], orig: list[str], hi: int, lo: int) -> tuple[int, int]:
    return _best_consume(new, orig, hi, lo, -1)


def _consume_forward(new: list[str], orig: list[str], lo: int, hi: int) -> tuple[int, int]:
    return _best_consume(new, orig, lo, hi, 1)


def _bracket_delta(line: str) -> int:
    return sum(line.count(c) for c in "{([") - sum(line.count(c) for c in "})]")


def _place_closers(lines: list[str], orig: list[str], lo: int, hi: int) -> tuple[int, int, list[str]] | None:
    """A region of closing brackets only (`}` after `// ... existing code ...`): it closes what the
    snippet opened before the marker, i.e. the first original line after the previous region that
    closes a bracket opened before it."""
    body = [x for x in lines if not is_blank(x)]
    if not body or not all(x.strip() in CLOSERS for x in body):
        return None
    depth = 0
    for j in range(lo, hi):
        depth += _bracket_delta(orig[j])
        if depth < 0:
            if orig[j].strip() != body[0].strip():
                return None
            k = j
            for x in body[1:]:
                k += 1
                if k >= hi or orig[k].strip() != x.strip():
                    return None
            first = next(i for i, x in enumerate(lines) if not is_blank(x))
            return j, k + 1, [orig[t] for t in range(j, k + 1)] + lines[first + len(body):]
    return None


def _place_by_subject(lines: list[str], orig: list[str], lo: int, hi: int) -> tuple[int, int, list[str]] | None:
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


def _defines_something(lines: list[str], lang: str | None) -> bool:
    """Whether new lines contain a whole definition (a method, a function). Statements keep the
    order the snippet shows; where a new member goes relative to elided members is a matter of
    convention, so that case is refused. Without a grammar, assume it does."""
    from fastapply.merge.text import dedent
    from fastapply.merge.tree import parse_definitions

    body = [x for x in lines if not is_blank(x)]
    while body and body[0].strip() in CLOSERS:
        body.pop(0)
    if not body:
        return False
    if lang is None:
        return True
    found = parse_definitions(dedent(body)[0], lang)
    return found is None or bool(found)


def _run(lines: list[str], blank: bool) -> int:
    """Length of the leading run of blank lines."""
    n = 0
    while n < len(lines) and is_blank(lines[n]) == blank:
        n += 1
    return n


def _weak_edge(c, orig: list[str], lo: int, hi: int) -> str | None:
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
    if c.matched >= c.last - c.first + 1:
        return None  # the whole region is context: nothing is edited next to it
    keys = [x.rstrip() for x in orig]
    near = 2  # a reader would take "these few lines were deleted too" as a plausible reading
    if head:
        n = len(head)
        for t in range(max(lo, c.start - n - near), c.start):
            if keys[t:t + n] == head:
                return (f"its first context lines ({' / '.join(x.strip() for x in head)[:60]}) also occur at line "
                        f"{t + 1}, just above: the edit may also delete the lines in between")
    if tail:
        n = len(tail)
        end0 = c.end - n + 1
        for t in range(end0 + 1, min(hi - n + 1, c.end + 1 + near + 1)):
            if keys[t:t + n] == tail:
                return (f"its last context lines ({' / '.join(x.strip() for x in tail)[:60]}) also occur at line "
                        f"{t + 1}, just below: the edit may also delete the lines in between")
    return None


def merge_lines(regions: list[Region], orig: list[str], partial_ok: bool = False,
                lang: str | None = None) -> LineMerge:
    """Place regions and splice them into orig. partial_ok: a marker-free snippet, whose unmentioned
    head and tail stay; with markers, a missing leading/trailing marker leaves the head/tail's fate open."""
    if not regions:
        return LineMerge(None, ["the snippet has no content besides markers"])
    idx = OriginalIndex(orig)
    for r in regions:
        r.candidates = place_region(r, idx)
    choice, margin, error = order_regions(regions)
    if error:
        return LineMerge(None, [error])
    spans: list[tuple[int, int, list[str]]] = []  # (start, end exclusive, replacement)
    fuzzy_total = 0
    n = len(regions)
    for i, (r, c) in enumerate(zip(regions, choice)):
        prev_end = spans[-1][1] if spans else 0
        next_start = next((choice[j].start for j in range(i + 1, n) if choice[j] is not None), len(orig))
        if c is None and r.marker_before:
            closed = _place_closers(r.lines, orig, prev_end, next_start)
            if closed is not None:
                spans.append(closed)
                continue
        if c is None:
            if i == 0 and not r.marker_before:
                end, fuzzy = _consume_forward(r.lines, orig, 0, next_start)
                if fuzzy == 0:
                    return LineMerge(None, [f"region {i + 1} of the snippet matches nothing in the original"])
                spans.append((0, end, list(r.lines)))
                fuzzy_total += fuzzy
                continue
            if i == n - 1 and not r.marker_after:
                start, fuzzy = _consume_back(r.lines, orig, len(orig), prev_end)
                if fuzzy == 0:
                    return LineMerge(None, [f"region {i + 1} of the snippet matches nothing in the original"])
                spans.append((start, len(orig), list(r.lines)))
                fuzzy_total += fuzzy
                continue
            placed = _place_by_subject(r.lines, orig, prev_end, next_start)
            if placed is None:
                return LineMerge(None, [f"region {i + 1} of the snippet matches nothing in the original "
                                        f"(starts {r.lines[0].strip()[:60]!r})"])
            spans.append(placed)
            fuzzy_total += 1
            continue
        if c.context < r.best_context:
            return LineMerge(None, [f"region {i + 1}: the cheapest placement (line {c.start + 1}) is not the one that "
                                    "keeps the snippet's context lines together; refusing to pick"])
        for alt in r.candidates:
            if alt.start != c.start and alt.end != c.end and alt.matched >= c.matched and \
                    alt.cost <= c.cost + AMBIGUITY and prev_end <= alt.start and alt.end < next_start:
                return LineMerge(None, [f"region {i + 1} fits at line {c.start + 1} and at line {alt.start + 1} alike "
                                        "(same lines explained; they differ only in what the edit would delete)"])
        weak = _weak_edge(c, orig, prev_end, next_start)
        if weak:
            return LineMerge(None, [f"region {i + 1}: {weak}"])
        lead, trail = c.lines[:c.first], c.lines[c.last + 1:]
        start, f1 = _consume_back(lead, orig, c.start, prev_end)
        end, f2 = _consume_forward(trail, orig, c.end + 1, next_start)
        fuzzy_total += f1 + f2
        # Blank lines at a region's edge (next to a marker) that the original does not have there:
        # new blank lines, or context for a deletion next to them? Refuse.
        if r.marker_before and start > prev_end and not is_blank(orig[start - 1]) and \
                _run(lead, blank=True) > _run(orig[start:c.start], blank=True):
            return LineMerge(None, [f"region {i + 1} starts with blank lines the original does not have there: "
                                    "new blank lines, or a deletion right after them?"])
        if r.marker_after and end < next_start and not is_blank(orig[end]) and \
                _run(trail[::-1], blank=True) > _run(orig[c.end + 1:end][::-1], blank=True):
            return LineMerge(None, [f"region {i + 1} ends with blank lines the original does not have there: "
                                    "new blank lines, or a deletion right before them?"])
        new_trail = trail[end - (c.end + 1):]
        if any(not is_blank(x) for x in new_trail) and r.marker_after and i + 1 < n:
            nxt = [x.strip() for x in regions[i + 1].lines if not is_blank(x)]
            if nxt and all(x in CLOSERS for x in nxt) and _defines_something(new_trail, lang):
                return LineMerge(None, [f"region {i + 1} ends with new lines next to a marker that is followed only "
                                        "by a closing bracket: they could go before or after the elided code"])
        if c.lines[c.first] != r.lines[c.first]:  # re-indented: a hand-pasted snippet
            kept = set(x.rstrip() for x in c.lines)
            span = set(x.rstrip() for x in orig[start:end])
            region_dels = sum(1 for x in orig[start:end] if not is_blank(x) and x.rstrip() not in kept)
            region_new = sum(1 for x in c.lines if not is_blank(x) and x.rstrip() not in span)
            if region_dels > region_new:
                return LineMerge(None, [f"region {i + 1} is pasted at another indentation and is shorter than the "
                                        "code it replaces: abbreviation or deletion?"])
        spans.append((start, end, list(c.lines)))
    if not partial_ok and spans:
        if not regions[0].marker_before and any(not is_blank(x) for x in orig[:spans[0][0]]):
            return LineMerge(None, ["the snippet has markers but none before its first region, which is not at the "
                                    "top of the file: keep or delete the lines above it?"])
        if not regions[-1].marker_after and any(not is_blank(x) for x in orig[spans[-1][1]:]):
            return LineMerge(None, ["the snippet has markers but none after its last region, which is not at the "
                                    "end of the file: keep or delete the lines below it?"])
    out: list[str] = []
    pos = 0
    for start, end, repl in spans:
        if start < pos:
            return LineMerge(None, ["regions of the snippet overlap in the original"])
        out.extend(orig[pos:start])
        out.extend(repl)
        pos = end
    out.extend(orig[pos:])
    return LineMerge(out, [], margin, fuzzy_total, reaches_end=bool(spans) and spans[-1][1] == len(orig)
                     and not regions[-1].marker_after)
