"""What the structural merge returns: the merged text, or a refusal with its reasons."""

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
