"""Relace's TypeScript SDK, unmodified, against a live `fastapply serve --http-port` on 127.0.0.1.

`@relace-ai/relace` 0.6.0 has no apply method of its own: a user calls its public
`client.post("/code/apply", {body})` with `RELACE_BASE_URL` pointing at the server (and `{stream: true}`
for a stream of `{data}` events). It runs in tests/http_clients/run.mjs (installed by `npm ci` from the
committed lockfile: `make http-clients-deps`) under tests/morph_clients/no_egress.cjs, which refuses and
records every connection but to loopback. The server is the structural engine alone
(`--http-default-engine structural`, no model), on ten shared cases (`evals.http_clients.pick_cases`:
eight it answers, two it refuses); answers are compared byte for byte with the cases' expected files.

A client that goes away mid-request or mid-stream is tested against an in-process server whose engine is
a test double (`SlowApplier`): the double records the `should_stop()` it saw, and the server's in-flight
gauge comes back to 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess

import node_harness
import pytest
from test_grpc import SlowApplier, wait_until

from evals.http_clients import (
    GUARD,
    HARNESS,
    Case,
    harness_ready,
    node_job,
    pick_cases,
    reference,
    run_harness,
)
from evals.morph_clients import egress_attempts, serve_structural
from fastapply.httpapi.server import attach_http
from fastapply.server import FastApplyServer

TOKEN = "rlc-fastapply-test-token"
ORIG = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
UPDATE = "def add(a, b):\n    # the sum\n    return a + b\n\n# ... existing code ...\n"


# -- shared by the client tests (test_continue_client, test_avante_request import these) --------------

def ensure_harness() -> None:
    node_harness.ensure(HARNESS, harness_ready)


@contextlib.contextmanager
def structural_server(root):
    """`fastapply serve --http-default-engine structural --token-file ...` on loopback, and its ten cases."""
    (root / "token").write_text(TOKEN + "\n")
    with serve_structural("--token-file", str(root / "token")) as server:
        cases = pick_cases(server.url, TOKEN)
        if len(cases) < 10:
            pytest.skip(f"only {len(cases)} shared cases found (want 8 answered, 2 refused)")
        yield server, cases


@contextlib.contextmanager
def slow_server(pieces: int = 40, delay: float = 0.5):
    """An in-process server (HTTP, metrics) whose engine stands for a model that streams the
    structural merge slowly (in `pieces` pieces `delay` s apart: longer than any client here waits
    before it goes away), polling should_stop; it is the default engine (`plain`: one try, streamed
    as it goes). A client that aborts while the gauge counts a request in flight must be the only one
    in flight then: such a job goes first."""
    applier = SlowApplier(pieces=pieces, model_delay=delay)
    srv = FastApplyServer(applier, host="127.0.0.1", port=0, token=TOKEN, preload=False, metrics_port=0)
    http = attach_http(srv, 0, token=TOKEN, default_engine="plain")
    srv.start()
    try:
        yield srv, http, applier
    finally:
        srv.stop(grace=0).wait(10)


def inflight(srv: FastApplyServer) -> float:
    """The server's in-flight gauge, as its metrics port serves it."""
    for line in srv.metrics.render().splitlines():
        if line.startswith("fastapply_inflight_requests "):
            return float(line.split()[1])
    raise AssertionError("no fastapply_inflight_requests in the metrics")


def metrics_url(srv: FastApplyServer) -> str:
    return f"http://127.0.0.1:{srv.metrics_port}/metrics"


# -- the cases through the SDK -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run(tmp_path_factory):
    ensure_harness()
    root = tmp_path_factory.mktemp("relace")
    with structural_server(root) as (server, cases):
        jobs = [node_job(client, case, f"{client}:{i}") for i, case in enumerate(cases)
                for client in ("relace", "relace-stream")]
        jobs.append(node_job("relace", cases[0], "wrong-key", key="rlc-not-the-token"))
        out = run_harness(server.url, TOKEN, jobs, root / "egress.jsonl")
        yield {"cases": cases, "results": {r["id"]: r for r in out["results"]},
               "egress": egress_attempts(root / "egress.jsonl")}


def exact_answers(run: dict, client: str) -> list[tuple[Case, dict]]:
    """(case, the client's result) for the eight cases the server answers, each checked: the
    client reports success and its text is the case's `reference` byte for byte."""
    answered = [(i, c) for i, c in enumerate(run["cases"]) if c.expected is not None]
    assert len(answered) == 8
    out = []
    for i, case in answered:
        res = run["results"][f"{client}:{i}"]
        assert res["ok"], (case.id, res.get("error"))
        assert res["merged"] == reference(case, client), case.id  # byte for byte
        out.append((case, res))
    return out


@pytest.mark.parametrize("client", ["relace", "relace-stream"])
def test_every_answered_case_comes_back_exact(run, client):
    for case, res in exact_answers(run, client):
        # Continue's Relace adapter reads usage.prompt_tokens unchecked: every 200 carries usage
        assert set(res["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}, case.id
        if client == "relace-stream":
            assert res["chunks"] >= 1


@pytest.mark.parametrize("client", ["relace", "relace-stream"])
def test_a_refusal_is_unprocessable_entity_with_the_hint_first_and_the_readings(run, client):
    refused = [(i, c) for i, c in enumerate(run["cases"]) if c.expected is None]
    assert len(refused) == 2
    for i, case in refused:
        err = run["results"][f"{client}:{i}"]["error"]
        assert err["name"] == "UnprocessableEntityError" and err["status"] == 422, (case.id, err)
        body = err["body"]  # the SDK's error object exposes the whole body
        assert body["error"]["code"] == "refused"
        assert err["message"] == "422 " + body["error"]["message"]  # its top-level message, not a JSON dump
        assert body["error"]["message"].split("\n", 1)[0] == body["hint"]  # the first line: what to resend
        assert all(reason in body["error"]["message"] for reason in body["reasons"])
        assert body["readings"] and body["texts_omitted"] is False
        for reading in body["readings"]:
            assert reading["text"] and reading["diff"].startswith("--- original")


def test_a_wrong_key_is_authentication_error(run):
    err = run["results"]["wrong-key"]["error"]
    assert err["name"] == "AuthenticationError" and err["status"] == 401
    assert "not valid" in err["message"]


def test_the_sdk_reaches_no_host_but_loopback(run):
    assert run["egress"] == []


def test_the_guard_stops_these_client_libraries_before_they_connect():
    ensure_harness()
    env = {**os.environ, "NO_EGRESS_STRICT": "1"}  # loopback refused too: every library goes through the gate
    proc = subprocess.run(["node", "--require", str(GUARD), str(HARNESS / "guard_selftest.mjs")], cwd=HARNESS,
                          env=env, capture_output=True, text=True, timeout=120)
    got = json.loads(proc.stdout)
    assert got == {"errors": dict.fromkeys(("relace", "continue-openai", "continue-relace", "continue-completions",
                                            "ollama"), "ECONNREFUSED"), "served": 0}


# -- a client that goes away ---------------------------------------------------------------------------

def test_a_client_that_goes_away_ends_its_request_on_the_server(tmp_path):
    """A unary request aborted (its `signal`) while the server serves it, and a stream the SDK stops
    reading after its first chunk (`break`: the SDK aborts it): each request's merge saw should_stop()
    and the in-flight gauge is back to 0."""
    ensure_harness()
    case = Case("small", "python", ORIG, UPDATE, None)
    with slow_server() as (srv, http, applier):
        jobs = [node_job("relace", case, "unary", abort="in-flight"),
                node_job("relace-stream", case, "stream", abort="first-chunk")]
        out = run_harness(http.url, TOKEN, jobs, tmp_path / "egress.jsonl", metrics_url(srv))
        results = {r["id"]: r for r in out["results"]}
        assert results["stream"]["aborted"] and results["stream"]["chunks"] == 1
        assert results["unary"]["aborted"] and results["unary"]["error"]["name"] == "APIUserAbortError"
        assert wait_until(lambda: len(applier.stops) >= 2, 10.0), applier.stops
        assert wait_until(lambda: inflight(srv) == 0, 10.0)
        assert wait_until(lambda: srv.metrics.counter("fastapply_responses_total", code="CANCELLED") == 2, 10.0)
