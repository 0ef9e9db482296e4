"""gRPC front-end: the `fastapply.v1.FastApply` service over one `Applier`.

- One model, one request at a time: model requests (engines speculative/plain) take turns in a
  bounded FIFO queue (`ModelQueue`); when `max_queue` requests already wait, a new one gets
  RESOURCE_EXHAUSTED at once. Structural requests need no model and never wait in that queue.
- Client cancellation and deadlines stop decoding within one forward pass: `should_stop` checks
  the RPC's liveness and time left; the decode loop then raises and frees the KV cache. A request
  waiting in the queue leaves it the same way.
- Standard health service (`grpc.health.v1`; SERVING once the model is loaded, or at once with
  `preload=False`), server reflection, an optional bearer token checked on every call
  (`authorization: Bearer <token>`, an interceptor), TLS, request size limits, Prometheus metrics,
  graceful shutdown (`stop(grace)`; SIGTERM in `serve_until_signal`) that drains in-flight calls.
"""

from __future__ import annotations

import hmac
import logging
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from fastapply.api import DEFAULT_ENGINE, ENGINES, Applier, ApplyError, ApplyResult, ErrorCode, TextDelta, check_request
from fastapply.grpc_convert import (  # noqa: F401  (request_to_proto: re-exported for callers of this module)
    CODE_KEY,
    DETAILS_KEY,
    REASON_KEY,
    REFUSAL_DETAIL_BYTES,
    STATUS,
    refusal_to_proto,
    request_from_proto,
    request_to_proto,
    response_from_result,
    status_details,
)
from fastapply.grpc_gen import fastapply_pb2 as pb
from fastapply.grpc_gen import fastapply_pb2_grpc as pb_grpc
from fastapply.extras import ExtraMissing
from fastapply.fsutil import read_token_file  # noqa: F401  (re-exported)
from fastapply.metrics import Metrics, MetricsHTTPServer

log = logging.getLogger("fastapply.server")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["FastApply"].full_name  # "fastapply.v1.FastApply"
DEFAULT_PORT = 50051
DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024
STREAM_PIECE_CHARS = 64 * 1024  # a large TextDelta (the structural merge's whole file) goes out in pieces


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1", "[::1]") or host.startswith("127.")


# -- scheduling ---------------------------------------------------------------------------------

class Stopped(Exception):
    """Raised by ModelQueue.turn when the caller went away while waiting."""


class ModelQueue:
    """FIFO turns on the one model, with at most `max_waiting` callers waiting (beyond the running one).

    `turn(should_stop)` blocks until it is the caller's turn; raises ApplyError("queue_full") when the
    queue is full, or Stopped when `should_stop()` turns true while waiting (it leaves the queue).
    """

    def __init__(self, max_waiting: int, poll_s: float = 0.05):
        if max_waiting < 0:
            raise ValueError("max_waiting must be >= 0")
        self.max_waiting = max_waiting
        self._poll_s = poll_s
        self._cond = threading.Condition()
        self._waiting: deque[object] = deque()
        self._busy = False

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @property
    def busy(self) -> bool:
        return self._busy

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    @contextmanager
    def turn(self, should_stop: Callable[[], bool]):
        ticket = object()
        with self._cond:
            if self._busy or self._waiting:
                if len(self._waiting) >= self.max_waiting:
                    raise ApplyError("queue_full", f"the model queue is full ({len(self._waiting)} requests waiting "
                                                   "for the one model); retry later, or use engine=structural")
                self._waiting.append(ticket)
                try:
                    while self._busy or self._waiting[0] is not ticket:
                        if should_stop():
                            raise Stopped()
                        self._cond.wait(self._poll_s)
                finally:
                    self._waiting.remove(ticket)
                    self._cond.notify_all()
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()


def queued_events(applier: Applier, queue: ModelQueue, req: ApplyRequest,
                  should_stop: Callable[[], bool]) -> Iterator[TextDelta | ApplyResult]:
    """`applier.apply_stream(req)` as every network front-end (gRPC, HTTP) runs it: structural
    requests at once, model requests in their turn on `queue` (a model that cannot be loaded is
    `unavailable`). Raises Stopped when `should_stop()` turns true while waiting for the turn."""
    if req.engine in ("structural", "auto"):  # model-free when the merge is sure: never waits for the model
        try:
            yield from applier.apply_stream(replace(req, engine="structural"), should_stop)
            return
        except ApplyError as e:
            if req.engine == "structural" or e.code != ErrorCode.REFUSED:
                raise
        # `auto` and the merge refused: the model's turn (the pipeline merges again, a few ms, so
        # that the model gets the merge's candidates without the queue knowing about them).
    check_request(req)  # bad input is refused before it queues
    # An engine that batches concurrent requests itself (vLLM) takes them all at once.
    with nullcontext() if getattr(applier, "concurrent", False) else queue.turn(should_stop):
        if not applier.model_loaded:
            try:
                applier.model  # noqa: B018 (loads it)
            except ExtraMissing:
                if req.engine != "auto":
                    raise
                # auto without the model extra: the pipeline answers with the merge's refusal, its
                # readings and the line that names the extra (pipeline._installed)
            except ApplyError as e:
                raise ApplyError("unavailable", f"the server's model could not be loaded: {e.message}") from None
        yield from applier.apply_stream(req, should_stop)


# -- the service --------------------------------------------------------------------------------

@dataclass
class _Call:
    """One RPC's cancellation/deadline watch: `should_stop()` turns true within one poll of either."""

    context: grpc.ServicerContext
    done: threading.Event

    @classmethod
    def watch(cls, context: grpc.ServicerContext, queue: ModelQueue) -> _Call:
        done = threading.Event()

        def on_end():
            done.set()
            queue.wake()  # a caller waiting for its turn notices at once

        context.add_callback(on_end)
        return cls(context, done)

    def should_stop(self) -> bool:
        return self.done.is_set() or not self.context.is_active() or self.context.time_remaining() <= 0

    def stop_error(self) -> ApplyError:
        if self.context.time_remaining() <= 0:
            return ApplyError("deadline_exceeded", "the deadline expired before the merge finished; "
                                                   "allow more time or send a smaller file")
        return ApplyError("cancelled", "the call was cancelled by the client")


class FastApplyServicer(pb_grpc.FastApplyServicer):
    def __init__(self, applier: Applier, queue: ModelQueue, metrics: Metrics):
        self.applier = applier
        self.queue = queue
        self.metrics = metrics

    # Both RPCs run the same event stream; unary collects it.
    def _events(self, request: pb.ApplyEditRequest, call: _Call) -> Iterator[TextDelta | ApplyResult]:
        try:
            yield from queued_events(self.applier, self.queue, request_from_proto(request), call.should_stop)
        except Stopped:
            raise call.stop_error() from None

    def _run(self, method: str, request: pb.ApplyEditRequest, context: grpc.ServicerContext):
        """Yield response messages; map every failure to a status with a message saying what to fix."""
        t0 = time.perf_counter()
        engine = request.engine or DEFAULT_ENGINE
        engine = engine if engine in ENGINES else "unknown"  # a metrics label: keep its values few
        self.metrics.request(method, engine)
        self.metrics.add("fastapply_inflight_requests", 1)
        call = _Call.watch(context, self.queue)
        code = grpc.StatusCode.OK
        events = self._events(request, call)
        try:
            for ev in events:
                if call.should_stop():
                    raise call.stop_error()
                if isinstance(ev, ApplyResult):
                    self.metrics.result(ev)
                yield ev
        except ApplyError as e:
            if e.code == "cancelled" and call.should_stop():
                e = call.stop_error()
            code = STATUS[e.code]
            md = [(CODE_KEY, e.code.value)] + [(REASON_KEY, r.encode("utf-8")) for r in e.reasons]
            if e.code == ErrorCode.REFUSED:  # the readings and hints, for a client to offer or resend
                limit = request.max_refusal_bytes if request.HasField("max_refusal_bytes") else REFUSAL_DETAIL_BYTES
                refusal = refusal_to_proto(request_from_proto(request), e, limit)
                md.append((DETAILS_KEY, status_details(code, e.message, refusal)))
            context.set_trailing_metadata(md)
            context.abort(code, e.message)
        except GeneratorExit:  # the stream was dropped (client went away): not an error of ours
            code = grpc.StatusCode.CANCELLED
            raise
        except Exception as e:
            log.exception("internal error in %s", method)
            code = grpc.StatusCode.INTERNAL
            context.set_trailing_metadata([(CODE_KEY, ErrorCode.INTERNAL.value)])
            context.abort(code, f"internal error: {type(e).__name__}: {e}")
        finally:
            events.close()  # releases the model turn and the decode's KV cache now, not at garbage collection
            self.metrics.add("fastapply_inflight_requests", -1)
            self.metrics.finished(code.name, engine, time.perf_counter() - t0)
            log.debug("%s engine=%s -> %s in %.3fs", method, engine, code.name, time.perf_counter() - t0)

    def ApplyEdit(self, request, context):  # noqa: N802 (gRPC naming)
        result = None
        for ev in self._run("ApplyEdit", request, context):
            if isinstance(ev, ApplyResult):
                result = ev
        return response_from_result(result)

    def ApplyEditStream(self, request, context):  # noqa: N802
        run = self._run("ApplyEditStream", request, context)
        try:
            for ev in run:
                if isinstance(ev, TextDelta):
                    for i in range(0, len(ev.text), STREAM_PIECE_CHARS):
                        yield pb.ApplyEditChunk(text=ev.text[i:i + STREAM_PIECE_CHARS])
                else:
                    yield pb.ApplyEditChunk(final=response_from_result(ev, include_merged=False))
        finally:
            run.close()  # a dropped stream stops the merge at once


# -- auth ---------------------------------------------------------------------------------------

class BearerTokenInterceptor(grpc.ServerInterceptor):
    """Refuse every call whose `authorization` metadata is not `Bearer <token>` (UNAUTHENTICATED)."""

    def __init__(self, token: str, metrics: Metrics | None = None):
        self._expected = f"Bearer {token}".encode()
        self._metrics = metrics

    def intercept_service(self, continuation, handler_call_details):
        got = ""
        for key, value in handler_call_details.invocation_metadata or ():
            if key == "authorization":
                got = value if isinstance(value, str) else value.decode("latin-1")
        if hmac.compare_digest(got.encode("utf-8", "replace"), self._expected):
            return continuation(handler_call_details)
        msg = ("missing `authorization: Bearer <token>` metadata; this server requires a token (--token-file)"
               if not got else "the bearer token is not valid for this server")
        if self._metrics is not None:
            self._metrics.inc("fastapply_responses_total", code="UNAUTHENTICATED")
            self._metrics.inc("fastapply_errors_total", code="UNAUTHENTICATED")

        def refuse(request, context):
            context.set_trailing_metadata([(CODE_KEY, ErrorCode.UNAUTHENTICATED.value)])
            context.abort(grpc.StatusCode.UNAUTHENTICATED, msg)

        handler = continuation(handler_call_details)
        if handler is None:
            return grpc.unary_unary_rpc_method_handler(refuse)
        kw = dict(request_deserializer=handler.request_deserializer, response_serializer=handler.response_serializer)
        if handler.request_streaming and handler.response_streaming:
            return grpc.stream_stream_rpc_method_handler(refuse, **kw)
        if handler.request_streaming:
            return grpc.stream_unary_rpc_method_handler(refuse, **kw)
        if handler.response_streaming:
            return grpc.unary_stream_rpc_method_handler(refuse, **kw)
        return grpc.unary_unary_rpc_method_handler(refuse, **kw)


# -- the server ---------------------------------------------------------------------------------

class FastApplyServer:
    """Build, start and stop the gRPC server. `port=0` binds a free port (read `.port` after start()).

    `applier` is injectable (tests pass a test double of the engine); by default one is built from
    `model_name`/`device`/`dtype`. With `preload=True` the model loads in the background at start and
    health turns SERVING when it is loaded; with `preload=False` the model loads on first use and
    health is SERVING at once.
    """

    def __init__(self, applier: Applier | None = None, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 token: str | None = None, tls_cert: bytes | None = None, tls_key: bytes | None = None,
                 max_queue: int = 32, workers: int = 64, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                 preload: bool = True, metrics_port: int | None = None,
                 model_name: str | None = None, device: str | None = None, dtype: str | None = None):
        if (tls_cert is None) != (tls_key is None):
            raise ApplyError("invalid_argument", "TLS needs both a certificate and a key (--tls-cert and --tls-key)")
        if workers < 2:
            raise ApplyError("invalid_argument", "workers must be at least 2")
        self.applier = applier if applier is not None else Applier(model_name=model_name, device=device, dtype=dtype)
        self.host, self.port = host, port
        self.tls = tls_cert is not None
        self.preload = preload
        self.metrics = Metrics()
        self.queue = ModelQueue(max_queue)
        self.metrics.gauge_fns["fastapply_queue_depth"] = lambda: self.queue.waiting
        self.metrics.gauge_fns["fastapply_model_loaded"] = lambda: int(self.applier.model_loaded)
        self.health = health.HealthServicer()
        self.load_error: ApplyError | None = None
        self.loaded = threading.Event()
        interceptors = [BearerTokenInterceptor(token, self.metrics)] if token else []
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fastapply-grpc"),
            interceptors=interceptors,
            # Beyond this many calls at once, gRPC answers RESOURCE_EXHAUSTED instead of queueing unseen.
            maximum_concurrent_rpcs=workers,
            options=[("grpc.max_receive_message_length", max_request_bytes),
                     ("grpc.max_send_message_length", -1),
                     ("grpc.so_reuseport", 0)],
        )
        pb_grpc.add_FastApplyServicer_to_server(FastApplyServicer(self.applier, self.queue, self.metrics), self.server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
            self.server)
        address = f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
        try:
            if self.tls:
                bound = self.server.add_secure_port(address, grpc.ssl_server_credentials([(tls_key, tls_cert)]))
            else:
                bound = self.server.add_insecure_port(address)
        except RuntimeError as e:
            raise ApplyError("unavailable", f"cannot listen on {address}: {e}") from None
        if not bound:
            raise ApplyError("unavailable", f"cannot listen on {address} (port in use?)")
        self.port = bound
        self._metrics_http = MetricsHTTPServer(self.metrics, host, metrics_port) if metrics_port is not None else None
        self.metrics_port = self._metrics_http.port if self._metrics_http else None
        self._stopped = threading.Event()
        # Other front-ends on this server's applier, queue and metrics (HTTP): started and stopped with it.
        self.companions: list = []

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def serving(self) -> bool:
        """What the health service says: the model is loaded (or loads on first use) and no stop began."""
        return self.loaded.is_set() and not self._stopped.is_set()

    def _set_health(self, status) -> None:
        for name in ("", SERVICE_NAME):
            self.health.set(name, status)

    def _preload(self) -> None:
        t0 = time.perf_counter()
        try:
            self.applier.model  # noqa: B018 (loads it)
        except ExtraMissing as e:
            # A lean install (no model extra) is a structural server by design, not a broken one: it
            # is healthy, and a model request gets the line that names the extra.
            self.load_error = e
            log.warning("%s; serving the structural merge (health SERVING)", e.message)
            self._healthy()
            return
        except ApplyError as e:
            self.load_error = e
            log.error("the model could not be loaded: %s; health stays NOT_SERVING (structural requests "
                      "are still served)", e.message)
            return
        except Exception as e:  # keep the server up for structural requests; say why the model is missing
            self.load_error = ApplyError("unavailable", f"{type(e).__name__}: {e}")
            log.exception("the model could not be loaded")
            return
        log.info("model loaded in %.1fs", time.perf_counter() - t0)
        self._healthy()

    def _healthy(self) -> None:
        self.loaded.set()
        if not self._stopped.is_set():
            self._set_health(health_pb2.HealthCheckResponse.SERVING)

    def start(self) -> FastApplyServer:
        if self.preload and not self.applier.model_loaded:
            self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
            threading.Thread(target=self._preload, name="fastapply-preload", daemon=True).start()
        else:
            self.loaded.set()
            self._set_health(health_pb2.HealthCheckResponse.SERVING)
        self.server.start()
        if self._metrics_http:
            self._metrics_http.start()
        for c in self.companions:
            c.start()
        return self

    def stop(self, grace: float | None = 30.0) -> threading.Event:
        """Stop taking calls; let in-flight ones finish for up to `grace` seconds, then cancel them
        (their decoding stops at the next forward pass). Returns an Event set when all is done."""
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        others = [c.stop(grace) for c in self.companions]
        grpc_done = self.server.stop(grace)
        done = threading.Event()

        def finish():
            for ev in [grpc_done, *others]:
                ev.wait()
            if self._metrics_http:
                self._metrics_http.stop()
            done.set()

        threading.Thread(target=finish, name="fastapply-stop", daemon=True).start()
        return done

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server and its companions have stopped (True) or `timeout` passed (False)."""
        if self.server.wait_for_termination(timeout):
            return False
        return all(c.wait(timeout) for c in self.companions)

    def __enter__(self) -> FastApplyServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop(grace=0).wait()


def serve_until_signal(server: FastApplyServer, grace: float = 30.0,
                       on_started: Callable[[FastApplyServer], None] | None = None) -> int:
    """Start `server`, run until SIGTERM/SIGINT, then drain in-flight calls for up to `grace` s.

    Must run in the main thread (signal handlers). Returns 0 after a clean shutdown.
    """
    stopping = threading.Event()

    def on_signal(signum, frame):
        if stopping.is_set():  # a second signal: stop now, cancelling what still runs
            log.info("%s again: cancelling in-flight calls", signal.Signals(signum).name)
            threading.Thread(target=server.stop, args=(0,), daemon=True).start()
            return
        stopping.set()
        log.info("%s: draining in-flight calls (up to %.0fs), then exiting", signal.Signals(signum).name, grace)
        # server.stop takes gRPC locks: do it off the signal handler
        threading.Thread(target=server.stop, args=(grace,), daemon=True).start()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.start()
        if on_started:
            on_started(server)
        while not server.wait(timeout=0.5):
            pass
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return 0
