"""Where the language server's applies run: in process (an `Applier`) or on a gRPC server.

Both backends expose one method, `stream(req, should_stop)`, yielding `TextDelta` events then one
final `ApplyResult`, and raising `ApplyError` (the core API's contract), so the server does not
care which one it talks to.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from fastapply.api import ApplyError, ApplyRequest, ApplyResult, ShouldStop, StreamEvent


class Backend(Protocol):
    description: str

    def stream(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> Iterator[StreamEvent]: ...

    def close(self) -> None: ...


class LocalBackend:
    """The engine in this process; the model (if any) loads on the first model request."""

    def __init__(self, model_name: str | None = None, device: str | None = None, dtype: str | None = None,
                 applier=None):
        if applier is None:
            from fastapply.api import Applier

            applier = Applier(model_name=model_name, device=device, dtype=dtype)
        self.applier = applier
        self.description = f"in-process (model {model_name or 'default'})"

    def stream(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> Iterator[StreamEvent]:
        yield from self.applier.apply_stream(req, should_stop)

    def close(self) -> None:
        pass


class RemoteBackend:
    """Forwards to a fastapply gRPC server through `fastapply.client.FastApplyClient` (streaming).

    Cancellation: `should_stop` is checked at every streamed chunk; stopping closes the stream, which
    cancels the call on the server (its decoding stops at the next forward pass).
    """

    def __init__(self, target: str, token: str | None = None, timeout: float | None = None):
        self.target = target
        self.token = token
        self.timeout = timeout
        self.description = f"remote {target}"
        self._client = None

    @property
    def client(self):
        if self._client is None:
            try:
                from fastapply.client import FastApplyClient
            except ImportError as e:
                raise ApplyError("unavailable", f"the gRPC client is not available ({e})") from None
            self._client = FastApplyClient(self.target, token=self.token, timeout=self.timeout)
        return self._client

    def stream(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> Iterator[StreamEvent]:
        events = self.client.apply_stream_request(req)
        try:
            for ev in events:
                if should_stop is not None and should_stop():
                    raise ApplyError("cancelled", "cancelled")
                yield ev
                if isinstance(ev, ApplyResult):
                    return
        finally:
            events.close()  # a stream left early is cancelled on the server

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
