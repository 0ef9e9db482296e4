"""Scoring continuations on any `Backend`: the log-probability a model gives each of several
answers after one shared prompt (the judge's model half, `fastapply.judge`).

The prompt is prefilled once; each answer is fed on top of it in chunks and cropped away again,
so the prompt's KV cache serves every answer.
"""

from __future__ import annotations

import torch

from fastapply.backends.base import Backend, prefill_in_passes
from fastapply.types import ApplyError, ShouldStop

# Tokens per forward pass while scoring: each pass materialises [chunk, vocab] fp32 logits
# (Qwen2.5: 152k entries, 0.6 MB per token; 256 tokens: ~155 MB).
SCORE_CHUNK = 256


def score_continuations(backend: Backend, prefix: list[int], continuations: list[list[int]],
                        chunk: int = SCORE_CHUNK, should_stop: ShouldStop | None = None) -> list[float]:
    """Each continuation's sum of token log-probabilities after `prefix` (nats). Every
    continuation must be non-empty. `should_stop()` is asked before every forward pass: true
    raises ApplyError('cancelled'). The backend's sequence is released at the end, either way."""

    def stopped() -> ApplyError:
        return ApplyError("cancelled", "scoring stopped: the request was cancelled or its model budget ran out")

    def check() -> None:
        if should_stop is not None and should_stop():
            raise stopped()

    try:
        check()
        first = torch.log_softmax(prefill_in_passes(backend, prefix, should_stop, stopped).float(), -1)
        scores = []
        for cont in continuations:
            total = float(first[cont[0]])
            feed, targets = cont[:-1], cont[1:]
            for i in range(0, len(feed), chunk):
                check()
                rows = backend.forward(feed[i:i + chunk]).float()  # row j predicts feed[i + j + 1]
                want = torch.tensor(targets[i:i + chunk], device=rows.device)
                total += float(torch.log_softmax(rows, -1).gather(-1, want[:, None]).sum())
            backend.crop(len(feed))
            scores.append(total)
        return scores
    finally:
        backend.release()
