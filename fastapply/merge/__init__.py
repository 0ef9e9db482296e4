"""Structural merge of a lazy edit snippet into a file (tree-sitter, with a line-anchor fallback).

Pure text in, text out; no torch. See `structural_merge`.
"""

from __future__ import annotations

from dataclasses import replace

from fastapply.languages import detect_language
from fastapply.merge import deadline
from fastapply.merge.core import INPUT_CHECK, merge
from fastapply.merge.form import BOM
from fastapply.merge.intake import Intake, Refused, read_request
from fastapply.merge.readings import lone_placement, read_all
from fastapply.merge.result import CONFIDENCE_ONE_LEFT, MergeResult, Reading

__all__ = ["MergeResult", "Reading", "merge_text", "structural_merge"]

# The refusal past the merge's deadline (deadline.py): what to send instead.
TOO_COSTLY = (f"Send a smaller snippet or a section of the file: this one was too costly to place within "
              f"{deadline.MERGE_SECONDS:g} s, and the merge stopped rather than guess")


def structural_merge(original: str, update: str, language: str | None = None, path: str | None = None,
                     section: bool = False) -> MergeResult:
    """Merge `update` (a lazy snippet) into `original`, or refuse with reasons.

    Never guesses: an unparsable original, a snippet region that matches nothing, or two equally
    good placements give `MergeResult(text=None, reasons=[...])`. Every accepted merge passes the
    error-level checks of `fastapply.validate.validate`. `readings` holds the accepted file, or on
    a refusal the files the merge was choosing between (see `merge/readings.py`). The request is
    read first (`merge/intake.py`: fences, marker wordings, indentation, line endings); `notes` says
    what that did, and the answer and readings come back in the file's own form.

    `section`: the original is a section of a file that the client splices the answer back into
    (MCP clients): both its edges are cuts, so nothing may be written beyond its first or last line
    and the snippet may not restate what lies beyond them (`merge/fragment.py`).
    """
    lang = detect_language(language, path, original.removeprefix(BOM))
    try:
        intake = read_request(original, update, lang)
    except Refused as e:
        return MergeResult(None, 0.0, [str(e)], lang, check=INPUT_CHECK)
    with deadline.limit():
        try:
            result = _merged(intake.original, intake.update, lang, path, section)
        except deadline.TooCostly:
            result = MergeResult(None, 0.0, [TOO_COSTLY], lang, check=INPUT_CHECK)
    return _restored(result, intake)


def merge_text(original: str, update: str, language: str | None = None, path: str | None = None,
               section: bool = False) -> str | None:
    """The merged file, or None on a refusal (no readings: for callers that only need a sure answer)."""
    lang = detect_language(language, path, original.removeprefix(BOM))
    try:
        intake = read_request(original, update, lang)
    except Refused:
        return None
    with deadline.limit():
        try:
            result = merge(intake.original, intake.update, lang, path, section)
        except deadline.TooCostly:
            return None
    return _restored(result, intake).text


def _merged(original: str, update: str, lang: str | None, path: str | None, section: bool) -> MergeResult:
    result = merge(original, update, lang, path, section)
    if result.ok:
        return replace(result, readings=(Reading(result.text, result.method or "merge"),))
    lang = result.language or lang
    found = read_all(original, update, lang, path, section=section)
    lone = lone_placement(found, result.check, original, update, lang)
    if lone is not None:  # the other placements define something twice: one reading is left
        reading, why = lone
        doubts = [why] + [f"the merge's doubt, answered so: {r}" for r in result.reasons]
        return MergeResult(reading.text, CONFIDENCE_ONE_LEFT, doubts, lang, "line-anchor", readings=(reading,))
    return replace(result, readings=found.kept)


def _restored(result: MergeResult, intake: Intake) -> MergeResult:
    """The merge's answer and readings in the file's own form, with the intake's notes."""
    form = intake.form
    if form.plain and not intake.notes:
        return result
    def back(text: str) -> str:
        return text if form.plain else form.restore(text, intake.original)
    return replace(result, text=None if result.text is None else back(result.text),
                   readings=tuple(replace(r, text=back(r.text)) for r in result.readings), notes=intake.notes)
