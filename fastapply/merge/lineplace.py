"""Assemble a merged file from line-anchored regions (see anchor.py for how they are placed)."""

from __future__ import annotations

from dataclasses import dataclass

from fastapply.merge.anchor import OriginalIndex, Region, order_regions, place_region
from fastapply.merge.doubts import blank_run, defines_something, weak_edge
from fastapply.merge.edges import consume_back, consume_forward
from fastapply.merge.fallback import CLOSERS, place_by_subject, place_closers
from fastapply.merge.text import indent_of, is_blank

AMBIGUITY = 4  # an alternative placement this close in cost, explaining as many lines, is a tie


@dataclass
class LineMerge:
    lines: list[str] | None
    reasons: list[str]
    margin: int = 0
    fuzzy: int = 0  # edge lines matched by similarity rather than equality
    reaches_end: bool = False  # the last region replaces the end of the file
    kept_edges: bool = False  # lines above the first or below the last region kept without a marker


def _echo(left: list[str], orig: list[str], at: int, stop: int, step: int) -> bool:
    """The first non-blank leftover snippet line equals one of the next two original lines."""
    first = next((x for x in left if not is_blank(x)), None)
    if first is None:
        return False
    j = at + step
    for _ in range(2):
        if not (j < stop if step > 0 else j > stop):
            return False
        if orig[j].rstrip() == first.rstrip():
            return True
        j += step
    return False


def _blank_bounded(edge: list[str], orig: list[str], at: int, stop: int, step: int) -> bool:
    """edge (snippet lines from the anchor outwards) is new lines then only blank lines, and the
    original, from `at` outwards, has a short run of 1-2 non-blank lines ending at a blank line."""
    if not edge or not is_blank(edge[-1]):
        return False
    k = len(edge)
    while k > 0 and is_blank(edge[k - 1]):
        k -= 1
    if k == 0:
        return False  # only blank lines: handled by the blank-line checks
    j, run = at, 0
    while (j < stop if step > 0 else j > stop) and not is_blank(orig[j]) and run < 3:
        j += step
        run += 1
    return 0 < run <= 2 and (j < stop if step > 0 else j > stop) and is_blank(orig[j])


def _loose_markers(spans, regions, orig: list[str]) -> bool:
    """Whether the snippet writes its markers loosely: one sits at column 0 although the code it
    stands for starts indented, next to indented snippet code. Such a writer leaves out edge markers
    as carelessly, so an unshown head or tail is elided, not deleted. (A marker indented like the
    first line of the code it stands for gives no such hint.)"""
    def first_code(lines):
        return next((x for x in lines if not is_blank(x)), None)

    for i, ((start, end, _), r) in enumerate(zip(spans, regions)):
        sides = [(r.marker_after, r.after_indent, orig[end:spans[i + 1][0] if i + 1 < len(spans) else len(orig)],
                  first_code(reversed(r.lines)))]
        if i == 0:
            sides.append((r.marker_before, r.before_indent, orig[:start], first_code(r.lines)))
        for has_marker, marker_indent, elided, shown in sides:
            first = first_code(elided)
            if has_marker and marker_indent == "" and first and shown and indent_of(first) and indent_of(shown):
                return True
    return False


def _defined_twice(spans, defs) -> str | None:
    """In a marker-free snippet (which keeps what it does not show), a region that shows the header
    of a definition (unique in the original) while it is placed away from it: the merge would keep
    the old definition and add the region's, defining it twice. defs: the original's definitions."""
    count: dict[str, int] = {}
    for d in defs:
        count[d.header] = count.get(d.header, 0) + 1
    for i, (start, end, repl) in enumerate(spans):
        shown = {x.strip() for x in repl}
        for d in defs:
            if count[d.header] == 1 and d.name in d.header and d.header in shown and not (start <= d.node_start < end):
                return (f"region {i + 1} shows `{d.header[:60]}` but is placed away from it (line {d.node_start + 1}): "
                        "the definition would be there twice")
    return None


def _whole_definitions(spans, regions, orig, defs, lang, may_end_file):
    """Extend each span over the rest of a definition its region restates whole (see complete.py).
    defs: the original's definitions. may_end_file: whether a last region without a marker after it
    ends the file (not in a marker-free snippet, nor with loose markers: what they skip stays)."""
    from fastapply.merge.complete import extend_to_whole_definition

    out = []
    for i, ((start, end, repl), r) in enumerate(zip(spans, regions)):
        limit = spans[i + 1][0] if i + 1 < len(spans) else len(orig)
        ends_file = may_end_file and i == len(spans) - 1 and not r.marker_after
        new_end = extend_to_whole_definition(start, end, repl, r.lines, orig, defs, limit, lang,
                                             r.after_indent if r.marker_after else None, ends_file)
        out.append((start, new_end, repl))
    return out


def merge_lines(regions: list[Region], orig: list[str], partial_ok: bool = False,
                lang: str | None = None) -> LineMerge:
    """Place regions and splice them into orig. partial_ok: a marker-free snippet, whose unmentioned
    head and tail stay; with markers, a missing leading/trailing marker leaves the head/tail's fate open."""
    if not regions:
        return LineMerge(None, ["the snippet has no content besides markers"])
    idx = OriginalIndex(orig)
    for i, r in enumerate(regions):
        edge = None
        if not partial_ok and i == len(regions) - 1 and not r.marker_after:
            edge = "end"
        elif not partial_ok and i == 0 and not r.marker_before:
            edge = "start"
        r.candidates = place_region(r, idx, edge)
    choice, margin, error = order_regions(regions)
    if error:
        return LineMerge(None, [error])
    spans: list[tuple[int, int, list[str]]] = []  # (start, end exclusive, replacement)
    fuzzy_total = 0
    n = len(regions)
    for i, (r, c) in enumerate(zip(regions, choice)):
        if c is not None and r.contested:
            return LineMerge(None, [f"region {i + 1} also fits, more cheaply, at a place that matches only on common "
                                    "lines such as `}`: not certain"])
        prev_end = spans[-1][1] if spans else 0
        next_start = next((choice[j].start for j in range(i + 1, n) if choice[j] is not None), len(orig))
        if c is None and r.marker_before:
            closed = place_closers(r.lines, orig, prev_end, next_start)
            if closed is not None:
                spans.append(closed)
                continue
        if c is None:
            if i == 0 and not r.marker_before:
                end, fuzzy = consume_forward(r.lines, orig, 0, next_start)
                if fuzzy == 0:
                    return LineMerge(None, [f"region {i + 1} of the snippet matches nothing in the original"])
                spans.append((0, end, list(r.lines)))
                fuzzy_total += fuzzy
                continue
            if i == n - 1 and not r.marker_after:
                start, fuzzy = consume_back(r.lines, orig, len(orig), prev_end)
                if fuzzy == 0:
                    return LineMerge(None, [f"region {i + 1} of the snippet matches nothing in the original"])
                spans.append((start, len(orig), list(r.lines)))
                fuzzy_total += fuzzy
                continue
            placed = place_by_subject(r.lines, orig, prev_end, next_start)
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
        weak = weak_edge(c, orig, prev_end, next_start)
        if weak:
            return LineMerge(None, [f"region {i + 1}: {weak}"])
        lead, trail = c.lines[:c.first], c.lines[c.last + 1:]
        start, f1 = consume_back(lead, orig, c.start, prev_end)
        end, f2 = consume_forward(trail, orig, c.end + 1, next_start)
        fuzzy_total += f1 + f2
        # Blank lines at a region's edge (next to a marker) that the original does not have there:
        # new blank lines, or context for a deletion next to them? Refuse.
        if r.marker_before and start > prev_end and not is_blank(orig[start - 1]) and \
                blank_run(lead, blank=True) > blank_run(orig[start:c.start], blank=True):
            return LineMerge(None, [f"region {i + 1} starts with blank lines the original does not have there: "
                                    "new blank lines, or a deletion right after them?"])
        if r.marker_after and end < next_start and not is_blank(orig[end]) and \
                blank_run(trail[::-1], blank=True) > blank_run(orig[c.end + 1:end][::-1], blank=True):
            return LineMerge(None, [f"region {i + 1} ends with blank lines the original does not have there: "
                                    "new blank lines, or a deletion right before them?"])
        # New lines followed by fewer blank lines than the original has there: did they replace a
        # blank line, or go in front of all of them?
        if r.marker_after and end < next_start and is_blank(orig[end]) and trail and is_blank(trail[-1]) and \
                any(not is_blank(x) for x in trail):
            return LineMerge(None, [f"region {i + 1}: new lines before blank lines that do not match the original's "
                                    "count: replacing a blank line, or inserted?"])
        if r.marker_before and start > prev_end and is_blank(orig[start - 1]) and lead and is_blank(lead[0]) and \
                any(not is_blank(x) for x in lead):
            return LineMerge(None, [f"region {i + 1}: new lines after blank lines that do not match the original's "
                                    "count: replacing a blank line, or inserted?"])
        # New lines whose only context towards the marker is blank lines: they may also replace
        # the next line or two of the original (a short run that ends at a blank line, like theirs).
        if r.marker_after and _blank_bounded(trail, orig, end, next_start, +1):
            return LineMerge(None, [f"region {i + 1} ends with new lines and only blank lines before the marker: "
                                    "do they also replace the original's next lines?"])
        if r.marker_before and _blank_bounded(lead[::-1], orig, start - 1, prev_end - 1, -1):
            return LineMerge(None, [f"region {i + 1} starts with only blank lines before new lines: "
                                    "do they also replace the original's lines above?"])
        new_trail = trail[end - (c.end + 1):]
        new_lead = lead[:len(lead) - (c.start - start)] if c.start > start else lead
        # The first snippet line left over after an edge equals an original line just beyond the
        # edge: the lines in between may have been deleted, or the snippet line is new. Refuse.
        if _echo(new_trail, orig, end, next_start, +1) or _echo(new_lead[::-1], orig, start - 1, prev_end - 1, -1):
            return LineMerge(None, [f"region {i + 1}: a line at its edge also occurs just beyond it in the original; "
                                    "inserted, or are the lines between deleted?"])
        if any(not is_blank(x) for x in new_trail) and r.marker_after and i + 1 < n:
            nxt = [x.strip() for x in regions[i + 1].lines if not is_blank(x)]
            if nxt and all(x in CLOSERS for x in nxt) and defines_something(new_trail, lang):
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
        if partial_ok:  # no markers: a targeted edit, which does not silently drop what it skips over
            shown = set(x.strip() for x in c.lines)
            dropped = sum(1 for x in orig[start:end] if not is_blank(x) and x.strip() not in shown)
            if dropped > max(3, (end - start) // 4):
                return LineMerge(None, [f"the snippet has no markers but would replace {dropped} original lines it "
                                        "does not show: a partial snippet, or a deletion?"])
        spans.append((start, end, list(c.lines)))
    from fastapply.merge.complete import original_definitions

    defs = original_definitions(orig, lang)  # parsed once, for both checks below
    loose = not partial_ok and _loose_markers(spans, regions, orig)
    spans = _whole_definitions(spans, regions, orig, defs, lang, not partial_ok and not loose)
    twice = _defined_twice(spans, defs) if partial_ok else None
    if twice:
        return LineMerge(None, [twice])
    kept_edges = False
    if not partial_ok and spans:
        head = not regions[0].marker_before and any(not is_blank(x) for x in orig[:spans[0][0]])
        tail = not regions[-1].marker_after and any(not is_blank(x) for x in orig[spans[-1][1]:])
        if (head or tail) and loose:
            kept_edges = True  # core.py reports it as a doubt
        elif head:
            return LineMerge(None, ["the snippet has markers but none before its first region, which is not at the "
                                    "top of the file: keep or delete the lines above it?"])
        elif tail:
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
                     and not regions[-1].marker_after, kept_edges=kept_edges)
