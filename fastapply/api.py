"""The one core API: `Applier.apply()` and `Applier.apply_stream()`.

Every front-end (CLI, gRPC, LSP, codemod) builds an `ApplyRequest`, calls an `Applier` (or a
`fastapply.remote.RemoteApplier`, which has the same surface) and reads an `ApplyResult` (or
catches `ApplyError`). The plain types live in `fastapply.types` and are re-exported here, so
front-ends import everything from this module and nothing below it.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from collections.abc import Iterator
from typing import TYPE_CHECKING

from fastapply.pipeline import run
from fastapply.types import (
    DEFAULT_ENGINE,
    DEFAULT_MODEL_BUDGET_S,
    ENGINES,
    ApplyError,
    ApplyRequest,
    ApplyResult,
    ErrorCode,
    Finding,
    Sampling,
    ShouldStop,
    Stats,
    StreamEvent,
    TextDelta,
    check_request,
    decode_utf8,
    final_result,
)

if TYPE_CHECKING:  # the model stack (torch) is only imported when a model engine is used
    from fastapply.engine import ModelEngine

__all__ = [
    "DEFAULT_ENGINE", "DEFAULT_MODEL_BUDGET_S", "ENGINES", "Applier", "ApplyError", "ApplyRequest", "ApplyResult", "ErrorCode", "Finding", "Sampling",
    "ShouldStop", "Stats", "StreamEvent", "TextDelta", "check_request", "decode_utf8", "final_result",
]


class Applier:
    """Serves ApplyRequests. Holds the (optional) loaded model; no global state.

    The model is loaded lazily on the first request that needs it, unless passed in, by the model
    backend named `backend` (see `fastapply.backends.MODEL_BACKENDS`; `backend_options` go to its
    `load`). An engine that is not `concurrent` serves one request at a time (a lock), so
    concurrent front-ends queue here.
    """

    def __init__(self, model_engine: ModelEngine | None = None, model_name: str | None = None,
                 device: str | None = None, dtype: str | None = None, backend: str = "hf",
                 backend_options: dict | None = None, model_budget_s: float | None = None):
        self._engine = model_engine
        # engine auto: the model budget of a request that sets none (None: DEFAULT_MODEL_BUDGET_S)
        self.model_budget_s = model_budget_s
        self._model_name = model_name
        self._device = device
        self._dtype = dtype
        self.backend = backend
        self.backend_options = dict(backend_options or {})
        self._load_lock = threading.Lock()
        self.model_lock = threading.Lock()

    @property
    def model(self) -> ModelEngine:
        if self._engine is None:
            with self._load_lock:
                if self._engine is None:
                    from fastapply.backends import load_engine  # torch: only when a model is needed

                    self._engine = load_engine(self.backend, self._model_name, self._device, self._dtype,
                                               **self.backend_options)
        return self._engine

    def check(self) -> None:
        """Refuse bad backend options now (ApplyError), without loading the model, if the engine
        class can tell (`check(device, dtype, **options)`)."""
        from fastapply.backends import engine_class

        check = getattr(engine_class(self.backend), "check", None)
        if check is not None:
            check(self._device, self._dtype, **self.backend_options)

    @property
    def concurrent(self) -> bool:
        """Does the loaded engine batch concurrent requests itself (no model lock, no server queue)?
        False until it is loaded, so the first requests queue behind the one load, and asking
        never imports a backend (torch, vLLM) inside a request's deadline."""
        return bool(getattr(self._engine, "concurrent", False))

    @property
    def model_loaded(self) -> bool:
        return self._engine is not None

    def apply(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> ApplyResult:
        return final_result(self.apply_stream(req, should_stop))

    def apply_stream(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> Iterator[StreamEvent]:
        """Yield TextDelta events as text is verified, then one final ApplyResult.

        Raises ApplyError for bad input, refusals (structural engine) and cancellation.
        """
        if req.model_budget_s is None and self.model_budget_s is not None:
            req = replace(req, model_budget_s=self.model_budget_s)
        yield from run(lambda: self.model, self.model_lock, req, should_stop)

    def close(self) -> None:
        """Release the engine if it holds processes (vLLM's workers); the surface `RemoteApplier` shares."""
        close = getattr(self._engine, "close", None)
        if close is not None:
            close()
