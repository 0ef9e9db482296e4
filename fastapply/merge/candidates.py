"""Candidate merged files for a snippet the merge refused: the placements it was choosing between.

A refusal (a tie, a placement a check doubts) still leaves the merge's cheapest placements, and
they are good guesses. The model engines take them as draft sources: the model decides (its greedy
output is its own), and a candidate it follows costs one forward pass per draft chunk instead of
one per token. No checks and no guarantees here; nothing of this is ever returned as a result.

Example: a region whose anchors occur twice gives two texts, the region spliced at each place,
cheapest first.
"""

from __future__ import annotations

from fastapply.markers import marker_flags
from fastapply.merge.anchor import Candidate, OriginalIndex, Region, place_region
from fastapply.merge.edge_lines import consume_back, consume_forward
from fastapply.merge.inline import fill_inline_markers
from fastapply.merge.segment import split_regions
from fastapply.merge.splice import apply_edits
from fastapply.merge.text import is_blank, join_lines, similar, split_lines, with_original_spacing

MAX_CANDIDATES = 3  # more texts to re-sync on cost drafter work and rarely add a place the model goes
GAP_PLACES = 2  # gap placements kept per region without anchors (`gap_texts`)
GAP_SLACK = 8  # a gap placement spans at most twice the region's lines plus this many


def candidate_texts(original: str, update: str, limit: int = MAX_CANDIDATES) -> list[str]:
    """Up to `limit` whole files: the cheapest in-order placement of every anchored region, then
    that placement with one region moved to its next-best place. Regions without anchors are left
    out (the snippet itself is a draft source for them)."""
    orig, newline, trailing = split_lines(original)
    upd, problems = fill_inline_markers(split_lines(update)[0], orig)
    if problems:
        return []
    regions, _ = split_regions(upd, marker_flags(upd, orig))
    idx = OriginalIndex(orig)
    anchored: list[Region] = []
    for r in regions:
        r.candidates = sorted(place_region(r, idx, None), key=lambda c: (c.cost, c.start))
        if r.candidates:
            anchored.append(r)
    if not anchored:
        return []
    best = _in_order([r.candidates for r in anchored])
    if best is None:
        return []
    choices = [best]
    for i, r in enumerate(anchored):
        for alt in r.candidates:
            if alt is not best[i]:
                moved = _in_order([[c] if j != i else [alt] for j, c in enumerate(best)])
                if moved is not None:
                    choices.append(moved)
                break
    texts: list[str] = []
    for choice in choices:
        lines = apply_edits(orig, _spans(choice, orig))
        text = join_lines(with_original_spacing(orig, lines), newline, trailing or not orig) \
            if lines is not None else None
        if text is not None and text != original and text not in texts:
            texts.append(text)
        if len(texts) == limit:
            break
    return texts


def _spans(choice: list[Candidate], orig: list[str]) -> list[tuple[int, int, list[str]]]:
    """Each placement as an edit; new lines at a region's edges replace the original lines they
    resemble there, as the merge reads them (edge_lines.py)."""
    spans = []
    for i, c in enumerate(choice):
        prev_end = spans[-1][1] if spans else 0
        next_start = choice[i + 1].start if i + 1 < len(choice) else len(orig)
        start, _ = consume_back(c.lines[:c.first], orig, c.start, prev_end)
        end, _ = consume_forward(c.lines[c.last + 1:], orig, c.end + 1, next_start)
        spans.append((start, end, c.lines))
    return spans


def _in_order(options: list[list[Candidate]]) -> list[Candidate] | None:
    """The first option of each region (cheapest first) that starts after the previous one ends."""
    out: list[Candidate] = []
    pos = -1
    for opts in options:
        c = next((c for c in opts if c.start > pos), None)
        if c is None:
            return None
        out.append(c)
        pos = c.end
    return out


# -- regions without anchors of their own, placed in the gap their neighbours leave ------------------

def gap_texts(original: str, update: str, limit: int = GAP_PLACES) -> list[str]:
    """Whole files for a snippet with regions that anchor nowhere on their own (only common lines
    such as `)` or `})` match, or none): each such region placed in the gap the anchored regions
    around it leave (the file's edge, where it has no marker there), at the cheapest spans whose
    first and last lines are the region's own, by line edit distance. The cheapest for every
    region, then each region's next one. Readings only: no checks here."""
    orig, newline, trailing = split_lines(original)
    upd, problems = fill_inline_markers(split_lines(update)[0], orig)
    if problems:
        return []
    regions, _ = split_regions(upd, marker_flags(upd, orig))
    if not regions:
        return []
    idx = OriginalIndex(orig)
    for r in regions:
        r.candidates = sorted(place_region(r, idx, None), key=lambda c: (c.cost, c.start))
    if all(r.candidates for r in regions):
        return []
    anchored = [i for i, r in enumerate(regions) if r.candidates]
    best = _in_order([regions[i].candidates for i in anchored]) if anchored else []
    if best is None:
        return []
    fixed = dict(zip(anchored, _spans(best, orig)))
    options: dict[int, list[tuple[int, int, list[str]]]] = {}
    for i, r in enumerate(regions):
        if i in fixed:
            continue
        lo = max((fixed[j][1] for j in fixed if j < i), default=0)
        hi = min((fixed[j][0] for j in fixed if j > i), default=len(orig))
        head = i == 0 and not r.marker_before
        tail = i == len(regions) - 1 and not r.marker_after
        options[i] = gap_places(r.lines, orig, lo, hi, head, tail)[:limit]
        if not options[i]:
            return []
    texts: list[str] = []
    choices = [{i: 0 for i in options}] + [{**{j: 0 for j in options}, i: 1} for i in options if len(options[i]) > 1]
    for choice in choices:
        spans = sorted(list(fixed.values()) + [options[i][k] for i, k in choice.items()])
        lines = apply_edits(orig, spans)
        text = join_lines(with_original_spacing(orig, lines), newline, trailing or not orig) \
            if lines is not None else None
        if text is not None and text != original and text not in texts:
            texts.append(text)
    return texts


def gap_places(lines: list[str], orig: list[str], lo: int, hi: int, head: bool = False,
               tail: bool = False) -> list[tuple[int, int, list[str]]]:
    """Spans [s, e) of orig[lo:hi] a region may replace, cheapest first: its first non-blank line
    at s, its last at e - 1 (as written, else indentation aside); at the file's head (tail) the
    span starts (ends) there and that edge line is free. Costs are the anchor placement's (an
    inserted line 1, a deleted one 2) with an edited line (`similar`) at 1; a span past twice the
    region's length plus `GAP_SLACK` is not tried, but at the file's edge (a deletion there)."""
    body = [x for x in lines if not is_blank(x)]
    if not body:
        return []
    starts = [lo] if head else _at(orig, lo, hi, body[0])
    end_at = _last_code(orig, lo, hi) + 1 if tail else None
    most = 2 * len(body) + GAP_SLACK
    found = []
    for s in starts[:GAP_STARTS]:
        ends = [end_at] if end_at is not None else [j + 1 for j in _at(orig, s, min(hi, s + most), body[-1])]
        for e in ends:
            if e < s or e - s > most and not (head or tail):
                continue
            found.append((_cost(body, [x for x in orig[s:e] if not is_blank(x)]), s, e))
    found.sort()
    return [(s, e, list(lines)) for _, s, e in found]


GAP_STARTS = 64  # first-line occurrences tried per region (a `}` occurs everywhere)


def _at(orig: list[str], lo: int, hi: int, line: str) -> list[int]:
    """Where `line` stands in orig[lo:hi] as written; else indentation aside."""
    exact = [j for j in range(lo, hi) if orig[j].rstrip() == line.rstrip()]
    return exact or [j for j in range(lo, hi) if orig[j].strip() == line.strip()]


def _cost(a: list[str], b: list[str]) -> int:
    """Turn b (original lines) into a (the region's): an inserted line 1, a deleted one 2, a line
    edited into a similar one 1 (the cheaper of that and delete + insert)."""
    prev = [2 * j for j in range(len(b) + 1)]
    for x in a:
        cur = [prev[0] + 1]
        for j, y in enumerate(b, 1):
            same = 0 if x.strip() == y.strip() else 1 if similar(x, y) else 3
            cur.append(min(prev[j] + 1, cur[j - 1] + 2, prev[j - 1] + same))
        prev = cur
    return prev[-1]


def _last_code(orig: list[str], lo: int, hi: int) -> int:
    """The last non-blank line in orig[lo:hi] (lo - 1 when none)."""
    for j in range(hi - 1, lo - 1, -1):
        if not is_blank(orig[j]):
            return j
    return lo - 1
