"""Assemble a merged file from line-anchored regions (see anchor.py for how they are placed)."""

from __future__ import annotations

from dataclasses import dataclass

from fastapply.merge.anchor import OriginalIndex, Region, order_regions, place_region
from fastapply.merge.text import is_blank, is_trivial, similar

CLOSERS = frozenset({"}", "};", "},", ")", ");", "]", "];", "})", "});", "end"})


@dataclass
class LineMerge:
    lines: list[str] | None
    reasons: list[str]
    margin: int = 0
    fuzzy: int = 0  # edge lines matched by similarity rather than equality


def _consume_back(new: list[str], orig: list[str], hi: int, lo: int) -> tuple[int, int]:
    """Pair the region's leading new lines (last first) with original lines before hi that are blank
    or look like older versions of them; those original lines are replaced. Returns (new start, fuzzy)."""
    k, j, fuzzy = len(new) - 1, hi - 1, 0
    while k >= 0 and j >= lo:
        if (is_blank(new[k]) and is_blank(orig[j])) or new[k].rstrip() == orig[j].rstrip():
            pass
        elif not is_blank(new[k]) and not is_blank(orig[j]) and not is_trivial(orig[j]) and similar(new[k], orig[j]):
            fuzzy += 1
        else:
            break
        k -= 1
        j -= 1
    # blank lines right after a marker stand for the original's blank lines there, not new ones
    lead_blank = 0
    while lead_blank <= k and is_blank(new[lead_blank]):
        lead_blank += 1
    while lead_blank > 0 and j >= lo and is_blank(orig[j]):
        lead_blank -= 1
        j -= 1
    return j + 1, fuzzy


def _consume_forward(new: list[str], orig: list[str], lo: int, hi: int) -> tuple[int, int]:
    k, j, fuzzy = 0, lo, 0
    while k < len(new) and j < hi:
        if (is_blank(new[k]) and is_blank(orig[j])) or new[k].rstrip() == orig[j].rstrip():
            pass
        elif not is_blank(new[k]) and not is_blank(orig[j]) and not is_trivial(orig[j]) and similar(new[k], orig[j]):
            fuzzy += 1
        else:
            break
        k += 1
        j += 1
    trail_blank = 0
    while trail_blank < len(new) - k and is_blank(new[len(new) - 1 - trail_blank]):
        trail_blank += 1
    while trail_blank > 0 and j < hi and is_blank(orig[j]):
        trail_blank -= 1
        j += 1
    return j, fuzzy


def merge_lines(regions: list[Region], orig: list[str], partial_ok: bool = False) -> LineMerge:
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
            return LineMerge(None, [f"region {i + 1} of the snippet matches nothing in the original "
                                    f"(starts {r.lines[0].strip()[:60]!r})"])
        if c.context < r.best_context:
            return LineMerge(None, [f"region {i + 1}: the cheapest placement (line {c.start + 1}) is not the one that "
                                    "keeps the snippet's context lines together; refusing to pick"])
        lead, trail = c.lines[:c.first], c.lines[c.last + 1:]
        start, f1 = _consume_back(lead, orig, c.start, prev_end)
        end, f2 = _consume_forward(trail, orig, c.end + 1, next_start)
        fuzzy_total += f1 + f2
        new_trail = trail[end - (c.end + 1):]
        if any(not is_blank(x) for x in new_trail) and r.marker_after and i + 1 < n:
            nxt = [x.strip() for x in regions[i + 1].lines if not is_blank(x)]
            if nxt and all(x in CLOSERS for x in nxt):
                return LineMerge(None, [f"region {i + 1} ends with new lines next to a marker that is followed only "
                                        "by a closing bracket: they could go before or after the elided code"])
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
    return LineMerge(out, [], margin, fuzzy_total)
