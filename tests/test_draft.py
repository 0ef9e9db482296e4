"""Drafter unit tests: pure token lists, no model."""

from fastapply.draft import DraftLength, PromptLookupDrafter, SourceDrafter, prompt_lookup_propose


def feed(d, tokens):
    d.update(tokens)
    return d


def test_follows_primary_from_the_start():
    d = SourceDrafter([("file", [1, 2, 3, 4, 5, 6])])
    assert d.propose(3) == [1, 2, 3]
    d.update([1, 2])
    assert d.propose(10) == [3, 4, 5, 6]


def test_resync_after_insertion():
    src = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
    d = SourceDrafter([("file", src)], ngram=2, use_history=False)
    d.update([10, 11, 12])
    d.update([99, 98])  # the model inserts new tokens: the pointer is lost
    assert d.propose(4) == []
    d.update([13, 14])  # back on the file: re-sync on the last 2-gram
    assert d.propose(3) == [15, 16, 17]


def test_resync_after_deletion():
    src = list(range(100, 120))
    d = SourceDrafter([("file", src)], ngram=2, use_history=False)
    d.update(src[:5])
    d.update([110, 111])  # skipped 105..109
    assert d.propose(3) == [112, 113, 114]


def test_repeated_lines_prefer_position_after_pointer():
    # "} \n" style repeats: the 2-gram (7, 8) occurs three times; after the pointer moved past the
    # first, the re-sync must pick the nearest occurrence at/after the pointer, not the first.
    src = [1, 7, 8, 2, 3, 7, 8, 4, 5, 7, 8, 6]
    d = SourceDrafter([("file", src)], ngram=2, use_history=False)
    d.update([1, 7, 8, 2, 3])
    d.update([42, 7, 8])  # a divergence, then a repeated n-gram
    assert d.propose(2) == [4, 5]


def test_longer_context_wins_over_nearness():
    src = [5, 6, 7, 8, 1, 2, 3, 9, 5, 0, 3, 4]
    d = SourceDrafter([("file", src)], ngram=1, use_history=False)
    d.update([5, 6])
    d.update([1, 2, 3])  # "3" occurs at 6 and 10; (1, 2, 3) only matches at 6
    assert d.propose(1) == [9]


def test_empty_file_and_empty_sources():
    d = SourceDrafter([("file", [])])
    assert d.propose(8) == []
    d.update([1, 2, 3])
    assert d.propose(8) == []
    assert SourceDrafter([]).propose(4) == []


def test_draft_stops_at_end_of_source_and_respects_k():
    d = SourceDrafter([("file", [1, 2, 3])])
    assert d.propose(0) == []
    d.update([1, 2])
    assert d.propose(100) == [3]
    d.update([3])
    assert d.propose(100) == []


def test_secondary_source_takes_over_when_primary_lost():
    primary = [1, 2, 3, 4]
    snippet = [50, 51, 52, 53, 54, 55]
    d = SourceDrafter([("merge", primary), ("update", snippet)], ngram=2, use_history=False)
    d.update([1, 2])
    d.update([51, 52])
    assert d.propose(3) == [53, 54, 55]
    assert d.last_source == "update"


def test_history_source_drafts_repeats_of_own_output():
    d = SourceDrafter([("file", [])], ngram=2)
    d.update([7, 8, 9, 10, 11])
    d.update([7, 8])
    assert d.propose(3) == [9, 10, 11]
    assert d.last_source == "history"


def test_history_never_matches_its_own_tail():
    d = SourceDrafter([], ngram=2)
    d.update([1, 2])
    assert d.propose(4) == []


def test_prompt_lookup_rule_matches_hf():
    # HF takes the first earlier occurrence of the longest n-gram (max 2 here).
    seq = [1, 2, 3, 9, 1, 2, 4, 1, 2]
    assert prompt_lookup_propose(seq, 2) == [3, 9]
    assert prompt_lookup_propose([5, 6, 7], 3) == []
    d = PromptLookupDrafter([1, 2, 3, 4])
    d.update([2])
    assert d.propose(2) == [3, 4]


def test_draft_length_adapts_within_bounds():
    k = DraftLength(16, 4, 64)
    k.observe(16, 16)
    assert k.k == 32
    k.observe(32, 32)
    k.observe(64, 64)
    assert k.k == 64
    k.observe(64, 3)
    assert k.k == 32
    for _ in range(10):
        k.observe(k.k, 0)
    assert k.k == 4
    k.observe(0, 0)
    assert k.k == 4


def test_indexed_prompt_lookup_agrees_with_reference_rule():
    import random

    rng = random.Random(7)
    for _ in range(200):
        seq = [rng.randrange(6) for _ in range(rng.randrange(1, 40))]
        d = PromptLookupDrafter(seq[:5])
        d.update(seq[5:])
        assert d.propose(4) == prompt_lookup_propose(seq, 4)
