"""Line-anchor placement: find where each region of a lazy snippet goes in the original.

A region is the text between two markers. Its first and last lines that also occur in the original
are its anchors; each pair of anchor occurrences (in order) is a candidate placement, scored by the
line edit distance between the region and the original span it would replace. The cheapest
placement wins; a tie (two equally good places) is reported so that the caller refuses.
Regions must be placed in order; a small dynamic program picks the cheapest ordered assignment and
counts how many assignments reach that cost.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from fastapply.merge.deadline import check as check_deadline
from fastapply.merge.diff import edit_distance
from fastapply.merge.text import CLOSERS, is_blank, is_trivial, key, reindent

MAX_PAIRS = 4000  # anchor-occurrence pairs examined per region
WEIGHT_INS, WEIGHT_DEL = 1, 2  # removing original lines is the bolder reading
MARGIN = 4  # keep candidates up to best + MARGIN (for ordering, ambiguity and confidence)


@dataclass
class Candidate:
    cost: int
    start: int  # original index of the first anchor
    end: int  # original index of the last anchor (inclusive)
    lines: list[str]  # the region, re-indented to this place
    first: int  # index in the region of the first anchor line
    last: int  # index in the region of the last anchor line
    context: int = 0  # region lines matching consecutively inwards from both anchors
    matched: int = 0  # region lines (between the anchors) that this placement explains as unchanged
    solid: bool = True  # rests on a non-trivial line or a unique anchor (see _has_solid_match)
    estimated: bool = False  # cost only known to exceed the margin (kept for the context check)


@dataclass
class Region:
    lines: list[str]
    marker_before: bool
    marker_after: bool
    after_indent: str | None = None  # leading whitespace of the marker after the region
    before_indent: str | None = None  # ... and of the marker before it
    after_line: str = ""  # the marker line after the region (right-stripped), and the one before it
    before_line: str = ""
    new_opener: int | None = None  # under the wrap reading: the index of the block opener it calls new
    candidates: list[Candidate] = field(default_factory=list)
    best_context: int = 0  # most context any placement keeps (see order_regions' caller)
    contested: bool = False  # a cheaper placement exists that rests only on common lines
    # placements as cheap as the one that claims the file's edge, set aside by that claim: (first, last line)
    edge_ties: list[tuple[int, int]] = field(default_factory=list)
    # placements dearer than the candidates' margin (checks.tied_alternative weighs what they explain)
    dearer: list[Candidate] = field(default_factory=list)
    blank_head: int = 0  # blank lines the snippet starts with (dropped from the first region; see checks.unmarked_head)
    # the solid placement that keeps the most context, even one whose cost is only estimated (a
    # reading of its own when it is not the cheapest: checks.context_split refuses then)
    widest: Candidate | None = None
    # placements through inner anchors that reach the file's edge the region claims, at any cost, when
    # none of its candidates does: a side of the missing edge marker's doubt (lineplace._at_file_edge)
    at_edge: list[Candidate] = field(default_factory=list)


class OriginalIndex:
    """Positions of each original line, by exact text and by stripped text."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.keys = [key(ln) for ln in lines]
        self.exact: dict[str, list[int]] = {}
        self.stripped: dict[str, list[int]] = {}
        for i, ln in enumerate(lines):
            self.exact.setdefault(self.keys[i], []).append(i)
            s = ln.strip()
            if s:
                self.stripped.setdefault(s, []).append(i)


HEADS, TAILS = 3, 8  # anchor lines tried first from each end of a region
WIDE_PAIRS = 64  # further anchor pairs tried when those fail


def _outer_present(lines: list[str], idx: OriginalIndex) -> list[int]:
    """Region lines that occur in the original (ignoring indentation), less the closing brackets
    that close new code of the region."""
    present = [i for i, ln in enumerate(lines) if not is_blank(ln) and ln.strip() in idx.stripped]
    inner = _inner_closers(lines, set(present))
    return [i for i in present if i not in inner]


def _anchor_choices(lines: list[str], idx: OriginalIndex) -> list[tuple[int, int]]:
    """(first, last) anchor pairs to try: the first and last region lines that occur in the original
    (ignoring indentation), plus the next ones in, in case an edge line is new but happens to occur
    elsewhere in the file."""
    outer = _outer_present(lines, idx)
    return [(a, b) for a in outer[:HEADS] for b in outer[::-1][:TAILS] if a <= b]


def _wide_choices(lines: list[str], idx: OriginalIndex, tried: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Anchor pairs beyond `tried`: lines that occur in the original as they stand (with their
    indentation), nearest the region's ends first. A region whose edge lines are all re-indented
    (moved out of a removed block) anchors on the lines further in."""
    same = [i for i in _outer_present(lines, idx) if key(lines[i]) in idx.exact and not is_trivial(lines[i])]
    n, done = len(same), set(tried)
    pairs = [(ka + (n - 1 - kb), (a, b)) for ka, a in enumerate(same) for kb, b in enumerate(same)
             if a <= b and (a, b) not in done]
    return [ab for _, ab in sorted(pairs)][:WIDE_PAIRS]


def _inner_closers(lines: list[str], present: set[int]) -> set[int]:
    """Closing-bracket lines (`}`, `);`) that close a bracket opened on a new line of the region:
    they end new code and say nothing about where the region goes."""
    stack: list[int] = []
    inner = set()
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s and s[0] in "})]" and is_trivial(s) and stack and stack[-1] not in present:
            inner.add(i)
        for ch in s:
            if ch in "{([":
                stack.append(i)
            elif ch in "})]" and stack:
                stack.pop()
    return inner


def _context(shifted: list[str], a: int, b: int, idx: OriginalIndex, s: int, e: int) -> int:
    """Region lines that match the original consecutively from each anchor inwards."""
    head = 0
    while a + head <= b and s + head <= e and key(shifted[a + head]) == idx.keys[s + head]:
        head += 1
    tail = 0
    while b - tail >= a and e - tail >= s and key(shifted[b - tail]) == idx.keys[e - tail]:
        tail += 1
    return min(head + tail, b - a + 1)


def place_region(region: Region, idx: OriginalIndex, edge: str | None = None) -> list[Candidate]:
    """Candidate placements of a region, cheapest first (costs up to best + MARGIN).

    edge: "start" / "end" when the region has no marker before / after it in a snippet that has
    markers, so it claims the top / bottom of the file (see _reaching_edge)."""
    lines = region.lines
    found: list[Candidate] = []
    choices = _anchor_choices(lines, idx)
    for a, b in choices:  # the outermost anchors first; others only if they fail
        found = _place(lines, a, b, idx)
        if found:
            break
    if not any(c.solid and not c.estimated for c in found):
        for a, b in _wide_choices(lines, idx, choices):
            wide = [c for c in _place(lines, a, b, idx) if c.solid and not c.estimated]
            if wide:
                found = wide
                break
    if edge is not None and found:
        narrowed = _reaching_edge(lines, idx, choices, found, edge)
        region.edge_ties = _edge_ties(found, narrowed, edge, idx)
        found = narrowed
        if not any(_reaches(c, idx, edge) for c in found):
            region.at_edge = _inner_reaching(lines, idx, choices, lambda c: _reaches(c, idx, edge), edge, None)
    region.best_context = max((c.context for c in found), default=0)
    if not found:
        return []
    # the same placement found through different anchor choices: keep the cheapest
    uniq: dict[tuple[int, int, int], Candidate] = {}
    for c in found:
        k = (c.start - c.first, c.end + len(lines) - 1 - c.last, c.lines[c.first][:len(c.lines[c.first]) - len(c.lines[c.first].lstrip())])
        if k not in uniq or c.cost < uniq[k].cost:
            uniq[k] = c
    found = sorted(uniq.values(), key=lambda c: (c.cost, c.start))
    # Placements resting only on common lines (`}`) are not trusted; but when one of them is cheaper
    # than every trusted placement, the trusted one is not certain either.
    solid = [c for c in found if c.solid]
    exact = [c for c in solid if not c.estimated]
    # (a re-indented placement that matches only closing brackets is no real contender)
    contenders = [c for c in found if not c.estimated and (c.solid or c.lines == lines)]
    region.contested = bool(exact) and bool(contenders) and contenders[0].cost < exact[0].cost
    region.best_context = max((c.context for c in solid), default=0)
    region.widest = max(solid, key=lambda c: (c.context, -c.cost), default=None)
    found = exact
    if not found:
        return []
    best = found[0].cost
    region.dearer = [c for c in found if c.cost > best + MARGIN]
    return [c for c in found if c.cost <= best + MARGIN]


def _reaching_edge(lines: list[str], idx: OriginalIndex, choices: list[tuple[int, int]], found: list[Candidate],
                   edge: str) -> list[Candidate]:
    """Keep only placements that reach the file's first / last line of code, if one is no dearer
    than every placement that does not. A placement that stops short would leave code beyond a
    region that claims the edge (the caller refuses that), so it cannot be used; but when it is the
    cheapest, "delete the rest" is a reading too, and nothing is narrowed."""
    code = [i for i, ln in enumerate(idx.lines) if not is_blank(ln)]
    if not code:
        return found
    target = code[0] if edge == "start" else code[-1]

    def reaches(c: Candidate) -> bool:
        return (c.start if edge == "start" else c.end) == target

    short = min((c.cost for c in found if not reaches(c) and not c.estimated), default=None)
    reach = [c for c in found if reaches(c)]
    if reach and (short is None or min(c.cost for c in reach) <= short):
        # An inner edge anchor that reaches the edge too, more cheaply, reads the lines after it as
        # appended (a new function's `}` paired with the file's last `}` instead): the snippet's
        # blank line before them then pairs with the original's trailing one, not added again.
        if edge == "end":
            inner = _inner_reaching(lines, idx, choices, reaches, edge, min(c.cost for c in reach))
            if inner:
                return inner
        return reach
    # Through inner anchors on the edge's side only, in the usual order (the region's line at the
    # edge may be new code that happens to occur elsewhere in the file): the first that reaches the
    # edge more cheaply. The other side keeps its outermost anchor: moving it inwards would turn
    # shown original lines into new ones.
    bar = min([c.cost for c in reach] + ([short] if short is not None else []), default=None)
    return _inner_reaching(lines, idx, choices, reaches, edge, bar) or found


def _reaches(c: Candidate, idx: OriginalIndex, edge: str) -> bool:
    """Does placement c reach the file's first (last) line of code?"""
    code = [i for i, ln in enumerate(idx.lines) if not is_blank(ln)]
    return bool(code) and (c.start if edge == "start" else c.end) == (code[0] if edge == "start" else code[-1])


def _inner_reaching(lines: list[str], idx: OriginalIndex, choices: list[tuple[int, int]], reaches,
                    edge: str, bar: int | None) -> list[Candidate]:
    """The placements through the first inner anchor on the edge's side that reach the edge for
    less than `bar` (the other side keeps its outermost anchor), or []."""
    a0, b0 = choices[0]
    for a, b in choices[1:]:
        if (b if edge == "start" else a) != (b0 if edge == "start" else a0):
            continue
        inner = [c for c in _place(lines, a, b, idx) if reaches(c) and not c.estimated]
        if inner and (bar is None or min(c.cost for c in inner) < bar):
            return inner
    return []


def _edge_ties(found: list[Candidate], narrowed: list[Candidate], edge: str,
               idx: OriginalIndex) -> list[tuple[int, int]]:
    """The placements that do not reach the edge, as cheap as every one that does, when the region's
    code at the edge is original code (its edge line anchored, its last (first) line that is not a
    closer standing in its span): the edge alone chose between copies of the region. (New lines at
    the edge, as in an append after the file's last lines, are what claiming the edge is for.)"""
    def original_edge(c: Candidate) -> bool:
        code = [x.rstrip() for x in c.lines if not is_trivial(x)]
        if not code or (c.last != len(c.lines) - 1 if edge == "end" else c.first != 0):
            return False
        return (code[-1] if edge == "end" else code[0]) in {y.rstrip() for y in idx.lines[c.start:c.end + 1]}

    reach = [c for c in narrowed if not c.estimated and original_edge(c)]
    if not reach:
        return []
    cost = min(c.cost for c in reach)
    kept = {(c.start, c.end) for c in narrowed}
    return [(c.start, c.end) for c in found if (c.start, c.end) not in kept and c.solid and not c.estimated and
            c.cost <= cost]


def _closers_as_written(lines: list[str], shifted: list[str], b: int, idx: OriginalIndex, e: int) -> list[str]:
    """The region re-indented to a place, but for the closing lines that end it (after its last
    anchor) which, as the snippet writes them, are the original's next lines after the place and,
    shifted, are not: members shown from column 0 with their container's `end` or `}` left where
    it stands."""
    first = len(lines)
    while first - 1 > b and lines[first - 1].strip() in CLOSERS:
        first -= 1
    j = next((j for j in range(e + 1, len(idx.lines)) if not is_blank(idx.lines[j])), None)
    if first == len(lines) or j is None:
        return shifted
    out = None
    for k in range(first, len(lines)):
        if j >= len(idx.lines) or key(lines[k]) != idx.keys[j]:
            break
        if key(shifted[k]) != idx.keys[j]:
            out = out or list(shifted)
            out[k] = lines[k]
        j += 1
    return out or shifted


def _place(lines: list[str], a: int, b: int, idx: OriginalIndex) -> list[Candidate]:
    span_len = b - a + 1
    outside = sum(1 for i, ln in enumerate(lines) if (i < a or i > b) and not is_blank(ln))
    by_indent: dict[str, list[str] | None] = {}
    pairs: list[tuple[int, int, int, list[str]]] = []
    for s in idx.stripped[lines[a].strip()]:
        ind = idx.lines[s][: len(idx.lines[s]) - len(idx.lines[s].lstrip())]
        if ind not in by_indent:
            by_indent[ind] = reindent(lines, lines[a], idx.lines[s])
        shifted = by_indent[ind]
        if shifted is None or key(shifted[a]) != idx.keys[s]:
            continue
        if a == b:
            pairs.append((0, s, s, shifted))
            continue
        ends = idx.exact.get(key(shifted[b]), [])
        for e in ends[bisect.bisect_right(ends, s):]:
            pairs.append((abs((e - s + 1) - span_len), s, e, shifted))
    if not pairs:
        return []
    pairs.sort(key=lambda p: p[0])
    pairs = pairs[:MAX_PAIRS]
    contexts = [_context(sh, a, b, idx, s, e) for _, s, e, sh in pairs]
    top = max(contexts)
    must = {i for i, c in enumerate(contexts) if c == top}
    best: int | None = None
    found: list[Candidate] = []
    keys_cache: dict[int, list[str]] = {}
    deferred: list[int] = []

    def region_keys(shifted: list[str]) -> list[str]:
        rk = keys_cache.get(id(shifted))
        if rk is None:
            rk = keys_cache[id(shifted)] = [key(x) for x in shifted[a:b + 1]]
        return rk

    def evaluate(i: int, cap: int) -> Candidate | None:
        _, s, e, shifted = pairs[i]
        rk = region_keys(shifted)
        d = edit_distance(rk, idx.keys[s:e + 1], cap=cap)
        if d is None:
            return None
        dels = (d - (len(rk) - (e - s + 1))) // 2
        cost = WEIGHT_INS * (d - dels + outside) + WEIGHT_DEL * dels
        return Candidate(cost, s, e, _closers_as_written(lines, shifted, b, idx, e), a, b, contexts[i],
                         (len(rk) + (e - s + 1) - d) // 2, _has_solid_match(rk, idx, s, e, shifted != lines))

    for i, (lb, s, e, shifted) in enumerate(pairs):
        if i % 64 == 0:
            check_deadline()
        if best is not None and WEIGHT_INS * lb > best + MARGIN:
            if i in must:
                deferred.append(i)
            continue
        c = evaluate(i, span_len + 600 if best is None else best + MARGIN + span_len)
        if c is not None:
            found.append(c)
            best = c.cost if best is None else min(best, c.cost)
    # The placements that keep the most context must be known even when they are expensive (the
    # caller refuses when they disagree with the cheapest); their exact cost beyond the margin is not.
    for i in deferred:
        c = evaluate(i, (best or 0) + MARGIN)
        _, s, e, shifted = pairs[i]
        if c is None:
            c = Candidate((best or 0) + MARGIN + 1, s, e, shifted, a, b, contexts[i], 0,
                          _has_solid_match(region_keys(shifted), idx, s, e, shifted != lines), estimated=True)
        if c is not None:
            found.append(c)
    return found


def _has_solid_match(region_keys: list[str], idx: OriginalIndex, s: int, e: int, shifted: bool = False) -> bool:
    """A placement must rest on at least one line that is not trivial (`}`, blank), unless one of
    its anchors is unique in the file: a region matching only on `}` lines could go anywhere."""
    span = set(idx.keys[s:e + 1])
    for k in region_keys:
        if k in span and not is_trivial(k):
            return True
    if shifted:  # re-indented to fit: a lone `}` that happens to be unique proves nothing
        return False
    first, last = region_keys[0], region_keys[-1]
    return len(idx.exact.get(first, [])) == 1 or len(idx.exact.get(last, [])) == 1


def order_regions(regions: list[Region]) -> tuple[list[Candidate | None], int, str | None]:
    """Cheapest in-order choice of one candidate per anchored region.

    Returns (choice per region, margin to the next best distinct assignment, error). Regions without
    candidates get None (the caller decides). error is set when no ordered assignment exists or two
    assignments tie for cheapest.
    """
    placed = [i for i, r in enumerate(regions) if r.candidates]
    choice: list[Candidate | None] = [None] * len(regions)
    if not placed:
        return choice, 0, None
    # dp over placed regions: for each candidate, (best cost, number of ways, back pointer, second best)
    INF = float("inf")
    prev_states: list[tuple[float, int, int, float]] = []
    history: list[list[tuple[float, int, int, float]]] = []
    prev_cands: list[Candidate] = []
    for n, ri in enumerate(placed):
        cands = regions[ri].candidates
        states = []
        for c in cands:
            if n == 0:
                states.append((float(c.cost), 1, -1, INF))
                continue
            best, ways, back, second = INF, 0, -1, INF
            for j, pc in enumerate(prev_cands):
                if pc.end >= c.start:
                    continue
                pb, pw, _, ps = prev_states[j]
                total = pb + c.cost
                if total < best:
                    second = min(second, best, ps + c.cost)
                    best, ways, back = total, pw, j
                elif total == best:
                    ways += pw
                    second = min(second, ps + c.cost)
                else:
                    second = min(second, total, ps + c.cost)
            states.append((best, ways, back, second))
        history.append(states)
        prev_states, prev_cands = states, cands
    final = min(range(len(prev_states)), key=lambda j: prev_states[j][0])
    best_total = prev_states[final][0]
    if best_total == INF:
        return choice, 0, "the snippet's regions cannot be placed in order in the original"
    ways = sum(st[1] for st in prev_states if st[0] == best_total)
    second = min([st[3] for st in prev_states] + [st[0] for st in prev_states if st[0] != best_total])
    if ways > 1:
        return choice, 0, "ambiguous placement: two places in the original fit the snippet equally well"
    j = final
    for n in range(len(placed) - 1, -1, -1):
        choice[placed[n]] = regions[placed[n]].candidates[j]
        j = history[n][j][2]
    margin = int(second - best_total) if second != INF else MARGIN + 1
    return choice, margin, None
