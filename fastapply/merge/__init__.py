"""Structural merge of a lazy edit snippet into a file (tree-sitter, with a line-anchor fallback).

Pure text in, text out; no torch. See `structural_merge`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MergeResult:
    text: str | None  # the merged file; None when the merge refused
    confidence: float  # 0..1
    reasons: list[str] = field(default_factory=list)  # why it refused, or doubts when accepted
    language: str | None = None
    method: str = ""  # "tree-sitter", "line-anchor", ...

    @property
    def ok(self) -> bool:
        return self.text is not None


def structural_merge(original: str, update: str, language: str | None = None, path: str | None = None) -> MergeResult:
    """Merge `update` (a lazy snippet) into `original`, or refuse with reasons.

    Never guesses: an unparsable original, a snippet region that matches nothing, or two equally
    good placements give `MergeResult(text=None, reasons=[...])`. Every accepted merge passes the
    error-level checks of `fastapply.validate.validate`.
    """
    from fastapply.merge.core import merge

    return merge(original, update, language, path)
