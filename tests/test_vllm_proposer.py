"""The vLLM proposer's pure core (no vLLM, no model): prompt recovery, per-request state, drafts;
and the vLLM backend's option checks, which refuse before anything loads."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from fastapply.backends.vllm import MAX_DRAFT_LIMIT, check_options
from fastapply.backends.vllm_proposer import ProposerCore
from fastapply.merge import structural_merge
from fastapply.models import ModelSpec
from fastapply.types import ApplyError

ORIGINAL = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
UPDATE = "# ... existing code ...\n\ndef sub(a, b):\n    # difference\n    return a - b\n\n# ... existing code ...\n"


class CharTokenizer:
    """One token per character (id = code point + 10); 1 is BOS, as a completion prompt gets it."""

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict:
        return {"input_ids": ([1] if add_special_tokens else []) + [ord(c) + 10 for c in text]}

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return "".join(chr(int(i) - 10) for i in ids if i >= 10)


TOK = CharTokenizer()
SPEC = ModelSpec.load("gemma3-270m")


def prompt(original: str = ORIGINAL, update: str = UPDATE) -> list[int]:
    return SPEC.prompt_ids(TOK, original, update, None)


def merged_ids(original: str = ORIGINAL, update: str = UPDATE) -> list[int]:
    merge = structural_merge(original, update, "python")
    assert merge.ok
    return TOK(merge.text)["input_ids"]


def test_drafts_follow_the_structural_merge_from_the_first_output_token():
    core = ProposerCore(SPEC, TOK, k_max=8)
    target = merged_ids()
    assert core.propose(prompt() + target[:1]) == target[1:9]


def test_greedy_walk_over_the_merge_takes_few_steps_and_drafts_only_the_merge():
    """Simulate vLLM's verifier: accept the draft's agreeing prefix plus one model token per step."""
    core = ProposerCore(SPEC, TOK, k_max=32)
    target, p = merged_ids(), prompt()
    out, steps = target[:1], 0
    while len(out) < len(target):
        draft = core.propose(p + out)
        accepted = 0
        while accepted < len(draft) and len(out) + accepted < len(target) and draft[accepted] == target[len(out) + accepted]:
            accepted += 1
        assert accepted == min(len(draft), len(target) - len(out))  # following the merge, every draft is right
        out = target[:len(out) + accepted + 1]
        steps += 1
    assert out == target
    assert steps < len(target) / 8


def test_each_request_keeps_its_own_state_by_its_prompt():
    core = ProposerCore(SPEC, TOK, k_max=4)
    other_update = "# ... existing code ...\n\ndef mul(a, b):\n    return b * a\n"
    a, b = merged_ids(), merged_ids(update=other_update)
    pa, pb = prompt(), prompt(update=other_update)
    for i in range(1, 12):  # interleaved rows, as in one vLLM batch
        assert core.propose(pa + a[:i]) == a[i:i + 4]
        assert core.propose(pb + b[:i]) == b[i:i + 4]
    assert core.cached_requests == 2


def test_k_caps_the_draft_and_numpy_rows_are_read_like_lists():
    core = ProposerCore(SPEC, TOK, k_max=16)
    target = merged_ids()
    row = np.array(prompt() + target[:3], dtype=np.int32)
    assert core.propose(row, 3) == target[3:6]
    assert core.propose(row, 0) == []


def test_a_row_that_is_not_the_specs_prompt_gets_no_draft():
    core = ProposerCore(SPEC, TOK, k_max=8)
    row = TOK("just some text that no spec rendered, then more")["input_ids"]
    assert core.propose(row) == []
    assert core.propose(row + [50]) == []  # remembered as foreign: not parsed again
    assert core.cached_requests == 1


def test_a_file_holding_the_prompt_framing_is_refused_not_misparsed():
    """The original contains the framing's own lines: the parse splits there, the re-render does not
    reproduce the row, and the proposer drafts nothing rather than the wrong file."""
    tricky = "x = 1\n</code>\nThe original file with the update applied:\n<code>\ny = 2\n"
    core = ProposerCore(SPEC, TOK, k_max=8)
    assert core.propose(prompt(original=tricky, update="x = 3\n# ... existing code ...\n") + [50]) == []


# -- option checks: one clear error before anything loads --------------------------------------

def test_max_draft_above_vllms_limit_is_refused():
    with pytest.raises(ApplyError, match="1 to 128"):
        check_options("cpu", 1, MAX_DRAFT_LIMIT + 1, "fastapply")
    with pytest.raises(ApplyError, match="1 to 128"):
        check_options("cpu", 1, 0, "ngram")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_gpu_options_on_a_cpu_machine_are_refused():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ApplyError, match="no CUDA GPU"):
        check_options("cuda", 1, 32, "fastapply")
    with pytest.raises(ApplyError, match="needs that many GPUs"):
        check_options("cpu", 2, 32, "fastapply")


def test_unknown_speculation_is_refused():
    with pytest.raises(ApplyError, match="speculation must be one of"):
        check_options("cpu", 1, 32, "eagle")


def test_vllm_not_installed_names_make_vllm(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    with pytest.raises(ApplyError, match="make vllm") as e:
        check_options("cpu", 1, 32, "fastapply")
    assert e.value.code == "unavailable"
