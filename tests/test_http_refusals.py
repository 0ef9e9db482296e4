"""What the next real clients needed of the HTTP protocol (issues 38 and 39), against in-process servers:

- a refusal's 422 body carries, beside OpenAI's `error` object (unchanged for the SDKs), the structured
  refusal (`hint`, `hints`, `reasons`, `readings`, `texts_omitted`), and `error.message` starts with
  the hint line; Relace's route adds a top-level `message`, which Relace's SDK words its error from;
- `usage` on every 200, counted or not (Continue's Relace adapter reads `usage.prompt_tokens` unchecked);
- Relace's documented OpenAI-compatible base `/v1/apply` answers like `/v1`;
- an empty original: a snippet with markers is refused, naming the empty original; one without is the
  new file, on every front-end (the check is in the pipeline);
- a unary request whose client went away ends as cancelled, not as an internal error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI
import test_http
from test_grpc import wait_until

from fastapply.api import Applier, ApplyError, ApplyRequest

REPO = Path(__file__).resolve().parent.parent
CASES_FILE = REPO / "evals" / "cases" / "commits_dev.jsonl"
ORIG = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
UPDATE = "def add(a, b):\n    # the sum\n    return a + b\n\n# ... existing code ...\n"
MERGED = "def add(a, b):\n    # the sum\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
MARKED = "# ... existing code ...\ndef mul(a, b):\n    return a * b\n"
NEW_FILE = "def mul(a, b):\n    return a * b\n"


def serving(applier=None, **kw):
    """test_http's server, structural by default (no model loads)."""
    return test_http.serving(applier, default_engine="structural", **kw)


@pytest.fixture(scope="module")
def url():
    with serving() as (_, http):
        yield http.url


@pytest.fixture(scope="module")
def refused():
    """A shared case the structural merge refuses with readings."""
    if not CASES_FILE.exists():
        pytest.skip(f"{CASES_FILE} not found")
    for line in CASES_FILE.read_text().splitlines():
        case = json.loads(line)
        try:
            Applier().apply(ApplyRequest(case["original"], case["update"], engine="structural"))
        except ApplyError as e:
            if e.code == "refused" and len(e.readings) >= 2:
                return case
    pytest.skip("no shared case the merge refuses with two readings")


def _message(original: str, update: str) -> list[dict]:
    return [{"role": "user", "content": f"<code>{original}</code>\n<update>{update}</update>"}]


def _check_refusal_body(body: dict, case: dict) -> None:
    err = body["error"]
    assert err["code"] == "refused" and err["type"] == "invalid_request_error" and err["param"] is None
    assert err["message"].split("\n", 1)[0] == body["hint"]  # the first line says what to resend
    assert all(reason in err["message"] for reason in body["reasons"]) and body["reasons"] == err["reasons"]
    assert len(body["readings"]) >= 2 and body["texts_omitted"] is False
    for i, reading in enumerate(body["readings"], 1):
        assert reading["index"] == i and reading["how"] and reading["text"] != case["original"]
        assert reading["diff"].startswith("--- original\n+++ reading")
        first, last = reading["original_lines"]
        assert 1 <= first <= last + 1
    for hint in body["hints"]:
        assert {"reading", "region", "side", "lines", "original_lines"} <= set(hint)


def test_the_openai_sdk_raises_the_refusal_and_exposes_its_readings(url, refused):
    client = OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.UnprocessableEntityError) as ei:
        client.chat.completions.create(model="auto", messages=_message(refused["original"], refused["update"]))
    assert ei.value.body["code"] == "refused"  # the SDK's `body`: OpenAI's error object
    assert str(ei.value.body["message"]).startswith("Resend")
    _check_refusal_body(ei.value.response.json(), refused)  # the whole body: readings beside the error


def test_the_relace_route_refusal_has_the_same_fields_and_a_top_level_message(url, refused):
    for stream in (False, True):  # refused before any text: a status, even when streamed
        r = httpx.post(url + "/v1/code/apply", json={"initialCode": refused["original"],
                                                     "editSnippet": refused["update"], "stream": stream})
        assert r.status_code == 422
        _check_refusal_body(r.json(), refused)
        assert r.json()["message"] == r.json()["error"]["message"]


def test_whole_files_past_the_size_limit_are_left_out_and_their_diffs_kept(refused):
    request = {"initialCode": refused["original"], "editSnippet": refused["update"]}
    limit = len(json.dumps(request).encode()) + 1024  # the request fits; its readings' files do not
    with serving(max_body_bytes=limit) as (_, http):
        body = httpx.post(http.url + "/v1/code/apply", json=request).json()
    assert body["texts_omitted"] is True and body["readings"]
    assert all(r["text"] is None and r["diff"] for r in body["readings"])


def test_usage_is_on_every_answer_even_when_not_counted(url):
    """These servers have no tokenizer for model-free answers: usage is zeros, and says so."""
    client = OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    r = client.chat.completions.create(model="auto", messages=_message(ORIG, UPDATE))
    assert r.usage.total_tokens == 0 and r.model_extra["fastapply"]["usage_counted"] is False
    body = httpx.post(url + "/v1/code/apply", json={"initialCode": ORIG, "editSnippet": UPDATE}).json()
    assert body["mergedCode"] == MERGED and body["usage"] == {"prompt_tokens": 0, "completion_tokens": 0,
                                                              "total_tokens": 0}
    with httpx.stream("POST", url + "/v1/code/apply",
                      json={"initialCode": ORIG, "editSnippet": UPDATE, "stream": True}) as s:
        events = [json.loads(line[6:]) for line in s.iter_lines() if line.startswith("data: ")]
    assert "".join(e.get("chunk", "") for e in events) == MERGED and events[-1]["usage"]["total_tokens"] == 0


def test_relace_openai_compatible_base_answers_like_v1(url):
    client = OpenAI(base_url=url + "/v1/apply", api_key="unused", max_retries=0)  # Relace's documented base
    r = client.chat.completions.create(model="auto", messages=_message(ORIG, UPDATE))
    assert r.choices[0].message.content == MERGED
    assert "auto" in [m.id for m in client.models.list().data]
    assert httpx.post(url + "/v1/apply/code/apply", json={}).status_code == 404  # not a Relace route


@pytest.mark.parametrize("engine", ["structural", "auto", "plain"])
def test_an_empty_original_is_a_new_file_or_names_what_to_send(engine):
    """Every front-end goes through the pipeline: nothing is ever merged against an empty file, and
    no engine loads a model for it."""
    applier = Applier()
    for original in ("", "\n", "  \n\n"):
        result = applier.apply(ApplyRequest(original, NEW_FILE, engine=engine))
        assert result.merged == NEW_FILE and any(f.kind == "new_file" for f in result.findings)
        with pytest.raises(ApplyError) as ei:
            applier.apply(ApplyRequest(original, MARKED, engine=engine))
        assert ei.value.code == "invalid_argument"
        assert ei.value.message.startswith("send the file's current content as the original")
        assert "line 1 of the snippet (`# ... existing code ...`)" in ei.value.message
    assert not applier.model_loaded


def test_an_empty_original_over_http_is_named_as_each_route_calls_it(url):
    for body, name in (({"initialCode": "", "editSnippet": MARKED}, "`initialCode`"),
                       ({"initial_code": "", "edit_snippet": MARKED}, "`initial_code`")):
        r = httpx.post(url + "/v1/code/apply", json=body)
        assert r.status_code == 400 and r.json()["message"].startswith(f"send the file's current content as {name}")
    r = httpx.post(url + "/v1/chat/completions", json={"messages": _message("", MARKED)})
    assert r.status_code == 400 and "the <code> block is empty" in r.json()["error"]["message"]
    r = httpx.post(url + "/v1/code/apply", json={"initialCode": "", "editSnippet": NEW_FILE})
    assert r.status_code == 200 and r.json()["mergedCode"] == NEW_FILE
    # content parts instead of a string are accepted, as OpenAI's API takes them
    parts = [{"type": "text", "text": "<code></code>\n"}, {"type": "text", "text": f"<update>{NEW_FILE}</update>"}]
    r = httpx.post(url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": parts}]})
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == NEW_FILE


def test_a_unary_request_whose_client_went_away_ends_as_cancelled():
    from test_grpc import SlowApplier

    applier = SlowApplier(pieces=40, model_delay=0.5)
    with serving(applier) as (srv, http):
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(http.url + "/v1/code/apply", json={"initialCode": ORIG, "editSnippet": UPDATE,
                                                          "model": "fastapply-plain"}, timeout=1.0)
        assert wait_until(lambda: applier.stops, 10.0)
        assert wait_until(lambda: srv.metrics.counter("fastapply_responses_total", code="CANCELLED") == 1, 10.0)
        assert srv.metrics.counter("fastapply_responses_total", code="INTERNAL") == 0
