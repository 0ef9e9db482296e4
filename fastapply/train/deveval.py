"""Exact match on a fixed dev slice through the real speculative engine (greedy), with the model
being trained: what the learning curve's dev points measure."""

from __future__ import annotations

from dataclasses import dataclass

from fastapply.api import Applier
from fastapply.engine import ModelEngine
from fastapply.models import LoadedModel
from fastapply.train.data import Case
from fastapply.types import ApplyError, ApplyRequest


@dataclass(frozen=True)
class DevScore:
    exact: int
    cases: int
    ok_exact: int  # exact and passed the checks (what a user receives)
    ids_exact: tuple[str, ...]


def dev_slice(cases: list[Case], spec, tokenizer, limit: int, max_tokens: int) -> list[Case]:
    """The first `limit` dev cases whose prompt fits `max_tokens` (an engine pass stays cheap)."""
    out = []
    for c in cases:
        if len(spec.prompt_ids(tokenizer, c.original, c.update, None)) <= max_tokens:
            out.append(c)
            if len(out) >= limit:
                break
    return out


def dev_exact(model, spec, tokenizer, cases: list[Case], device: str, dtype: str) -> DevScore:
    """The request as evals.accuracy sends it: original, update, language."""
    from fastapply.train.loop import causal_lm

    lm = causal_lm(model)
    was_training = lm.training
    lm.eval()
    engine = ModelEngine(LoadedModel(spec=spec, model=lm, tokenizer=tokenizer, device=device, dtype=dtype,
                                     source="training"))
    applier = Applier(model_engine=engine)
    exact, ok_exact, ids = 0, 0, []
    try:
        for c in cases:
            try:
                res = applier.apply(ApplyRequest(original=c.original, update=c.update, language=c.language,
                                                 engine="speculative"))
            except ApplyError:
                continue
            if res.merged == c.expected:
                exact += 1
                ok_exact += res.ok
                ids.append(c.id)
    finally:
        lm.train(was_training)
    return DevScore(exact, len(cases), ok_exact, tuple(ids))
