"""The judge (`fastapply.judge`) without a model: a test double scores the readings, the merge is
real. The pure parts (the margin rule, the window), the pipeline's use of it (engine `judge`, its
margin; below the margin the fallback to generation; the caps; the context limit) and the HF
scoring's KV reuse on a tiny random model. The real models: tests/test_judge_model.py."""

from __future__ import annotations

import pytest

from fastapply import judge as judge_mod
from fastapply.api import Applier, ApplyError, ApplyRequest, TextDelta
from fastapply.judge import MARGIN_NATS, MARGIN_NATS_OTHER, decide, judge, margin_needed, window_input
from fastapply.merge import MergeResult, Reading, structural_merge
from tests.test_auto import EXPECTED_TIED, ORIGINAL, TIED, FakeModel, NoModel


class TableScorer(FakeModel):
    """Scores an answer by the first marker string it holds (`prefers`: text -> nats); counts
    tokens as characters. Generates `text` like FakeModel when the judge abstains."""

    def __init__(self, prefers: dict[str, float], text: str = "", max_positions: int = 100_000):
        super().__init__(text)
        self.prefers = prefers
        self.max_positions = max_positions
        self.scored: list[tuple[list[int], list[list[int]]]] = []

    def prompt_ids(self, req):
        return [ord(c) for c in f"<code>{req.original}</code><update>{req.update}</update>"]

    def answer_ids(self, text, end=True):
        return [ord(c) for c in text + ("</end>" if end else "")]

    def score(self, prompt_ids, answers, should_stop=None):
        self.scored.append((prompt_ids, answers))
        shared = "".join(map(chr, prompt_ids)).split("</update>", 1)[1]
        out = []
        for a in answers:
            text = shared + "".join(map(chr, a))
            out.append(next((v for k, v in self.prefers.items() if k in text), -100.0))
        return out


@pytest.fixture
def calibrated():
    """A deployment whose model calibrated a finite margin for the placement readings of TIED (the
    shipped 0.5B model never answers them: `MARGIN_NATS_OTHER` is infinite)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(judge_mod, "MARGIN_NATS_OTHER", 10.0)
    yield
    mp.undo()


def auto(model, original=ORIGINAL, update=TIED):
    return Applier(model_engine=model).apply(ApplyRequest(original, update, language="python"))


def test_decide_picks_the_best_score_only_beyond_the_margin():
    assert decide([-5.0, -1.0, -9.0], 2.0) == (1, 4.0, 1)
    assert decide([-5.0, -4.0], 2.0) == (1, 1.0, None)  # a margin of 1 nat: abstain
    assert decide([-3.0, -3.0], 0.0) == (0, 0.0, None)  # a tie is never picked, whatever the threshold
    with pytest.raises(ValueError):
        decide([-1.0], 2.0)


def test_the_margin_needed_depends_on_the_best_readings_doubt():
    """A wrap reading needs MARGIN_NATS, any other MARGIN_NATS_OTHER; per-reading thresholds
    apply the best reading's own."""
    assert margin_needed("the deeper marker read as wrapped code, region 2 after the wrapped code") == MARGIN_NATS
    assert margin_needed("region 1 at line 7") == margin_needed("as placed") == margin_needed(None) == MARGIN_NATS_OTHER
    assert margin_needed("the deeper marker read as wrapped code, the lines above it deleted") == MARGIN_NATS_OTHER
    assert MARGIN_NATS < MARGIN_NATS_OTHER
    lead = MARGIN_NATS + 1.0  # enough for a wrap reading, not for another
    assert decide([-1.0, -1.0 - lead], [MARGIN_NATS, MARGIN_NATS_OTHER]) == (0, lead, 0)
    assert decide([-1.0 - lead, -1.0], [MARGIN_NATS, MARGIN_NATS_OTHER]) == (1, lead, None)


def test_with_the_shipped_margins_a_placement_reading_is_never_picked():
    """TIED's readings are two placements: a 15-nat lead is still not enough (the model's length
    bias on such readings, evals/RESULTS.md), so the model generates, drafted by the judge's best."""
    scorer = TableScorer({"def g():\n    x = 2": -1.0, "def f():\n    x = 2": -16.0}, text=EXPECTED_TIED)
    result = auto(scorer)
    assert result.engine == "speculative" and result.margin is None
    assert any(f.kind == "judge" and "abstained" in f.message and "MARGIN_NATS_OTHER" in f.message
               for f in result.findings)


def test_auto_returns_the_judged_reading_with_its_engine_and_margin(calibrated):
    merge = structural_merge(ORIGINAL, TIED, "python")
    second = merge.readings[1].text  # `g` edited instead of `f`
    scorer = TableScorer({"def g():\n    x = 2": -1.0, "def f():\n    x = 2": -16.0})
    result = auto(scorer)
    assert result.merged == second and result.engine == "judge" and result.ok
    assert result.margin == pytest.approx(15.0)
    assert any(f.kind == "judge" and "reading 2" in f.message and "15.00" in f.message for f in result.findings)
    assert scorer.calls == []  # judged: nothing generated


def test_below_the_margin_the_judge_abstains_and_the_model_generates_from_its_ranking():
    merge = structural_merge(ORIGINAL, TIED, "python")
    second = merge.readings[1].text
    # reading 2 leads by 1 nat (< margin_needed): the model generates, drafted best-scored first
    scorer = TableScorer({"def g():\n    x = 2": -4.0, "def f():\n    x = 2": -5.0}, text=EXPECTED_TIED)
    result = auto(scorer)
    assert result.engine == "speculative" and result.merged == EXPECTED_TIED and result.margin is None
    assert any(f.kind == "judge" and "abstained" in f.message for f in result.findings)
    (sources,) = scorer.calls
    assert sources[0] == ("reading 1", second)  # the judge's best first


def test_the_judge_scores_once_each_after_the_shared_prefix(calibrated):
    scorer = TableScorer({"def g():\n    x = 2": -1.0, "def f():\n    x = 2": -16.0})
    readings = [r.text for r in structural_merge(ORIGINAL, TIED, "python").readings]
    v = judge(scorer, ApplyRequest(ORIGINAL, TIED), readings, mode="whole")
    ((prompt, rests),) = scorer.scored
    assert len(rests) == len(readings)
    answers = [scorer.answer_ids(t) for t in readings]
    shared = len(prompt) - len(scorer.prompt_ids(ApplyRequest(ORIGINAL, TIED)))
    assert shared > 0 and all(a[:shared] == answers[0][:shared] for a in answers)
    assert len({r[0] for r in rests}) > 1  # each rest starts where the readings part
    assert [prompt[-shared:] + r for r in rests] == answers
    assert v.best == 1 and v.picked == 1


def test_window_mode_keeps_only_where_the_readings_differ():
    body = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(40))
    original = body + "def g():\n    x = 1\n    return x\n\n\n" + body.replace("def f", "def h")
    a = original.replace("    x = 1\n", "    x = 2\n")
    b = original.replace("    x = 1\n    return x\n", "    x = 1\n    x = 2\n    return x\n")
    q = window_input(original, "# ... existing code ...\n    x = 2\n# ... existing code ...\n", [a, b], context=3)
    assert q.answers[0].count("\n") < 12 and "x = 2" in q.answers[0] and "x = 1" not in q.answers[0]
    assert "x = 1\n    x = 2" in q.answers[1]
    assert q.original.count("\n") < 12 and "x = 1" in q.original
    # what is cut away is the same in both readings
    start, end = q.window
    assert a.splitlines(keepends=True)[:start] == b.splitlines(keepends=True)[:start]
    assert not q.ends  # a window that stops mid-file is scored without the end of answer ...
    q = window_input(original, "# ... existing code ...\nz = 3\n", [original + "z = 3\n", original + "z = 3\n\n"])
    assert q.ends  # ... one that reaches the end of the file with it


def test_window_mode_joins_distant_hunks_with_a_marker_line():
    lines = [f"v{i} = {i}\n" for i in range(200)]
    original = "".join(lines)
    a = "".join(lines[:10] + ["new = 1\n"] + lines[10:])  # the new line near the top ...
    b = "".join(lines[:190] + ["new = 1\n"] + lines[190:])  # ... or near the end
    q = window_input(original, "# ... existing code ...\nnew = 1\n# ... existing code ...\n", [a, b], context=2)
    assert [ans.count("# ... existing code ...") for ans in q.answers] == [1, 1]
    assert q.original.count("# ... existing code ...") == 1
    assert all(ans.count("\n") < 15 for ans in q.answers)
    assert q.answers[0].index("new = 1") < q.answers[0].index("# ...") < q.answers[1].index("new = 1")


def test_readings_over_the_cap_are_refused_without_loading_a_model(monkeypatch):
    many = tuple(Reading(ORIGINAL + f"x{i} = {i}\n", f"reading {i}") for i in range(judge_mod.MAX_JUDGED_READINGS + 1))
    monkeypatch.setattr("fastapply.pipeline.structural_merge",
                        lambda *a, **k: MergeResult(None, 0.0, ["ambiguous"], "python", readings=many))
    with pytest.raises(ApplyError) as e:
        NoModel().apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert e.value.code == "refused" and "over the judge's cap" in e.value.message
    assert len(e.value.readings) == len(many)


def test_scored_tokens_over_the_cap_are_refused_before_scoring(monkeypatch):
    monkeypatch.setattr(judge_mod, "MAX_SCORED_TOKENS", 10)
    scorer = TableScorer({})
    with pytest.raises(ApplyError) as e:
        auto(scorer)
    assert e.value.code == "refused" and "judge's cap" in e.value.message and scorer.scored == []
    assert e.value.readings  # the merge's readings ride along


def test_a_file_too_long_for_the_judge_is_refused_with_the_reason_never_cut():
    scorer = TableScorer({}, max_positions=60)
    with pytest.raises(ApplyError) as e:
        auto(scorer)
    assert e.value.code == "too_long" and "context of 60" in e.value.message and scorer.scored == []
    assert e.value.readings


def test_score_continuations_reuses_the_prompt_cache_and_equals_full_passes():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from fastapply.backends.hf import HFBackend
    from fastapply.backends.scoring import score_continuations

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=12, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128)
    model = LlamaForCausalLM(cfg).eval()
    prefix, conts = [1, 5, 3, 7], [[2, 4, 6, 8, 10], [2], [9, 9, 1]]
    got = score_continuations(HFBackend(model), prefix, conts, chunk=2)
    with torch.inference_mode():
        for cont, score in zip(conts, got):
            ids = torch.tensor([prefix + cont])
            logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
            want = sum(float(logp[len(prefix) - 1 + j, t]) for j, t in enumerate(cont))
            assert score == pytest.approx(want, abs=1e-4)


def test_a_streamed_judged_answer_is_the_picked_reading(calibrated):
    scorer = TableScorer({"def g():\n    x = 2": -1.0, "def f():\n    x = 2": -16.0})
    events = list(Applier(model_engine=scorer).apply_stream(ApplyRequest(ORIGINAL, TIED, language="python")))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == events[-1].merged


def test_grpc_and_http_answers_name_the_judge_and_its_margin(calibrated):
    import httpx

    from fastapply.client import FastApplyClient
    from tests.test_http import chat_body, serving

    merge = structural_merge(ORIGINAL, TIED, "python")
    second = merge.readings[1].text
    scorer = TableScorer({"def g():\n    x = 2": -1.0, "def f():\n    x = 2": -16.0})
    with serving(Applier(model_engine=scorer)) as (srv, http):
        with FastApplyClient(srv.address) as c:
            r = c.apply(ORIGINAL, TIED, language="python", engine="auto", timeout=60)
        assert r.merged == second and r.engine == "judge" and any(f.kind == "judge" for f in r.findings)
        body = httpx.post(http.url + "/v1/chat/completions", json=chat_body(ORIGINAL, TIED, model="fastapply-auto"),
                          timeout=60).json()
        assert body["choices"][0]["message"]["content"] == second
        assert body["fastapply"]["engine"] == "judge" and body["fastapply"]["margin"] == pytest.approx(15.0)


class StrayingModel(FakeModel):
    """Writes its own tokens one at a time, none drafted, until it is stopped."""

    def generate(self, req, draft_texts, should_stop, stats):
        self.calls.append(draft_texts)
        for i in range(10_000):
            stats.output_tokens += 1
            yield TextDelta("x")
            if should_stop is not None and should_stop():
                raise ApplyError("cancelled", "the apply was cancelled")
        yield "x" * 10_000, []


def test_a_model_that_strays_from_every_reading_is_stopped_at_once_and_refused():
    model = StrayingModel("")
    with pytest.raises(ApplyError) as e:
        Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert e.value.code == "refused" and "none of its readings" in e.value.message and e.value.readings
    assert any("departed from all" in r for r in e.value.reasons)
    assert len(model.calls) == 1


def test_without_readings_a_model_that_strays_from_every_draft_is_stopped_and_refused():
    """No reading to leave (the snippet matches nothing): the model is stopped once it has written
    `MAX_OWN_TOKENS` tokens that no draft proposed."""
    nothing = "# ... existing code ...\nnothing_like_it()\n# ... existing code ...\n"
    assert not structural_merge(ORIGINAL, nothing, "python").readings
    model = StrayingModel("")
    with pytest.raises(ApplyError) as e:
        Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, nothing, language="python"))
    assert e.value.code == "refused" and "went its own way" in e.value.message


def test_the_callers_cancel_stays_a_cancel():
    with pytest.raises(ApplyError) as e:
        Applier(model_engine=StrayingModel("")).apply(ApplyRequest(ORIGINAL, TIED, language="python"),
                                                      should_stop=lambda: True)
    assert e.value.code == "cancelled"


class ForkScorer:
    """A model over integer tokens: every token costs -1 nat, except those in `fork` (token ->
    nats). Records each call."""

    max_positions = 10_000

    def __init__(self, fork: dict[int, float]):
        self.fork, self.calls = fork, []

    def score(self, prompt_ids, answers, should_stop=None):
        self.calls.append((list(prompt_ids), [list(a) for a in answers]))
        return [sum(self.fork.get(t, -1.0) for t in a) for a in answers]


def test_branch_scores_judge_only_the_forks_so_a_longer_reading_pays_nothing_for_its_length():
    from fastapply.judge import branch_scores

    keep, delete = [1, 2, 3, 4, 5, 6, 7, 8, 0], [1, 2, 3, 0]  # 0: the end of the answer
    scorer = ForkScorer({4: -0.5, 0: -2.0})
    scores, run = branch_scores(scorer, [9, 9], [keep, delete])
    # one fork, after [1, 2, 3]: token 4 against the end, renormalised over the two
    assert scorer.calls == [([9, 9, 1, 2, 3], [[4], [0]])] and run == 5 + 2
    assert scores[0] - scores[1] == pytest.approx(1.5)
    assert decide(scores, 1.0)[2] == 0  # the summed log-probability would pick the short one
    assert sum(scorer.fork.get(t, -1.0) for t in delete) > sum(scorer.fork.get(t, -1.0) for t in keep)


def test_branch_scores_follow_the_best_token_at_each_fork_and_score_the_others_where_they_left():
    import math

    from fastapply.judge import branch_scores

    a, b, c = [1, 5, 7, 0], [1, 5, 8, 0], [1, 6, 0]
    scorer = ForkScorer({5: math.log(0.3), 6: math.log(0.1), 7: math.log(0.2), 8: math.log(0.25)})
    scores, _ = branch_scores(scorer, [], [a, b, c])
    # first fork (after [1]): 5 over 6; then 8 over 7. c left at the first, a at the second
    assert [call[1] for call in scorer.calls] == [[[5], [6]], [[7], [8]]]
    assert scores == pytest.approx([math.log(0.2 / 0.25), 0.0, math.log(0.1 / 0.3)])
    best, margin, _ = decide(scores, 0.0)
    assert best == 1 and margin == pytest.approx(math.log(0.25 / 0.2))  # the narrowest lead on the path


def test_a_reading_that_ends_where_another_goes_on_is_no_choice_of_the_models():
    from fastapply.judge import branch_scores

    scorer = ForkScorer({})
    scores, _ = branch_scores(scorer, [], [[1, 2], [1, 2, 3]])  # (window answers without the end tag)
    assert scores[0] == scores[1] and scorer.calls == []


def test_the_models_greedy_continuation_wins_every_fork_of_the_branch_judge():
    """Greedy decoding restricted to the readings takes the best token at each fork: the reading
    the model alone writes greedily wins, on a tiny random model."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from fastapply.backends.hf import HFBackend
    from fastapply.backends.scoring import score_continuations
    from fastapply.judge import branch_scores

    torch.manual_seed(1)
    cfg = LlamaConfig(vocab_size=16, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128)
    model = LlamaForCausalLM(cfg).eval()
    prompt = [3, 1, 4, 1, 5]
    greedy: list[int] = []
    with torch.inference_mode():
        for _ in range(8):
            greedy.append(int(model(input_ids=torch.tensor([prompt + greedy])).logits[0, -1].argmax()))

    class Scorer:
        def score(self, p, answers, should_stop=None):
            return score_continuations(HFBackend(model), p, answers)

    others = [greedy[:2] + [(greedy[2] + 1) % 16] + greedy[3:], greedy[:5] + [(greedy[5] + 3) % 16] * 3]
    for order in ([greedy] + others, others + [greedy]):
        scores, _ = branch_scores(Scorer(), prompt, order)
        assert max(range(3), key=scores.__getitem__) == order.index(greedy)
