"""Region rules (context: `RegionFit`): lines the snippet shows in another order than the original.

Line anchors come in order, so a swap shown with little context, or a line moved across a block
opener, is placed as deletions and insertions instead: refused.
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher

from fastapply.merge.checks.base import RegionFit
from fastapply.merge.seams import opens_block
from fastapply.merge.text import indent_of, is_blank, is_trivial
from fastapply.merge.wrap_regions import clause_word

REORDER_MAX = 60  # regions up to this many lines are checked for being a nearby reorder


def reordered_run(fit: RegionFit) -> str | None:
    """The region's lines are, in another order, a run of original lines (in the region's gap), but
    the placement replaces something else: the snippet swapped lines there (a reorder shown with
    little context), while its anchors (which must come in order) placed it so as to delete or
    repeat lines instead."""
    c, o = fit.c, fit.orig
    lines = [x.rstrip() for x in c.lines if not is_blank(x)]
    n = len(lines)
    if n < 2 or n > REORDER_MAX:
        return None
    want = Counter(lines)
    span = [x.rstrip() for x in o[fit.start:fit.end] if not is_blank(x)]
    code = [o[j].rstrip() for j in range(max(fit.prev_end, 0), fit.next_start) if not is_blank(o[j])]
    for k in range(len(code) - n + 1):
        if code[k] not in want or code[k + n - 1] not in want:
            continue
        window = code[k:k + n]
        if window != lines and window != span and Counter(window) == want:
            return (f"region {fit.i + 1}'s lines occur in the original in another order "
                    f"(from `{window[0].strip()[:40]}`): "
                    "a reorder the line anchors cannot place; refusing rather than deleting or repeating lines")
    return None


def moved_across_opener(fit: RegionFit) -> str | None:
    """A line the region adds is, at another indentation, an original line the placement deletes on
    the other side of a block opener both share (`# note` above `try:` in the original, below it in
    the snippet): either the code moved into that block, or the snippet's opener is a new one
    wrapping the code (the wrap reading). Which one, the lines do not say."""
    a = [x.rstrip() for x in fit.c.lines]
    b = [x.rstrip() for x in fit.orig[fit.start:fit.end]]
    sm = SequenceMatcher(None, a, b, autojunk=False)
    pairs = [(m.a + k, m.b + k) for m in sm.get_matching_blocks() for k in range(m.size)]
    kept_b = {j for _, j in pairs}
    kept_a = {i for i, _ in pairs}
    openers = [(i, j) for i, j in pairs if opens_block(a[i], fit.lang)]
    # (and a clause the region edits in place: `} catch (outer) {` for `} catch (err) {`, the same
    # keyword at the same indentation, which the edge lines pair by similarity)
    openers += [(i, j) for i, x in enumerate(a) if i not in kept_a and opens_block(x, fit.lang)
                for j, y in enumerate(b) if j not in kept_b and _same_clause(x, y) and opens_block(y, fit.lang)]
    for i, x in enumerate(a):
        if i in kept_a or is_blank(x) or is_trivial(x):
            continue
        for j, y in enumerate(b):
            if j in kept_b or y.strip() != x.strip() or y == x:
                continue
            for oi, oj in openers:
                if (i > oi) != (j > oj):
                    return (f"region {fit.i + 1} moves `{x.strip()[:40]}` across `{a[oi].strip()[:30]}` at another "
                            "indentation: into that block, or is the block new, wrapping it?")
    return None


def _same_clause(x: str, y: str) -> bool:
    """Two clauses of one kind that go on with the block before them (`} catch (a) {`, `} catch (b)
    {`; `except E:`), at the same indentation. (Not openers such as `if`: an edited condition is no
    other copy of the block.)"""
    return x != y and indent_of(x) == indent_of(y) and clause_word(x) is not None and clause_word(x) == clause_word(y)
