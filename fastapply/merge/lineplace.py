"""Line-anchor placement of a snippet with markers: place each region, check, splice.

Placing (where each region goes) is `anchor.py` (regions with anchors) and `unanchored.py` (those
without); which placements are refused is the rulebook `checks/`; `whole_defs.py` extends a region that
restates a definition whole over the rest of the old one; `splice.py` writes the result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fastapply.memo import last_object
from fastapply.merge.anchor import Candidate, OriginalIndex, Region, order_regions, place_region
from fastapply.merge.checks import FILE_CHECKS, REGION_CHECKS, LinePlan, RegionFit, defines_something, named_refusal
from fastapply.merge.checks.region_blanks import new_item_against_next_item
from fastapply.merge.deadline import expired
from fastapply.merge.checks.region_edges import keyed_edges
from fastapply.merge.checks.helpers import seam_copies
from fastapply.merge.edge_lines import consume_back, consume_forward
from fastapply.merge.result import (
    OneSidedDoubt,
    OtherSide,
    CONFIDENCE_LINES_CLEAR,
    CONFIDENCE_LINES_CLOSE,
    CONFIDENCE_LINES_TIGHT,
    CONFIDENCE_LOOSE_EDGES,
    FUZZY_PENALTY,
    FUZZY_PENALTY_LINES,
    Placement,
)
from fastapply.merge.seams import opens_block
from fastapply.merge.splice import apply_edits
from fastapply.merge.text import CLOSERS, indent_of, is_blank
from fastapply.merge.unanchored import bracket_delta, place_unanchored
from fastapply.merge.wrap import Wrap, apply_wraps, wrap_reading
from fastapply.merge.wrap_regions import after_wrapped_block, goes_past_block, opens_new_branch, takes_from_wrapped_code
from fastapply.merge.whole_defs import extend_to_whole_definition, original_definitions

WRAP_HOW = "the deeper marker read as wrapped code"  # (the `how` of those readings; readings.py)

Span = tuple[int, int, list[str]]  # (original start, end exclusive, replacement lines)


def merge_lines(regions: list[Region], orig: list[str], partial_ok: bool = False,
                lang: str | None = None) -> Placement:
    """Place regions and splice them into orig. partial_ok: a marker-free snippet, whose unmentioned
    head and tail stay; with markers, a missing leading/trailing marker leaves the head/tail's fate open.
    A marker indented deeper than the code it stands for, inside a new block, is first read as is;
    if that is refused, as "this code, re-indented into the block" (wrap.py)."""
    placed = _place_check_splice(regions, orig, partial_ok, lang)
    reading = None if placed.ok or partial_ok else wrap_reading(regions, orig, lang)
    if reading is None:
        return placed
    wrapped = _place_check_splice(reading[0], orig, partial_ok, lang, (regions, reading[1]))
    if wrapped.ok:
        return wrapped
    # The wrap reading is a second side of its own, so the first one's doubt is two-sided no more;
    # unless the wrap reading cannot be spliced at all (then it is no reading).
    doubt = placed.doubt if placed.doubt is not None and not _splices(reading[0], orig, partial_ok, lang,
                                                                       (regions, reading[1])) else None
    if doubt is None and placed.doubt is None:
        doubt = _after_wrap_doubt(reading[0], (regions, reading[1]), orig, partial_ok, lang)
    return Placement(None, placed.reasons + [f"read as wrapped code: {r}" for r in wrapped.reasons], final=placed.final,
                     doubt=doubt, check=placed.check)


def _after_wrap_doubt(regions: list[Region], wrap, orig: list[str], partial_ok: bool,
                      lang: str | None) -> OneSidedDoubt | None:
    """Under the wrap reading, the regions right after a marker wrap match nothing in the original
    (`} catch (err) {` and a new `return []`; `}` and a fallback `return`), or where the lines of
    one of them pair it replaces the wrapped code's last line without showing it as written
    (`takes_from_wrapped_code`): their place is where the wrapped code ends, and every check runs
    on that splice. The other sides (each such region before the block's last statement, which then
    stays after the new block; and the region where its lines pair, unchecked) go to the caller to
    validate, as for `ONE_SIDED` doubts: when none is a valid file, one reading is left."""
    fresh = _placed_fresh(regions, orig, partial_ok)
    if fresh is None:
        return None
    placed, choice = fresh
    targets = [i for i, c in enumerate(choice) if c is None]
    others = []
    if targets:
        reason = f"region {targets[0] + 1} of the snippet matches nothing in the original; read after the wrapped code."
    else:
        base = _splice(placed, orig, choice, partial_ok, lang, wrap, None)
        if not isinstance(base, Refusal) or base.region is None:
            return None
        w = _wrap_before(base.region, wrap)
        branch = w is not None and opens_new_branch(wrap[0][base.region].lines, w)
        # (only the wrap's own doubt has these sides: a tie between places, or a deletion next to a
        # common line, is a doubt of its own; held-out fuzz draws took them for this one. Unless the
        # region is a branch of the new block and the doubt is a deletion next to its common line
        # (`} else {` / `return err` paired with an early `return err` in the wrapped code): the
        # branch's lines pair nothing there. A tie between two places stays a tie: fuzz 71529)
        if base.check != "takes_from_wrapped_code" and not (branch and base.check == "deletion_after_common_anchor"):
            return None
        targets, reason = [base.region], base.reason
        if not branch:  # (the branch's lines are its own: no reading moves a wrapped line into it)
            others.append(_side(placed, orig, choice, partial_ok, lang, wrap, Variant()))
    for i in targets:
        w = _wrap_before(i, wrap)
        first = next((x for x in wrap[0][i].lines if not is_blank(x)), None)
        # (a region that starts at the marker's depth shows the wrapped code's last lines: its own)
        if w is None or first is None or len(indent_of(first)) >= len(w.level + w.extra):
            return None
    kept = _splice(placed, orig, choice, partial_ok, lang, wrap,
                   Variant(after_wrap=tuple((i, "beside") for i in targets)), checked=True)
    if isinstance(kept, Refusal):
        return None
    # Where the wrapped code ends is pinned only when the region's last lines are the original's
    # right there, as written (the function's `}`): a lone `}` with a marker after it may close
    # the new block anywhere before that.
    if any(kept[1].spans[i][1] <= kept[1].spans[i][0] for i in targets):
        return None
    for at in ("end", "before_last"):  # (lines shown after the closer read as the wrapped code's own, moved out)
        if at == "before_last" and all(goes_past_block(placed[i].lines, _wrap_before(i, wrap)) for i in targets):
            continue  # (no room after the new block: no reading)
        side = _side(placed, orig, choice, partial_ok, lang, wrap, Variant(after_wrap=tuple((i, at) for i in targets)))
        if side.lines != kept[0]:
            others.append(side)
    # (a side that is no file for want of a place says nothing of whether it was meant: only one
    # whose placement runs into another region's is no reading; as in `_one_sided`)
    if any(s.lines is None and "overlap" not in s.unspliced for s in others):
        return None
    return OneSidedDoubt(reason, kept[0], tuple(others))


def _placed_fresh(regions: list[Region], orig: list[str],
                  partial_ok: bool) -> tuple[list[Region], list[Candidate | None]] | None:
    """The regions placed anew (their candidates recomputed) and the cheapest choice, in order if the
    anchors allow one: how a reading places them, the checks aside; None when no order fits."""
    placed = [replace(r, candidates=[]) for r in regions]
    choice, _, error = _place_regions(placed, orig, partial_ok)
    if error:
        choice = _cheapest_in_order(placed)
        if choice is None:
            return None
    return placed, choice


def _splices(regions: list[Region], orig: list[str], partial_ok: bool, lang: str | None, wrap) -> bool:
    """Does this reading give a file at all, checks aside (as `line_readings` splices it)?"""
    fresh = _placed_fresh(regions, orig, partial_ok)
    return fresh is not None and \
        not isinstance(_splice(fresh[0], orig, fresh[1], partial_ok, lang, wrap, Variant()), Refusal)


@dataclass(frozen=True)
class Refusal:
    """Why a reading cannot be spliced: the reason, and the check that gave it (with its region)."""

    reason: str
    check: str = ""
    region: int | None = None


FINAL_WRAP = -1  # Variant.after_wrap's key for the wrap a marker ending the snippet opens


@dataclass(frozen=True)
class Variant:
    """How one reading departs from the placement the checks judge (see `line_readings`): another
    placement for some regions, edge lines inserted beside the original lines they were paired with
    (which stay), and the unshown head or tail deleted instead of kept."""

    choice: tuple[tuple[int, Candidate], ...] = ()  # (region index, another of its candidates)
    unpaired: frozenset[tuple[int, str]] = frozenset()  # (anchored region, "lead" | "trail") inserted, not paired
    # (anchored region, "lead" | "trail"): its edge line replaces the original line just beyond the
    # span (an edit too large to pair: checks.edge_line_keyed_like_next)
    edge_edit: frozenset[tuple[int, str]] = frozenset()
    # (anchored region, "after_first" | "before_last"): every line after its first anchor (before its
    # last) inserted there, none paired: a guard added at a function's top whose `return` and `}`
    # paired with the next `if`'s, its opener read as an edit of the declaration above that `if`
    inserted: frozenset[tuple[int, str]] = frozenset()
    unanchored_at: tuple[tuple[int, str], ...] = ()  # (unanchored region, "start" | "end" of the lines it pairs)
    # (region right after a marker wrap, "end" | "beside" | "before_last" | "replace_last"): placed
    # after the whole wrapped block, or before its last statement, or in its place, instead of where
    # its lines pair (wrap.py); "end"
    # reads lines it shows right after its closer that end the wrapped code as those lines, moved out
    # of the block, "beside" as new lines; (FINAL_WRAP, "before_last"): the snippet's final wrap
    # leaves its block's last statement out
    after_wrap: tuple[tuple[int, str], ...] = ()
    separator_flipped: frozenset[int] = frozenset()  # regions whose blank line after new definitions is flipped
    head_deleted: bool = False
    tail_deleted: bool = False

    def how(self) -> str:
        parts = [f"region {i + 1} at line {c.start + 1}" for i, c in self.choice]
        parts += [f"region {i + 1}'s {side} lines added, not edits" for i, side in sorted(self.unpaired)]
        parts += [f"region {i + 1}'s {'last' if side == 'trail' else 'first'} line an edit of the original's "
                  f"{'next' if side == 'trail' else 'previous'} line" for i, side in sorted(self.edge_edit)]
        parts += [f"region {i + 1}'s lines {'after its first' if at == 'after_first' else 'before its last'} "
                  "anchor all added" for i, at in sorted(self.inserted)]
        parts += [f"region {i + 1} added {'before' if at == 'start' else 'after'} the lines it resembles"
                  for i, at in self.unanchored_at]
        parts += [(f"region {i + 1} after the wrapped code" if i >= 0 else "the snippet's last new block") +
                  {"before_last": ", its last statement left out of the block",
                   "replace_last": ", in place of its last statement",
                   "beside": ", all its lines new"}.get(at, "")
                  for i, at in self.after_wrap]
        parts += [f"region {i + 1}'s blank line after its new code flipped" for i in sorted(self.separator_flipped)]
        parts += ["the lines above it deleted"] * self.head_deleted + ["the lines below it deleted"] * self.tail_deleted
        return ", ".join(parts) or "as placed"


def _place_check_splice(regions: list[Region], orig: list[str], partial_ok: bool, lang: str | None,
                        wrap: tuple[list[Region], list[Wrap]] | None = None) -> Placement:
    """One reading of the snippet: place each region, check, splice. wrap: the snippet's own regions
    and the wraps, when `regions` are their lowered form (see wrap.py)."""
    if not regions:
        return Placement(None, ["the snippet has no content besides markers"])
    choice, margin, error = _place_regions(regions, orig, partial_ok)
    if error:
        return Placement(None, [error], check="ambiguous_placement" if error.startswith("ambiguous placement") else "")
    read = _splice(regions, orig, choice, partial_ok, lang, wrap, None)
    if isinstance(read, Refusal):
        return Placement(None, [read.reason], doubt=_one_sided(read, regions, orig, choice, partial_ok, lang, wrap),
                         check=read.check)
    out, plan, fuzzy = read
    kept_edges = (plan.head or plan.tail) and plan.loose
    confidence, doubts = _confidence(margin, fuzzy, kept_edges)
    if plan.head and not plan.loose:  # (unmarked_head passed it: head_holds_unnamed_code)
        confidence = min(confidence, CONFIDENCE_LOOSE_EDGES)
        doubts.append("kept the original's lines above the snippet, which has no marker there: they hold "
                      "imports or definitions the snippet never names, read as elision, not deletion")
    if wrap is not None:
        doubts.append("read a marker indented deeper than the code it stands for as that code, re-indented "
                      "into the new block")
    return Placement(out, doubts, confidence,
                     reaches_end=bool(plan.spans) and plan.spans[-1][1] == len(orig) and not regions[-1].marker_after)


def _skipped(skip: tuple[str, int | None] | None, region: int | None) -> frozenset[str]:
    """The check names to pass over for this region (or, region None, for the file checks)."""
    return frozenset({skip[0]}) if skip is not None and skip[1] == region else frozenset()


def _one_sided(refused: Refusal, regions: list[Region], orig: list[str], choice: list[Candidate | None],
               partial_ok: bool, lang: str | None, wrap) -> OneSidedDoubt | None:
    """For a doubt whose sides are known (`ONE_SIDED`: keep or delete the unshown head or tail; the
    cheapest placement or another, such as the one that keeps the context together), the placement
    with that check passed over (every other check still run) and the other sides, as lines, for
    the caller to validate: when every other side fails validation, one reading survives and is the
    answer."""
    if refused.check == "deleted_declaration_still_used":
        return _inserted_instead(refused, regions, orig, choice, partial_ok, lang, wrap)
    other = ONE_SIDED.get(refused.check)
    if other is None:
        return None
    variants = other(refused.region, regions, choice)
    if not variants:
        return None
    kept = _splice(regions, orig, choice, partial_ok, lang, wrap, None, skip=(refused.check, refused.region))
    if isinstance(kept, Refusal):
        return None
    sides = tuple(_side(regions, orig, choice, partial_ok, lang, wrap, v) for v in variants)
    # (an other side that is no file because its placement runs into the region before it counts as
    # failing: serde-rs/json raw.rs, a new `impl` block whose context is the old block's head)
    if any(s.lines is None and "overlap" not in s.unspliced for s in sides):
        return None
    return OneSidedDoubt(refused.reason, kept[0], sides, places=other is _other_places)


def _inserted_instead(refused: Refusal, regions: list[Region], orig: list[str], choice: list[Candidate | None],
                      partial_ok: bool, lang: str | None, wrap) -> OneSidedDoubt | None:
    """A placement that turns a declaration into lines that declare nothing while the code kept
    below still uses the name (`deleted_declaration_still_used`) gives no file a snippet means. The
    other reading keeps the region's anchors and inserts all its lines after the first one (an
    early-return guard whose `return` and `}` had paired with the next `if`'s): when the placement
    passes every other check, that reading deletes nothing it did not, and it is the one left."""
    i = refused.region
    if i is None or choice[i] is None or not regions[i].marker_after or \
            not _one_new_block_after_anchor(choice[i], orig, lang) or \
            isinstance(_splice(regions, orig, choice, partial_ok, lang, wrap, None, skip=(refused.check, i)), Refusal):
        return None
    read = _splice(regions, orig, choice, partial_ok, lang, wrap, Variant(inserted=frozenset({(i, "after_first")})))
    why = f"{refused.reason} Read so, every other check passes; its lines inserted after the region's first anchor"
    return None if isinstance(read, Refusal) else OneSidedDoubt(why, read[0], ())


def _one_new_block_after_anchor(c: Candidate, orig: list[str], lang: str | None) -> bool:
    """The placement's lines after its first anchor are one new block and nothing else: an opener
    the original lacks, its body, its closer (Python: its body, deeper). Inserted whole, they add
    that block and repeat no statement of the original (comments put in place of a declaration, with
    the next statement shown after them, are the snippet's own deletion: fuzz seed 61486)."""
    body = [x for x in c.lines[c.first + 1:] if not is_blank(x)]
    if len(body) < 2 or not opens_block(body[0], lang) or body[0].strip() in {x.strip() for x in orig}:
        return False
    if lang == "python":
        return all(len(indent_of(x)) > len(indent_of(body[0])) for x in body[1:])
    depth = 0
    for k, x in enumerate(body):
        depth += bracket_delta(x)
        if depth <= 0 and k < len(body) - 1:
            return False
    return depth == 0


def _side(regions: list[Region], orig: list[str], choice: list[Candidate | None], partial_ok: bool,
          lang: str | None, wrap, variant: Variant) -> OtherSide:
    read = _splice(regions, orig, choice, partial_ok, lang, wrap, variant)
    if isinstance(read, Refusal):
        return OtherSide(variant.how(), None, read.reason)
    return OtherSide(variant.how(), read[0])


def _other_places(i: int | None, regions: list[Region], choice: list[Candidate | None]) -> list[Variant]:
    """Every other placement of region i the anchors found (the one that keeps the context together
    first, then the cheaper and the dearer ones, at most `OTHER_PLACES`): a fuzz seed's silent wrong
    came from weighing only the first, when the expected file was a third."""
    r = regions[i] if i is not None else None
    if r is None or r.widest is None:
        return []
    c = choice[i]
    out: list[Candidate] = [r.widest]
    for x in r.candidates + r.dearer:
        if x is not c and all((x.start, x.end) != (y.start, y.end) for y in out) and \
                (c is None or (x.start, x.end) != (c.start, c.end)):
            out.append(x)
    return [Variant(choice=((i, x),)) for x in out[:OTHER_PLACES]]


OTHER_PLACES = 8  # each is spliced and validated: a few milliseconds apiece


def _at_file_edge(k: int, regions: list[Region], choice: list[Candidate | None]) -> list[Variant]:
    """The placements of region k (the first or the last) whose anchors reach the file's start
    (end), blank lines aside, through inner anchors (`Region.at_edge`): a snippet without a marker
    there may mean that edge, and then there are no lines it lacks a marker for (three comment
    lines appended after the last `}`, two of which copy a comment block mid-file: the mid-file
    copy was the one reading left)."""
    if not 0 <= k < len(regions) or choice[k] is None:
        return []
    return [Variant(choice=((k, x),)) for x in regions[k].at_edge[:OTHER_PLACES]]


# Checks whose doubt has known sides, and the Variants that read the others.
ONE_SIDED = {
    "unmarked_head": lambda i, regions, choice: [Variant(head_deleted=True)] + _at_file_edge(0, regions, choice),
    "unmarked_tail": lambda i, regions, choice: [Variant(tail_deleted=True)] +
    _at_file_edge(len(regions) - 1, regions, choice),
    "context_split": _other_places,
}


def _splice(regions: list[Region], orig: list[str], choice: list[Candidate | None], partial_ok: bool,
            lang: str | None, wrap: tuple[list[Region], list[Wrap]] | None,
            variant: Variant | None, skip: tuple[str, int | None] | None = None,
            checked: bool | None = None) -> tuple[list[str], LinePlan, int] | Refusal:
    """The placed regions spliced into the original: (lines, plan, edge lines matched by
    similarity), or the reason it fails. `variant=None` runs every check (the merge's own answer);
    a Variant skips them and reads the snippet its way (a reading, for the judge); `skip` is one
    check passed over: (its name, the region it judges, or None for a file check); `checked` runs
    the checks on a Variant too."""
    check = variant is None if checked is None else checked
    spans: list[Span] = []
    fuzzy = 0  # edge lines matched by similarity rather than equality
    alt = dict(variant.choice) if variant else {}
    unanchored_at = dict(variant.unanchored_at) if variant else {}
    after_wrap = dict(variant.after_wrap) if variant else {}
    choice = [alt.get(i, c) for i, c in enumerate(choice)]
    for i, (r, c) in enumerate(zip(regions, choice)):
        prev_end = spans[-1][1] if spans else 0
        next_start = next((choice[j].start for j in range(i + 1, len(regions)) if choice[j] is not None), len(orig))
        w = _wrap_before(i, wrap)
        if i in after_wrap and w is not None:
            placed = after_wrapped_block(r.lines, orig, prev_end, next_start, w, after_wrap[i])
            if isinstance(placed, str):
                return Refusal(placed)
            span, f = placed
        elif c is None:
            placed = place_unanchored(i, r.lines, r.marker_before, r.marker_after, i == len(regions) - 1,
                                      orig, prev_end, next_start, lambda: original_definitions(orig, lang), r.after_indent)
            if isinstance(placed, str):
                return Refusal(placed)
            span, f = placed
            at = unanchored_at.get(i)
            if at is not None:
                span = (span[0], span[0], span[2]) if at == "start" else (span[1], span[1], span[2])
        else:
            if c.start < prev_end:
                return Refusal(f"region {i + 1} overlaps the region before it")
            fit = _fit(i, regions, c, orig, prev_end, next_start, partial_ok, lang, wrap is not None and
                       regions[i].lines is not wrap[0][i].lines)
            if check:
                found = named_refusal(REGION_CHECKS, fit, _skipped(skip, i))
                if found:
                    return Refusal(found[1], found[0], i)
            span, f = _anchored_span(i, c, fit, variant), fit.fuzzy
        if check and w is not None and i not in after_wrap:
            refusal = takes_from_wrapped_code(i, wrap[0][i].lines, span, orig, prev_end, next_start, w)
            if refusal:
                return Refusal(refusal, "takes_from_wrapped_code", i)
        spans.append(span)
        fuzzy += f

    defs = original_definitions(orig, lang)  # parsed once, for the whole-definition rule and the checks
    loose = not partial_ok and _loose_markers(spans, regions, orig)
    spans = _whole_definitions(spans, regions, orig, defs, lang, not partial_ok and not loose)
    if wrap is not None:
        final_end = dict(variant.after_wrap).get(FINAL_WRAP, "block") if variant else "block"
        beside = frozenset(i - 1 for i, at in after_wrap.items() if at == "beside")
        rewrapped = apply_wraps(spans, wrap[0], regions, wrap[1], orig, final_end, beside)
        if isinstance(rewrapped, str):
            return Refusal(rewrapped)
        spans = rewrapped
    plan = LinePlan(spans, regions, orig, defs, partial_ok, loose, lang, wrapped=wrap is not None)
    if check:
        found = named_refusal(FILE_CHECKS, plan, _skipped(skip, None))
        if found:
            return Refusal(found[1], found[0])
    if variant is not None:
        if variant.head_deleted and spans:
            spans[0] = (0, spans[0][1], spans[0][2])
        if variant.tail_deleted and spans:
            spans[-1] = (spans[-1][0], len(orig), spans[-1][2])
    out = apply_edits(orig, spans)
    if out is None:
        return Refusal("regions of the snippet overlap in the original")
    return out, plan, fuzzy


def line_readings(regions: list[Region], orig: list[str], partial_ok: bool = False,
                  lang: str | None = None) -> list[tuple[str, list[str]]]:
    """Whole-file readings of the snippet by line anchors, without the refusal checks: the cheapest
    placement as it is spliced, then each doubt the checks weigh taken the other way, one at a
    time (another placement of one region, a region's paired edge lines kept and its own inserted,
    an unshown head or tail deleted), each as the snippet reads and, where a marker reads as
    wrapped code (wrap.py), as that too. Pairs of (how, lines), deduplicated, in that order."""
    out: list[tuple[str, list[str]]] = []
    seen: set[tuple[str, ...]] = set()
    readings = [(list(regions), None, "")]
    wrapped = None if partial_ok else wrap_reading(regions, orig, lang, final=True)
    if wrapped is not None:
        readings.append((wrapped[0], (regions, wrapped[1]), WRAP_HOW))
    for placed, wrap, label in readings:
        fresh = _placed_fresh(placed, orig, partial_ok)
        if fresh is None:
            continue
        placed, choice = fresh
        for variant in _variants(placed, orig, choice, partial_ok, lang, wrap):
            if expired():
                return out  # readings are extras: the ones found so far
            read = _splice(placed, orig, choice, partial_ok, lang, wrap, variant)
            if isinstance(read, Refusal) or tuple(read[0]) in seen:
                continue
            seen.add(tuple(read[0]))
            out.append((", ".join(x for x in (label, variant.how()) if x and x != "as placed") or "as placed", read[0]))
    return out


ALTERNATIVES = 3  # other placements tried per region for the readings


def _variants(regions: list[Region], orig: list[str], choice: list[Candidate | None], partial_ok: bool,
              lang: str | None, wrap) -> list[Variant]:
    """The placement as chosen, then one doubt at a time taken the other way (see line_readings)."""
    base = Variant()
    read = _splice(regions, orig, choice, partial_ok, lang, wrap, base)
    out = [base]
    for i, (r, c) in enumerate(zip(regions, choice)):
        if _wrap_before(i, wrap) is not None:
            out += [Variant(after_wrap=((i, at),)) for at in ("end", "beside", "before_last", "replace_last")]
        if c is None:
            out += [Variant(unanchored_at=((i, "start"),)), Variant(unanchored_at=((i, "end"),))]
            continue
        others = [x for x in r.candidates + r.dearer if x is not c]
        picks = others[:ALTERNATIVES]
        if r.widest is not None and all((x.start, x.end) != (r.widest.start, r.widest.end) for x in picks + [c]):
            picks.append(r.widest)
        out += [Variant(choice=((i, x),)) for x in picks]
        if _wrap_before(i + 1, wrap) is not None:  # the other place, with the wrapped code after it
            out += [Variant(choice=((i, x),), after_wrap=((i + 1, "end"),)) for x in picks]
        out += [Variant(unpaired=frozenset({(i, side)})) for side in ("lead", "trail")]
        out += [Variant(edge_edit=frozenset({(i, side)})) for side in ("lead", "trail")]
        if _new_block_between_anchors(c, orig, lang):
            # (a region that ends (starts) at a marker may add all it shows below (above) an anchor)
            out += [Variant(inserted=frozenset({(i, at)})) for at, marker in
                    (("after_first", r.marker_after), ("before_last", r.marker_before)) if marker]
        out.append(Variant(separator_flipped=frozenset({i})))
    if wrap is not None and any(w.i == len(regions) - 1 for w in wrap[1]):
        out.append(Variant(after_wrap=((FINAL_WRAP, "before_last"),)))
    if not isinstance(read, Refusal):
        plan = read[1]
        out += [Variant(head_deleted=True)] * plan.head + [Variant(tail_deleted=True)] * plan.tail
    refused = _splice(regions, orig, choice, partial_ok, lang, wrap, None)
    if isinstance(refused, Refusal) and refused.check in SEAM_CHECKS:
        out += [v for i, c in enumerate(choice) if c is not None for v in _at_seam_copies(i, c, orig, choice)]
    return out


# The checks whose doubt is which copy of a region's run ends a deletion (or whether an unchanged
# placement deletes at all): their readings hold the other copies' deletions (`_at_seam_copies`).
SEAM_CHECKS = frozenset({"deletion_edge_repeats", "changes_nothing"})


def _at_seam_copies(i: int, c: Candidate, orig: list[str], choice: list[Candidate | None]) -> list[Variant]:
    """Region i anchored at an earlier copy of all the lines it shows before one of its
    blank-separated seams (a later copy of those after it), the lines between deleted: an item
    deleted from a family whose items end alike shows the previous item's tail, which the nearest
    copy reads as the deleted item's own."""
    keys = [x.rstrip() for x in orig]
    lo = next((choice[j].end + 1 for j in range(i - 1, -1, -1) if choice[j] is not None), 0)
    hi = next((choice[j].start for j in range(i + 1, len(choice)) if choice[j] is not None), len(orig))
    code = [k for k, x in enumerate(c.lines) if not is_blank(x)]
    above, below = c.first - code[0], code[-1] - c.last  # (the anchors' lines within the region's code)
    out = []
    for side, run, at in seam_copies(keys, c.lines, c.start - above, c.end + below, lo, hi, ALTERNATIVES):
        # (only a copy of a run that holds the region's first (last) anchor can carry it there)
        if side == "above" and above < len(run):
            out.append(Variant(choice=((i, replace(c, start=at + above)),)))
        elif side == "below" and below < len(run):
            out.append(Variant(choice=((i, replace(c, end=at - below)),)))
    return out


def _new_block_between_anchors(c: Candidate, orig: list[str], lang: str | None) -> bool:
    """The placement's lines between its first and last anchor open a block the original lacks: its
    closing lines may have paired with an original block's (`return null;` / `}`), and then the
    lines between were edited by no one (the doubt `Variant.inserted` reads the other way)."""
    known = {x.strip() for x in orig}
    return any(opens_block(x, lang) and x.strip() not in known for x in c.lines[c.first + 1:c.last])


def _wrap_before(i: int, wrap) -> Wrap | None:
    """The marker wrap right before region i (under the wrap reading), if any."""
    return next((w for w in wrap[1] if w.i == i - 1), None) if wrap is not None and i > 0 else None


def _cheapest_in_order(regions: list[Region]) -> list[Candidate | None] | None:
    """Each anchored region's cheapest candidate that starts after the previous one ends, or None."""
    out: list[Candidate | None] = []
    pos = -1
    for r in regions:
        if not r.candidates:
            out.append(None)
            continue
        c = next((c for c in sorted(r.candidates, key=lambda c: (c.cost, c.start)) if c.start > pos), None)
        if c is None:
            return None
        out.append(c)
        pos = c.end
    return out


def _place_regions(regions: list[Region], orig: list[str],
                   partial_ok: bool) -> tuple[list[Candidate | None], int, str | None]:
    """Candidate placements of each region, and the cheapest in-order choice (see anchor.py)."""
    idx = OriginalIndex(orig)
    for i, r in enumerate(regions):
        edge = None
        if not partial_ok and i == len(regions) - 1 and not r.marker_after:
            edge = "end"
        elif not partial_ok and i == 0 and not r.marker_before:
            edge = "start"
        r.candidates = place_region(r, idx, edge)
    return order_regions(regions)


def _anchored_span(i: int, c: Candidate, fit: RegionFit, variant: Variant | None) -> Span:
    """The original span anchored region i at placement c replaces, and its lines: its edge lines
    paired as `fit` pairs them, unless the variant reads them (or all its lines past one anchor) as
    inserted; the blank separator after new definitions, unless the variant flips it."""
    start = c.start if variant and (i, "lead") in variant.unpaired else fit.start
    end = c.end + 1 if variant and (i, "trail") in variant.unpaired else fit.end
    if variant and variant.edge_edit:  # (only a side the check doubts: elsewhere no reading of its own)
        for side, _, j, _ in keyed_edges(fit):
            if (i, side) in variant.edge_edit:
                start, end = (start, j + 1) if side == "trail" else (j, end)
    if variant and (i, "after_first") in variant.inserted:
        return start, c.start + 1, list(c.lines)
    if variant and (i, "before_last") in variant.inserted:
        return c.end, end, list(c.lines)
    edited = variant is not None and (i, "trail") in variant.edge_edit and any(x[0] == "trail" for x in keyed_edges(fit))
    sep = [] if edited else _separator_after(fit)  # (the edge line replaces a line: no separator of its own)
    if variant and i in variant.separator_flipped:
        sep = [] if sep else _blank_if_new_code_meets(fit)
    return start, end, list(c.lines) + sep


def _fit(i: int, regions: list[Region], c: Candidate, orig: list[str], prev_end: int, next_start: int,
         partial_ok: bool, lang: str | None, lowered: bool = False) -> RegionFit:
    """Region i at placement c: the original span its edge lines (beyond the anchors) replace."""
    lead, trail = c.lines[:c.first], c.lines[c.last + 1:]
    start, f_lead = consume_back(lead, orig, c.start, prev_end)
    paired, f_trail = consume_forward(trail, orig, c.end + 1, next_start)
    new_trail = trail[paired - (c.end + 1):]
    end = _through_closing_tail(new_trail, orig, paired) if i == len(regions) - 1 and \
        not regions[i].marker_after else paired
    fit = RegionFit(i, regions[i], c, orig, prev_end, next_start, start, end, lead, trail,
                    new_lead=lead[:len(lead) - (c.start - start)] if c.start > start else lead,
                    new_trail=new_trail,
                    next_region=regions[i + 1] if i + 1 < len(regions) else None,
                    partial_ok=partial_ok, lang=lang, fuzzy=f_lead + f_trail,
                    opened=_opened_by_new_lines(regions[:i], c.lines[:c.first], orig), lowered=lowered)
    return fit


def _through_closing_tail(new_trail: list[str], orig: list[str], end: int) -> int:
    """The last region, with no marker after it, ends with the closing lines the file ends with
    (`end`, `}`) after new lines: they are those lines (the span reaches the file's end), not new
    ones beside them (a module's `end` doubled after methods shown from column 0)."""
    tail = [x for x in orig[end:] if not is_blank(x)]
    code = [x for x in new_trail if not is_blank(x)]
    if not tail or len(tail) >= len(code) or any(x.strip() not in CLOSERS for x in tail) or \
            [x.rstrip() for x in code[-len(tail):]] != [x.rstrip() for x in tail]:
        return end
    return len(orig) - next(k for k, x in enumerate(reversed(orig)) if not is_blank(x))


def _separator_after(fit: RegionFit) -> list[str]:
    """Blank lines to put after new definitions (or new statements after blank lines only) that end a
    region at a marker, when original code follows right there: the separator the snippet wrote
    before them (between the block it shows and the new code) goes after them too, as it stood
    between the old neighbours."""
    trail, o = fit.trail, fit.orig
    if not fit.region.marker_after or not fit.new_trail or is_blank(fit.new_trail[-1]) or \
            fit.end >= len(o) or is_blank(o[fit.end]) or o[fit.end].strip() in CLOSERS:
        return []
    sep = 0
    while sep < len(trail) and is_blank(trail[sep]):
        sep += 1
    first_new = next(x for x in fit.new_trail if not is_blank(x))
    if len(fit.region.after_indent or "") > len(indent_of(first_new)):
        return []  # the marker is inside the new code (its body goes on): no sibling follows here
    paired = o[fit.c.end + 1:fit.end]
    # new definitions, or new statements where the region's trail paired only blank lines: those were
    # the blank lines before the line the marker resumes at, which stay there (a new `if` block before
    # a closing marker keeps the blank line above the `return` the marker stands for)
    if sep == 0 or not (defines_something(fit.new_trail, fit.lang) or all(is_blank(x) for x in paired)):
        return []
    return [""] * min(sep, sum(1 for x in paired if is_blank(x)))


def _blank_if_new_code_meets(fit: RegionFit) -> list[str]:
    """One blank line, where the region's new definitions end right against original code (a
    reading: the snippet did not write the separator the file has between definitions); as many
    as the snippet set its new code off with, where that code is an item of its own
    (`checks.new_item_against_next_item`)."""
    o = fit.orig
    if not fit.new_trail or is_blank(fit.new_trail[-1]) or fit.end >= len(o) or is_blank(o[fit.end]) or \
            o[fit.end].strip() in CLOSERS:
        return []
    if defines_something(fit.new_trail, fit.lang):
        return [""]
    if new_item_against_next_item(fit) is None:
        return []
    sep = 0
    while sep < len(fit.trail) and is_blank(fit.trail[sep]):
        sep += 1
    return [""] * max(1, min(sep, sum(1 for x in o[fit.c.end + 1:fit.end] if is_blank(x))))


def _opened_by_new_lines(earlier: list[Region], lead: list[str], orig: list[str]) -> int:
    """Brackets opened and not closed by the snippet's new lines (not in the original) before a
    region's first anchor: a `}` there may close them (a block the snippet added)."""
    known = _stripped(orig)
    lines = [x for r in earlier for x in r.lines] + lead
    return sum(bracket_delta(x) for x in lines if x.strip() not in known)


@last_object
def _stripped(orig: list[str]) -> frozenset[str]:
    """The original's lines, stripped: asked once per region placement of a 5,000-line file."""
    return frozenset(x.strip() for x in orig)


def _confidence(margin: int, fuzzy: int, kept_edges: bool) -> tuple[float, list[str]]:
    """Confidence of a line placement and the doubts it carries."""
    confidence = CONFIDENCE_LINES_CLEAR if margin >= 2 else CONFIDENCE_LINES_CLOSE if margin == 1 \
        else CONFIDENCE_LINES_TIGHT
    confidence -= FUZZY_PENALTY * min(fuzzy, FUZZY_PENALTY_LINES)
    doubts = []
    if fuzzy:
        doubts.append(f"{fuzzy} edge line(s) matched by similarity")
    if kept_edges:
        confidence = min(confidence, CONFIDENCE_LOOSE_EDGES)
        doubts.append("kept the original's lines above/below the snippet, which has no marker there: its "
                      "markers are loose (column 0 inside indented code), read as elision, not deletion")
    return confidence, doubts


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


def _whole_definitions(spans, regions, orig, defs, lang, may_end_file):
    """Extend each span over the rest of a definition its region restates whole (see whole_defs.py).
    defs: the original's definitions. may_end_file: whether a last region without a marker after it
    ends the file (not in a marker-free snippet, nor with loose markers: what they skip stays)."""
    out = []
    for i, ((start, end, repl), r) in enumerate(zip(spans, regions)):
        limit = spans[i + 1][0] if i + 1 < len(spans) else len(orig)
        ends_file = may_end_file and i == len(spans) - 1 and not r.marker_after
        new_end = extend_to_whole_definition(start, end, repl, r.lines, orig, defs, limit, lang,
                                             r.after_indent if r.marker_after else None, ends_file)
        out.append((start, new_end, repl))
    return out


