"""The placement cost's edit distance: Myers for small distances, the bit-parallel LCS past them;
both must give the textbook dynamic program's number, and honour the cap."""

from __future__ import annotations

import random

import pytest

from fastapply.merge.diff import SMALL_D, edit_distance, lcs_length


def textbook(a: list[str], b: list[str]) -> int:
    """Insertions + deletions by the O(NM) dynamic program over the LCS."""
    lcs = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            lcs[i + 1][j + 1] = lcs[i][j] + 1 if x == y else max(lcs[i][j + 1], lcs[i + 1][j])
    return len(a) + len(b) - 2 * lcs[len(a)][len(b)]


@pytest.mark.parametrize("seed", range(4))
def test_equals_the_dynamic_program_with_and_without_a_cap(seed):
    rng = random.Random(seed)
    for _ in range(400):
        alphabet = [f"line {k}" for k in range(rng.randint(1, 6))]
        a = [rng.choice(alphabet) for _ in range(rng.randint(0, 3 * SMALL_D))]
        b = [rng.choice(alphabet) for _ in range(rng.randint(0, 3 * SMALL_D))]
        d = textbook(a, b)
        assert edit_distance(a, b) == d
        for cap in (0, SMALL_D // 2, SMALL_D, d - 1, d, d + 1, 4 * SMALL_D):
            if cap >= 0:
                assert edit_distance(a, b, cap) == (d if d <= cap else None), (cap, d)


def test_a_region_reindented_whole_is_counted_exactly():
    """Every line re-indented (a class wrapped whole in `try {`): the distance is all of both."""
    orig = [f"    int f{k}() {{ return {k}; }}" for k in range(400)]
    region = ["try {"] + ["  " + x for x in orig] + ["} catch (E e) {", "}"]
    assert edit_distance(region, orig) == len(region) + len(orig)
    assert edit_distance(region, orig, cap=100) is None
    assert lcs_length(orig[::2], orig) == 200
