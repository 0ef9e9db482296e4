"""The narrow interface between the decode loop and a model.

The decode loop only needs: start a sequence (prefill), score a chunk of tokens appended to the
sequence, and drop tokens from the end of the cache. A vLLM or compiled CUDA backend implements
the same three calls; the backend never knows about files, markers or prompts.
"""

from __future__ import annotations

from collections.abc import Callable
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


# Tokens per forward pass of a prompt prefilled under a `should_stop` (a client that may leave, a
# model budget): a stop waits for one such pass at most. On the 2-core CPU a 256-token pass of the
# 0.5B model takes about 1 s; a whole 3,700-token prompt took 11.4 s in one pass (evals/RESULTS.md,
# "auto in bounded time").
PREFILL_PASS = 256


def prefill_in_passes(backend: Backend, ids: list[int], should_stop: Callable[[], bool] | None,
                      on_stop: Callable[[], Exception], chunk: int | None = None) -> torch.Tensor:
    """`backend.prefill(ids)`, in passes of `chunk` tokens with `should_stop()` asked before each
    pass after the first (true: `on_stop()` is raised). The same cache and next-token logits; the
    numbers may differ in the last bits, as between any two pass shapes. Without a `should_stop` it
    is one pass, as before."""
    chunk = chunk or PREFILL_PASS
    if should_stop is None or len(ids) <= chunk:
        return backend.prefill(ids)
    logits = backend.prefill(ids[:chunk])
    for i in range(chunk, len(ids), chunk):
        if should_stop():
            raise on_stop()
        logits = backend.forward(ids[i:i + chunk])[-1]
    return logits
