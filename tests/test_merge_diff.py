"""The placement cost's edit distance (rapidfuzz's Indel on line lists) must give the textbook dynamic
program's number, and honour the cap: the distance when it is at most cap, None past it."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastapply.merge.diff import edit_distance


def textbook(a: list[str], b: list[str]) -> int:
    """Insertions + deletions by the O(NM) dynamic program over the LCS."""
    lcs = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            lcs[i + 1][j + 1] = lcs[i][j] + 1 if x == y else max(lcs[i][j + 1], lcs[i + 1][j])
    return len(a) + len(b) - 2 * lcs[len(a)][len(b)]


def capped(d: int, cap: int | None) -> int | None:
    return d if cap is None or d <= cap else None


# Few distinct lines, so that lists share much (the case placements meet); one-character lines
# ("}", "") among them because rapidfuzz converts those by code point, longer ones by hash.
LINES = st.sampled_from(["}", "", "{", "    return x;", "    x += 1;", "def f(self):", "line 7", "line 8"])


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=90), st.lists(LINES, max_size=90), st.integers(-2, 40) | st.none())
def test_equals_the_dynamic_program_under_any_cap(a, b, cap):
    d = textbook(a, b)
    assert edit_distance(a, b) == d
    assert edit_distance(a, b, cap) == capped(d, cap), (cap, d)
    for c in (d - 1, d, d + 1):  # the cap's edge, where an off-by-one would show
        assert edit_distance(a, b, c) == capped(d, c), (c, d)


@pytest.mark.parametrize("seed", range(3))
def test_long_lists_past_one_machine_word(seed):
    """Lists longer than 64 lines take rapidfuzz's multi-word path."""
    rng = random.Random(seed)
    for _ in range(20):
        alphabet = [f"line {k}" for k in range(rng.randint(1, 6))]
        a = [rng.choice(alphabet) for _ in range(rng.randint(60, 200))]
        b = [rng.choice(alphabet) for _ in range(rng.randint(60, 200))]
        d = textbook(a, b)
        for cap in (None, 0, d // 2, d - 1, d, d + 1, 4 * d):
            assert edit_distance(a, b, cap) == capped(d, cap), (cap, d)


def test_a_region_reindented_whole_is_counted_exactly():
    """Every line re-indented (a class wrapped whole in `try {`): the distance is all of both."""
    orig = [f"    int f{k}() {{ return {k}; }}" for k in range(400)]
    region = ["try {"] + ["  " + x for x in orig] + ["} catch (E e) {", "}"]
    assert edit_distance(region, orig) == len(region) + len(orig)
    assert edit_distance(region, orig, cap=100) is None
    assert edit_distance(orig[::2], orig) == 200
    assert edit_distance(orig[::2], orig, cap=200) == 200
    assert edit_distance(orig[::2], orig, cap=199) is None
