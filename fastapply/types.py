"""The plain types every layer shares: request, result, stats, findings, errors, input checks.

A leaf module: it imports only `fastapply.languages` (for the language-name check) and the
standard library, so the engine, the merge, the checks and every front-end can use these types
without importing each other. `fastapply.api` re-exports all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from fastapply.languages import unknown_language

ENGINES = ("auto", "speculative", "plain", "structural")
# `auto`'s model budget per request (seconds), from the moment the model takes up a refused merge.
# Measured on the 2-core CPU with the default 0.5B model (evals/RESULTS.md, "auto in bounded
# time"): without a budget hard_dev's model requests took a median of 19.9 s and a p90 of 42.1 s,
# every one refused in the end; under 20 s they take 17.9 / 19.6 s with the same answers.
DEFAULT_MODEL_BUDGET_S = 20.0
# Every front-end's default: the structural merge when it is sure, the model only where it refuses.
DEFAULT_ENGINE = "auto"


class ErrorCode(StrEnum):
    """Why a request could not be served. Values are the stable strings front-ends and clients see
    (`err.code == "refused"` holds); each front-end maps every code to its own vocabulary (gRPC
    status, LSP error code, codemod reason, CLI exit code)."""

    INVALID_ARGUMENT = "invalid_argument", "the request or its input is malformed; fix it and retry"
    USAGE = "usage", "the command line is used wrongly (options that do not go together, a bad manifest)"
    TOO_LONG = "too_long", "the input is too long: over the model's context, or over the structural merge's size cap"
    REFUSED = "refused", "the merge refused, or the result failed validation; nothing was written"
    QUEUE_FULL = "queue_full", "too many requests wait for the one model; retry later"
    UNAUTHENTICATED = "unauthenticated", "the server wants a valid bearer token"
    UNAVAILABLE = "unavailable", "the model or the server cannot be reached or loaded"
    CANCELLED = "cancelled", "the caller cancelled the request"
    DEADLINE_EXCEEDED = "deadline_exceeded", "the deadline expired before the merge finished"
    INTERNAL = "internal", "a bug in fastapply; the message says where"

    def __new__(cls, value: str, reason: str) -> ErrorCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.reason = reason  # a one-line human reason
        return member


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
    engine: str = DEFAULT_ENGINE
    sampling: Sampling = field(default_factory=Sampling)
    max_output_tokens: int | None = None
    # The caller's guess at the merged file (OpenAI's Predicted Outputs): one more draft source
    # for the model engines. It never changes the output, only how fast it is verified.
    prediction: str | None = None
    # `auto`: seconds the model may spend on a refused merge (judging, then writing), after which
    # the refusal is answered with its readings. None: DEFAULT_MODEL_BUDGET_S; 0: no limit.
    model_budget_s: float | None = None
    # The original is a section of a file that the client splices the answer back into (MCP clients:
    # fastapply-mcp, Osmosis' server): both its edges are cuts, so nothing is written beyond its first
    # or last line and a snippet that restates code beyond them is refused (`merge/fragment.py`).
    section: bool = False


@dataclass
class Stats:
    output_tokens: int = 0
    forward_passes: int = 0
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    prompt_tokens: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    judge_s: float = 0.0  # the judge's scoring of the merge's readings (`auto`), seconds
    # Per draft source ("structural", "original", "model", ...): tokens drafted and accepted, and
    # passes where one of its tokens was the first rejected. Per-token acceptance of a source (the
    # alpha of Leviathan et al.) is accepted / (accepted + rejected): tokens after a rejection are
    # never examined, so they count for nothing.
    by_source: dict[str, dict[str, int]] = field(default_factory=dict)
    # The draft model (`--draft-model`): all its time (prefill, catching up, steps), and its
    # one-token steps with their time (the numerator of the cost ratio c).
    draft_model_s: float = 0.0
    draft_model_steps: int = 0
    draft_model_step_s: float = 0.0
    # Opt-in trace for evals (None: off): per verify pass, ([(source, drafted tokens), ...], accepted).
    pass_log: list | None = None

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
            + (f" judge={self.judge_s:.2f}s" if self.judge_s else "")
        )


@dataclass(frozen=True)
class Finding:
    """A validation finding on a result. `severity` "error" means the result must not be used."""

    kind: str  # e.g. "parse", "marker_leak", "large_deletion", "empty_body", "refusal"
    message: str
    severity: str = "error"

    def line(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass
class ApplyResult:
    merged: str
    engine: str
    language: str | None
    stats: Stats = field(default_factory=Stats)
    findings: list[Finding] = field(default_factory=list)
    # engine "judge": how far (nats) the returned reading's score beat the next reading's
    margin: float | None = None

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)


class ApplyError(Exception):
    """A request that cannot be served. `code` (an `ErrorCode`) is stable and every front-end maps it."""

    def __init__(self, code: ErrorCode | str, message: str, reasons: list[str] | None = None,
                 readings: list[tuple[str, str]] | None = None, hint: str | None = None,
                 hints: list | None = None):
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.reasons = list(reasons or [])
        # A refusal's readings: (how, whole file) pairs the merge was choosing between, best first.
        self.readings = list(readings or [])
        # A refusal's first line: what to resend (`fastapply.refusal.hint_line`); the message starts
        # with it. `hints`: the `fastapply.refusal.Hint`s it was made from (lines that settle a reading).
        self.hint = hint
        self.hints = list(hints or [])


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
    t, p = req.sampling.temperature, req.sampling.top_p
    if not (math.isfinite(t) and math.isfinite(p)) or t < 0 or not 0 < p <= 1:  # NaN compares false
        raise ApplyError("invalid_argument", "temperature must be >= 0 and top_p in (0, 1]")
    if req.max_output_tokens is not None and req.max_output_tokens <= 0:
        raise ApplyError("invalid_argument", "max_output_tokens must be positive")
    b = req.model_budget_s
    if b is not None and not (math.isfinite(b) and b >= 0):
        raise ApplyError("invalid_argument", "model_budget_s must be a number of seconds >= 0 (0: no limit)")


def decode_utf8(data: bytes, what: str) -> str:
    """Front-ends read bytes; non-UTF-8 input is refused rather than guessed."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ApplyError("invalid_argument", f"{what} is not valid UTF-8 (byte {e.start})") from None


def final_result(events) -> ApplyResult:
    """The ApplyResult that ends an event stream (TextDelta events before it are skipped)."""
    result = None
    for ev in events:
        if isinstance(ev, ApplyResult):
            result = ev
    if result is None:
        raise ApplyError("internal", "the engine ended without a result")
    return result
