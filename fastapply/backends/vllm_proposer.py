"""fastapply's drafter as vLLM's custom proposer (`speculative_config.method = "custom_class"`).

vLLM gives a proposer, per batch row, the row's token ids (prompt + output so far) and nothing
else: no request id, no side data. `ProposerCore` (pure, no vLLM) recovers the request from the
prompt text through the model spec (`ModelSpec.parse_prompt`), renders it again to find exactly
where the prompt ends, and keeps one `SourceDrafter` per request, cached by a hash of the prompt's
tokens. Its sources are the pipeline's (`pipeline.draft_sources`): the structural merge first, then
the original and the snippet, then the output's own history. `FastApplyProposer` is the thin vLLM
shell (a constructor taking vLLM's config, `load_model`, `propose`).

Speculation never changes the output (vLLM verifies every drafted token), so whatever this
module gets wrong costs speed only.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fastapply.draft import SourceDrafter
from fastapply.languages import detect_language
from fastapply.models import ModelSpec
from fastapply.pipeline import draft_sources
from fastapply.types import ApplyRequest

# Tokens of a row's start that index the cache; rows sharing them are told apart by the full prompt hash.
HEAD_TOKENS = 64
# Requests whose drafter state is kept (least recently used dropped first); a dropped one that is
# still running is rebuilt from its row on its next step.
MAX_REQUESTS = 256
# The key of the additional_config entry that carries this proposer's settings through vLLM.
CONFIG_KEY = "fastapply"


def _digest(tokens: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(tokens, dtype=np.int64).tobytes(), digest_size=16).digest()


@dataclass
class _Request:
    """One request's drafting state. `drafter` is None for a row that is not this spec's prompt
    (nothing is drafted for it); then `key_len` is the row length when it was first seen."""

    key_len: int
    key: bytes
    sources: list[tuple[str, list[int]]] | None
    drafter: SourceDrafter | None = None
    fed: int = 0  # output tokens already given to the drafter
    last_draft: list[int] = field(default_factory=list)


class ProposerCore:
    """Draft tokens for rows of prompt + output token ids. Pure: a tokenizer and a spec, no vLLM.

    `tokenizer(text, add_special_tokens=...)["input_ids"]` and `tokenizer.decode(ids,
    skip_special_tokens=True)` are all it uses (a Hugging Face tokenizer in the engine).
    """

    def __init__(self, spec: ModelSpec, tokenizer, k_max: int):
        self.spec = spec
        self.tokenizer = tokenizer
        self.k_max = k_max
        self._requests: OrderedDict[tuple[bytes, int, bytes], _Request] = OrderedDict()

    def propose(self, row: Sequence[int] | np.ndarray, k: int | None = None) -> list[int]:
        """At most `k` (default k_max) draft tokens to follow `row` (prompt + output so far)."""
        row = np.asarray(row, dtype=np.int64)
        k = self.k_max if k is None else min(k, self.k_max)
        state = self._lookup(row) or self._start(row)
        if state.drafter is None or k <= 0:
            return []
        self._advance(state, row[state.key_len:].tolist())
        state.last_draft = state.drafter.propose(k)
        return list(state.last_draft)

    @property
    def cached_requests(self) -> int:
        return len(self._requests)

    def _lookup(self, row: np.ndarray) -> _Request | None:
        heads: dict[int, bytes] = {}  # a row's head digest per head length (short keys have short heads)
        for (head, key_len, key), state in self._requests.items():
            n = min(HEAD_TOKENS, key_len)
            if len(row) < key_len:
                continue
            if n not in heads:
                heads[n] = _digest(row[:n])
            if heads[n] == head and _digest(row[:key_len]) == key:
                self._requests.move_to_end((head, key_len, key))
                return state
        return None

    def _start(self, row: np.ndarray) -> _Request:
        """A row not seen before: parse its prompt, check it renders to the same tokens, build its drafter."""
        prompt, sources = self._parse(row)
        key_len = len(prompt) if prompt is not None else len(row)
        state = _Request(key_len, _digest(row[:key_len]), sources)
        if sources is not None:
            state.drafter = SourceDrafter(sources, k_max=self.k_max)
        self._requests[(_digest(row[:min(HEAD_TOKENS, key_len)]), key_len, state.key)] = state
        while len(self._requests) > MAX_REQUESTS:
            self._requests.popitem(last=False)
        return state

    def _parse(self, row: np.ndarray) -> tuple[list[int] | None, list[tuple[str, list[int]]] | None]:
        """(prompt token ids, the draft sources as token ids), or (None, None) for a foreign row."""
        parts = self.spec.parse_prompt(self.tokenizer.decode(row.tolist(), skip_special_tokens=True))
        if parts is None:
            return None, None
        original, update, instruction = parts
        prompt = self.spec.prompt_ids(self.tokenizer, original, update, instruction)
        if len(prompt) > len(row) or row[:len(prompt)].tolist() != prompt:
            return None, None  # split at the wrong place (the file holds the framing's lines): draft nothing
        req = ApplyRequest(original, update, instruction)
        # The request's own language hint is not in the prompt: detect it from the file, as the
        # pipeline does without a hint. It only steers the structural draft.
        sources, _ = draft_sources(req, detect_language(None, None, original))
        return prompt, [(name, self.tokenizer(text, add_special_tokens=False)["input_ids"]) for name, text in sources]

    def _advance(self, state: _Request, out: list[int]) -> None:
        """Feed the drafter the output tokens it has not seen, and the verifier's verdict on its last draft."""
        assert state.drafter is not None
        if len(out) < state.fed:  # the row went back: start this request's drafter again
            state.drafter, state.fed, state.last_draft = SourceDrafter(state.sources, k_max=self.k_max), 0, []
        new = out[state.fed:]
        if not new:
            return
        if state.last_draft:
            accepted = 0
            while accepted < min(len(new), len(state.last_draft)) and new[accepted] == state.last_draft[accepted]:
                accepted += 1
            state.drafter.observe(len(state.last_draft), accepted)
            state.last_draft = []
        state.drafter.update(new)
        state.fed = len(out)


class FastApplyProposer:
    """vLLM's custom proposer: `speculative_config={"method": "custom_class", "model":
    "fastapply.backends.vllm_proposer.FastApplyProposer", "num_speculative_tokens": K}`, with
    `additional_config={"fastapply": {"spec": SPEC_NAME}}`. vLLM calls, each step:

        propose(sampled_token_ids, num_tokens_no_spec, token_ids_cpu, slot_mappings=None)
            -> one list of draft token ids per batch row
    """

    def __init__(self, vllm_config):
        from transformers import AutoTokenizer

        settings = (vllm_config.additional_config or {}).get(CONFIG_KEY) or {}
        if "spec" not in settings:
            raise ValueError(f"FastApplyProposer needs additional_config={{{CONFIG_KEY!r}: {{'spec': NAME}}}}")
        model_config = vllm_config.model_config
        # Number of draft tokens at most per step (vLLM's verifier allows up to 128).
        self.k = vllm_config.speculative_config.num_speculative_tokens
        # A row may not grow past the model's context: drafts are cut to fit.
        self.max_model_len = model_config.max_model_len
        tokenizer = AutoTokenizer.from_pretrained(model_config.tokenizer)
        self.core = ProposerCore(ModelSpec.load(settings["spec"]), tokenizer, self.k)

    def load_model(self, *args, **kwargs) -> None:
        """No draft model: the drafts come from the request's own texts."""

    def propose(self, sampled_token_ids: list[list[int]], num_tokens_no_spec: np.ndarray,
                token_ids_cpu: np.ndarray, slot_mappings=None) -> list[list[int]]:
        drafts: list[list[int]] = []
        for i, sampled in enumerate(sampled_token_ids):
            n = int(num_tokens_no_spec[i])
            room = self.max_model_len - n - 1
            # A row with nothing sampled this step is still prefilling: no draft (as vLLM's ngram).
            drafts.append(self.core.propose(token_ids_cpu[i, :n], min(self.k, room)) if sampled and room > 0 else [])
        return drafts
