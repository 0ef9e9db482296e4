"""The region right after a marker wrap (wrap.py), under the wrap reading: where it goes when it is
read after the wrapped code (`after_wrapped_block`), and the check that it takes none of the wrapped
code's lines without showing them (`takes_from_wrapped_code`).
"""

from __future__ import annotations

import re

from fastapply.merge.edge_lines import consume_forward
from fastapply.merge.text import indent_of, is_blank
from fastapply.merge.wrap import Wrap, block_end, last_statement

Span = tuple[int, int, list[str]]  # (original start, end exclusive, replacement lines)


def after_wrapped_block(lines: list[str], orig: list[str], lo: int, hi: int, w: Wrap,
                         at: str) -> tuple[tuple[int, int, list[str]], int] | str:
    """The region right after a marker wrap, as a reading: inserted where the wrapped code ends (the
    rest of its block; the region's later lines then pair with the original's from there, such as
    the function's `}`), or ("before_last") before that block's last statement, which stays after
    the new block (`return rows`), or ("replace_last") in place of that last statement (a retry
    loop's new `if err == nil { return data, nil }` where `return data, err` stood)."""
    end = block_end(orig, lo, w.level, hi)
    if end <= lo:
        return "the wrapped code is empty"
    if at == "replace_last":
        # A region that goes on with the new block (`except E:`, `} catch (e) {`, `} else {`) follows
        # the wrapped code whole: read in place of its last statement, that statement would be
        # deleted unshown, and the reading only narrows the judge's margin (agent set 1's
        # `B_python`: 4.8 nats over the next reading, 2.55 with this one).
        head = next((x for x in lines if not is_blank(x)), "")
        if clause_word(head):
            return "a region that goes on with the new block replaces no statement"
        last = last_statement(orig, lo, end, w.level)
        if last is None or last <= lo:
            return "the wrapped code has no last statement to replace"
        stop, _ = consume_forward(lines, orig, end, hi)
        stop = max(stop, end + _closing_suffix(lines, orig, end, hi))
        return (last, stop, list(lines)), 0
    if at == "before_last":  # ("end" and "beside" place the region alike; apply_wraps tells them apart)
        last = last_statement(orig, lo, end, w.level)
        if last is None or last <= lo:
            return "the wrapped code has no last statement to leave out"
        if goes_past_block(lines, w):
            return "the region goes on past the block the wrapped code is in: no statement can follow the new block"
        blanks = 0  # (the region's blank lines before its marker go with the marker)
        while blanks < len(lines) and is_blank(lines[len(lines) - 1 - blanks]):
            blanks += 1
        return (last, last, list(lines[:len(lines) - blanks])), 0
    stop, _ = consume_forward(lines, orig, end, hi)
    # `} else {` ... `}` `}`, or `}` `return err` `}` and the next function as it stands: the region's
    # last lines are the original's from the block's end, as written (the edge walk may pair fewer)
    stop = max(stop, end + _closing_suffix(lines, orig, end, hi))
    return (end, stop, list(lines)), 0


def goes_past_block(lines: list[str], w: Wrap) -> bool:
    """The region right after a marker wrap goes on past the block the wrapped code is in (the next
    method, the function's `}`): the wrapped code's last statement cannot be left after the new
    block, for it would stand between two lines the snippet shows together (`return None` / the
    next `def`)."""
    return any(not is_blank(x) and len(indent_of(x)) < len(w.level) for x in lines)


def _closing_suffix(lines: list[str], orig: list[str], at: int, hi: int) -> int:
    """How many of the original's lines from `at` the region's last lines are, as written (the
    function's `}` after a new `else` branch): the most such lines, at least one not blank."""
    best = 0
    for n in range(1, min(len(lines), hi - at) + 1):
        tail = lines[len(lines) - n:]
        if all(x.rstrip() == o.rstrip() for x, o in zip(tail, orig[at:at + n])) and \
                any(not is_blank(x) for x in tail):
            best = n
    return best


CONTINUATIONS = ("else", "elif", "except", "catch", "finally")  # lines that go on with the block before them


def clause_word(line: str) -> str | None:
    """The keyword of a line that goes on with the block before it (`} catch (e) {` -> "catch",
    `except E:` -> "except"), or None."""
    m = re.match(r"[A-Za-z_]\w*", line.strip().lstrip("}").strip())
    return m.group(0) if m and m.group(0) in CONTINUATIONS else None


# Branches whose body is the new block's own alternative: their lines are new, never the wrapped
# code's moved there (a `finally` may well take the body's `conn.close()`: not among them).
NEW_BRANCHES = ("else", "elif", "except", "catch")


def opens_new_branch(lines: list[str], w: Wrap) -> bool:
    """The region right after a marker wrap is a branch of the new block (`} else {`, `except E:`,
    `} catch (err) {`) at its level, and past it only leaves the block the wrapped code is in (the
    function's `}`, the next method): every line it shows at the wrapped code's depth is the
    branch's own, even one that reads like a wrapped line (`Ok(())`, `return err`). Pairing it with
    the wrapped code's copy would move that line out of the block the marker says holds the code
    unchanged. (A statement shown after the branch, `current = nested;`, may well be the wrapped
    code's last one, left after the new block.)"""
    code = [x for x in lines if not is_blank(x)]
    if not code or indent_of(code[0]) != w.level or clause_word(code[0]) not in NEW_BRANCHES:
        return False
    for x in code[1:]:
        ind = indent_of(x)
        if len(ind) < len(w.level) or not x.startswith(w.level):
            return True  # (out of the block the wrapped code is in)
        if ind == w.level and not _BRACKETS_ONLY.match(x.strip()) and clause_word(x) not in NEW_BRANCHES:
            return False  # a statement after the branch, or a `finally`
    return True


_BRACKETS_ONLY = re.compile(r"[)\]}]+[;,]?$")


def takes_from_wrapped_code(i: int, lines: list[str], span: Span, orig: list[str], lo: int, hi: int,
                            w: Wrap) -> str | None:
    """The region right after a marker wrap replaces lines of the block the wrap takes (from the
    marker to the block's end) that it does not show as written: the handler's `return []` paired
    with the body's `return rows`, an `else` branch's `Ok(())` anchored on the body's own at another
    depth. That line is either edited (and left out of the new block) or kept (the region's line is
    new, after or inside the block): refused, with the readings (wrap.py's `block_end`)."""
    end = block_end(orig, lo, w.level, hi)
    # (only the region's head can show the block's lines: its lines before the first one that
    # leaves the block; a `return q` further down, in the next method, shows nothing here)
    head = []
    for x in lines:
        if not is_blank(x) and (len(indent_of(x)) < len(w.level) or not x.startswith(w.level)):
            break
        head.append(x)
    as_written = {x.rstrip() for x in head}
    lowered = set()
    for x in lines:  # the region's first lines inside the new block show the wrapped code's last ones
        if not is_blank(x) and not x.startswith(w.level + w.extra):
            break
        lowered.add(x[len(w.extra):].rstrip())

    def shown(x: str) -> bool:
        # (a branch line such as `else:` written at the block's level goes on with the new block as
        # much as with the wrapped code; shown one level deeper, it is the wrapped code's)
        branch = x.strip().lstrip("}").strip().startswith(CONTINUATIONS)
        return x.rstrip() in lowered or (x.rstrip() in as_written and not branch)

    taken = [x for x in orig[span[0]:min(span[1], end)] if not is_blank(x)]
    odd = next((x for x in taken if not shown(x)), None)
    if odd is not None:
        return (f"region {i + 1} replaces `{odd.strip()[:40]}`, which ends the code the new block wraps, without "
                "showing it as written: an edit of that line (left out of the block), or a new line beside it (kept "
                "in the block)?")
    # One line shown as written, at the block's level, that is the wrapped code's last one (`return
    # None` after `if enabled:` round a body that ends `return None`): the original's, left out of
    # the block, or a new one after it, the original's kept inside? (Several lines as written say
    # the block ends before them.)
    last = next((x for x in reversed(orig[lo:end]) if not is_blank(x)), None)
    if len(taken) == 1 and taken[0] is last and taken[0].rstrip() not in lowered:
        return (f"region {i + 1} shows `{taken[0].strip()[:40]}` right after the new block, as the original has it "
                "at the end of the code the block wraps: that line left out of the block, or a new one beside it (the "
                "original's kept in the block)?")
    return None
