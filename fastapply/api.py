"""The one core API: request/result dataclasses, `Applier.apply()` and `Applier.apply_stream()`.

Every front-end (CLI, gRPC, LSP, codemod) builds an `ApplyRequest`, calls an `Applier` and reads
an `ApplyResult` (or catches `ApplyError`). Nothing below this module is called by front-ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fastapply.languages import unknown_language

if TYPE_CHECKING:  # the model stack (torch) is only imported when a model engine is used
    from fastapply.engine import ModelEngine

ENGINES = ("speculative", "plain", "structural")


@dataclass(frozen=True)
class Sampling:
    """temperature 0 means greedy (the default: output identical to plain greedy decoding)."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None


@dataclass(frozen=True)
class ApplyRequest:
    original: str
    update: str
    instruction: str | None = None
    language: str | None = None  # inferred from `path` (then content) when None
    path: str | None = None
    engine: str = "speculative"
    sampling: Sampling = field(default_factory=Sampling)
    max_output_tokens: int | None = None
    # The caller's guess at the merged file (OpenAI's Predicted Outputs): one more draft source
    # for the model engines. It never changes the output, only how fast it is verified.
    prediction: str | None = None


@dataclass
class Stats:
    output_tokens: int = 0
    forward_passes: int = 0
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    prompt_tokens: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0

    @property
    def tokens_per_pass(self) -> float:
        return self.output_tokens / self.forward_passes if self.forward_passes else 0.0

    @property
    def tokens_per_s(self) -> float:
        """Output tokens per second of decoding (prefill excluded)."""
        return self.output_tokens / self.decode_s if self.decode_s > 0 else 0.0

    def line(self) -> str:
        return (
            f"tokens={self.output_tokens} passes={self.forward_passes} "
            f"tokens/pass={self.tokens_per_pass:.2f} accepted={self.accepted_tokens}/{self.drafted_tokens} "
            f"prefill={self.prefill_s:.2f}s decode={self.decode_s:.2f}s tokens/s={self.tokens_per_s:.1f}"
        )


@dataclass(frozen=True)
class Finding:
    """A validation finding on a result. `severity` "error" means the result must not be used."""

    kind: str  # e.g. "parse", "marker_leak", "large_deletion", "empty_body", "refusal"
    message: str
    severity: str = "error"


@dataclass
class ApplyResult:
    merged: str
    engine: str
    language: str | None
    stats: Stats = field(default_factory=Stats)
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)


class ApplyError(Exception):
    """A request that cannot be served. `code` is stable and maps to gRPC/LSP/exit codes.

    codes: invalid_argument, too_long, refused, unavailable, cancelled, deadline_exceeded, internal
    """

    def __init__(self, code: str, message: str, reasons: list[str] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.reasons = list(reasons or [])


@dataclass(frozen=True)
class TextDelta:
    """Streaming event: verified text appended to the merged file."""

    text: str


StreamEvent = TextDelta | ApplyResult
ShouldStop = Callable[[], bool]


def check_request(req: ApplyRequest) -> None:
    """Input checks shared by every engine; raise ApplyError('invalid_argument') with what to fix."""
    if req.engine not in ENGINES:
        raise ApplyError("invalid_argument", f"unknown engine {req.engine!r}; use one of {', '.join(ENGINES)}")
    if not req.update.strip():
        raise ApplyError("invalid_argument", "the update snippet is empty")
    bad_language = unknown_language(req.language)
    if bad_language:
        raise ApplyError("invalid_argument", bad_language)
    for name, text in (("original", req.original), ("update", req.update)):
        if "\x00" in text:
            raise ApplyError("invalid_argument", f"the {name} contains NUL bytes (binary data?)")
    if req.sampling.temperature < 0 or not 0 < req.sampling.top_p <= 1:
        raise ApplyError("invalid_argument", "temperature must be >= 0 and top_p in (0, 1]")
    if req.max_output_tokens is not None and req.max_output_tokens <= 0:
        raise ApplyError("invalid_argument", "max_output_tokens must be positive")


def decode_utf8(data: bytes, what: str) -> str:
    """Front-ends read bytes; non-UTF-8 input is refused rather than guessed."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ApplyError("invalid_argument", f"{what} is not valid UTF-8 (byte {e.start})") from None


class Applier:
    """Serves ApplyRequests. Holds the (optional) loaded model; no global state.

    The model is loaded lazily on the first request that needs it, unless passed in. One model
    serves one request at a time (a lock), so concurrent front-ends queue here.
    """

    def __init__(self, model_engine: ModelEngine | None = None, model_name: str | None = None,
                 device: str | None = None, dtype: str | None = None):
        self._engine = model_engine
        self._model_name = model_name
        self._device = device
        self._dtype = dtype
        self._load_lock = threading.Lock()
        self.model_lock = threading.Lock()

    @property
    def model(self) -> ModelEngine:
        if self._engine is None:
            with self._load_lock:
                if self._engine is None:
                    from fastapply.engine import ModelEngine

                    self._engine = ModelEngine.load(self._model_name, device=self._device, dtype=self._dtype)
        return self._engine

    @property
    def model_loaded(self) -> bool:
        return self._engine is not None

    def apply(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> ApplyResult:
        result = None
        for ev in self.apply_stream(req, should_stop):
            if isinstance(ev, ApplyResult):
                result = ev
        assert result is not None
        return result

    def apply_stream(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> Iterator[StreamEvent]:
        """Yield TextDelta events as text is verified, then one final ApplyResult.

        Raises ApplyError for bad input, refusals (structural engine) and cancellation.
        """
        from fastapply.pipeline import run  # keeps `import fastapply.api` light for front-ends

        yield from run(self, req, should_stop)
