"""Crop a long case to a window around its edit, so that it fits a training sequence.

The same line window is cut from the original and the expected file: the lines before and after
the edit are shared by both, so the cropped pair is still "original -> expected" for the same
edit. The update snippet is kept whole, and the window is only valid if every code line of the
snippet lies inside it (else the snippet would refer to code the model cannot see). Pure text:
the caller passes the token counter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from fastapply.markers import looks_like_marker
from fastapply.train.data import Case


@dataclass(frozen=True)
class EditSpan:
    prefix: int  # lines shared at the top of original and expected
    suffix: int  # lines shared at the bottom (not overlapping the prefix)


def edit_span(original: list[str], expected: list[str]) -> EditSpan:
    p = 0
    while p < min(len(original), len(expected)) and original[p] == expected[p]:
        p += 1
    s = 0
    while s < min(len(original), len(expected)) - p and original[-1 - s] == expected[-1 - s]:
        s += 1
    return EditSpan(p, s)


def crop(case: Case, context: int) -> Case:
    """`context` shared lines kept on each side of the edit (fewer at a file's edge)."""
    o = case.original.splitlines(keepends=True)
    e = case.expected.splitlines(keepends=True)
    span = edit_span(o, e)
    start = max(0, span.prefix - context)
    keep_suffix = min(span.suffix, context)
    o_end, e_end = len(o) - span.suffix + keep_suffix, len(e) - span.suffix + keep_suffix
    return replace(case, original="".join(o[start:o_end]), expected="".join(e[start:e_end]))


def update_inside(update: str, expected: str) -> bool:
    """Is every code line of the snippet (markers and blank lines aside) a line of `expected`?"""
    have = {ln.strip() for ln in expected.splitlines()}
    return all(ln.strip() in have for ln in update.splitlines() if ln.strip() and not looks_like_marker(ln))


def fit_window(case: Case, count: Callable[[Case], int], max_tokens: int) -> Case | None:
    """The whole case when it fits; else the widest window around the edit that does (binary
    search on the context, since the token count grows with it); None when no window both fits
    and holds the snippet's code lines."""
    if count(case) <= max_tokens:
        return case
    lo, hi = 0, max(len(case.original.splitlines()), len(case.expected.splitlines()))
    if count(crop(case, 0)) > max_tokens:
        return None
    while lo < hi:  # invariant: crop(case, lo) fits
        mid = (lo + hi + 1) // 2
        if count(crop(case, mid)) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    best = crop(case, lo)
    return best if update_inside(case.update, best.expected) else None
