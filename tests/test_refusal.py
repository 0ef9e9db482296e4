"""A refusal for its reader (fastapply/refusal.py): the readings as structured choices, the hint
line that says what to resend, and `auto`'s model budget and cancellation while the judge scores.
The merge is real; the model is a test double that counts its forward passes."""

from __future__ import annotations

import difflib
import threading
import time
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastapply.api import Applier, ApplyError, ApplyRequest
from fastapply.merge import structural_merge
from fastapply.refusal import (
    context_hints,
    hint_line,
    payload,
    reading_views,
    rebuild,
    snippet_regions,
    unified_diff,
    with_hint,
)

ORIGINAL = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"
# `x = 1` / `return x` stand in both functions: the merge refuses the tie with two readings.
TIED = "# ... existing code ...\n    x = 2\n    return x\n# ... existing code ...\n"
IN_F = "def f():\n    x = 2\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"
IN_G = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 2\n    return x\n"


def _refusal(original=ORIGINAL, update=TIED) -> ApplyError:
    with pytest.raises(ApplyError) as e:
        Applier().apply(ApplyRequest(original, update, language="python", engine="structural"))
    assert e.value.code == "refused"
    return e.value


def test_views_say_where_each_reading_differs_from_the_others():
    views = reading_views(ORIGINAL, [("as placed", IN_F), ("region 1 at line 7", IN_G)])
    assert [v.index for v in views] == [1, 2]
    # lines 2..7 differ between the readings (the shared head `def f():` and tail `return x` left out)
    assert views[0].reading_lines == (2, 7) and views[1].reading_lines == (2, 7)
    assert views[0].original_lines[0] <= 2 and views[1].original_lines[1] >= 7
    assert views[0].diff.startswith("--- original\n+++ reading 1\n") and "+    x = 2" in views[0].diff
    assert views[0].text == IN_F and rebuild(ORIGINAL, views[1].diff) == IN_G


def test_the_first_line_of_a_refusal_names_the_line_that_settles_each_reading():
    err = _refusal()
    first = err.message.split("\n", 1)[0]
    assert first == err.hint and first.startswith("Resend with context: snippet region 1")
    assert "def f():" in first and "def g():" in first  # one line per reading: the def above the region
    by_reading = {h.reading: h for h in err.hints}
    assert {1, 2} <= set(by_reading)  # (a third reading keeps `x = 1` as a new line: added context too)
    assert by_reading[1].lines == ("def f():",) and by_reading[1].side == "above"
    assert by_reading[1].original_lines == (1, 1)
    texts = dict(enumerate((t for _, t in err.readings), 1))
    for k, h in by_reading.items():  # each hint, resent, makes the merge answer exactly that reading
        merged = structural_merge(ORIGINAL, with_hint(TIED, ORIGINAL, h), "python")
        assert merged.ok and merged.text == texts[k]


def test_a_hint_is_only_given_where_the_merge_confirms_it():
    calls = []

    def never(original, update):  # a merge that never answers: no hint can be confirmed
        calls.append(update)
        return None

    hints = context_hints(ORIGINAL, TIED, [IN_F, IN_G], never, max_tries=5)
    assert hints == [] and 0 < len(calls) <= 10  # at most max_tries per reading
    line = hint_line(ORIGINAL, TIED, hints, 2)
    assert line.startswith("Resend the snippet with more unchanged lines")


def test_hints_stop_trying_when_the_caller_says_time_is_up():
    """The hints' merges stop once `stop()` says so (the pipeline's `HINT_SECONDS` deadline), for
    every reading: a refusal whose tries each cost seconds does not take a minute to answer."""
    calls = []

    def never(original, update):
        calls.append(update)
        return None

    hints = context_hints(ORIGINAL, TIED, [IN_F, IN_G], never, max_tries=5, stop=lambda: len(calls) >= 2)
    assert hints == [] and len(calls) == 2


def test_a_region_at_the_snippet_edge_without_a_marker_gets_a_marker_hint():
    original = "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n\n\ndef h():\n    return 3\n"
    # no marker after `def g()`'s region, which is not at the end of the file: keep or delete below?
    update = "# ... existing code ...\ndef g():\n    return 20\n"
    err = _refusal(original, update)
    expected = original.replace("return 2\n", "return 20\n")
    assert expected in [t for _, t in err.readings]
    marker = [h for h in err.hints if h.marker]
    assert marker and marker[0].lines == ("# ... existing code ...",) and marker[0].side == "below"
    merged = structural_merge(original, with_hint(update, original, marker[0]), "python")
    assert merged.ok and merged.text == expected


def test_snippet_regions_number_the_runs_between_markers():
    regions = snippet_regions(ORIGINAL, "def f():\n# ... existing code ...\n\n    return x\n\n# ... existing code ...\n")
    assert [(r.index, r.lines, r.marker_before, r.marker_after) for r in regions] == [
        (1, ["def f():"], False, True), (2, ["    return x"], True, True)]


def test_payload_leaves_whole_files_out_past_a_message_limit_never_cut():
    err = _refusal()
    body = payload(ORIGINAL, TIED, err.reasons, err.readings, err.hints, err.hint)
    assert body["texts_omitted"] is False and [r["text"] for r in body["readings"]] == [t for _, t in err.readings]
    assert body["hint"] == err.hint and body["hints"][0]["lines"] == ["def f():"]
    small = payload(ORIGINAL, TIED, err.reasons, err.readings, err.hints, err.hint, max_bytes=100)
    assert small["texts_omitted"] is True and all(r["text"] is None for r in small["readings"])
    assert [rebuild(ORIGINAL, r["diff"]) for r in small["readings"]] == [t for _, t in err.readings]


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "x = 1\n", "\n", "}\n"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(lines, lines, st.booleans(), st.booleans())
def test_a_diff_rebuilds_its_file(a, b, cut_a, cut_b):
    if cut_a and a:
        a[-1] = a[-1].rstrip("\n")
    if cut_b and b:
        b[-1] = b[-1].rstrip("\n")
    a, b = [x for x in a if x], [x for x in b if x]  # (lines as splitlines(keepends=True) gives them)
    original, text = "".join(a), "".join(b)
    assert rebuild(original, unified_diff(a, b, "o", "t")) == text


def test_a_diff_for_another_original_is_refused():
    diff = unified_diff(["a\n", "b\n"], ["a\n", "c\n"], "o", "t")
    with pytest.raises(ValueError):
        rebuild("x\ny\n", diff)
    assert difflib  # (the module's diff is difflib's, with the no-newline marker added)


# -- auto: the model budget and cancellation reach the judge -----------------------------------------


class CountingJudge:
    """A model engine that judges: each `score` runs `passes` forward passes of `pass_s` seconds,
    asking `should_stop` before each, as the real engines do; it records how it ended."""

    concurrent = False
    max_positions = 100_000

    def __init__(self, passes: int = 10_000, pass_s: float = 0.01):
        self.passes, self.pass_s = passes, pass_s
        self.ran = 0
        self.stopped = threading.Event()
        self.started = threading.Event()
        self.generated = False

    def prompt_ids(self, req):
        return [1, 2, 3]

    def answer_ids(self, text, end=True):
        return [ord(c) for c in text[:50]] + ([0] if end else [])

    def score(self, prompt_ids, answers, should_stop=None):
        self.started.set()
        for _ in range(self.passes):
            if should_stop is not None and should_stop():
                self.stopped.set()
                raise ApplyError("cancelled", "scoring stopped")
            time.sleep(self.pass_s)
            self.ran += 1
        return [0.0 for _ in answers]  # a tie: the judge abstains

    def generate(self, req, draft_texts, should_stop, stats):
        self.generated = True
        raise AssertionError("generation must not start once the budget is spent")


def test_a_spent_model_budget_answers_the_refusal_with_its_readings():
    model = CountingJudge()
    req = ApplyRequest(ORIGINAL, TIED, language="python", model_budget_s=0.2)
    with pytest.raises(ApplyError) as e:
        Applier(model_engine=model).apply(req)
    err = e.value
    assert err.code == "refused" and model.stopped.is_set() and not model.generated
    assert any("model budget of 0.2 s ran out while judging" in r for r in err.reasons)
    assert [t for _, t in err.readings] == [r.text for r in structural_merge(ORIGINAL, TIED, "python").readings]
    assert err.message.split("\n", 1)[0] == err.hint
    assert model.ran < model.passes  # stopped by the budget, not by running out of work


def test_the_applier_default_budget_applies_to_requests_without_one():
    model = CountingJudge()
    with pytest.raises(ApplyError) as e:
        Applier(model_engine=model, model_budget_s=0.2).apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert any("model budget of 0.2 s" in r for r in e.value.reasons)


@pytest.mark.parametrize("budget", [float("nan"), -1.0, float("inf")])
def test_a_bad_model_budget_is_bad_input(budget):
    with pytest.raises(ApplyError) as e:
        Applier().apply(ApplyRequest(ORIGINAL, TIED, language="python", model_budget_s=budget))
    assert e.value.code == "invalid_argument" and "model_budget_s" in e.value.message


def test_a_caller_that_goes_away_stops_the_judge_within_one_pass():
    model = CountingJudge()
    gone = threading.Event()
    result: list = []

    def run():
        try:
            Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, TIED, language="python", model_budget_s=0),
                                              should_stop=gone.is_set)
        except ApplyError as e:
            result.append(e)

    t = threading.Thread(target=run)
    t.start()
    assert model.started.wait(30)
    gone.set()
    t.join(30)
    assert not t.is_alive() and model.stopped.is_set()
    assert result and result[0].code == "cancelled"  # a caller's cancel stays a cancel, not a refusal


def test_every_front_end_carries_the_model_budget():
    """`--model-budget` / `model_budget_s` / `modelBudget` reach the request on each front-end."""
    from fastapply.cli import build_parser
    from fastapply.grpc_convert import request_from_proto, request_to_proto
    from fastapply.httpapi.parse import chat_call, relace_call
    from lsp.server import build_server

    req = ApplyRequest(ORIGINAL, TIED, model_budget_s=7.5)
    assert request_from_proto(request_to_proto(req)).model_budget_s == 7.5  # gRPC
    assert request_from_proto(request_to_proto(ApplyRequest(ORIGINAL, TIED))).model_budget_s is None
    body = {"messages": [{"role": "user", "content": f"<code>{ORIGINAL}</code>\n<update>{TIED}</update>"}],
            "model_budget_s": 3}
    assert chat_call(body).request.model_budget_s == 3.0  # HTTP, OpenAI shape
    assert relace_call({"initialCode": ORIGINAL, "editSnippet": TIED, "model_budget_s": 0}).request.model_budget_s == 0
    with pytest.raises(ApplyError):
        relace_call({"initialCode": ORIGINAL, "editSnippet": TIED, "model_budget_s": "soon"})
    server = build_server(Applier(), "structural")  # LSP
    args = server.parse_args(({"uri": "file:///a.py", "update": TIED, "modelBudget": 2},))
    assert args.model_budget == 2.0
    with pytest.raises(Exception):
        server.parse_args(({"uri": "file:///a.py", "update": TIED, "modelBudget": -1},))
    for argv in (["apply", "a.py", "--update", "u.py", "--model-budget", "4"],
                 ["serve", "--model-budget", "4"], ["codemod", "--manifest", "m.jsonl", "--model-budget", "4"]):
        assert build_parser().parse_args(argv).model_budget == 4.0  # CLI, serve, codemod


def test_the_budget_is_due_one_step_before_its_deadline(monkeypatch):
    """A forward pass cannot be cut: the budget keeps the longest step between two reads in reserve,
    so a request stops before its deadline instead of one pass after it (a fake clock)."""
    from fastapply import pipeline

    now = [100.0]
    monkeypatch.setattr(pipeline, "time", types.SimpleNamespace(monotonic=lambda: now[0]))  # this module's clock only
    budget = pipeline.Budget(10.0)
    budget.start()
    seen = []
    for _ in range(5):
        seen.append((now[0] - 100.0, budget.due()))
        now[0] += 3.0  # each step (a pass and its bookkeeping) takes 3 s
    # at 6 s the next step ends at 9 s: go on; at 9 s it would end at 12 s, past 10 s: stop there
    assert seen[:4] == [(0.0, False), (3.0, False), (6.0, False), (9.0, True)]
    assert pipeline.Budget(0).due() is False  # 0: no budget
