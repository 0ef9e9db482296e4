"""The gRPC front-end against real servers on 127.0.0.1 (no gRPC mocks).

Most tests use the structural engine (model-free, fast) on cases from the shared evals. Tests that
need a request that runs long (cancel, deadline, the model queue, SIGTERM drain) give the server a
`SlowApplier`: a test double of the *engine* (not of gRPC) that runs the real structural merge and
then yields the merged text in small pieces with a short sleep, polling `should_stop` like the
model's decode loop does. Its "plain"/"speculative" engines pose as the model (they hold
`model_lock`), so the server's one-model queue is exercised without loading a model.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from fastapply.api import Applier, ApplyError, ApplyRequest, ApplyResult, Sampling, TextDelta
from fastapply.client import FastApplyClient
from fastapply.server import SERVICE_NAME, FastApplyServer

REPO = Path(__file__).resolve().parent.parent
CASES_FILE = REPO / "evals" / "cases" / "commits_dev.jsonl"
PY = sys.executable


# -- test double of the engine ---------------------------------------------------------------------

class SlowApplier(Applier):
    """Real structural merge, emitted slowly in `pieces` chunks `delay` s apart, polling should_stop.

    Engines plain/speculative pretend to be the model: they hold `model_lock` while emitting and
    record an overlap if it was already held (the server must never run two model requests at once).
    """

    def __init__(self, pieces: int = 40, delay: float = 0.02, model_delay: float | None = None):
        super().__init__()
        self.pieces, self.delay = pieces, delay
        self.model_delay = delay if model_delay is None else model_delay
        self.stops: list[float] = []  # monotonic times at which should_stop() was seen true
        self.overlaps = 0
        self.closed = 0  # stops seen as the stream being closed rather than through should_stop
        self.model_order: list[str] = []
        self.active = self.max_active = 0  # streams in flight at once (concurrency, not time)
        self._count = threading.Lock()

    @property
    def model_loaded(self) -> bool:
        return True

    @property
    def model(self):
        return None

    def apply_stream(self, req, should_stop=None):
        result = [ev for ev in Applier.apply_stream(self, replace(req, engine="structural"))][-1]
        text = result.merged
        step = max(1, -(-len(text) // self.pieces))
        as_model = req.engine != "structural"
        if as_model:
            if not self.model_lock.acquire(blocking=False):
                self.overlaps += 1
                self.model_lock.acquire()
            self.model_order.append(req.instruction or "")
        with self._count:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            for i in range(0, len(text), step):
                if should_stop is not None and should_stop():
                    self.stops.append(time.monotonic())
                    raise ApplyError("cancelled", "the apply was cancelled")
                time.sleep(self.model_delay if as_model else self.delay)
                yield TextDelta(text[i:i + step])
        except GeneratorExit:  # the server closed the stream (the client went away): stopped too
            self.stops.append(time.monotonic())
            self.closed += 1
            raise
        finally:
            with self._count:
                self.active -= 1
            if as_model:
                self.model_lock.release()
        yield ApplyResult(text, req.engine, result.language, result.stats, result.findings)


# -- fixtures ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cases():
    """Shared-eval cases the structural merge handles exactly (different files and languages)."""
    if not CASES_FILE.exists():
        pytest.skip(f"{CASES_FILE} not found")
    local = Applier()
    by_lang: dict[str, list] = {}
    for line in CASES_FILE.read_text().splitlines():
        c = json.loads(line)
        try:
            r = local.apply(req_of(c))
        except ApplyError:
            continue
        if r.merged == c["expected"] and len(c["original"]) < 60_000:
            by_lang.setdefault(c["language"], []).append(c)
    out = []  # interleave languages
    while any(by_lang.values()) and len(out) < 40:
        for group in by_lang.values():
            if group:
                out.append(group.pop(0))
    if len(out) < 16:
        pytest.skip("the structural merge handles too few cases yet")
    return out


@pytest.fixture(scope="module")
def refused_case():
    local = Applier()
    for line in CASES_FILE.read_text().splitlines():
        c = json.loads(line)
        try:
            local.apply(req_of(c))
        except ApplyError as e:
            if e.code == "refused":
                return c
    pytest.skip("no refused case")


def req_of(c, engine="structural", **kw) -> ApplyRequest:
    return ApplyRequest(c["original"], c["update"], language=c["language"], engine=engine, **kw)


def kw_of(c, engine="structural"):
    return dict(original=c["original"], update=c["update"], language=c["language"], engine=engine)


@contextlib.contextmanager
def running(applier=None, **kw):
    kw.setdefault("preload", False)
    srv = FastApplyServer(applier if applier is not None else Applier(), host="127.0.0.1", port=0, **kw).start()
    try:
        yield srv
    finally:
        srv.stop(grace=0).wait(10)


@pytest.fixture(scope="module")
def server():
    with running(metrics_port=0) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    with FastApplyClient(server.address) as c:
        yield c


@pytest.fixture()
def slow_server():
    with running(SlowApplier(), max_queue=2) as srv:
        yield srv


def wait_until(pred, timeout=5.0, step=0.01):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def stream_text(events):
    parts, final = [], None
    for ev in events:
        if isinstance(ev, TextDelta):
            parts.append(ev.text)
        else:
            final = ev
    return "".join(parts), final


# -- generated code -------------------------------------------------------------------------------

def test_generated_code_is_fresh():
    from fastapply.grpc_gen import regen

    assert regen.stale_files() == [], "run: .venv/bin/python -m fastapply.grpc_gen.regen"


# -- results ----------------------------------------------------------------------------------------

def test_unary_and_stream_equal_in_process_apply(client, cases):
    local = Applier()
    languages = set()
    for c in cases[:12]:
        want = local.apply(req_of(c))
        got = client.apply(**kw_of(c))
        text, final = stream_text(client.apply_stream(**kw_of(c)))
        assert got.merged == want.merged == c["expected"]
        assert (got.engine, got.language, got.findings) == (want.engine, want.language, want.findings)
        assert text == got.merged and final.merged == got.merged
        assert (final.engine, final.language, final.findings) == (want.engine, want.language, want.findings)
        languages.add(got.language)
    assert len(languages) >= 2


def test_path_infers_language(client, cases):
    c = next(c for c in cases if c["language"] == "python")
    r = client.apply(c["original"], c["update"], path="pkg/mod.py", engine="structural")
    assert r.language == "python" and r.merged == c["expected"]


def test_sixteen_concurrent_clients(server, cases):
    chosen = cases[:16]

    def one(c):
        with FastApplyClient(server.address) as cl:
            unary = cl.apply(**kw_of(c)).merged
            streamed, final = stream_text(cl.apply_stream(**kw_of(c)))
            return unary, streamed, final.merged

    with ThreadPoolExecutor(16) as ex:
        results = list(ex.map(one, chosen))
    for c, (unary, streamed, final) in zip(chosen, results):
        assert unary == streamed == final == c["expected"], c["id"]


def test_sixteen_overlapping_slow_streams_get_their_own_text(cases):
    applier = SlowApplier(pieces=20, delay=0.01)
    with running(applier) as srv:
        def one(c):
            with FastApplyClient(srv.address) as cl:
                return stream_text(cl.apply_stream(**kw_of(c)))[0]

        with ThreadPoolExecutor(16) as ex:
            texts = list(ex.map(one, cases[:16]))
    assert texts == [c["expected"] for c in cases[:16]]
    assert applier.max_active > 1  # they ran concurrently, not one after another


# -- cancellation, deadlines, the model queue ---------------------------------------------------------

def test_cancel_mid_stream_leaves_others_alone(slow_server, cases):
    applier = slow_server.applier
    with ThreadPoolExecutor(3) as ex:
        def full(c):
            with FastApplyClient(slow_server.address) as cl:
                return stream_text(cl.apply_stream(**kw_of(c)))[0]

        others = [ex.submit(full, c) for c in cases[1:4]]
        with FastApplyClient(slow_server.address) as cl:
            it = cl.apply_stream(**kw_of(cases[0]))
            first = [next(it), next(it)]
            assert all(isinstance(ev, TextDelta) for ev in first)
            t_cancel = time.monotonic()
            it.close()  # cancels the call
            assert wait_until(lambda: applier.stops, 2.0), "the server did not stop the cancelled merge"
            assert applier.stops[0] - t_cancel < 1.0
        assert [f.result() for f in others] == [c["expected"] for c in cases[1:4]]
    with FastApplyClient(slow_server.address) as cl:  # still serving
        assert cl.apply(**kw_of(cases[4])).merged == cases[4]["expected"]
    assert wait_until(lambda: slow_server.metrics.counter("fastapply_responses_total", code="CANCELLED") >= 1)


def test_deadline_exceeded(slow_server, cases):
    applier = slow_server.applier
    with FastApplyClient(slow_server.address) as cl:
        with pytest.raises(ApplyError) as ei:
            stream_text(cl.apply_stream(**kw_of(cases[0]), timeout=0.3))
        assert ei.value.status == grpc.StatusCode.DEADLINE_EXCEEDED
        with pytest.raises(ApplyError) as ei:
            cl.apply(**kw_of(cases[1], engine="plain"), timeout=0.3)
        assert ei.value.status == grpc.StatusCode.DEADLINE_EXCEEDED
        assert wait_until(lambda: len(applier.stops) >= 2, 2.0), "decoding went on after the deadline"
        # the model turn was given back: the next model request runs at once
        assert cl.apply(**kw_of(cases[2], engine="plain")).merged == cases[2]["expected"]


def test_model_queue_bounded_and_structural_does_not_wait(slow_server, cases):
    srv, applier = slow_server, slow_server.applier
    applier.model_delay = 0.05  # ~2 s per model request; structural ~0.8 s
    results: dict[int, str] = {}

    def model_call(i):
        with FastApplyClient(srv.address) as cl:
            results[i] = cl.apply(**kw_of(cases[i], engine="plain"), instruction=f"r{i}").merged

    threads = []
    for i in range(3):  # one runs, two wait (max_queue=2)
        t = threading.Thread(target=model_call, args=(i,))
        t.start()
        threads.append(t)
        assert wait_until(lambda i=i: len(applier.model_order) + srv.queue.waiting == i + 1, 3.0)
    with FastApplyClient(srv.address) as cl:
        with pytest.raises(ApplyError) as ei:
            cl.apply(**kw_of(cases[3], engine="speculative"))
        assert ei.value.status == grpc.StatusCode.RESOURCE_EXHAUSTED and "queue is full" in ei.value.message
        assert ei.value.code == "queue_full"
        assert cl.apply(**kw_of(cases[4])).merged == cases[4]["expected"]  # structural: no queue
        assert srv.queue.waiting >= 1  # ... it finished while model requests were still waiting
    for t in threads:
        t.join(20)
    assert applier.model_order == ["r0", "r1", "r2"]  # FIFO
    assert results == {i: cases[i]["expected"] for i in range(3)}
    assert applier.overlaps == 0
    assert srv.queue.waiting == 0 and not srv.queue.busy


def test_cancelled_while_queued_leaves_the_queue(slow_server, cases):
    srv, applier = slow_server, slow_server.applier
    applier.model_delay = 0.05
    with FastApplyClient(srv.address) as a, FastApplyClient(srv.address) as b:
        first = threading.Thread(target=lambda: a.apply(**kw_of(cases[0], engine="plain"), instruction="first"))
        first.start()
        assert wait_until(lambda: applier.model_order == ["first"], 3.0)
        it = b.apply_stream(**kw_of(cases[1], engine="plain"), instruction="second")
        # start the call: the generator sends it on first next(); run it in a thread since it blocks
        got: list = []
        waiter = threading.Thread(target=lambda: got.append(_drain(it)))
        waiter.start()
        assert wait_until(lambda: srv.queue.waiting == 1, 3.0)
        b.close()  # closing the channel cancels the queued call
        assert wait_until(lambda: srv.queue.waiting == 0, 2.0), "a cancelled call stayed in the queue"
        assert srv.queue.busy  # the first request is still running, undisturbed
        first.join(10)
        waiter.join(10)
    assert applier.model_order == ["first"]
    assert isinstance(got[0], ApplyError) and got[0].status == grpc.StatusCode.CANCELLED


def _drain(it):
    try:
        return stream_text(it)
    except ApplyError as e:
        return e


# -- bad input ----------------------------------------------------------------------------------------

def test_bad_inputs_return_their_codes(client, refused_case):
    orig = "def f():\n    return 1\n"
    bad = [
        (dict(original=orig, update="   \n"), grpc.StatusCode.INVALID_ARGUMENT, "empty"),
        (dict(original=b"caf\xe9 = 1\n", update="x = 2\n"), grpc.StatusCode.INVALID_ARGUMENT, "not valid UTF-8"),
        (dict(original=orig, update=b"\xff\xfe"), grpc.StatusCode.INVALID_ARGUMENT, "update is not valid UTF-8"),
        (dict(original=orig, update="x = 1\n", engine="turbo"), grpc.StatusCode.INVALID_ARGUMENT, "unknown engine"),
        (dict(original=orig, update="x\x00"), grpc.StatusCode.INVALID_ARGUMENT, "NUL"),
        (dict(original=orig, update="x = 1\n", top_p=0.0), grpc.StatusCode.INVALID_ARGUMENT, "top_p"),
        (dict(original=orig, update="x = 1\n", engine="plain", max_output_tokens=0),
         grpc.StatusCode.INVALID_ARGUMENT, "max_output_tokens"),
    ]
    for kw, status, words in bad:
        kw = {"engine": "structural", **kw}
        for call in (lambda: client.apply(**kw), lambda: stream_text(client.apply_stream(**kw))):
            with pytest.raises(ApplyError) as ei:
                call()
            assert ei.value.status == status and words in ei.value.message, (kw, ei.value)
    with pytest.raises(ApplyError) as ei:
        client.apply(**kw_of(refused_case))
    e = ei.value
    assert e.status == grpc.StatusCode.FAILED_PRECONDITION and e.code == "refused"
    assert e.reasons and all(r in e.message for r in e.reasons)


def test_request_too_large(cases):
    with running(max_request_bytes=64 * 1024) as srv, FastApplyClient(srv.address) as cl:
        with pytest.raises(ApplyError) as ei:
            cl.apply("x = 1\n" * 20_000, "x = 2\n", engine="structural")
        assert ei.value.status == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert cl.apply(**kw_of(cases[0])).merged == cases[0]["expected"]


def test_model_load_failure_is_unavailable(cases):
    with running(Applier(model_name="/nonexistent/model.gguf")) as srv, FastApplyClient(srv.address) as cl:
        with pytest.raises(ApplyError) as ei:
            cl.apply(**kw_of(cases[0], engine="speculative"))
        assert ei.value.status == grpc.StatusCode.UNAVAILABLE and "could not be loaded" in ei.value.message
        assert cl.apply(**kw_of(cases[0])).merged == cases[0]["expected"]  # structural still works


# -- auth, TLS, health, reflection, metrics -------------------------------------------------------------

def test_token_required_on_every_call(cases):
    with running(token="s3cret-token") as srv:
        for token, ok in ((None, False), ("wrong", False), ("s3cret-token", True)):
            with FastApplyClient(srv.address, token=token) as cl:
                if ok:
                    assert cl.apply(**kw_of(cases[0])).merged == cases[0]["expected"]
                    assert stream_text(cl.apply_stream(**kw_of(cases[0])))[0] == cases[0]["expected"]
                    assert cl.health() == "SERVING"
                    continue
                for call in (lambda: cl.apply(**kw_of(cases[0])), lambda: stream_text(cl.apply_stream(**kw_of(cases[0]))),
                             cl.health):
                    with pytest.raises(ApplyError) as ei:
                        call()
                    assert ei.value.status == grpc.StatusCode.UNAUTHENTICATED
                    assert ("missing" if token is None else "not valid") in ei.value.message


def test_tls(tmp_path, cases):
    if not _which("openssl"):
        pytest.skip("openssl not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", str(key),
                    "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    with running(tls_cert=cert.read_bytes(), tls_key=key.read_bytes(), token="t") as srv:
        with FastApplyClient(srv.address, token="t", tls_ca=str(cert)) as cl:
            assert cl.apply(**kw_of(cases[0])).merged == cases[0]["expected"]
        with FastApplyClient(srv.address, token="t") as cl:  # plaintext to a TLS port fails
            with pytest.raises(ApplyError) as ei:
                cl.apply(**kw_of(cases[0]), timeout=5)
            assert ei.value.status == grpc.StatusCode.UNAVAILABLE


def _which(name):
    import shutil

    return shutil.which(name)


def test_health_and_reflection(server):
    ch = grpc.insecure_channel(server.address)
    stub = health_pb2_grpc.HealthStub(ch)
    for name in ("", SERVICE_NAME):
        r = stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
        assert r.status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.RpcError) as ei:
        stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=5)
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND

    from google.protobuf.descriptor_pool import DescriptorPool
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    rstub = reflection_pb2_grpc.ServerReflectionStub(ch)
    resp = next(rstub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5))
    names = {s.name for s in resp.list_services_response.service}
    assert {SERVICE_NAME, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names
    pool = DescriptorPool(ProtoReflectionDescriptorDatabase(ch))
    svc = pool.FindServiceByName(SERVICE_NAME)
    assert {m.name for m in svc.methods} == {"ApplyEdit", "ApplyEditStream"}
    assert pool.FindMessageTypeByName("fastapply.v1.ApplyEditRequest").fields_by_name["original"].type == 12  # bytes
    ch.close()


class _SlowLoadApplier(Applier):
    """Test double of model loading: 'loads' in 0.6 s without torch."""

    def __init__(self):
        super().__init__()
        self._loaded = False

    @property
    def model(self):
        time.sleep(0.6)
        self._loaded = True
        return object()

    @property
    def model_loaded(self):
        return self._loaded


def test_health_serving_once_model_loaded(cases):
    with running(_SlowLoadApplier(), preload=True) as srv, FastApplyClient(srv.address) as cl:
        assert cl.health() == "NOT_SERVING"
        assert cl.apply(**kw_of(cases[0])).merged == cases[0]["expected"]  # structural served meanwhile
        assert wait_until(lambda: cl.health() == "SERVING", 5.0)
        assert cl.health(SERVICE_NAME) == "SERVING"


def test_metrics_endpoint(server, client, cases):
    client.apply(**kw_of(cases[0]))
    with pytest.raises(ApplyError):
        client.apply("x = 1\n", " ", engine="structural")
    body = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=5).read().decode()
    assert re.search(r'^fastapply_requests_total\{engine="structural",method="ApplyEdit"\} [1-9]', body, re.M)
    assert re.search(r'^fastapply_errors_total\{code="INVALID_ARGUMENT"\} [1-9]', body, re.M)
    for name in ("fastapply_tokens_per_second", "fastapply_acceptance_ratio", "fastapply_queue_depth",
                 "fastapply_request_duration_seconds_bucket"):
        assert name in body
    assert "# TYPE fastapply_requests_total counter" in body


# -- command line ------------------------------------------------------------------------------------------

def test_cli_client_apply(server, cases, refused_case, tmp_path, capsys):
    from fastapply.cli import main

    c = cases[0]
    f = tmp_path / "file.py"
    u = tmp_path / "update.txt"
    f.write_text(c["original"])
    u.write_text(c["update"])
    base = ["--update", str(u), "--server", server.address, "--engine", "structural", "--language", c["language"]]
    assert main(["client", "apply", str(f), "--stream", "--quiet"] + base) == 0
    assert capsys.readouterr().out == c["expected"]
    assert main(["client", "apply", str(f), "--in-place"] + base) == 0
    assert f.read_text() == c["expected"]
    f.write_text(refused_case["original"])
    u.write_text(refused_case["update"])
    assert main(["client", "apply", str(f), "--in-place"] + base[:-1] + [refused_case["language"]]) == 1
    assert f.read_text() == refused_case["original"]  # nothing written
    assert "refused" in capsys.readouterr().err
    # --show-readings prints the server's readings, as `fastapply apply --show-readings` prints its own
    assert main(["client", "apply", str(f), "--show-readings"] + base[:-1] + [refused_case["language"]]) == 1
    shown = capsys.readouterr().out
    assert main(["apply", str(f), "--show-readings", "--update", str(u), "--engine", "structural",
                 "--language", refused_case["language"]]) == 1
    assert shown and "# reading 1 of" in shown and shown == capsys.readouterr().out
    assert main(["client", "health", "--server", server.address]) == 0


def _start_subprocess(args, env=None):
    p = subprocess.Popen(args, cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    lines = []
    end = time.monotonic() + 60
    while time.monotonic() < end:
        line = p.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"serving on (\S+)", line)
        if m:
            threading.Thread(target=p.stderr.read, daemon=True).start()  # keep the pipe drained
            return p, m.group(1)
    p.kill()
    raise AssertionError("server did not start:\n" + "".join(lines))


def test_serve_command_and_sigterm(cases, tmp_path):
    tok = tmp_path / "token"
    tok.write_text("tok-123\n")
    p, addr = _start_subprocess([PY, "-m", "fastapply.cli", "serve", "--port", "0", "--no-preload",
                                 "--token-file", str(tok), "--metrics-port", "0"])
    try:
        with FastApplyClient(addr, token="tok-123") as cl:
            assert cl.health() == "SERVING"
            assert cl.apply(**kw_of(cases[0])).merged == cases[0]["expected"]
        p.send_signal(signal.SIGTERM)
        assert p.wait(20) == 0
    finally:
        if p.poll() is None:
            p.kill()


_DRAIN_SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
from test_grpc import SlowApplier
from fastapply.server import FastApplyServer, serve_until_signal
srv = FastApplyServer(SlowApplier(pieces=30, delay=0.05), host="127.0.0.1", port=0, preload=False)
sys.exit(serve_until_signal(srv, grace=10, on_started=lambda s: print("serving on", s.address, file=sys.stderr, flush=True)))
"""


def test_sigterm_drains_in_flight_calls(cases, tmp_path):
    script = tmp_path / "drain.py"
    script.write_text(textwrap.dedent(_DRAIN_SCRIPT.format(tests=str(REPO / "tests"))))
    p, addr = _start_subprocess([PY, str(script)])
    try:
        with FastApplyClient(addr) as cl:
            it = cl.apply_stream(**kw_of(cases[0]))
            parts = [next(it).text]
            p.send_signal(signal.SIGTERM)  # 1.5 s of output still to come
            time.sleep(0.3)
            with FastApplyClient(addr) as late:  # new calls are refused while draining
                with pytest.raises(ApplyError) as ei:
                    late.apply(**kw_of(cases[1]), timeout=5)
                assert ei.value.status == grpc.StatusCode.UNAVAILABLE
            for ev in it:
                if isinstance(ev, TextDelta):
                    parts.append(ev.text)
                else:
                    assert ev.merged == cases[0]["expected"]
            assert "".join(parts) == cases[0]["expected"]
        assert p.wait(20) == 0
    finally:
        if p.poll() is None:
            p.kill()


# -- the real model (slow on CPU) ----------------------------------------------------------------------------

TINY = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
TINY_UPDATE = "def add(a, b):\n    # the sum\n    return a + b\n\n# ... existing code ...\n"


@pytest.mark.model
def test_model_engine_over_grpc():
    applier = Applier()
    with running(applier, preload=True) as srv, FastApplyClient(srv.address) as cl:
        assert wait_until(lambda: cl.health() == "SERVING", 300, 0.2), srv.load_error
        req = ApplyRequest(TINY, TINY_UPDATE, language="python", engine="speculative", max_output_tokens=40,
                           sampling=Sampling())
        want = applier.apply(req)
        got = cl.apply_request(req)
        text, final = stream_text(cl.apply_stream_request(req))
        assert got.merged == want.merged == text == final.merged
        assert (got.engine, got.language, got.findings) == (want.engine, want.language, want.findings)
        assert got.stats.output_tokens == want.stats.output_tokens and got.stats.forward_passes >= 1
        assert final.stats.output_tokens == want.stats.output_tokens
        with pytest.raises(ApplyError) as ei:  # too long for the context
            cl.apply("x = 1\n" * 40_000, TINY_UPDATE, language="python", engine="plain")
        assert ei.value.status == grpc.StatusCode.RESOURCE_EXHAUSTED and "too long" in ei.value.message


# -- refusals carry their readings (the rich error model) ------------------------------------------

def test_a_refusal_carries_its_readings_and_hints_as_a_typed_detail(client, refused_case):
    from grpc_status import rpc_status

    from fastapply.grpc_gen import fastapply_pb2 as pb
    from fastapply.refusal import rebuild

    with pytest.raises(ApplyError) as local:
        Applier().apply(req_of(refused_case))
    with pytest.raises(ApplyError) as ei:
        client.apply(**kw_of(refused_case))
    e = ei.value
    assert e.message.split("\n", 1)[0] == local.value.hint  # the first line says what to resend
    got = e.refusal
    assert got is not None and got.hint == local.value.hint and list(got.reasons) == local.value.reasons
    assert [(r.how, rebuild(refused_case["original"], r.diff)) for r in got.readings] == local.value.readings
    # grpcio-status reads the same detail off a raw call (what any gRPC client of another language does)
    stub = pb_grpc_stub(client)
    with pytest.raises(grpc.RpcError) as raw:
        stub.ApplyEdit(client_request(refused_case))
    status = rpc_status.from_call(raw.value)
    assert status is not None and status.details[0].Is(pb.Refusal.DESCRIPTOR)


def test_readings_of_a_large_file_send_the_diffs_and_say_the_files_were_left_out(server):
    from fastapply.refusal import rebuild
    from fastapply.remote import RemoteApplier

    filler = "".join(f"def helper_{i}(a, b):\n    return a * {i} + b\n\n\n" for i in range(300))
    original = filler + "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"
    update = "# ... existing code ...\n    x = 2\n    return x\n# ... existing code ...\n"
    req = ApplyRequest(original, update, language="python", engine="structural")
    with pytest.raises(ApplyError) as local:
        Applier().apply(req)
    assert len(original) * len(local.value.readings) > 6 * 1024  # more than a default client's metadata holds
    # a plain gRPC client (default 8 KiB metadata limit, no max_refusal_bytes): the diffs, files left out
    from grpc_status import rpc_status

    from fastapply.grpc_convert import refusal_from_metadata, request_to_proto
    from fastapply.grpc_gen import fastapply_pb2_grpc as pb_grpc

    with grpc.insecure_channel(server.address) as channel, pytest.raises(grpc.RpcError) as raw:
        pb_grpc.FastApplyStub(channel).ApplyEdit(request_to_proto(req))
    assert raw.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rpc_status.from_call(raw.value) is not None
    refusal = refusal_from_metadata(raw.value.trailing_metadata())
    assert refusal.texts_omitted and not refusal.diffs_omitted
    assert all(not r.HasField("text") and r.diff for r in refusal.readings)
    assert [(r.how, rebuild(original, r.diff)) for r in refusal.readings] == local.value.readings
    # fastapply's own client takes large metadata and says so: the whole files come along
    with FastApplyClient(server.address) as cl, pytest.raises(ApplyError) as ei:
        cl.apply_request(req)
    assert not ei.value.refusal.texts_omitted and ei.value.readings == local.value.readings
    with RemoteApplier(server.address) as remote, pytest.raises(ApplyError) as remote_e:
        remote.apply(req)
    assert remote_e.value.readings == local.value.readings


def pb_grpc_stub(client):
    from fastapply.grpc_gen import fastapply_pb2_grpc as pb_grpc

    return pb_grpc.FastApplyStub(client.channel)


def client_request(c):
    from fastapply.grpc_convert import request_to_proto

    return request_to_proto(req_of(c))


class JudgingForever:
    """A model engine whose judge scores pass after pass until should_stop (never on its own)."""

    concurrent = False
    max_positions = 100_000

    def __init__(self):
        self.started, self.stopped = threading.Event(), threading.Event()

    def prompt_ids(self, req):
        return [1]

    def answer_ids(self, text, end=True):
        return [ord(c) for c in text[:20]] + [0]

    def score(self, prompt_ids, answers, should_stop=None):
        self.started.set()
        while not (should_stop is not None and should_stop()):
            time.sleep(0.01)  # one forward pass
        self.stopped.set()
        raise ApplyError("cancelled", "scoring stopped")


def test_a_client_that_goes_away_while_the_judge_scores_frees_the_worker():
    model = JudgingForever()
    original = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"
    update = "# ... existing code ...\n    x = 2\n    return x\n# ... existing code ...\n"
    with running(Applier(model_engine=model)) as srv, FastApplyClient(srv.address) as cl:
        call = cl.apply_stream(original, update, language="python", engine="auto", model_budget_s=0)
        future = ThreadPoolExecutor(1).submit(lambda: list(call))
        assert model.started.wait(30)
        cl.close()  # the client goes away mid-judging
        with pytest.raises(ApplyError):
            future.result(30)
        assert model.stopped.wait(30)  # the judge saw it at its next pass
        assert wait_until(lambda: not srv.queue.busy and srv.queue.waiting == 0, timeout=30)  # the turn is free
