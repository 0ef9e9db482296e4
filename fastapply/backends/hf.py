"""Hugging Face transformers backend: a causal LM with a DynamicCache."""

from __future__ import annotations

import torch
from transformers import DynamicCache


def crop_cache(cache: DynamicCache, n: int) -> None:
    """Remove the last `n` tokens from every layer.

    The one place that knows transformers 5.x semantics: `DynamicCache.crop` takes a *negative*
    count of tokens to remove (a positive value is read as an absolute length in 4.x and refused
    by 5.x layers).
    """
    if n > 0:
        cache.crop(-n)


class HFBackend:
    def __init__(self, model, device: torch.device | str = "cpu"):
        self.model = model
        self.device = torch.device(device)
        self.vocab_size = model.config.get_text_config().vocab_size
        self._cache: DynamicCache | None = None
        self._length = 0

    @property
    def length(self) -> int:
        return self._length

    def _new_cache(self) -> DynamicCache:
        # No config on purpose: every layer is then a plain full-length DynamicLayer, which crops
        # exactly. With the config, sliding-window layers (Gemma 3) keep only the last window and
        # refuse to roll back past it. The attention mask still applies the sliding window by
        # position, so the logits are those of the model's own cache.
        return DynamicCache()

    @torch.inference_mode()
    def prefill(self, ids: list[int]) -> torch.Tensor:
        self._cache = self._new_cache()
        self._length = 0
        x = torch.tensor([ids], device=self.device)
        out = self.model(input_ids=x, past_key_values=self._cache, use_cache=True, logits_to_keep=1)
        self._length = len(ids)
        return out.logits[0, -1].float()

    @torch.inference_mode()
    def forward(self, ids: list[int]) -> torch.Tensor:
        assert self._cache is not None, "prefill first"
        x = torch.tensor([ids], device=self.device)
        pos = torch.arange(self._length, self._length + len(ids), device=self.device)
        out = self.model(input_ids=x, past_key_values=self._cache, use_cache=True, cache_position=pos)
        self._length += len(ids)
        return out.logits[0].float()

    def crop(self, n: int) -> None:
        if n <= 0:
            return
        assert self._cache is not None and n <= self._length
        crop_cache(self._cache, n)
        self._length -= n

    def release(self) -> None:
        self._cache = None
        self._length = 0
