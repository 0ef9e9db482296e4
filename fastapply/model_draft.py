"""A small model as a drafter (`--draft-model`): greedy tokens from its own backend and cache.

The method speculative decoding started from (Leviathan et al. 2023; Chen et al. 2023): a small
model of the same family proposes, the large one verifies, and the output is unchanged. Here it
extends the file's drafts where they have nothing (new code) or stop early (`draft.FileModelDrafter`).

Its cache follows the accepted output: the prompt is prefilled once per request (the same prompt
ids as the target's), and before each proposal the cache is cropped back to the longest prefix it
shares with output + file draft, then fed what it lacks in one chunk. Tokens it drafted and the
verifier kept are never computed twice; tokens it drafted past a rejection are cropped. The
greedy token (and its probability) after every cached position is kept, so a crop never needs a
forward pass to know what comes next.

A draft model must share the target's tokenizer (`check_same_vocab`): draft token ids are target
token ids.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from fastapply.backends.base import Backend
from fastapply.draft import ModelDraftLength
from fastapply.models import DEFAULT_MODEL, LoadedModel, check_model_name, load_model, load_tokenizer
from fastapply.types import ApplyError, Stats

# Stop a run after a token the draft model gives less than this probability (Hugging Face's
# default `assistant_confidence_threshold`): past an unsure token its guesses are mostly wasted.
CONFIDENCE = 0.4
# The longest run the model drafts (its `ModelDraftLength` cap); each token is one draft-model step.
MODEL_K_MAX = 32


def cache_plan(cached: Sequence[int], context: Sequence[int]) -> tuple[int, list[int]]:
    """(tokens to crop from the cache's end, tokens to feed after) so that a cache holding prompt +
    `cached` holds prompt + `context`: keep the longest common prefix, drop the rest, add the new.

    >>> cache_plan([5, 6, 7, 8], [5, 6, 9])   # 7, 8 were drafted past a rejection; 9 is the model's
    (2, [9])
    >>> cache_plan([5, 6], [5, 6, 7, 8])      # the output ran ahead of the cache (the file drafted)
    (0, [7, 8])
    """
    n = 0
    limit = min(len(cached), len(context))
    while n < limit and cached[n] == context[n]:
        n += 1
    return len(cached) - n, list(context[n:])


class ModelDrafter:
    """Greedy drafts from a small model (a `Drafter`, and the `Continuer` of `FileModelDrafter`).

    `backend` is the draft model's own `Backend`; `prompt_ids` the request's prompt (target ids).
    `vocab` limits the argmax to ids the target knows (a padded embedding may have more rows).
    Time spent in the draft model goes to `stats` (`draft_model_s`, one-token steps apart).
    """

    def __init__(self, backend: Backend, prompt_ids: Sequence[int], k_max: int = MODEL_K_MAX,
                 confidence: float = CONFIDENCE, vocab: int | None = None, stats: Stats | None = None):
        self.backend = backend
        self.prompt = list(prompt_ids)
        self.length = ModelDraftLength(hi=max(1, min(k_max, MODEL_K_MAX)))
        self.confidence = confidence
        self.vocab = vocab
        self.stats = stats if stats is not None else Stats()
        self.output: list[int] = []  # the verified output so far
        self.cached: list[int] = []  # tokens after the prompt in the draft model's cache
        self.greedy: list[tuple[int, float]] = []  # greedy[i]: (next token, its prob) after prompt + cached[:i]
        self.prefills = 0
        self.last_segments: list[tuple[str, int]] = []

    def propose(self, max_k: int) -> list[int]:
        draft = self.propose_after([], max_k)
        self.last_segments = [("model", len(draft))] if draft else []
        return draft

    def propose_after(self, prefix: Sequence[int], max_k: int) -> list[int]:
        k = min(self.length.k, max_k)
        if k <= 0:
            return []
        self._follow(self.output + list(prefix))
        draft: list[int] = []
        while True:
            token, prob = self.greedy[-1]
            draft.append(token)
            if len(draft) >= k or prob < self.confidence:
                return draft
            self._feed([token])

    def update(self, new_tokens: Sequence[int]) -> None:
        # Lazy: the cache catches up at the next proposal, so a request the file drafts alone never
        # pays for the draft model.
        self.output.extend(new_tokens)

    def observe(self, drafted: int, accepted: int) -> None:
        self.length.observe(drafted, accepted)

    def _follow(self, context: list[int]) -> None:
        """Make the cache hold prompt + context (prefill once, then crop and feed)."""
        if self.prefills == 0:
            t0 = time.perf_counter()
            logits = self.backend.prefill(self.prompt)
            self.prefills += 1
            self.greedy = [self._greedy(logits[None])[0]]
            self.stats.draft_model_s += time.perf_counter() - t0
        drop, feed = cache_plan(self.cached, context)
        if drop:
            self.backend.crop(drop)
            del self.cached[len(self.cached) - drop:]
            del self.greedy[len(self.cached) + 1:]
        if feed:
            self._feed(feed)

    def _feed(self, tokens: list[int]) -> None:
        t0 = time.perf_counter()
        rows = self._greedy(self.backend.forward(tokens))
        spent = time.perf_counter() - t0
        self.cached.extend(tokens)
        self.greedy.extend(rows)
        self.stats.draft_model_s += spent
        if len(tokens) == 1:
            self.stats.draft_model_steps += 1
            self.stats.draft_model_step_s += spent

    def _greedy(self, logits: torch.Tensor) -> list[tuple[int, float]]:
        if self.vocab is not None:
            logits = logits[:, :self.vocab]
        probs = torch.softmax(logits.float(), dim=-1)
        best, ids = probs.max(dim=-1)
        return list(zip(ids.tolist(), best.tolist()))


def check_same_vocab(target: dict[str, int], draft: dict[str, int], target_name: str, draft_name: str) -> None:
    """Refuse a draft model whose tokenizer maps any token to another id than the target's."""
    if target == draft:
        return
    differ = sum(1 for tok, i in target.items() if draft.get(tok) != i) + sum(1 for tok in draft if tok not in target)
    raise ApplyError("invalid_argument", f"--draft-model {draft_name}: its tokenizer is not {target_name}'s "
                                         f"({differ} of {len(target)} tokens differ); a draft model proposes "
                                         "token ids, so the vocabularies must agree (use a model of the same family)")


def check_draft_pair(model: str | None, draft: str) -> None:
    """What a front-end checks at start, before any request: the draft model's name, and that its
    tokenizer is the target's (tokenizers only; no weights are loaded)."""
    from transformers import AutoTokenizer

    from fastapply.models import DEFAULT_MODEL, resolve_weights

    check_model_name(draft)
    vocabs = [AutoTokenizer.from_pretrained(resolve_weights(name)[1]).get_vocab() for name in (model, draft)]
    check_same_vocab(vocabs[0], vocabs[1], model or DEFAULT_MODEL, draft)


@dataclass
class DraftModel:
    """A loaded draft model and its backend; one `ModelDrafter` per request shares the backend
    (the engine serves one request at a time)."""

    name: str
    loaded: LoadedModel
    backend: Backend
    vocab: int

    def drafter(self, prompt_ids: Sequence[int], k_max: int, stats: Stats) -> ModelDrafter:
        return ModelDrafter(self.backend, prompt_ids, k_max=k_max, vocab=self.vocab, stats=stats)


def check_draft_tokenizer(target_name: str | None, draft_name: str) -> None:
    """Refuse a draft model of another family from the two tokenizers alone, before either model's
    weights load (or convert: a first use converts a GGUF for a minute). A tokenizer that cannot be
    read here is left to the load, which says why."""
    target_spec, draft_spec = check_model_name(target_name), check_model_name(draft_name)
    if target_spec is not None and draft_spec is not None and target_spec.tokenizer and draft_spec.tokenizer:
        if target_spec.tokenizer != draft_spec.tokenizer:  # the specs say so: nothing to read
            raise ApplyError("invalid_argument", f"--draft-model {draft_name}: its tokenizer ({draft_spec.tokenizer}) "
                                                 f"is not {target_spec.name}'s ({target_spec.tokenizer}); a draft model "
                                                 "proposes token ids, so the vocabularies must agree (use a model of "
                                                 "the same family)")
        return  # (the same family: the load compares the vocabularies themselves)
    try:
        target, draft = load_tokenizer(target_name), load_tokenizer(draft_name)
    except ApplyError:
        raise
    except Exception:
        return
    check_same_vocab(target.get_vocab(), draft.get_vocab(), (target_name or DEFAULT_MODEL), draft_name)


def load_draft_model(name: str, target: LoadedModel, backend_factory: Callable[..., Backend]) -> DraftModel:
    """Load `name` on the target's device and dtype, or fail with one line naming it.

    A draft model that cannot load fails the engine's load (the command, or a server's model
    health) instead of serving without it: asking for one is a choice of configuration, and a
    silent fallback would show only as a slower service.
    """
    check_model_name(name)
    try:
        loaded = load_model(name, device=target.device, dtype=target.dtype)
    except ApplyError as e:
        raise ApplyError(e.code, f"--draft-model {name}: {e.message}") from None
    except Exception as e:  # weights missing or corrupt, out of memory: one line, not a traceback
        raise ApplyError("unavailable", f"--draft-model {name} could not be loaded ({type(e).__name__}: {e}); "
                                        "fix it or run without --draft-model") from None
    check_same_vocab(target.tokenizer.get_vocab(), loaded.tokenizer.get_vocab(), target.spec.name, name)
    vocab = min(target.model.config.get_text_config().vocab_size, loaded.model.config.get_text_config().vocab_size)
    return DraftModel(name, loaded, backend_factory(loaded.model, loaded.device), vocab)
