"""The speculative-decoding formulas beside the measurements (Leviathan, Kalman, Matias, ICML 2023).

With a draft of k tokens, each accepted with probability alpha independently, a verify pass
yields E = (1 - alpha^(k+1)) / (1 - alpha) tokens (Leviathan et al., equation 1), and costs one
target pass plus k draft-model steps of relative cost c; the expected speedup over plain decoding
is E / (c k + 1) (their Theorem 3.8). Our passes mix sources (file tokens cost no draft-model step,
a model run may follow a few file tokens), so the formula is applied pass by pass: a pass drafting
segments [(source, n), ...] yields 1 + sum_j prod_{i <= j} alpha(source of token i), and costs
1 + c x (its model tokens). Predicted speedup = expected tokens over all passes / their cost. For
one source at a fixed k this is exactly Theorem 3.8. It assumes, as the paper does, that a target
pass costs the same whatever its chunk length; the device check (`evals.gpu_cost`) measures that
cost per chunk length instead.

Pure Python: `evals.speed` and the device check import it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

MODEL = "model"  # the draft model's source name (fastapply.model_draft); every other source is the file's
FILE = "file"


def group(source: str) -> str:
    """A draft source's group: the draft model, or the file (merge, candidates, original, snippet, history)."""
    return MODEL if source == MODEL else FILE


def alpha_by_group(by_source: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Per-token acceptance per group: accepted / (accepted + rejected), tokens the verifier reached
    (a token after a rejection is never examined). A group that never drafted is left out."""
    seen: dict[str, list[int]] = {}
    for name, c in by_source.items():
        acc = seen.setdefault(group(name), [0, 0])
        acc[0] += c["accepted"]
        acc[1] += c["accepted"] + c["rejected"]
    return {g: a / n for g, (a, n) in seen.items() if n}


def pool(stats_by_source: Iterable[Mapping[str, Mapping[str, int]]]) -> dict[str, dict[str, int]]:
    """Sum several runs' `Stats.by_source` (for the overall alpha)."""
    out: dict[str, dict[str, int]] = {}
    for by_source in stats_by_source:
        for name, c in by_source.items():
            acc = out.setdefault(name, {"drafted": 0, "accepted": 0, "rejected": 0})
            for k in acc:
                acc[k] += c.get(k, 0)
    return out


def leviathan_tokens(alpha: float, k: float) -> float:
    """Expected tokens of one pass drafting k tokens at per-token acceptance alpha (equation 1)."""
    if k <= 0:
        return 1.0
    if alpha >= 1.0:
        return k + 1.0
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def leviathan_speedup(alpha: float, k: float, c: float) -> float:
    """Theorem 3.8: expected walltime improvement of k-token drafts at acceptance alpha, cost ratio c."""
    return leviathan_tokens(alpha, k) / (c * k + 1.0)


def pass_tokens(segments: Sequence[Sequence], alphas: Mapping[str, float]) -> float:
    """Expected tokens of one pass whose draft is `segments` [(source, n), ...] in order."""
    tokens, reach = 1.0, 1.0  # reach: the probability that every draft token so far was accepted
    for name, n in segments:
        a = alphas.get(group(name), 0.0)
        if n <= 0:
            continue
        tokens += reach * (n if a >= 1.0 else a * (1.0 - a ** n) / (1.0 - a))
        reach *= a ** n
    return tokens


def predicted_speedup(passes: Iterable[Sequence], alphas: Mapping[str, float], c: float) -> float | None:
    """Leviathan's prediction over a run's passes (`Stats.pass_log`: (segments, accepted) each)."""
    tokens = cost = 0.0
    for segments, _accepted in passes:
        tokens += pass_tokens(segments, alphas)
        cost += 1.0 + c * sum(n for name, n in segments if group(name) == MODEL)
    return tokens / cost if cost else None
