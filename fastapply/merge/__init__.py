"""Structural merge of a lazy edit snippet into a file (tree-sitter, with a line-anchor fallback).

Pure text in, text out; no torch. See `structural_merge`.
"""

from __future__ import annotations

from fastapply.merge.core import merge
from fastapply.merge.result import MergeResult

__all__ = ["MergeResult", "structural_merge"]


def structural_merge(original: str, update: str, language: str | None = None, path: str | None = None) -> MergeResult:
    """Merge `update` (a lazy snippet) into `original`, or refuse with reasons.

    Never guesses: an unparsable original, a snippet region that matches nothing, or two equally
    good placements give `MergeResult(text=None, reasons=[...])`. Every accepted merge passes the
    error-level checks of `fastapply.validate.validate`.
    """
    return merge(original, update, language, path)
