"""Continue's OpenAI adapters (`@continuedev/openai-adapters` 1.37.0), unmodified, against a live
`fastapply serve --http-port` on 127.0.0.1 (structural engine, no model).

- Provider `openai`, as Continue's apply step calls it (core/edit/streamDiffLines.ts ->
  core/edit/recursiveStream.ts -> the adapter's `chatCompletionStream`): `stream: true`, `max_tokens:
  4096`, the adapter adding `stream_options: {include_usage: true}`, and the apply prompt fastapply's
  docs configure (`promptTemplates.apply`: `<code>{{{ original_code }}}</code>\\n<update>{{{ new_code
  }}}</update>`) rendered with the whole file. The streamed text is compared byte for byte with the
  case's expected file; Continue's own line filters and diff after it are not run here.
- Continue's default apply prompt (any model without an apply template: ORIGINAL CODE and SUGGESTED
  EDIT fences, the assistant prefilled with a fence; core/llm/templates/edit/gpt.ts) through the same
  adapter's chatCompletionStream, with a model name a user gives an open model (`qwen2.5-coder:1.5b`).
- A string apply template rendered by Handlebars (Continue's renderPromptTemplate), through the
  adapter's completionStream: `POST /v1/completions`, where Continue's `openai` and `lmstudio`
  providers send a string prompt. Morph's documented template, and aiXapply's blocks with the file
  asked bare. And the same Morph template as Continue's `ollama` provider sends it, `POST /api/generate`
  with `raw: true`, through the Ollama JavaScript library.
- Provider `relace`, as Continue's core calls it today: `prediction: undefined` (recursiveStream.ts), so
  the adapter sends `initialCode: ""` and the snippet. The server refuses that with an error that
  names the empty `initialCode`; the adapter itself then fails on the error body (it reads
  `result.usage.prompt_tokens` unchecked), so Continue shows a TypeError: the request it sent is read
  from Continue's own request trace (VERBOSE_FETCH) and the server's answer to it checked here.

The clients run in tests/http_clients/run.mjs under the loopback-only guard (tests/morph_clients/
no_egress.cjs); a client that goes away is tested against the slow test double of test_relace_client.
"""

from __future__ import annotations

import json

import httpx
import pytest
from test_grpc import wait_until
from test_relace_client import (
    ORIG,
    TOKEN,
    UPDATE,
    ensure_harness,
    exact_answers,
    inflight,
    metrics_url,
    slow_server,
    structural_server,
)

from evals.http_clients import Case, node_job, run_harness
from evals.morph_clients import egress_attempts

# Continue's other apply paths and Ollama's generate: the prompts clients send to open apply models.
OPEN_MODEL_CLIENTS = ("continue-default", "continue-completions-morph", "continue-completions-aixapply",
                      "ollama-generate")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    ensure_harness()
    root = tmp_path_factory.mktemp("continue")
    with structural_server(root) as (server, cases):
        jobs = [node_job(client, case, f"{client}:{i}", trace=client == "continue-relace")
                for i, case in enumerate(cases) for client in ("continue-openai", "continue-relace") + OPEN_MODEL_CLIENTS]
        first = next(c for c in cases if c.expected is not None)
        jobs.append(node_job("continue-relace", first, "relace-with-prediction", prediction=first.original))
        out = run_harness(server.url, TOKEN, jobs, root / "egress.jsonl")
        yield {"url": server.url, "cases": cases, "first": first, "results": {r["id"]: r for r in out["results"]},
               "egress": egress_attempts(root / "egress.jsonl")}


def test_the_apply_step_streams_every_answered_case_exactly_with_usage(run):
    for _, res in exact_answers(run, "continue-openai"):
        # the adapter asked for usage (stream_options.include_usage) and read it from the last chunk
        assert res["usage"]["total_tokens"] == res["usage"]["prompt_tokens"] + res["usage"]["completion_tokens"]


def test_the_apply_step_shows_a_refusal_with_what_to_resend_and_its_reasons(run):
    refused = [(i, c) for i, c in enumerate(run["cases"]) if c.expected is None]
    assert len(refused) == 2
    for i, case in refused:
        err = run["results"][f"continue-openai:{i}"]["error"]
        assert err["name"] == "UnprocessableEntityError" and err["status"] == 422, (case.id, err)
        shown = err["message"]  # what Continue puts in front of its user
        assert shown.startswith("422 Resend"), shown
        assert "structural merge refused" in shown and all(reason in shown for reason in err["body"]["reasons"])


@pytest.mark.parametrize("client", OPEN_MODEL_CLIENTS)
def test_the_open_model_prompts_stream_every_answered_case_exactly(run, client):
    """The default prompt's prefilled fence is not repeated (the answer is the file, bare); the
    completions and Ollama's generate answer the template's prompt the same way."""
    for _, res in exact_answers(run, client):
        if not client.startswith("continue-completions"):  # the completions stream asked for no usage
            assert res["usage"]["completion_tokens"] > 0, res["usage"]
    if client == "ollama-generate":
        assert run["results"][f"{client}:0"]["doneReason"] == "stop"


@pytest.mark.parametrize("client", OPEN_MODEL_CLIENTS)
def test_the_open_model_prompts_get_the_refusal_as_an_error_with_what_to_resend(run, client):
    refused = [(i, c) for i, c in enumerate(run["cases"]) if c.expected is None]
    assert len(refused) == 2
    for i, case in refused:
        err = run["results"][f"{client}:{i}"]["error"]
        assert err["status"] == 422, (case.id, err)
        assert "Resend" in err["message"] and "structural merge refused" in err["message"], err["message"]


def test_the_relace_provider_sends_an_empty_initial_code_and_the_server_names_it(run):
    for i, case in enumerate(run["cases"]):
        res = run["results"][f"continue-relace:{i}"]
        assert not res["ok"]  # no case is merged against an empty file
        sent = _traced_body(res["trace"])
        assert sent == {"initialCode": "", "editSnippet": case.update}, case.id
        # what the server answers that request: an error that names the empty initialCode
        r = httpx.post(run["url"] + "/v1/code/apply", json=sent, headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_argument"
        assert r.json()["message"].startswith("send the file's current content as `initialCode`")
        # ...which the adapter loses: it reads usage.prompt_tokens from the error body (a trap, docs/drafts/clients.md)
        assert res["error"]["name"] == "TypeError" and "prompt_tokens" in res["error"]["message"]


def test_the_relace_provider_given_the_file_as_its_prediction_is_exact(run):
    res = run["results"]["relace-with-prediction"]
    assert res["ok"] and res["merged"] == run["first"].expected
    assert set(res["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_the_adapters_reach_no_host_but_loopback(run):
    assert run["egress"] == []


def _traced_body(trace: list[str]) -> dict:
    """The JSON body of the one request in Continue's request trace (@continuedev/fetch, VERBOSE_FETCH)."""
    bodies = [line[len("Body: "):] for line in trace if line.startswith("Body: ")]
    assert len(bodies) == 1, trace
    return json.loads(bodies[0])


def test_a_client_that_goes_away_ends_its_request_on_the_server(tmp_path):
    """The `openai` provider's stream aborted (its signal) after the first chunk, and the `relace`
    provider's request (given a prediction, so that there is a merge to stop) aborted while the server
    serves it: each request's merge saw should_stop(), and the in-flight gauge is back to 0."""
    ensure_harness()
    case = Case("small", "python", ORIG, UPDATE, None)
    with slow_server() as (srv, http, applier):
        jobs = [node_job("continue-relace", case, "relace", prediction=ORIG, abort="in-flight"),
                node_job("continue-openai", case, "openai", model="fastapply-plain", abort="first-chunk")]
        out = run_harness(http.url, TOKEN, jobs, tmp_path / "egress.jsonl", metrics_url(srv))
        results = {r["id"]: r for r in out["results"]}
        assert results["relace"]["aborted"], results["relace"]
        assert results["openai"]["aborted"] and results["openai"]["chunks"] == 1, results["openai"]
        assert wait_until(lambda: len(applier.stops) >= 2, 10.0), applier.stops
        assert wait_until(lambda: inflight(srv) == 0, 10.0)
        assert wait_until(lambda: srv.metrics.counter("fastapply_responses_total", code="CANCELLED") == 2, 10.0)
