"""A backend that replays a known output: a perfect model of one file, with no weights.

Row j of a forward pass predicts the target token at that output position, so a drafter driven
against it sees exactly which drafts a perfect model would accept. `evals.drafting` uses it to
measure drafting quality apart from any model's weakness; tests use it to check the verify loop.
"""

from __future__ import annotations

import torch


class ReplayBackend:
    def __init__(self, target: list[int], end_token: int):
        self.target = list(target) + [end_token]
        self.vocab_size = max(self.target) + 1
        self._prompt = 0
        self._length = 0

    @property
    def length(self) -> int:
        return self._length

    def _next(self, out_index: int) -> int:
        return self.target[min(out_index, len(self.target) - 1)]

    def _onehot(self, tokens: list[int]) -> torch.Tensor:
        x = torch.zeros(len(tokens), self.vocab_size)
        x[torch.arange(len(tokens)), torch.tensor(tokens)] = 1.0
        return x

    def prefill(self, ids: list[int]) -> torch.Tensor:
        self._prompt = self._length = len(ids)
        return self._onehot([self._next(0)])[0]

    def forward(self, ids: list[int]) -> torch.Tensor:
        # The cache holds prompt + output[:-1]; ids[0] is output[m], row j predicts output[m + 1 + j].
        m = self._length - self._prompt
        self._length += len(ids)
        return self._onehot([self._next(m + 1 + j) for j in range(len(ids))])

    def crop(self, n: int) -> None:
        self._length -= n

    def release(self) -> None:
        self._length = self._prompt = 0
