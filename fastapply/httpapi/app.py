"""The HTTP front-end: a FastAPI app over the same Applier, model queue, token and metrics as the gRPC server.

    POST /v1/chat/completions   OpenAI chat completions, any apply prompt of `formats.FAMILIES`;
                                also as /v1/apply/chat/completions, under Relace's OpenAI-compatible base
    POST /v1/completions        OpenAI completions: the `prompt` string is the apply prompt
    POST /v1/code/apply         Relace's apply endpoint
    POST /api/chat              Ollama's chat, NDJSON streaming unless `stream` is false
    POST /api/generate          Ollama's generate (`raw` or not), the same
    GET  /v1/models, /api/tags  the model names; POST /api/show a model's details; GET /api/version
                                Ollama's version probe
    GET  /health                200 SERVING / 503 NOT_SERVING, as the gRPC health service says

Routes stay thin: parse the body into an `ApplyRequest` and its answer's shape, run it through
`queued_events` (the gRPC server's path: structural at once, model requests in their turn on the
one model), shape the answer. Every failure is the route's error JSON with the status of
`errors.HTTP_STATUS` (a refusal with its readings and hint beside it, `errors.refusal_fields`);
nothing answers with a traceback.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from fastapply import __version__
from fastapply.api import DEFAULT_ENGINE, Applier, ApplyError, ApplyRequest, ApplyResult, Finding, TextDelta
from fastapply.httpapi import compaction, language, ollama
from fastapply.httpapi.errors import error_body, error_object, refusal_fields, status_of
from fastapply.httpapi.parse import (
    HTTPCall,
    Naming,
    chat_call,
    completion_call,
    engine_of,
    model_names,
    ollama_chat_call,
    ollama_generate_call,
    parse_json,
    relace_call,
)
from fastapply.httpapi.paths import ForgivingPaths, route_hint
from fastapply.httpapi.pump import events_in_thread, stop_on_disconnect
from fastapply.httpapi.shapes import ChatShapes, CompletionShapes, Done, RelaceShapes
from fastapply.httpapi.usage import TokenCounter, usage_of
from fastapply.metrics import Metrics
from fastapply.server import STATUS, ModelQueue, Stopped, queued_events

log = logging.getLogger("fastapply.httpapi")

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024


@dataclass
class HTTPState:
    """What the HTTP front-end shares with the gRPC server it runs beside."""

    applier: Applier
    queue: ModelQueue
    metrics: Metrics
    token: str | None = None
    serving: Callable[[], bool] = lambda: True  # the gRPC health state
    counter: TokenCounter | None = None  # counts model-free answers' usage; None: they carry none
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    default_engine: str = DEFAULT_ENGINE  # what client model names (morph-v3-large, ...) and no `model` select
    strict_model_names: bool = False  # a name that is not ours is a 400 (else the default engine answers)
    workers: int = 64  # threads that run requests (the gRPC server's default --workers); more wait their turn

    @property
    def naming(self) -> Naming:
        return Naming(self.default_engine, self.strict_model_names)


def create_app(state: HTTPState) -> FastAPI:
    front = HTTPFrontEnd(state)
    app = FastAPI(title="fastapply", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_exception_handler(StarletteHTTPException, _route_error)
    app.add_exception_handler(Exception, _internal_error)

    routes = {"/v1/chat/completions": ("http.chat.completions", chat_call, ChatShapes),
              "/v1/completions": ("http.completions", completion_call, CompletionShapes),
              "/v1/code/apply": ("http.code.apply", relace_call, RelaceShapes),
              "/api/chat": ("http.ollama.chat", ollama_chat_call, ollama.ChatShapes),
              "/api/generate": ("http.ollama.generate", ollama_generate_call, ollama.GenerateShapes)}
    for path, (method, parse, shapes) in routes.items():
        app.add_api_route(path, front.endpoint(method, parse, shapes), methods=["POST"])

    @app.get("/v1/models")
    async def models(request: Request):
        try:
            front.authorize(request)
        except ApplyError as e:
            return error_response(e)
        return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "fastapply"}
                                           for name in model_names(state.default_engine)]}

    @app.get("/api/tags")
    async def tags(request: Request):
        try:
            front.authorize(request)
        except ApplyError as e:
            return error_response(e, ollama.ChatShapes.error)
        return ollama.tags(model_names(state.default_engine))

    @app.post("/api/show")
    async def show(request: Request):
        try:
            front.authorize(request)
            data = parse_json(await request.body())
            name = data.get("model", data.get("name"))
            if not isinstance(name, str) or not name:
                raise ApplyError("invalid_argument", "missing `model`: name the model to show, e.g. "
                                 '{"model": "fastapply-structural"}')
            if state.naming.strict and name not in model_names(state.default_engine):
                # Ollama's answer for a model it has not pulled: its clients raise ResponseError(404)
                message = (f"model {name!r} not found; this server runs with --strict-model-names: "
                           "name one of GET /api/tags")
                return json_response(ollama.ChatShapes.error(error_object(404, "not_found", message)), 404)
            engine, _, _ = engine_of(name, state.naming)
        except ApplyError as e:
            return error_response(e, ollama.ChatShapes.error)
        return ollama.show(engine)

    @app.get("/api/version")
    async def version():
        return {"version": __version__}

    @app.get("/health")
    async def health():
        serving = state.serving()
        return json_response({"status": "SERVING" if serving else "NOT_SERVING",
                              "model_loaded": state.applier.model_loaded}, 200 if serving else 503)

    app.add_middleware(ForgivingPaths)
    return app


class HTTPFrontEnd:
    def __init__(self, state: HTTPState):
        self.state = state
        self.pool = ThreadPoolExecutor(max_workers=state.workers, thread_name_prefix="fastapply-http-apply")
        self._expected = f"Bearer {state.token}".encode() if state.token else None

    def authorize(self, request: Request) -> None:
        if self._expected is None:
            return
        got = request.headers.get("authorization", "")
        if not hmac.compare_digest(got.encode("utf-8", "replace"), self._expected):
            raise ApplyError("unauthenticated", "the bearer token is not valid for this server" if got else
                             "missing `Authorization: Bearer <token>` header; this server requires a token "
                             "(--token-file)")

    def endpoint(self, method: str, parse: Callable[..., HTTPCall], shapes_of):
        async def handle(request: Request) -> Response:
            return await self.run(request, method=method, parse=parse, shapes_of=shapes_of)
        return handle

    async def run(self, request: Request, *, method: str, parse: Callable[..., HTTPCall], shapes_of) -> Response:
        """Authorize, parse, apply; a unary JSON answer or an event stream; errors in the route's shape."""
        watch = _Watch(self.state.metrics, method)
        call = None
        try:
            self.authorize(request)
            call = parse(parse_json(await read_body(request, self.state.max_body_bytes)), request.headers,
                         self.state.naming)
            watch.started(call.request.engine)
            shapes = shapes_of(call)
            stop = threading.Event()
            events = events_in_thread(partial(self._events, call), stop, self.pool)
            async with stop_on_disconnect(request.receive, stop):
                if not call.stream:
                    done = _finished(await _last(events))
                    check_valid(done.result, call)
                    watch.done("ok")
                    return json_response(shapes.unary(done))
                if call.anchors is not None:
                    # Morph's SDK reads the whole stream before it expands and writes anything, and
                    # the answer can only be checked whole: checked first, it keeps its HTTP status.
                    held = [ev async for ev in events]
                    check_valid(_finished(held[-1] if held else None).result, call)
                    events = _replay(held)
                first = await anext(events)  # an error before any text still gets its HTTP status
            return EventStream(self._stream(shapes, call, first, events, watch), stop, shapes.media_type)
        except ApplyError as e:
            if call is not None and e.code == "refused" and call.answer.refuses_empty:
                return self._refused_as_answer(call, shapes_of(call), e, watch)
            watch.done(e.code)
            return error_response(e, shapes_of.error, call.request if call is not None else None,
                                  self.state.max_body_bytes)
        except Exception as e:
            log.exception("internal error in %s", method)
            watch.done("internal")
            return error_response(ApplyError("internal", f"internal error: {type(e).__name__}: {e}"), shapes_of.error)

    def _refused_as_answer(self, call: HTTPCall, shapes, err: ApplyError, watch: _Watch) -> Response:
        """aiXapply's model refuses with its answer tags and nothing inside, which its clients read
        as "ambiguous": that answer, with the refusal's hint, reasons and readings under `fastapply`."""
        why = Finding("refusal", err.message.split("\n", 1)[0], "info")
        done = Done(ApplyResult("", call.request.engine, call.request.language, findings=[*call.notes, why]),
                    refusal=refusal_fields(err, call.request, self.state.max_body_bytes))
        watch.done("ok")
        if not call.stream:
            return json_response(shapes.unary(done))
        return EventStream(self._stream(shapes, call, done, _replay([]), watch), threading.Event(),
                           shapes.media_type)

    def _events(self, call: HTTPCall, should_stop: Callable[[], bool]) -> Iterator[TextDelta | Done]:
        """Runs in the request's worker thread: the Applier's events, the result with its usage.
        A request that names no language is tried as `language.attempts` says: a try the merge
        refuses gives way to the next, and only the last try streams as it goes."""
        tries = language.attempts(call.request)
        notes: list[Finding] = list(call.notes)
        if call.anchors is not None:
            log.info("anchor-compacted request: the original (%d chars) rebuilt from %d placeholders",
                     len(call.anchors.original), call.anchors.placeholders)
            notes.append(Finding("anchors", f"Morph's anchor compaction: the original rebuilt from "
                                            f"{call.anchors.placeholders} placeholders", "info"))
        for i, attempt in enumerate(tries):
            last = i == len(tries) - 1
            try:
                events = self._tried(attempt, notes, should_stop)
                yield from events if last else list(events)
                return
            except ApplyError as e:
                if last or e.code != "refused":
                    raise

    def _tried(self, attempt: language.Attempt, notes: list[Finding],
               should_stop: Callable[[], bool]) -> Iterator[TextDelta | Done]:
        req = attempt.request
        try:
            for ev in queued_events(self.state.applier, self.state.queue, req, should_stop):
                if isinstance(ev, ApplyResult):
                    ev.findings[:0] = notes + ([attempt.note] if attempt.note is not None else [])
                    self.state.metrics.result(ev)
                    yield Done(ev, partial(usage_of, req, ev, self.state.counter))
                else:
                    yield ev
        except Stopped:
            raise ApplyError("cancelled", "the client went away while the request waited for the model") from None

    async def _stream(self, shapes, call: HTTPCall, first: TextDelta | Done, events: AsyncIterator, watch: _Watch):
        code = "ok"
        try:
            for obj in shapes.start():
                yield shapes.frame(obj)
            ev = first
            while ev is not None:
                if isinstance(ev, Done):
                    if ev.refusal is None:
                        check_valid(ev.result, call)
                    for obj in shapes.finish(ev):
                        yield shapes.frame(obj)
                else:
                    yield shapes.frame(shapes.text(ev.text))
                ev = await anext(events, None)
            for line in shapes.end():
                yield line
        except ApplyError as e:  # the status line is sent: the error is the stream's last event
            code = e.code
            yield shapes.frame(shapes.error(error_body(e, call.request, self.state.max_body_bytes)))
        except (asyncio.CancelledError, GeneratorExit):  # the client went away
            code = "cancelled"
            raise
        except Exception as e:
            log.exception("internal error in a stream")
            code = "internal"
            yield shapes.frame(shapes.error(error_body(ApplyError("internal", f"internal error: {type(e).__name__}: {e}"))))
        finally:
            await events.aclose()
            watch.done(code)


def check_valid(result: ApplyResult, call: HTTPCall) -> None:
    """A file that failed validation is not handed to a client that would write it over a good one,
    nor one that Morph's SDK would change while expanding anchors, nor one that the client would cut
    at a closing tag it holds (Osmosis' MCP server cuts at the first `</code>`: a Javadoc's `</code>`)."""
    if not result.ok:
        errors = "; ".join(f"{f.kind}: {f.message}" for f in result.findings if f.severity == "error")
        raise ApplyError("refused", f"the merged file failed validation and is not returned: {errors}")
    if call.anchors is not None:
        compaction.check_answer(result.merged, call.anchors.namespace)
    if call.answer.cut_short(result.merged):
        raise ApplyError("refused", f"send this file in another format (Morph's, or Relace's /v1/code/apply): the "
                                    f"merged file holds `{call.answer.close}`, where this prompt's clients end the "
                                    f"answer, so they would write it cut short there")


class EventStream(StreamingResponse):
    """Server-sent events (or Ollama's NDJSON lines); when the response ends for any reason (a client
    that went away included), `stop` is set, which the request's merge polls as its should_stop."""

    def __init__(self, content: AsyncIterator[bytes], stop: threading.Event, media_type: str = "text/event-stream"):
        super().__init__(content, headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
                         media_type=media_type)
        self.stop = stop

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.stop.set()
            await self.body_iterator.aclose()


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The request body, refused (413) as soon as it passes `max_bytes`, declared or not."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(int(declared), max_bytes)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(size, max_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: int, max_bytes: int) -> ApplyError:
    return ApplyError("too_long", f"the request body is {size:,} bytes or more; this server accepts at most "
                                  f"{max_bytes:,} (fastapply serve --max-request-mb)")


async def _replay(items: list) -> AsyncIterator:
    for item in items:
        yield item


def _finished(last: TextDelta | Done | None) -> Done:
    """The request's last event, which is its result unless the client went away (the merge then
    stops at its next event and the events end there)."""
    if not isinstance(last, Done):
        raise ApplyError("cancelled", "the client went away before the answer was ready")
    return last


async def _last(events: AsyncIterator):
    last = None
    async for ev in events:
        last = ev
    return last


class _Watch:
    """One request's metrics, with the gRPC server's names and status labels."""

    def __init__(self, metrics: Metrics, method: str):
        self.metrics, self.method = metrics, method
        self.engine = "unknown"
        self.t0 = time.perf_counter()
        self._counted = self._finished = False
        metrics.add("fastapply_inflight_requests", 1)

    def started(self, engine: str) -> None:
        self.engine = engine
        self._counted = True
        self.metrics.request(self.method, engine)

    def done(self, code: str) -> None:
        if self._finished:
            return
        self._finished = True
        if not self._counted:
            self.metrics.request(self.method, self.engine)
        status = "OK" if code == "ok" else STATUS[code].name if code in STATUS else "UNKNOWN"
        self.metrics.add("fastapply_inflight_requests", -1)
        self.metrics.finished(status, self.engine, time.perf_counter() - self.t0)


def json_response(obj: dict, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json.dumps(obj).encode("ascii"), status, headers, media_type="application/json")


def error_response(err: ApplyError, shape: Callable[[dict], dict] = ChatShapes.error,
                   request: ApplyRequest | None = None, max_bytes: int | None = None) -> Response:
    """The error's status and body in the route's shape (`ChatShapes.error`, `RelaceShapes.error`);
    a refusal of `request` carries its readings and hint (`errors.refusal_fields`)."""
    status = status_of(err.code)
    return json_response(shape(error_body(err, request, max_bytes)), status,
                         {"WWW-Authenticate": "Bearer"} if status == 401 else None)


async def _route_error(request: Request, exc: StarletteHTTPException) -> Response:
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_argument")
    message = f"{exc.detail}: {request.method} {request.url.path}" if exc.status_code in (404, 405) else str(exc.detail)
    if exc.status_code == 404:
        message += route_hint(request.url.path)
    return json_response(error_object(exc.status_code, code, message), exc.status_code, exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.error("internal error: %s: %s", type(exc).__name__, exc)
    return json_response(error_object(500, "internal", f"internal error: {type(exc).__name__}"), 500)
