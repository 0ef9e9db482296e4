"""A case as token ids: the model spec's prompt (exactly as the engine builds it) then the target,
the merged file and the spec's end marker. Only the target is scored."""

from __future__ import annotations

from dataclasses import dataclass

from fastapply.train.data import Case
from fastapply.train.windows import fit_window


@dataclass(frozen=True)
class Example:
    id: str
    input_ids: tuple[int, ...]
    n_prompt: int  # input_ids[:n_prompt] is the prompt; the rest is the target

    @property
    def n_target(self) -> int:
        return len(self.input_ids) - self.n_prompt

    def labels(self) -> list[int]:
        """HF-style labels: -100 (ignored) on the prompt, the token itself on the target."""
        return [-100] * self.n_prompt + list(self.input_ids[self.n_prompt:])


def end_text(spec) -> str:
    """What the model must write after the file: the spec's first stop string (its closing tag)."""
    return spec.stop[0] if spec.stop else ""


def encode(case: Case, spec, tokenizer) -> Example:
    prompt = spec.prompt_ids(tokenizer, case.original, case.update, case.instruction)
    target = tokenizer(case.expected + end_text(spec), add_special_tokens=False)["input_ids"]
    if not end_text(spec) and tokenizer.eos_token_id is not None:
        target = target + [tokenizer.eos_token_id]
    return Example(case.id, tuple(prompt) + tuple(target), len(prompt))


def build_examples(cases: list[Case], spec, tokenizer, max_tokens: int) -> tuple[list[Example], int]:
    """(examples, skipped): each case whole or cropped around its edit to fit `max_tokens`."""
    out, skipped = [], 0
    for case in cases:
        fitted = fit_window(case, lambda c: len(encode(c, spec, tokenizer).input_ids), max_tokens)
        if fitted is None:
            skipped += 1
            continue
        out.append(encode(fitted, spec, tokenizer))
    return out, skipped
