"""The real default model: speculative greedy output is token-identical to plain greedy output."""

import pytest

from fastapply.api import ApplyError, ApplyRequest, Stats, TextDelta
from tests.conftest import load_shared

pytestmark = pytest.mark.model

SMALL_ORIGINAL = '''import os


def greet(name):
    return "Hello, " + name


def farewell(name):
    return "Bye, " + name


if __name__ == "__main__":
    print(greet(os.environ.get("USER", "world")))
'''
SMALL_UPDATE = '''# ... existing code ...
def greet(name, punctuation="!"):
    return "Hello, " + name + punctuation
# ... existing code ...
'''


def tokens(engine, req, drafts):
    st = Stats()
    return [t for c in engine.decode_tokens(req, drafts, None, st) for t in c], st


def test_speculative_equals_plain_small_file(model_engine):
    req = ApplyRequest(SMALL_ORIGINAL, SMALL_UPDATE, max_output_tokens=120)
    plain, st_plain = tokens(model_engine, req, None)
    spec, st = tokens(model_engine, req, [("original", SMALL_ORIGINAL), ("update", SMALL_UPDATE)])
    assert spec == plain
    assert st_plain.forward_passes == len(plain)
    assert st.forward_passes < st_plain.forward_passes  # the draft was used, not just tolerated


def test_confirm_decodes_in_the_judges_dtype_as_the_model_alone_would(model_engine):
    """`ModelEngine.confirm` (auto's generation where the file must be a reading) decodes with the
    judge's copy of the weights (bf16 on a CPU): greedy output is that copy's plain greedy output."""
    req = ApplyRequest(SMALL_ORIGINAL, SMALL_UPDATE, max_output_tokens=120)
    judge_copy = model_engine.judge_backend()
    assert model_engine.judge_dtype == "bf16" and judge_copy is not model_engine.backend
    st = Stats()
    plain = [t for c in model_engine.decode_tokens(req, None, None, st, backend=judge_copy) for t in c]
    drafts = [("original", SMALL_ORIGINAL), ("update", SMALL_UPDATE)]
    events = list(model_engine.confirm(req, drafts, None, Stats()))
    merged, _ = events[-1]
    expected, _ = list(model_engine.text_events([plain]))[-1]
    assert merged == expected and "".join(e.text for e in events if isinstance(e, TextDelta)) == merged


def test_speculative_equals_plain_real_case(model_engine):
    case = min(load_shared("commits_dev.jsonl"), key=lambda c: len(c["original"]))
    req = ApplyRequest(case["original"], case["update"], language=case["language"], max_output_tokens=160)
    plain, _ = tokens(model_engine, req, None)
    from fastapply.pipeline import draft_sources

    drafts, _ = draft_sources(req, case["language"])
    spec, st = tokens(model_engine, req, drafts)
    assert spec == plain
    assert st.accepted_tokens > 0


def test_stream_concatenates_to_result(model_applier):
    req = ApplyRequest(SMALL_ORIGINAL, SMALL_UPDATE, engine="speculative", max_output_tokens=30)
    events = list(model_applier.apply_stream(req))
    result = events[-1]
    assert "".join(e.text for e in events[:-1] if isinstance(e, TextDelta)) == result.merged
    assert result.stats.output_tokens == 30 and result.stats.forward_passes >= 1
    assert result.stats.prefill_s > 0 and result.stats.decode_s > 0
    # 30 tokens (the file is ~60) cannot hold the whole file: the result says it is incomplete and must not be used.
    assert not result.ok and any(f.kind == "truncated" for f in result.findings)


def test_file_longer_than_context_is_refused(model_applier):
    big = "x = 1\n" * 40000
    with pytest.raises(ApplyError) as e:
        model_applier.apply(ApplyRequest(big, "# ... existing code ...\ny = 2\n", engine="speculative"))
    assert e.value.code == "too_long" and "context" in e.value.message
