"""Region rules (context: `RegionFit`): which copy of repeated lines does the region mean?

Placements that tie: a cheaper one on common lines, one that keeps more context, one that costs
about the same or explains more, context lines or edge runs that repeat nearby, a line the region
adds that already stands below another copy of its first anchor, a region whose lines go on as the
original's past its place (its other anchor on a later copy).
"""

from __future__ import annotations

from difflib import SequenceMatcher

from fastapply.merge.anchor import Candidate
from fastapply.merge.checks.base import RegionFit
from fastapply.merge.checks.helpers import added_lines
from fastapply.merge.text import indent_of, is_blank, is_trivial

AMBIGUITY = 4  # placement cost (anchor.py): an alternative this close, explaining as many lines, is a tie
# lines: a repeat this close to a region's edge makes "these few lines were deleted too" a plausible reading
NEAR = 2
SHORT_LINE = 8  # characters: a lone opener line this short (`if (`) identifies nothing ...
SHORT_NEAR = 8  # ... this many lines away


def contested(fit: RegionFit) -> str | None:
    """A placement resting only on common lines (`}`), which is not trusted, is cheaper than every trusted
    one (`Region.contested`, anchor.py): the chosen one is not certain either."""
    if fit.region.contested:
        return (f"region {fit.i + 1} also fits, more cheaply, at a place that matches only on common "
                "lines such as `}`: not certain")
    return None


def context_split(fit: RegionFit) -> str | None:
    """The cheapest placement is not the one that keeps the most of the snippet's context lines together
    (`Region.best_context`): cost and context point at different places."""
    if fit.c.context < fit.region.best_context:
        return (f"region {fit.i + 1}: the cheapest placement (line {fit.c.start + 1}) is not the one that "
                "keeps the snippet's context lines together; refusing to pick")
    return None


def tied_alternative(fit: RegionFit) -> str | None:
    """Another placement in the same gap explains as many lines at about the same cost. One that
    shares an anchor with it must explain more, its other anchor on another copy of the region's
    edge line (`assert x == y` ending two blocks of a test), and the chosen placement must keep,
    between the two copies, a line the region adds: the old lines beside the region's new
    version of them (a rename through a whole function, anchored on its first block's end). The
    latter may cost more than the margin, by up to the number of lines it explains beyond the chosen
    one (a rename through many lines makes the longer span dear: each renamed line is a deletion
    too; so the lines between the two ends must be about half explained), and by twice that when it
    keeps as much of the snippet's context together as the chosen one (the function's `}` left to
    the marker in brace languages makes the span dearer still). The real commits_dev edit
    express@c9ecf7b65838 test/app.render.js, whose nearer end is right, keeps more: 15 lines to 10."""
    c = fit.c
    for alt in fit.region.candidates + fit.region.dearer:
        extra, shared = alt.cost - c.cost, alt.start == c.start or alt.end == c.end
        explained = (alt.matched - c.matched) * (2 if alt.context >= c.context else 1) if shared else 0
        if alt.start == c.start and alt.end == c.end or extra > max(AMBIGUITY, explained) or \
                not (fit.prev_end <= alt.start and alt.end < fit.next_start):
            continue
        if alt.start != c.start and alt.end != c.end and alt.matched >= c.matched and extra <= AMBIGUITY:
            return (f"region {fit.i + 1} fits at line {c.start + 1} and at line {alt.start + 1} alike "
                    "(same lines explained; they differ only in what the edit would delete)")
        if alt.matched > c.matched:  # one anchor shared, the other on another copy of its line
            kept = range(c.end + 1, alt.end) if alt.start == c.start else range(alt.start + 1, c.start)
            added = {x.rstrip() for x in added_lines(c.lines, fit.orig[c.start:c.end + 1])}
            copy = next((j for j in kept if fit.orig[j].rstrip() in added), None)
            if copy is not None:
                return (f"region {fit.i + 1} fits on lines {c.start + 1}-{c.end + 1} and, explaining more of its "
                        f"lines ({alt.matched} to {c.matched}), on lines {alt.start + 1}-{alt.end + 1}; the first would "
                        f"keep line {copy + 1} (`{fit.orig[copy].strip()[:40]}`), which the region adds again: "
                        "which is meant?")
    return None


INNER_RUN = 4  # lines: a run of the region's shown lines this long, standing whole elsewhere, names a place


def deletes_inside_a_run_that_stands_elsewhere(fit: RegionFit) -> str | None:
    """The placement deletes original lines between two lines the region shows together, and the
    run of shown lines around that deletion stands whole, as written, elsewhere in the gap: there
    the region deletes nothing inside it (and what lies beyond it instead). Which copy of the run is
    meant is the question (a test's last lines, `inc()` / `return <></>` / `}` / `TestComponent` /
    `})` / `})`, which every test of a file ends with: held-out fuzz seed 30917, `delete_between`
    #330, wrong on 9b63fe1 too)."""
    c, o = fit.c, fit.orig
    region = [x.rstrip() for x in c.lines[c.first:c.last + 1]]
    span = [x.rstrip() for x in o[c.start:c.end + 1]]
    ops = SequenceMatcher(None, region, span, autojunk=False).get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "insert" or k == 0 or k == len(ops) - 1:  # (original lines the region lacks)
            continue
        if ops[k - 1][0] != "equal" or ops[k + 1][0] != "equal":
            continue
        lo, hi = ops[k - 1][1], ops[k + 1][2]  # the run of shown lines around the deletion
        run = region[lo:hi]
        if sum(1 for x in run if not is_blank(x)) < INNER_RUN:
            continue
        for s in range(fit.prev_end, fit.next_start - len(run) + 1):
            if not c.start <= s <= c.end and [x.rstrip() for x in o[s:s + len(run)]] == run:
                return (f"region {fit.i + 1} deletes lines between its lines `{run[ops[k - 1][2] - lo - 1].strip()[:40]}` "
                        f"and `{run[ops[k + 1][1] - lo].strip()[:40]}`, which stand together as written at line "
                        f"{s + 1}: which copy is meant?")
    return None


def run_past_span(fit: RegionFit) -> str | None:
    """The region's lines, read from its first anchor on (from its last one back), go on matching
    the original past the end (start) of the span it replaces, before its other anchor: the
    placement keeps those original lines beside the span and shows them again inside it as new.
    Its other anchor paired with a later copy of its line in the region (`except Exception:` of
    the old handler, and of a new one after it; held-out fuzz seed 52117), or the run was meant
    and the anchor is wrong: either way the lines would stand twice."""
    c, o = fit.c, fit.orig

    def run(step: int) -> int:
        k = 0
        p, j = (c.first, c.start) if step > 0 else (c.last, c.end)
        while c.first <= p + step * k <= c.last and 0 <= j + step * k < len(o) and \
                c.lines[p + step * k].rstrip() == o[j + step * k].rstrip():
            k += 1
        return k

    past = [j for j in range(c.start, c.start + run(1)) if fit.end <= j < fit.next_start] + \
        [j for j in range(c.end - run(-1) + 1, c.end + 1) if max(fit.prev_end, 0) <= j < fit.start]
    shown = [j for j in past if not is_trivial(o[j])]
    if shown:
        return (f"region {fit.i + 1} goes on as the original does past its place (line {shown[0] + 1}, "
                f"`{o[shown[0]].strip()[:50]}`), which the placement keeps: shown twice, or is the anchor "
                "another copy?")
    return None


def rests_on_repeated_lines(fit: RegionFit) -> str | None:
    """The region replaces original lines, and every line it shares with its place (besides common
    lines like `}`) occurs more than once in its gap: a function rewritten whole whose header repeats
    (`fn fmt` in several impls) fits each copy; the cheapest is only the shortest body."""
    o = fit.orig
    span = {x.rstrip() for x in o[fit.start:fit.end]}
    shared = {x.rstrip() for x in fit.c.lines if not is_blank(x) and not is_trivial(x) and x.rstrip() in span}
    shown = {x.rstrip() for x in fit.c.lines}
    if not shared or all(is_blank(x) or x.rstrip() in shown for x in o[fit.start:fit.end]):
        return None  # (it replaces no original line: an insertion next to repeated context)
    gap = [x.rstrip() for x in o[max(fit.prev_end, 0):fit.next_start]]
    if all(gap.count(x) > 1 for x in shared):
        line = sorted(shared)[0]
        return (f"region {fit.i + 1} shares only repeated lines with its place (`{line.strip()[:40]}` occurs "
                f"{gap.count(line)} times): which copy is meant?")
    return None


def repeated_edge(fit: RegionFit) -> str | None:
    """The region's context on one side repeats a line or two away, with an edit next to it (`weak_edge`):
    the edit may also delete the lines up to the other copy."""
    weak = weak_edge(fit.c, fit.orig, fit.prev_end, fit.next_start)
    return f"region {fit.i + 1}: {weak}" if weak else None


def weak_edge(c: Candidate, orig: list[str], lo: int, hi: int) -> str | None:
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
    keys = [x.rstrip() for x in orig]
    near = NEAR
    if c.matched >= c.last - c.first + 1 and c.end - c.start == c.last - c.first:
        # The whole region is context, in one piece: it changes nothing where it fits best. But a
        # region is shown for a reason: if its first or last line repeats just outside, it may be
        # showing that the lines up to that copy were deleted.
        first, last = lines[c.first].rstrip(), lines[c.last].rstrip()
        for t in range(max(lo, c.start - 1 - near), c.start):
            if keys[t] == first:
                return f"it changes nothing where it fits, and its first line also occurs at line {t + 1}, just above: " \
                       "does it delete the lines in between?"
        for t in range(c.end + 1, min(hi, c.end + 2 + near)):
            if keys[t] == last:
                return f"it changes nothing where it fits, and its last line also occurs at line {t + 1}, just below: " \
                       "does it delete the lines in between?"
        return None
    if head:
        n = len(head)
        near = _reach(head)
        for t in range(max(lo, c.start - n - near), c.start):
            if keys[t:t + n] == head:
                return (f"its first context lines ({' / '.join(x.strip() for x in head)[:60]}) also occur at line "
                        f"{t + 1}, just above: the edit may also delete the lines in between")
    if tail:
        n = len(tail)
        near = _reach(tail)
        end0 = c.end - n + 1
        for t in range(end0 + 1, min(hi - n + 1, c.end + 1 + near + 1)):
            if keys[t:t + n] == tail:
                return (f"its last context lines ({' / '.join(x.strip() for x in tail)[:60]}) also occur at line "
                        f"{t + 1}, just below: the edit may also delete the lines in between")
    return None


def _reach(context: list[str]) -> int:
    """How far a copy of a region's edge context counts as "just beyond" it: a lone short line that
    only opens a bracket (`if (`, the head of a multi-line condition) says little about where it
    is, so a copy a few statements away ties. (Attributes such as `@Test` stack above every test
    and are handled by their own checks; a `}` is always a few lines away.)"""
    lone = context[0].strip() if len(context) == 1 else ""
    opener = lone.endswith(("(", "[", "{")) and not is_trivial(lone)
    return SHORT_NEAR if opener and len(lone) <= SHORT_LINE else NEAR


def added_line_at_other_anchor(fit: RegionFit) -> str | None:
    """The region's first anchor occurs again in its gap, and a line the region adds is already
    there, just below that other copy, at another indentation: the region may be meant for that
    place (an `if` removed around that line), not for the one where it costs least."""
    c, o = fit.c, fit.orig
    first = o[c.start].rstrip()
    if is_trivial(first):
        return None
    others = [j for j in range(max(fit.prev_end, 0), fit.next_start) if j != c.start and o[j].rstrip() == first]
    if not others:
        return None
    added = {x.strip(): indent_of(x) for x in added_lines(c.lines, o[fit.start:fit.end])}
    width = (c.end - c.start) + len(c.lines) + NEAR
    region = [x.strip() for x in c.lines if not is_blank(x)]
    for j in others:
        there = [x.strip() for x in o[j:min(fit.next_start, j + width)] if not is_blank(x)]
        explained = sum(m.size for m in SequenceMatcher(None, region, there, autojunk=False).get_matching_blocks())
        if explained <= c.matched:
            continue  # (ignoring indentation) the region explains no more lines there
        for k in range(j + 1, min(fit.next_start, j + 1 + width)):
            if added.get(o[k].strip(), indent_of(o[k])) != indent_of(o[k]):
                return (f"region {fit.i + 1} fits at line {c.start + 1}, but its first line also occurs at line "
                        f"{j + 1}, where its new line `{o[k].strip()[:40]}` already is: which place is meant?")
    return None


def edge_run_longer_elsewhere(fit: RegionFit) -> str | None:
    """The region's first (last) anchor line occurs again in its gap, and there more of the region's
    lines follow (precede) it as written than at the chosen place: the edge says "here", the
    cost (decided by the other anchor, which fits only at the chosen place as written) says
    "there" (a wrapped block's deeper line matches exactly in a similar function). Refuse."""
    c, o = fit.c, fit.orig
    keys = [x.rstrip() for x in o]
    lo, hi = max(fit.prev_end, 0), fit.next_start
    region = [x.rstrip() for x in c.lines]

    def run(k: int, j: int, step: int) -> int:
        n = 0
        while 0 <= k < len(region) and lo <= j < hi and region[k] == keys[j]:
            n, k, j = n + 1, k + step, j + step
        return n

    for at, k, step in ((c.start, c.first, 1), (c.end, c.last, -1)):
        here = run(k, at, step)
        for t in range(lo, hi):
            if t == at or keys[t] != keys[at]:
                continue
            there = run(k, t, step)
            extra = region[k + step * here:k + step * there:step] if step > 0 else \
                region[k - there + 1:k - here + 1]
            if there > here and any(not is_trivial(x) for x in extra):
                return (f"region {fit.i + 1}'s edge line `{keys[at].strip()[:40]}` occurs at line {at + 1} and at line "
                        f"{t + 1}, and more of the region's lines stand next to it at line {t + 1}: which is meant?")
    return None
