"""The narrow interface between the decode loop and a model.

The decode loop only needs: start a sequence (prefill), score a chunk of tokens appended to the
sequence, and drop tokens from the end of the cache. A vLLM or compiled CUDA backend implements
the same three calls; the backend never knows about files, markers or prompts.
"""

from __future__ import annotations

from typing import Protocol

import torch


class Backend(Protocol):
    vocab_size: int

    def prefill(self, ids: list[int]) -> torch.Tensor:
        """Start a new sequence with `ids`; return the logits [vocab] that predict the next token."""
        ...

    def forward(self, ids: list[int]) -> torch.Tensor:
        """Append `ids` to the sequence; return logits [len(ids), vocab], row i predicting the token after ids[i]."""
        ...

    def crop(self, n: int) -> None:
        """Drop the last `n` tokens from the sequence (rejected draft tokens)."""
        ...

    @property
    def length(self) -> int:
        """Tokens currently in the sequence (cache)."""
        ...

    def release(self) -> None:
        """Free the cache (end of request, cancellation)."""
        ...
