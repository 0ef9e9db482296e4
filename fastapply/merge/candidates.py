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
from fastapply.merge.text import join_lines, split_lines

MAX_CANDIDATES = 3  # more texts to re-sync on cost drafter work and rarely add a place the model goes


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
        text = join_lines(lines, newline, trailing or not orig) if lines is not None else None
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
