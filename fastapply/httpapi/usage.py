"""Token usage for OpenAI's `usage` object and Relace's.

The model engines count their own tokens (`Stats`): the prompt they read, the tokens they wrote,
and how many draft tokens the verifier accepted (OpenAI's `accepted_prediction_tokens`) or
rejected (`rejected_prediction_tokens` = drafted - accepted).

The structural engine runs no model, so it has no tokens of its own. It is counted as the model
would have been: the model spec's prompt around the original, update and instruction, and the
merged file as the completion, with the spec's tokenizer loaded alone (no weights) on first use.
When that tokenizer cannot be loaded, the answer carries no `usage` rather than invented numbers.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from fastapply.api import ApplyRequest, ApplyResult

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
        prompt_ids = spec.prompt_ids(tok, req.original, req.update, req.instruction)  # as the engines count
        return Usage(len(prompt_ids), len(tok(result.merged, add_special_tokens=False)["input_ids"]))


def usage_of(req: ApplyRequest, result: ApplyResult, counter: TokenCounter | None) -> Usage | None:
    counted = model_usage(result)
    if counted is None and counter is not None:
        counted = counter.usage(req, result)
    return counted
