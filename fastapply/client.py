"""A small Python client for the fastapply gRPC service.

    from fastapply.client import FastApplyClient
    with FastApplyClient("127.0.0.1:50051", token=None) as c:
        result = c.apply(original, update, engine="structural")      # fastapply.api.ApplyResult
        for ev in c.apply_stream(original, update):                   # TextDelta..., then ApplyResult
            ...

Errors come back as `RpcApplyError` (an `ApplyError`): `.code` is the fastapply code (invalid_argument,
too_long, queue_full, refused, unauthenticated, cancelled, deadline_exceeded, ...), `.status` the gRPC
status, `.message` what to fix, `.reasons` a structural refusal's reasons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import grpc

from fastapply.api import DEFAULT_ENGINE, ApplyError, ApplyRequest, ApplyResult, ErrorCode, Sampling, TextDelta
from fastapply.grpc_convert import (
    CODE_KEY,
    CODE_OF_STATUS,
    REASON_KEY,
    refusal_from_metadata,
    request_to_proto,
    result_from_response,
)
from fastapply.grpc_gen import fastapply_pb2_grpc as pb_grpc
from fastapply.refusal import Hint

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
# A refusal's readings ride in trailing metadata (grpc_convert.refusal_to_proto): this client takes
# metadata this large and asks the server for readings up to a little less.
MAX_METADATA_BYTES = 8 * 1024 * 1024
REFUSAL_BYTES = MAX_METADATA_BYTES - 64 * 1024
POLL_S = 0.05  # 50 ms: how often a unary call with `should_stop` checks it


class RpcApplyError(ApplyError):
    """`refusal`: a refusal's structured detail (`fastapply_pb2.Refusal`: hint, readings, hints), or None;
    `readings` holds (how, whole file) for each reading whose text came along."""

    def __init__(self, code: ErrorCode | str, message: str, reasons: list[str], status: grpc.StatusCode,
                 refusal=None):
        readings = [(r.how, r.text) for r in refusal.readings if r.HasField("text")] if refusal is not None else []
        hints = [Hint(h.reading, h.region, h.side, tuple(h.lines), (h.original_lines.first, h.original_lines.last),
                      h.marker) for h in refusal.hints] if refusal is not None else []
        super().__init__(code, message, reasons, readings, refusal.hint if refusal is not None else None, hints)
        self.status = status
        self.refusal = refusal

    def __str__(self) -> str:
        return f"{self.status.name}: {self.message}"


def error_from_rpc(e: grpc.RpcError) -> RpcApplyError:
    status = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    details = (e.details() if hasattr(e, "details") else None) or str(e)
    code, reasons = None, []
    try:
        md = e.trailing_metadata() or ()
    except Exception:
        md = ()
    for key, value in md:
        if key == CODE_KEY:  # a code this client does not know (a newer server) reads as internal
            code = value if value in ErrorCode._value2member_map_ else ErrorCode.INTERNAL
        elif key == REASON_KEY:
            reasons.append(value.decode("utf-8", "replace") if isinstance(value, bytes) else value)
    if code is None:  # a status from gRPC itself (message size, concurrency limit, transport)
        code = CODE_OF_STATUS.get(status, ErrorCode.INTERNAL)
        if status == grpc.StatusCode.RESOURCE_EXHAUSTED and "concurrent rpc limit" in details.lower():
            code = ErrorCode.QUEUE_FULL
    if status == grpc.StatusCode.UNAVAILABLE and code == "unavailable" and "connect" in details.lower():
        details = f"cannot reach the fastapply server: {details}"
    try:
        refusal = refusal_from_metadata(md)
    except Exception:  # a detail this client cannot read: the message and reasons still say it all
        refusal = None
    return RpcApplyError(code, details, reasons, status, refusal)


def _wait(future: grpc.Future, should_stop: Callable[[], bool]):
    """The future's result, polling `should_stop`; a stop cancels the call."""
    while True:
        try:
            return future.result(timeout=POLL_S)
        except grpc.FutureTimeoutError:
            if should_stop():
                future.cancel()
                raise ApplyError("cancelled", "the apply was cancelled") from None


def _with_limit(req: ApplyRequest):
    """The request as sent: this client takes a refusal's readings up to REFUSAL_BYTES."""
    m = request_to_proto(req)
    m.max_refusal_bytes = REFUSAL_BYTES
    return m


def _read(x: str | bytes | Path) -> bytes:
    return x if isinstance(x, bytes) else Path(x).read_bytes()


class FastApplyClient:
    """One channel to a fastapply server. `tls_ca`: a CA certificate (PEM path or bytes) to verify the
    server with (TLS); `tls=True` without a CA uses the system roots. `token`: sent as
    `authorization: Bearer <token>` on every call. `timeout`: default per-call deadline in seconds."""

    def __init__(self, target: str, token: str | None = None, tls_ca: str | bytes | Path | None = None, *,
                 tls: bool = False, timeout: float | None = None, options: list[tuple[str, object]] | None = None):
        opts = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_metadata_size", MAX_METADATA_BYTES), ("grpc.absolute_max_metadata_size", MAX_METADATA_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)] + list(options or [])
        if tls_ca is not None or tls:
            creds = grpc.ssl_channel_credentials(root_certificates=_read(tls_ca) if tls_ca is not None else None)
            self.channel = grpc.secure_channel(target, creds, options=opts)
        else:
            self.channel = grpc.insecure_channel(target, options=opts)
        self.target = target
        self.timeout = timeout
        self._stub = pb_grpc.FastApplyStub(self.channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()

    # -- lifecycle --------------------------------------------------------------------------------
    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> FastApplyClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def wait_ready(self, timeout: float = 10.0) -> None:
        try:
            grpc.channel_ready_future(self.channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise ApplyError("unavailable", f"no fastapply server answered at {self.target} within {timeout:g}s") from None

    def health(self, service: str = "", timeout: float | None = 5.0) -> str:
        """The standard health status name (SERVING, NOT_SERVING, ...) of `service` ("" = the server)."""
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        try:
            r = health_pb2_grpc.HealthStub(self.channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None
        return health_pb2.HealthCheckResponse.ServingStatus.Name(r.status)

    # -- calls ------------------------------------------------------------------------------------
    @staticmethod
    def build_request(original: str | bytes, update: str | bytes, *, instruction: str | None = None,
                      language: str | None = None, path: str | None = None, engine: str = DEFAULT_ENGINE,
                      temperature: float = 0.0, top_p: float = 1.0, seed: int | None = None,
                      max_output_tokens: int | None = None, model_budget_s: float | None = None) -> ApplyRequest:
        """str or bytes content; bytes go as they are (the server refuses non-UTF-8)."""
        return ApplyRequest(original=original, update=update, instruction=instruction, language=language, path=path,
                            engine=engine, sampling=Sampling(temperature, top_p, seed),
                            max_output_tokens=max_output_tokens, model_budget_s=model_budget_s)

    def apply(self, original: str | bytes, update: str | bytes, *, timeout: float | None = None,
              **opts) -> ApplyResult:
        """Merge `update` into `original` on the server; see `build_request` for the options."""
        return self.apply_request(self.build_request(original, update, **opts), timeout=timeout)

    def apply_request(self, req: ApplyRequest, timeout: float | None = None,
                      should_stop: Callable[[], bool] | None = None) -> ApplyResult:
        """One unary call. With `should_stop`, the call is cancelled on the server (and
        ApplyError("cancelled") raised) within `POLL_S` of it turning true."""
        kw = dict(timeout=timeout if timeout is not None else self.timeout, metadata=self._metadata)
        try:
            if should_stop is None:
                m = self._stub.ApplyEdit(_with_limit(req), **kw)
            else:
                m = _wait(self._stub.ApplyEdit.future(_with_limit(req), **kw), should_stop)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None
        return result_from_response(m)

    def apply_stream(self, original: str | bytes, update: str | bytes, *, timeout: float | None = None,
                     **opts) -> Iterator[TextDelta | ApplyResult]:
        """Yield TextDelta events as the server verifies text, then the ApplyResult (with the whole
        merged text). Closing the iterator early (`.close()`, `break`) cancels the call on the server."""
        return self.apply_stream_request(self.build_request(original, update, **opts), timeout=timeout)

    def apply_stream_request(self, req: ApplyRequest, timeout: float | None = None) -> Iterator[TextDelta | ApplyResult]:
        call = self._stub.ApplyEditStream(_with_limit(req),
                                          timeout=timeout if timeout is not None else self.timeout,
                                          metadata=self._metadata)
        return self._iter_stream(call)

    @staticmethod
    def _iter_stream(call) -> Iterator[TextDelta | ApplyResult]:
        parts: list[str] = []
        final = None
        finished = False
        try:
            for chunk in call:  # read to the end so the call completes with its status
                kind = chunk.WhichOneof("chunk")
                if kind == "text":
                    parts.append(chunk.text)
                    yield TextDelta(chunk.text)
                elif kind == "final":
                    final = chunk.final
            finished = True
        except grpc.RpcError as e:
            finished = True
            raise error_from_rpc(e) from None
        finally:
            if not finished:
                call.cancel()  # the caller stopped early: stop the merge on the server
        if final is None:
            raise ApplyError("internal", "the stream ended without a final chunk")
        yield result_from_response(final, merged="".join(parts))
