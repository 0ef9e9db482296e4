"""The HTTP front-end: a FastAPI app over the same Applier, model queue, token and metrics as the gRPC server.

    POST /v1/chat/completions   OpenAI chat completions, Morph's message format (fastapply.httpapi.parse);
                                also as /v1/apply/chat/completions, under Relace's OpenAI-compatible base
    POST /v1/code/apply         Relace's apply endpoint
    GET  /v1/models             the accepted `model` names
    GET  /health                200 SERVING / 503 NOT_SERVING, as the gRPC health service says

Routes stay thin: parse the body into an `ApplyRequest`, run it through `queued_events` (the gRPC
server's path: structural at once, model requests in their turn on the one model), shape the
answer. Every failure is OpenAI's error JSON with the status of `errors.HTTP_STATUS` (a refusal
with its readings and hint beside it, `errors.refusal_fields`); nothing answers with a traceback.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from functools import partial

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from fastapply.api import DEFAULT_ENGINE, Applier, ApplyError, ApplyRequest, ApplyResult, Finding, TextDelta
from fastapply.httpapi import compaction, language
from fastapply.httpapi.errors import error_body, error_object, status_of
from fastapply.httpapi.parse import HTTPCall, chat_call, model_names, parse_json, relace_call
from fastapply.httpapi.paths import ForgivingPaths, route_hint
from fastapply.httpapi.pump import events_in_thread, stop_on_disconnect
from fastapply.httpapi.shapes import ChatShapes, Done, RelaceShapes, sse
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


def create_app(state: HTTPState) -> FastAPI:
    front = HTTPFrontEnd(state)
    app = FastAPI(title="fastapply", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_exception_handler(StarletteHTTPException, _route_error)
    app.add_exception_handler(Exception, _internal_error)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request):
        return await front.run(request, "http.chat.completions", partial(chat_call, default_engine=state.default_engine),
                               ChatShapes)

    @app.post("/v1/code/apply")
    async def code_apply(request: Request):
        return await front.run(request, "http.code.apply", partial(relace_call, default_engine=state.default_engine),
                               RelaceShapes)

    @app.get("/v1/models")
    async def models(request: Request):
        try:
            front.authorize(request)
        except ApplyError as e:
            return error_response(e)
        return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "fastapply"}
                                           for name in model_names(state.default_engine)]}

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
        self._expected = f"Bearer {state.token}".encode() if state.token else None

    def authorize(self, request: Request) -> None:
        if self._expected is None:
            return
        got = request.headers.get("authorization", "")
        if not hmac.compare_digest(got.encode("utf-8", "replace"), self._expected):
            raise ApplyError("unauthenticated", "the bearer token is not valid for this server" if got else
                             "missing `Authorization: Bearer <token>` header; this server requires a token "
                             "(--token-file)")

    async def run(self, request: Request, method: str, parse: Callable[..., HTTPCall], shapes_of) -> Response:
        """Authorize, parse, apply; a unary JSON answer or an event stream; errors in OpenAI's shape."""
        watch = _Watch(self.state.metrics, method)
        call = None
        try:
            self.authorize(request)
            call = parse(parse_json(await read_body(request, self.state.max_body_bytes)), request.headers)
            watch.started(call.request.engine)
            shapes = shapes_of(call)
            stop = threading.Event()
            events = events_in_thread(partial(self._events, call), stop)
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
            return EventStream(self._stream(shapes, call, first, events, watch), stop)
        except ApplyError as e:
            watch.done(e.code)
            return error_response(e, shapes_of.error, call.request if call is not None else None,
                                  self.state.max_body_bytes)
        except Exception as e:
            log.exception("internal error in %s", method)
            watch.done("internal")
            return error_response(ApplyError("internal", f"internal error: {type(e).__name__}: {e}"), shapes_of.error)

    def _events(self, call: HTTPCall, should_stop: Callable[[], bool]) -> Iterator[TextDelta | Done]:
        """Runs in the request's worker thread: the Applier's events, the result with its usage.
        A request that names no language is tried as `language.attempts` says: a try the merge
        refuses gives way to the next, and only the last try streams as it goes."""
        tries = language.attempts(call.request)
        notes: list[Finding] = []
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
                    yield Done(ev, usage_of(req, ev, self.state.counter))
                else:
                    yield ev
        except Stopped:
            raise ApplyError("cancelled", "the client went away while the request waited for the model") from None

    async def _stream(self, shapes, call: HTTPCall, first: TextDelta | Done, events: AsyncIterator, watch: _Watch):
        code = "ok"
        try:
            for obj in shapes.start():
                yield sse(obj)
            ev = first
            while ev is not None:
                if isinstance(ev, Done):
                    check_valid(ev.result, call)
                    for obj in shapes.finish(ev):
                        yield sse(obj)
                else:
                    yield sse(shapes.text(ev.text))
                ev = await anext(events, None)
            for line in shapes.end():
                yield line
        except ApplyError as e:  # the status line is sent: the error is the stream's last event
            code = e.code
            yield sse(shapes.error(error_body(e, call.request, self.state.max_body_bytes)))
        except (asyncio.CancelledError, GeneratorExit):  # the client went away
            code = "cancelled"
            raise
        except Exception as e:
            log.exception("internal error in a stream")
            code = "internal"
            yield sse(shapes.error(error_body(ApplyError("internal", f"internal error: {type(e).__name__}: {e}"))))
        finally:
            await events.aclose()
            watch.done(code)


def check_valid(result: ApplyResult, call: HTTPCall) -> None:
    """A file that failed validation is not handed to a client that would write it over a good one,
    nor one that Morph's SDK would change while expanding anchors."""
    if not result.ok:
        errors = "; ".join(f"{f.kind}: {f.message}" for f in result.findings if f.severity == "error")
        raise ApplyError("refused", f"the merged file failed validation and is not returned: {errors}")
    if call.anchors is not None:
        compaction.check_answer(result.merged, call.anchors.namespace)


class EventStream(StreamingResponse):
    """Server-sent events; when the response ends for any reason (a client that went away included),
    `stop` is set, which the request's merge polls as its should_stop."""

    media_type = "text/event-stream"

    def __init__(self, content: AsyncIterator[bytes], stop: threading.Event):
        super().__init__(content, headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
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
