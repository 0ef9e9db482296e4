"""Reasons to refuse a placement that is cheapest but not certain (see lineplace.merge_lines)."""

from __future__ import annotations

from fastapply.merge.fallback import CLOSERS
from fastapply.merge.text import is_blank


def defines_something(lines: list[str], lang: str | None) -> bool:
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


def blank_run(lines: list[str], blank: bool) -> int:
    """Length of the leading run of lines that are blank (blank=True) or not (blank=False)."""
    n = 0
    while n < len(lines) and is_blank(lines[n]) == blank:
        n += 1
    return n


def weak_edge(c, orig: list[str], lo: int, hi: int) -> str | None:
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
    near = 2  # a reader would take "these few lines were deleted too" as a plausible reading
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
