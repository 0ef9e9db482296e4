"""`RemoteApplier`: the `Applier` surface over a fastapply gRPC server.

Front-ends take "an Applier": the in-process `fastapply.api.Applier` or this one, and do not
care which. `apply` is one unary call, `apply_stream` one streaming call; both stop (and cancel
the call on the server, whose decoding then stops at its next forward pass) once `should_stop()`
turns true. A call refused with `queue_full` before it started is retried with backoff.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from fastapply.client import FastApplyClient
from fastapply.refusal import rebuild
from fastapply.types import ApplyError, ApplyRequest, ApplyResult, ErrorCode, ShouldStop, StreamEvent

QUEUE_FULL_RETRIES = 6  # with backoff 0.25 s, 0.5 s, ... up to 4 s: about 12 s in all
_BACKOFF_S, _BACKOFF_MAX_S, _NAP_S = 0.25, 4.0, 0.05


class RemoteApplier:
    """Serves ApplyRequests on the server at `target` (HOST:PORT). `token`: its bearer token;
    `tls_ca`: a CA certificate (PEM path or bytes) to verify it with (TLS); `timeout`: per-call
    deadline in seconds; `queue_full_retries`: how often a `queue_full` refusal is retried."""

    def __init__(self, target: str, token: str | None = None, tls_ca: str | bytes | Path | None = None, *,
                 timeout: float | None = None, queue_full_retries: int = QUEUE_FULL_RETRIES):
        self.target = target
        self.queue_full_retries = queue_full_retries
        self.client = FastApplyClient(target, token=token, tls_ca=tls_ca, timeout=timeout)

    @property
    def model_loaded(self) -> bool:
        """The model lives on the server: nothing loads here."""
        return True

    def check(self, timeout: float = 10.0) -> None:
        """Fail before anything runs when the server is unreachable or refuses the token."""
        self.client.health(timeout=timeout)

    def apply(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> ApplyResult:
        for attempt in range(self.queue_full_retries + 1):
            try:
                return self.client.apply_request(req, should_stop=should_stop)
            except ApplyError as e:
                if not self._backoff(e, attempt, should_stop):
                    raise with_readings(e, req) from None
        raise AssertionError("unreachable")

    def apply_stream(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> Iterator[StreamEvent]:
        """Yield TextDelta events as the server verifies text, then the ApplyResult."""
        for attempt in range(self.queue_full_retries + 1):
            events = self.client.apply_stream_request(req)
            started = False
            try:
                for ev in events:
                    if should_stop is not None and should_stop():
                        raise ApplyError("cancelled", "cancelled")
                    started = True
                    yield ev
                    if isinstance(ev, ApplyResult):
                        return
                return
            except ApplyError as e:
                if started or not self._backoff(e, attempt, should_stop):
                    raise with_readings(e, req) from None
            finally:
                events.close()  # a stream left early is cancelled on the server

    def _backoff(self, e: ApplyError, attempt: int, should_stop: ShouldStop | None) -> bool:
        """After a `queue_full` refusal, wait before retry `attempt + 1`; False: give up (raise)."""
        if e.code != ErrorCode.QUEUE_FULL or attempt >= self.queue_full_retries:
            return False
        deadline = time.monotonic() + min(_BACKOFF_S * 2 ** attempt, _BACKOFF_MAX_S)
        while time.monotonic() < deadline:
            if should_stop is not None and should_stop():
                return False
            time.sleep(_NAP_S)
        return not (should_stop is not None and should_stop())

    def close(self) -> None:
        """Close the channel; calls still in flight are cancelled."""
        self.client.close()

    def __enter__(self) -> RemoteApplier:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def with_readings(e: ApplyError, req: ApplyRequest) -> ApplyError:
    """A server's refusal with every reading's whole file: those the server left out for size are
    rebuilt from their diffs against the request's original (the same `readings` as in process)."""
    refusal = getattr(e, "refusal", None)
    if refusal is None or not refusal.texts_omitted or refusal.diffs_omitted or isinstance(req.original, bytes):
        return e
    try:
        e.readings = [(r.how, rebuild(req.original, r.diff)) for r in refusal.readings]
    except ValueError:  # a diff that does not apply (the server saw another original): keep what came
        pass
    return e
