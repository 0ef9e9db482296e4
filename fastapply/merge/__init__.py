"""Structural merge of a lazy edit snippet into a file (tree-sitter, with a line-anchor fallback).

Pure text in, text out; no torch. See `structural_merge`.
"""

from __future__ import annotations

from dataclasses import replace

from fastapply.languages import detect_language
from fastapply.merge.core import merge
from fastapply.merge.readings import lone_placement, read_all
from fastapply.merge.result import CONFIDENCE_ONE_LEFT, MergeResult, Reading

__all__ = ["MergeResult", "Reading", "structural_merge"]


def structural_merge(original: str, update: str, language: str | None = None, path: str | None = None) -> MergeResult:
    """Merge `update` (a lazy snippet) into `original`, or refuse with reasons.

    Never guesses: an unparsable original, a snippet region that matches nothing, or two equally
    good placements give `MergeResult(text=None, reasons=[...])`. Every accepted merge passes the
    error-level checks of `fastapply.validate.validate`. `readings` holds the accepted file, or on
    a refusal the files the merge was choosing between (see `merge/readings.py`).
    """
    result = merge(original, update, language, path)
    if result.ok:
        return replace(result, readings=(Reading(result.text, result.method or "merge"),))
    lang = result.language or detect_language(language, path, original)
    found = read_all(original, update, lang, path)
    lone = lone_placement(found, result.check, original, update, lang)
    if lone is not None:  # the other placements define something twice: one reading is left
        reading, why = lone
        doubts = [why] + [f"the merge's doubt, answered so: {r}" for r in result.reasons]
        return MergeResult(reading.text, CONFIDENCE_ONE_LEFT, doubts, lang, "line-anchor", readings=(reading,))
    return replace(result, readings=found.kept)
