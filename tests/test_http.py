"""The HTTP front-end against real servers on 127.0.0.1, called by real clients: the official `openai`
SDK for `/v1/chat/completions` and httpx for Relace's `/v1/code/apply` (no HTTP mocks).

The server is the gRPC server with HTTP attached (`attach_http`): one applier, model queue, token,
metrics and health state. Long requests (disconnects, the model queue) use test_grpc's `SlowApplier`,
a test double of the engine; `ScriptedEngine` below stands in for the model where a test needs
known drafter counts or a file that fails validation.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI
from test_grpc import SlowApplier, _SlowLoadApplier, wait_until

from fastapply.api import ENGINES, Applier, ApplyError, ApplyRequest, Sampling, TextDelta
from fastapply.httpapi.errors import HTTP_STATUS
from fastapply.httpapi.parse import DEFAULT_ENGINE, model_names, parse_morph_message
from fastapply.httpapi.server import attach_http
from fastapply.httpapi.usage import TokenCounter
from fastapply.server import FastApplyServer

REPO = Path(__file__).resolve().parent.parent
CASES_FILE = REPO / "evals" / "cases" / "commits_dev.jsonl"
PY = sys.executable

ORIG = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
UPDATE = "def add(a, b):\n    # the sum\n    return a + b\n\n# ... existing code ...\n"
MERGED = "def add(a, b):\n    # the sum\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def morph(original: str, update: str, instruction: str | None = None) -> str:
    head = f"<instruction>{instruction}</instruction>\n" if instruction else ""
    return f"{head}<code>{original}</code>\n<update>{update}</update>"


def chat_body(original=ORIG, update=UPDATE, model="fastapply-structural", **kw) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": morph(original, update)}], **kw}


# -- servers and clients -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def counter():
    """One tokenizer for usage counts, shared by this module's servers."""
    return TokenCounter()


@contextlib.contextmanager
def serving(applier=None, *, token=None, counter=None, max_body_bytes=16 * 1024 * 1024,
            default_engine=DEFAULT_ENGINE, strict_model_names=False, **kw):
    kw.setdefault("preload", False)
    srv = FastApplyServer(applier if applier is not None else Applier(), host="127.0.0.1", port=0, token=token, **kw)
    http = attach_http(srv, 0, token=token, counter=counter, max_body_bytes=max_body_bytes,
                       default_engine=default_engine, strict_model_names=strict_model_names)
    srv.start()
    try:
        yield srv, http
    finally:
        srv.stop(grace=0).wait(10)


@pytest.fixture(scope="module")
def server(counter):
    with serving(counter=counter) as (srv, http):
        yield srv, http


@pytest.fixture(scope="module")
def url(server):
    return server[1].url


def sdk(url: str, token: str = "unused") -> OpenAI:
    # Generous: on a loaded CI machine the first request also loads the spec tokenizer.
    return OpenAI(base_url=url + "/v1", api_key=token, max_retries=0, timeout=300)


def sse_events(response: httpx.Response) -> list:
    """The `data:` payloads of a server-sent event stream ([DONE] kept as a string)."""
    out = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            data = line[len("data: "):]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


@pytest.fixture(scope="module")
def dev_cases():
    """Ten shared-eval cases the structural merge accepts, several languages interleaved."""
    if not CASES_FILE.exists():
        pytest.skip(f"{CASES_FILE} not found")
    local = Applier()
    by_lang: dict[str, list] = {}
    for line in CASES_FILE.read_text().splitlines():
        c = json.loads(line)
        if len(c["original"]) > 60_000 or len(by_lang.get(c["language"], [])) >= 4:
            continue
        try:
            c["want"] = local.apply(ApplyRequest(c["original"], c["update"], engine="structural")).merged
        except ApplyError:
            continue
        by_lang.setdefault(c["language"], []).append(c)
    out = []
    while any(by_lang.values()) and len(out) < 10:
        for group in by_lang.values():
            if group and len(out) < 10:
                out.append(group.pop(0))
    if len(out) < 10:
        pytest.skip("the structural merge accepts too few shared cases")
    return out


# -- results: the OpenAI SDK and httpx against in-process apply() ----------------------------------------

def test_openai_sdk_unary_and_stream_equal_in_process_apply(url, dev_cases):
    client = sdk(url)
    for c in dev_cases:
        messages = [{"role": "user", "content": morph(c["original"], c["update"])}]
        r = client.chat.completions.create(model="fastapply-structural", messages=messages)
        assert r.object == "chat.completion" and r.model == "fastapply-structural"
        assert r.choices[0].message.content == c["want"], c["id"]
        assert r.choices[0].finish_reason == "stop"
        u = r.usage
        assert u.prompt_tokens > 0 and u.completion_tokens > 0 and u.total_tokens == u.prompt_tokens + u.completion_tokens
        stream = client.chat.completions.create(model="fastapply-structural", messages=messages, stream=True,
                                                stream_options={"include_usage": True})
        chunks = list(stream)
        text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
        assert text == r.choices[0].message.content
        assert [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1] == "stop"
        assert chunks[-1].usage.completion_tokens == u.completion_tokens and not chunks[-1].choices


def test_structural_usage_counts_the_merged_file_with_the_spec_tokenizer(url):
    from transformers import AutoTokenizer

    from fastapply.models import resolve_weights

    r = sdk(url).chat.completions.create(model="fastapply-structural",
                                         messages=[{"role": "user", "content": morph(ORIG, UPDATE)}])
    tok = AutoTokenizer.from_pretrained(resolve_weights(None)[1])
    assert r.usage.completion_tokens == len(tok(MERGED, add_special_tokens=False)["input_ids"])
    assert r.usage.prompt_tokens > len(tok(ORIG + UPDATE, add_special_tokens=False)["input_ids"])  # the prompt wraps both
    assert r.usage.completion_tokens_details is None  # no drafter ran


def test_relace_endpoint_both_key_spellings_and_stream(url, dev_cases):
    with httpx.Client(base_url=url, timeout=300) as h:
        for c in dev_cases[:4]:
            for keys in (("initial_code", "edit_snippet"), ("initialCode", "editSnippet")):
                body = {keys[0]: c["original"], keys[1]: c["update"], "model": "fastapply-structural"}
                r = h.post("/v1/code/apply", json=body)
                assert r.status_code == 200 and r.json()["mergedCode"] == c["want"], c["id"]
                assert set(r.json()["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
            with h.stream("POST", "/v1/code/apply", json={**body, "stream": True, "instruction": "apply it"}) as r:
                assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
                events = sse_events(r)
            assert "[DONE]" not in events  # Relace's SDK JSON-parses every data: line
            assert "".join(e["chunk"] for e in events if "chunk" in e) == c["want"]
            assert events[-1]["fastapply"]["engine"] == "structural" and events[-1]["usage"]["completion_tokens"] > 0


def test_message_forms_clients_send(url):
    """Continue's template (newline between blocks), Relace's (surrounding newlines), avante.nvim's
    <instructions>, and OpenAI's array-of-text-parts content all give the same file."""
    forms = [f"<code>{ORIG}</code>\n<update>{UPDATE}</update>",
             f"\n<instruction>add a comment</instruction>\n<code>{ORIG}</code>\n<update>{UPDATE}</update>\n",
             f"<instructions>add a comment</instructions>\n<code>{ORIG}</code>\n<update>{UPDATE}</update>",
             [{"type": "text", "text": f"<code>{ORIG}</code>"}, {"type": "text", "text": f"<update>{UPDATE}</update>"}]]
    client = sdk(url)
    for content in forms:
        r = client.chat.completions.create(model="fastapply-structural",
                                           messages=[{"role": "system", "content": "merge"},
                                                     {"role": "user", "content": content}])
        assert r.choices[0].message.content == MERGED, content


def test_parse_morph_message_keeps_text_exactly():
    assert parse_morph_message("<code>\nx = 1\n</code> <update>y</update>") == (None, "\nx = 1\n", "y")
    # a file holding the tags themselves: the instruction is only looked for before <code>
    html = "<p><code>a</code></p>\n<instruction>not this</instruction>\n"
    assert parse_morph_message(f"<instruction>do it</instruction><code>{html}</code>\n<update>u</update>") == \
        ("do it", html, "u")
    assert parse_morph_message("<code>a</code><update>x</update> and </update>")[2] == "x</update> and "


# -- models, engines, health -----------------------------------------------------------------------------------

def test_models_lists_engine_names_and_aliases(url):
    ids = [m.id for m in sdk(url).models.list()]
    assert {f"fastapply-{e}" for e in ENGINES} | {"fastapply-auto"} <= set(ids)
    assert {"morph-v3-fast", "morph-v3-large", "auto", "relace-apply-3"} <= set(ids)
    assert set(ids) == set(model_names())


def test_client_model_names_select_the_default_engine(counter):
    applier = SlowApplier(pieces=2, delay=0.001)
    with serving(applier, counter=counter) as (_, http):
        client = sdk(http.url)
        for i, name in enumerate(("morph-v3-fast", "morph-v3-large", "auto", "relace-apply-3", "fastapply-auto")):
            r = client.chat.completions.create(model=name, messages=[{"role": "user", "content": morph(ORIG, UPDATE, f"r{i}")}])
            assert r.choices[0].message.content == MERGED
            assert r.model == f"fastapply-{DEFAULT_ENGINE}"  # the engine that ran, named
            assert not [f for f in r.fastapply["findings"] if f["kind"] == "model"]
        # the names open models' clients send: the default engine too, with a finding that names them
        for i, name in enumerate(("fastapply-1.5b", "Osmosis/Osmosis-Apply-1.7B", "aiXapply-4B-RL", "codellama:7b")):
            r = client.chat.completions.create(model=name, messages=[{"role": "user", "content": morph(ORIG, UPDATE, f"o{i}")}])
            assert r.choices[0].message.content == MERGED and r.model == f"fastapply-{DEFAULT_ENGINE}"
            note = [f["message"] for f in r.fastapply["findings"] if f["kind"] == "model"]
            assert len(note) == 1 and repr(name) in note[0] and "default engine (auto)" in note[0], note
    # The default engine is `auto`: the structural merge answered each alias, the model was never asked
    assert DEFAULT_ENGINE == "auto" and applier.model_order == []
    with serving(counter=counter, strict_model_names=True) as (_, http):  # fastapply serve --strict-model-names
        client = sdk(http.url)
        with pytest.raises(openai.BadRequestError) as ei:
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": morph(ORIG, UPDATE)}])
        assert ei.value.body["code"] == "invalid_argument" and "fastapply-structural" in ei.value.body["message"]
        assert "--strict-model-names" in ei.value.body["message"]
        r = client.chat.completions.create(model="morph-v3-large", messages=[{"role": "user", "content": morph(ORIG, UPDATE)}])
        assert r.choices[0].message.content == MERGED


def test_health_follows_the_grpc_health_state(counter):
    with serving(_SlowLoadApplier(), preload=True, counter=counter) as (srv, http):
        r = httpx.get(http.url + "/health")
        assert r.status_code == 503 and r.json()["status"] == "NOT_SERVING"
        assert wait_until(lambda: httpx.get(http.url + "/health").status_code == 200, 5.0)
        assert httpx.get(http.url + "/health").json()["status"] == "SERVING"
        srv.stop(grace=1)
        assert not srv.serving


# -- bad input ------------------------------------------------------------------------------------------------

def test_bad_inputs_get_their_status_and_openai_error(url, dev_cases):
    big_context = chat_body()
    cases = [
        (b"{not json", 400, "not valid JSON"),
        (b'{"messages": "caf\xe9"}', 400, "not valid UTF-8"),
        (b"[1, 2]", 400, "must be a JSON object"),
        (json.dumps({"model": "fastapply-structural"}), 400, "missing `messages`"),
        (json.dumps({"messages": []}), 400, "non-empty array"),
        (json.dumps({"messages": [{"role": "user", "content": 42}]}), 400, "must be a string"),
        (json.dumps({"messages": [{"role": "user", "content": {"code": ORIG}}]}), 400, "must be a string"),
        (json.dumps({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}), 400, "must be a string"),
        (json.dumps({"messages": [{"role": "system", "content": morph(ORIG, UPDATE)}]}), 400, "no user message"),
        (json.dumps({"messages": [{"role": "user", "content": f"<update>{UPDATE}</update>"}]}), 400, "no <code>"),
        (json.dumps({"messages": [{"role": "user", "content": f"<code>{ORIG}</code>"}]}), 400, "no <update>"),
        (json.dumps({"messages": [{"role": "user", "content": f"<code>{ORIG}<update>x</update>"}]}), 400, "not closed"),
        (json.dumps(chat_body(update="  \n")), 400, "update snippet is empty"),
        (json.dumps(chat_body(update="x = 1\n\x00")), 400, "NUL"),
        (json.dumps(chat_body(update="x = '\ud800'\n")), 400, "lone surrogate"),
        (json.dumps(chat_body(model=42)), 400, "`model` must be a string"),
        (json.dumps(chat_body(temperature="hot")), 400, "`temperature` must be a number"),
        (json.dumps(chat_body(top_p=0)), 400, "top_p"),
        (json.dumps(chat_body(stream="yes")), 400, "`stream` must be true or false"),
        (json.dumps(chat_body(n=2)), 400, "`n` must be 1"),
        (json.dumps(chat_body(prediction={"type": "text", "content": "x"})), 400, "`prediction` must be"),
        (json.dumps({**big_context, "max_tokens": 0, "model": "fastapply-plain"}), 400, "`max_tokens` must be positive"),
    ]
    with httpx.Client(base_url=url, timeout=30) as h:
        for body, status, words in cases:
            # a body that parses is also sent with stream=true: the error comes before any event
            variants = [body] if isinstance(body, bytes) or "stream" in json.loads(body) else \
                [body, json.dumps({**json.loads(body), "stream": True})]
            for data in variants:
                r = h.post("/v1/chat/completions", content=data, headers={"content-type": "application/json"})
                err = r.json()["error"]
                assert r.status_code == status and words in err["message"], (data, r.text)
                assert err["type"] == "invalid_request_error" and err["code"] == "invalid_argument"
        for body, words in (({"edit_snippet": UPDATE}, "missing `initial_code` (or `initialCode`)"),
                            ({"initialCode": ORIG}, "missing `edit_snippet` (or `editSnippet`)"),
                            ({"initial_code": ORIG, "edit_snippet": 5}, "`edit_snippet` must be a string")):
            r = h.post("/v1/code/apply", json=body)
            assert r.status_code == 400 and words in r.json()["error"]["message"]
        r = h.get("/v1/nowhere")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        r = h.get("/v1/chat/completions")
        assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_structural_refusal_is_422_with_its_reasons(url):
    refused = next(c for c in _shared_or_skip() if _refuses(c))
    with pytest.raises(openai.UnprocessableEntityError) as ei:
        sdk(url).chat.completions.create(model="fastapply-structural",
                                         messages=[{"role": "user", "content": morph(refused["original"], refused["update"])}])
    err = ei.value.body
    assert ei.value.status_code == 422 and err["code"] == "refused" and err["reasons"]
    assert all(reason in err["message"] for reason in err["reasons"])
    r = httpx.post(url + "/v1/code/apply", json={"initial_code": refused["original"], "edit_snippet": refused["update"],
                                                 "model": "fastapply-structural", "stream": True}, timeout=120)
    assert r.status_code == 422 and r.json()["error"]["code"] == "refused"  # refused before any text: a status


def _shared_or_skip():
    if not CASES_FILE.exists():
        pytest.skip(f"{CASES_FILE} not found")
    return [json.loads(line) for line in CASES_FILE.read_text().splitlines()]


def _refuses(c) -> bool:
    try:
        Applier().apply(ApplyRequest(c["original"], c["update"], engine="structural"))
    except ApplyError as e:
        return e.code == "refused"
    return False


def test_gigantic_body_is_413_and_the_server_goes_on(counter):
    with serving(counter=counter, max_body_bytes=64 * 1024) as (_, http), httpx.Client(base_url=http.url, timeout=30) as h:
        huge = json.dumps(chat_body(original="x = 1\n" * 200_000)).encode()
        r = h.post("/v1/chat/completions", content=huge, headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_long"
        assert "at most 65,536" in r.json()["error"]["message"]

        def chunked():  # no Content-Length: the limit is counted as the body arrives
            for i in range(0, len(huge), 16 * 1024):
                yield huge[i:i + 16 * 1024]

        r = h.post("/v1/code/apply", content=chunked(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_long"
        r = h.post("/v1/chat/completions", json=chat_body())
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == MERGED


def test_error_map_covers_every_error_code():
    try:
        from fastapply.types import ErrorCode
        codes = {str(c) for c in ErrorCode}
    except ImportError:  # before the error-code enum lands: its values as the contract lists them
        codes = {"invalid_argument", "usage", "too_long", "refused", "queue_full", "unauthenticated",
                 "unavailable", "cancelled", "deadline_exceeded", "internal"}
    assert codes <= set(HTTP_STATUS)
    assert HTTP_STATUS["refused"] == 422 and HTTP_STATUS["too_long"] == 413 and HTTP_STATUS["queue_full"] == 429


# -- auth -------------------------------------------------------------------------------------------------------

def test_token_required_on_every_api_route(counter):
    with serving(token="s3cret-token", counter=counter) as (_, http):
        with pytest.raises(openai.AuthenticationError) as ei:
            sdk(http.url, "wrong").chat.completions.create(model="fastapply-structural",
                                                             messages=[{"role": "user", "content": morph(ORIG, UPDATE)}])
        assert ei.value.body["code"] == "unauthenticated" and "not valid" in ei.value.body["message"]
        with httpx.Client(base_url=http.url, timeout=30) as h:
            for method, path, body in (("POST", "/v1/chat/completions", chat_body()),
                                       ("POST", "/v1/code/apply", {"initial_code": ORIG, "edit_snippet": UPDATE}),
                                       ("GET", "/v1/models", None)):
                r = h.request(method, path, json=body)
                assert r.status_code == 401 and "missing `Authorization: Bearer" in r.json()["error"]["message"]
                assert r.headers["www-authenticate"] == "Bearer"
                r = h.request(method, path, json=body, headers={"Authorization": "Bearer s3cret-tokenX"})
                assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
            assert h.get("/health").status_code == 200  # probes need no token
        r = sdk(http.url, "s3cret-token").chat.completions.create(
            model="fastapply-structural", messages=[{"role": "user", "content": morph(ORIG, UPDATE)}])
        assert r.choices[0].message.content == MERGED


def test_tls_with_the_grpc_certificate(tmp_path, counter):
    import shutil
    import ssl

    if not shutil.which("openssl"):
        pytest.skip("openssl not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", str(key),
                    "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    srv = FastApplyServer(Applier(), host="127.0.0.1", port=0, preload=False, tls_cert=cert.read_bytes(),
                          tls_key=key.read_bytes())
    http = attach_http(srv, 0, counter=counter, tls_cert_file=str(cert), tls_key_file=str(key))
    srv.start()
    try:
        assert http.url.startswith("https://")
        r = httpx.post(http.url + "/v1/chat/completions", json=chat_body(), timeout=30,
                       verify=ssl.create_default_context(cafile=str(cert)))
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == MERGED
        with pytest.raises(httpx.HTTPError):  # plaintext to the TLS port fails
            httpx.post(http.url.replace("https://", "http://") + "/v1/chat/completions", json=chat_body(), timeout=5)
    finally:
        srv.stop(grace=0).wait(10)


# -- cancellation, the model queue, the model ----------------------------------------------------------------------

def test_disconnect_mid_stream_cancels_and_the_server_goes_on(counter):
    applier = SlowApplier(pieces=40, delay=0.05)
    with serving(applier, counter=counter) as (srv, http), httpx.Client(base_url=http.url, timeout=30) as h:
        with h.stream("POST", "/v1/chat/completions", json=chat_body(model="fastapply-plain", stream=True)) as r:
            first = next(line for line in r.iter_lines() if '"content":"' in line and '"content":""' not in line)
            assert first and srv.queue.busy
            t_close = time.monotonic()
        # leaving the block closes the connection mid-stream
        assert wait_until(lambda: applier.stops, 3.0), "the merge went on after the client left"
        assert applier.stops[0] - t_close < 2.0
        assert wait_until(lambda: not srv.queue.busy, 3.0)  # the model turn was given back
        assert wait_until(lambda: srv.metrics.counter("fastapply_responses_total", code="CANCELLED") >= 1, 3.0)
        r = h.post("/v1/chat/completions", json=chat_body(model="fastapply-plain"))
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == MERGED
        # a unary request whose client gives up is cancelled too
        with pytest.raises(httpx.ReadTimeout):
            h.post("/v1/chat/completions", json=chat_body(model="fastapply-plain"), timeout=0.5)
        assert wait_until(lambda: len(applier.stops) >= 2, 3.0), "a unary merge went on after its client left"


def test_queue_full_is_429_and_structural_does_not_wait(counter):
    applier = SlowApplier(pieces=40, delay=0.001, model_delay=0.1)  # model requests ~4 s, structural at once
    with serving(applier, counter=counter, max_queue=0) as (srv, http):
        results = {}
        first = threading.Thread(target=lambda: results.setdefault("first", httpx.post(
            http.url + "/v1/chat/completions", json=chat_body(model="fastapply-speculative"), timeout=30)))
        first.start()
        assert wait_until(lambda: srv.queue.busy, 3.0)
        with pytest.raises(openai.RateLimitError) as ei:
            sdk(http.url).chat.completions.create(model="fastapply-plain",
                                                  messages=[{"role": "user", "content": morph(ORIG, UPDATE)}])
        assert ei.value.body["code"] == "queue_full" and "queue is full" in ei.value.body["message"]
        r = httpx.post(http.url + "/v1/code/apply", json={"initial_code": ORIG, "edit_snippet": UPDATE,
                                                          "model": "fastapply-structural"}, timeout=30)
        assert r.status_code == 200 and srv.queue.busy  # answered while the model request still ran
        first.join(30)
        assert results["first"].status_code == 200
        assert results["first"].json()["choices"][0]["message"]["content"] == MERGED


def test_model_that_cannot_load_is_503(counter):
    with serving(Applier(model_name="/nonexistent/model.gguf"), counter=counter) as (_, http):
        with pytest.raises(openai.InternalServerError) as ei:
            sdk(http.url).chat.completions.create(model="fastapply-speculative",
                                                  messages=[{"role": "user", "content": morph(ORIG, UPDATE)}])
        assert ei.value.status_code == 503 and ei.value.body["code"] == "unavailable"
        assert "could not be loaded" in ei.value.body["message"]
        r = httpx.post(http.url + "/v1/chat/completions", json=chat_body(), timeout=30)
        assert r.status_code == 200  # structural still served


class ScriptedEngine:
    """Stands in for the model: records its draft sources, writes `text`, reports fixed drafter counts."""

    def __init__(self, text: str):
        self.text = text
        self.sources: list = []

    def generate(self, req, draft_texts, should_stop, stats):
        self.sources.append(draft_texts)
        stats.prompt_tokens, stats.output_tokens, stats.forward_passes = 30, 12, 3
        stats.drafted_tokens, stats.accepted_tokens = 10, 7
        half = len(self.text) // 2
        yield TextDelta(self.text[:half])
        yield TextDelta(self.text[half:])
        yield self.text, []


def test_prediction_is_a_draft_source_and_usage_has_the_drafter_counts(counter):
    engine = ScriptedEngine(MERGED)
    with serving(Applier(model_engine=engine), counter=counter) as (_, http):
        client = sdk(http.url)
        msg = [{"role": "user", "content": morph(ORIG, UPDATE)}]
        r = client.chat.completions.create(model="fastapply-plain", messages=msg,
                                           prediction={"type": "content", "content": MERGED})
        assert engine.sources[-1] == [("prediction", MERGED)]  # plain drafts from the prediction alone
        assert r.choices[0].message.content == MERGED and r.model == "fastapply-plain"
        u = r.usage
        assert (u.prompt_tokens, u.completion_tokens, u.total_tokens) == (30, 12, 42)
        assert u.completion_tokens_details.accepted_prediction_tokens == 7
        assert u.completion_tokens_details.rejected_prediction_tokens == 3
        client.chat.completions.create(model="fastapply-speculative", messages=msg,
                                       prediction={"type": "content", "content": [{"type": "text", "text": "p = 1\n"}]})
        assert [name for name, _ in engine.sources[-1]] == ["structural", "prediction", "original", "update"]
        assert engine.sources[-1][1] == ("prediction", "p = 1\n")
        client.chat.completions.create(model="fastapply-plain", messages=msg)
        assert engine.sources[-1] is None  # no prediction: plain decoding
        stream = client.chat.completions.create(model="fastapply-plain", messages=msg, stream=True,
                                                stream_options={"include_usage": True})
        chunks = list(stream)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == MERGED
        assert chunks[-1].usage.completion_tokens_details.accepted_prediction_tokens == 7


def test_a_file_that_fails_validation_is_not_returned(counter):
    broken = "def add(a, b:\n    # the sum\n    return a + b\n"
    with serving(Applier(model_engine=ScriptedEngine(broken)), counter=counter) as (_, http):
        client = sdk(http.url)
        msg = [{"role": "user", "content": morph(ORIG, UPDATE)}]
        with pytest.raises(openai.UnprocessableEntityError) as ei:
            client.chat.completions.create(model="fastapply-plain", messages=msg)
        assert ei.value.body["code"] == "refused" and "failed validation" in ei.value.body["message"]
        got = []
        with pytest.raises(openai.APIError) as ei:  # streamed text went out; the stream ends in the error
            for chunk in client.chat.completions.create(model="fastapply-plain", messages=msg, stream=True):
                got.append(chunk.choices[0].delta.content or "")
        assert "failed validation" in ei.value.message and "".join(got) == broken


@pytest.mark.model
def test_model_engine_over_http(model_applier):
    # A whole-file update validates whatever the embedded model makes of it (qwen2.5-coder-0.5b adds
    # whitespace here; a file that fails validation is refused, tested above). What this test checks
    # is that HTTP answers exactly what the in-process engine does, unary and streamed.
    original, update = "x = 1\ny = 2\nz = 3\n", "x = 1\ny = 20\nz = 3\n"
    with serving(model_applier, counter=TokenCounter()) as (_, http):
        client = sdk(http.url)
        msg = [{"role": "user", "content": morph(original, update)}]
        want = model_applier.apply(ApplyRequest(original, update, engine="speculative", max_output_tokens=40,
                                                sampling=Sampling()))
        assert want.ok and "y = 20" in want.merged
        r = client.chat.completions.create(model="fastapply-speculative", messages=msg, max_tokens=40)
        assert r.choices[0].message.content == want.merged
        assert r.usage.completion_tokens == want.stats.output_tokens
        d = r.usage.completion_tokens_details
        assert d.accepted_prediction_tokens == want.stats.accepted_tokens
        assert d.rejected_prediction_tokens == want.stats.drafted_tokens - want.stats.accepted_tokens
        stream = client.chat.completions.create(model="fastapply-speculative", messages=msg, max_tokens=40, stream=True)
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == want.merged
        # the prediction is a draft source of the model's own: the plain engine now drafts from it
        plain = client.chat.completions.create(model="fastapply-plain", messages=msg, max_tokens=40)
        predicted = client.chat.completions.create(model="fastapply-plain", messages=msg, max_tokens=40,
                                                   prediction={"type": "content", "content": plain.choices[0].message.content})
        assert predicted.choices[0].message.content == plain.choices[0].message.content
        assert plain.usage.completion_tokens_details.accepted_prediction_tokens == 0
        assert predicted.usage.completion_tokens_details.accepted_prediction_tokens > 0
        with pytest.raises(openai.APIStatusError) as ei:  # longer than the model's context
            client.chat.completions.create(model="fastapply-plain",
                                           messages=[{"role": "user", "content": morph("x = 1\n" * 40_000, UPDATE)}])
        assert ei.value.status_code == 413 and ei.value.body["code"] == "too_long" and "too long" in ei.value.message


# -- the command line, SIGTERM -------------------------------------------------------------------------------------

def test_serve_command_serves_http_beside_grpc(tmp_path):
    from fastapply.client import FastApplyClient

    tok = tmp_path / "token"
    tok.write_text("tok-123\n")
    p = subprocess.Popen([PY, "-m", "fastapply.cli", "serve", "--port", "0", "--no-preload", "--token-file", str(tok),
                          "--http-port", "0"], cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        addr, url = _wait_serving(p)
        r = sdk(url, "tok-123").chat.completions.create(model="fastapply-structural",
                                                        messages=[{"role": "user", "content": morph(ORIG, UPDATE)}])
        assert r.choices[0].message.content == MERGED
        assert r.usage.completion_tokens > 0  # the served command counts model-free usage
        with FastApplyClient(addr, token="tok-123") as cl:  # the same process answers gRPC
            assert cl.apply(ORIG, UPDATE, engine="structural").merged == MERGED
        p.send_signal(signal.SIGTERM)
        assert p.wait(20) == 0
    finally:
        if p.poll() is None:
            p.kill()


_DRAIN_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from test_grpc import SlowApplier
from fastapply.server import FastApplyServer, serve_until_signal
from fastapply.httpapi.server import attach_http
srv = FastApplyServer(SlowApplier(pieces=30, delay=0.05), host="127.0.0.1", port=0, preload=False)
http = attach_http(srv, 0)
sys.exit(serve_until_signal(srv, grace=10, on_started=lambda s: print("serving on", s.address, "HTTP on", http.url,
                                                                      file=sys.stderr, flush=True)))
"""


def test_sigterm_drains_in_flight_http_streams(tmp_path):
    script = tmp_path / "drain.py"
    script.write_text(textwrap.dedent(_DRAIN_SCRIPT.format(tests=str(REPO / "tests"))))
    p = subprocess.Popen([PY, str(script)], cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        _, url = _wait_serving(p)
        with httpx.Client(base_url=url, timeout=30) as h, \
                h.stream("POST", "/v1/chat/completions", json=chat_body(stream=True)) as r:
            lines = r.iter_lines()
            first = next(line for line in lines if '"content":"' in line and '"content":""' not in line)
            p.send_signal(signal.SIGTERM)  # 1.5 s of output still to come
            time.sleep(0.3)
            with pytest.raises(httpx.ConnectError):  # new connections are refused while draining
                httpx.post(url + "/v1/chat/completions", json=chat_body(), timeout=5)
            rest = [line for line in lines if line.startswith("data: ")]
        assert rest[-1] == "data: [DONE]"
        text = json.loads(first[len("data: "):])["choices"][0]["delta"]["content"] + "".join(
            json.loads(line[len("data: "):])["choices"][0]["delta"].get("content", "")
            for line in rest[:-1] if '"choices":[{' in line)
        assert text == MERGED
        assert p.wait(20) == 0
    finally:
        if p.poll() is None:
            p.kill()


def _wait_serving(p) -> tuple[str, str]:
    """(gRPC address, HTTP URL) from the server's "serving on" line."""
    lines = []
    end = time.monotonic() + 60
    while time.monotonic() < end:
        line = p.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"serving on (\S+) .*HTTP on (https?://[^\s,]+)", line)
        if m:
            threading.Thread(target=p.stderr.read, daemon=True).start()  # keep the pipe drained
            return m.group(1), m.group(2)
    p.kill()
    raise AssertionError("server did not start:\n" + "".join(lines))


# -- the load eval ------------------------------------------------------------------------------------------------------

def test_load_eval_measures_grpc_and_http(tmp_path):
    from evals import load

    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "t", "language": "python", "original": ORIG, "update": UPDATE}) + "\n")
    out = tmp_path / "load.json"
    assert load.main(["--clients", "2", "--seconds", "1", "--protocol", "both", "--cases", str(cases),
                      "--json", str(out)]) == 0
    reports = json.loads(out.read_text())
    assert [r["protocol"] for r in reports] == ["grpc", "http"]
    for r in reports:
        assert r["requests_ok"] > 0 and r["errors"] == 0 and r["mismatches_vs_structural"] == 0
        # the server's CPU over the window (its own metrics) and the clients', per request
        assert r["server_cpu_s"] > 0 and r["server_cpu_ms_per_request"] > 0 and r["client_cpu_s"] > 0
