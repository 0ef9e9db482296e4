"""One path for every request: check -> prepare (language, structural draft) -> decode -> validate.

`engine` picks the route: `structural` (the merge itself, or a refusal), `speculative` (the model,
drafted by the structural merge, the original and the snippet), `plain` (the model, no drafts).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import nullcontext

from fastapply.edit_checks import check_edit_applied
from fastapply.languages import detect_language
from fastapply.merge import structural_merge
from fastapply.types import (
    ApplyError,
    ApplyRequest,
    ApplyResult,
    Finding,
    ShouldStop,
    Stats,
    StreamEvent,
    TextDelta,
    check_request,
)
from fastapply.validate import validate


def draft_sources(req: ApplyRequest, language: str | None) -> tuple[list[tuple[str, str]], list[Finding]]:
    """The speculative engine's draft texts, best first: the structural merge when it is sure of
    itself (it then already holds the edit), the caller's prediction, then the original file and
    the snippet for re-sync."""
    merge = structural_merge(req.original, req.update, language, req.path)
    sources: list[tuple[str, str]] = []
    notes: list[Finding] = []
    if merge.ok:
        sources.append(("structural", merge.text))
    else:
        notes.append(Finding("draft", "structural draft unavailable: " + "; ".join(merge.reasons), "info"))
    sources += prediction_source(req)
    sources += [("original", req.original), ("update", req.update)]
    return sources, notes


def prediction_source(req: ApplyRequest) -> list[tuple[str, str]]:
    """The caller's predicted file as a draft source; the plain engine drafts from nothing else."""
    return [("prediction", req.prediction)] if req.prediction else []


def run(get_model: Callable[[], object], model_lock: threading.Lock, req: ApplyRequest,
        should_stop: ShouldStop | None) -> Iterator[StreamEvent]:
    """Serve one request. `get_model()` gives the model engine (loading it on first use; never
    called by the structural engine). An engine that is not `concurrent` serves one request at a
    time: concurrent callers queue on `model_lock`."""
    check_request(req)
    language = detect_language(req.language, req.path, req.original)
    if req.engine == "structural":
        merge = structural_merge(req.original, req.update, language, req.path)
        if not merge.ok:
            raise ApplyError("refused", "structural merge refused: " + "; ".join(merge.reasons), merge.reasons)
        yield TextDelta(merge.text)
        yield ApplyResult(merge.text, "structural", language, Stats(),
                          [Finding("doubt", r, "info") for r in merge.reasons])
        return

    notes: list[Finding] = []
    sources = None
    if req.engine == "speculative":
        sources, notes = draft_sources(req, language)
    elif req.prediction:
        sources = prediction_source(req)
    model = get_model()
    stats = Stats()
    merged, findings = "", []
    with nullcontext() if getattr(model, "concurrent", False) else model_lock:
        for ev in model.generate(req, sources, should_stop, stats):
            if isinstance(ev, TextDelta):
                yield ev
            else:
                merged, findings = ev
    if merged.strip():
        # A model's file can parse and still be wrong: the edit ignored, or code it never touched gone.
        findings += validate(req.original, req.update, merged, language)
        findings += check_edit_applied(req.original, req.update, merged)
    else:
        findings.append(Finding("empty", "the model returned an empty file"))
    yield ApplyResult(merged, req.engine, language, stats, notes + findings)
