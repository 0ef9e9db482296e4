"""Token usage for OpenAI's `usage` object and Relace's.

The model engines count their own tokens (`Stats`): the prompt they read, the tokens they wrote,
and how many draft tokens the verifier accepted (OpenAI's `accepted_prediction_tokens`) or
rejected (`rejected_prediction_tokens` = drafted - accepted).

The structural engine runs no model, so it has no tokens of its own. It is counted as the model
would have been, with the spec's tokenizer loaded alone (no weights) on first use: the merged file
as the completion; as the prompt, the spec's prompt with empty blocks plus the original, the update
and the instruction counted apart (within a few tokens of the whole prompt's count: the tokens at
the seams may merge differently). Counted apart, each text's count is remembered by its digest
(`CountCache`), so what repeats is counted once: a file re-sent after a refusal, and in an editing
session the file the last answer returned, which is the next request's original. When the
tokenizer cannot be loaded, the answer carries no counts rather than invented numbers.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from fastapply.api import ApplyRequest, ApplyResult
from fastapply.httpapi.cache import DigestCache

log = logging.getLogger("fastapply.httpapi")


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    accepted_prediction_tokens: int | None = None  # None: no drafter ran (the structural engine)
    rejected_prediction_tokens: int | None = None

    def as_dict(self) -> dict:
        d = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
             "total_tokens": self.prompt_tokens + self.completion_tokens}
        if self.accepted_prediction_tokens is not None:
            d["completion_tokens_details"] = {"accepted_prediction_tokens": self.accepted_prediction_tokens,
                                              "rejected_prediction_tokens": self.rejected_prediction_tokens}
        return d


def model_usage(result: ApplyResult) -> Usage | None:
    """The model engines' own counts; None when no model ran."""
    s = result.stats
    if s.forward_passes == 0:
        return None
    return Usage(s.prompt_tokens, s.output_tokens, s.accepted_tokens, s.drafted_tokens - s.accepted_tokens)


COUNT_CACHE_TEXTS = 4096  # texts whose token counts are remembered (about 100 bytes each)


class TokenCounter:
    """Counts a model-free result's tokens with the model spec's tokenizer (see the module docstring).

    `model_name` is the server's `--model` (None: the default spec). Thread-safe; the tokenizer is
    loaded once, on the first count or by `warm()`.
    """

    def __init__(self, model_name: str | None = None):
        self.model_name = model_name
        self._lock = threading.Lock()
        self._loaded: tuple[object, object] | None = None  # (spec, tokenizer)
        self._failed = False
        self._counts = DigestCache(COUNT_CACHE_TEXTS)
        self._overhead: dict[bool, int] = {}  # has an instruction -> the prompt's tokens around the blocks

    def warm(self) -> None:
        """Load the tokenizer in the background so that the first request does not wait for it."""
        threading.Thread(target=self._get, name="fastapply-tokenizer", daemon=True).start()

    def _get(self):
        with self._lock:
            if self._loaded is None and not self._failed:
                try:
                    self._loaded = self._load()
                except Exception as e:  # usage is not counted; the merge itself does not need a tokenizer
                    self._failed = True
                    log.warning("no tokenizer for usage counts of model-free answers: %s", e)
            return self._loaded

    def _load(self):
        # One thread at a time imports transformers and resolves the weights (converting a GGUF
        # once): the server's model preload runs beside this (fastapply.backends.LOAD_LOCK).
        from fastapply.backends import LOAD_LOCK

        with LOAD_LOCK:
            from fastapply.models import resolve_weights

            spec, path = resolve_weights(self.model_name)
            from transformers import AutoTokenizer

            return spec, AutoTokenizer.from_pretrained(path)

    def usage(self, req: ApplyRequest, result: ApplyResult) -> Usage | None:
        loaded = self._get()
        if loaded is None:
            return None
        spec, tok = loaded
        instruction = req.instruction or ""
        texts = [req.original, req.update, result.merged] + ([instruction] if instruction else [])
        counts = self.counts(tok, texts)
        return Usage(self._around(spec, tok, bool(instruction)) + sum(counts) - counts[2], counts[2])

    def counts(self, tok, texts: list[str]) -> list[int]:
        """Each text's token count: remembered ones from the cache, the rest in one batch."""
        keys = [self._counts.key(t) for t in texts]
        got = [self._counts.get(k) for k in keys]
        missing = [i for i, n in enumerate(got) if n is None]
        for i, n in zip(missing, _tokens(tok, [texts[i] for i in missing]), strict=True):
            got[i] = n
            self._counts.put(keys[i], n)
        return got

    def _around(self, spec, tok, instruction: bool) -> int:
        """The spec's prompt tokens around the blocks (its template, the system prompt)."""
        if instruction not in self._overhead:
            probe = "x" if instruction else None
            self._overhead[instruction] = len(spec.prompt_ids(tok, "", "", probe)) - (_tokens(tok, ["x"])[0] if probe else 0)
        return self._overhead[instruction]


def _tokens(tok, texts: list[str]) -> list[int]:
    if not texts:
        return []
    backend = getattr(tok, "backend_tokenizer", None)  # the fast tokenizer itself: one batch, no Python wrapping
    if backend is not None:
        return [len(e.ids) for e in backend.encode_batch(texts, add_special_tokens=False)]
    return [len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]


def usage_of(req: ApplyRequest, result: ApplyResult, counter: TokenCounter | None) -> Usage | None:
    counted = model_usage(result)
    if counted is None and counter is not None:
        counted = counter.usage(req, result)
    return counted
