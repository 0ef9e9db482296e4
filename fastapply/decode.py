"""The verify loop: draft k tokens, score `[last] + draft` in one forward pass, accept, crop.

Greedy: accept the longest draft prefix equal to the argmax, then add the model's own token, so
the output is token-identical to plain greedy decoding. Sampling: the draft block is verified
jointly (`verify_block`, Sun et al.'s block verification for a deterministic draft; token by token
with `DecodeConfig(verify="token")`), so the output is distributed exactly as plain sampling.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from fastapply.backends.base import Backend, prefill_in_passes
from fastapply.draft import Drafter
from fastapply.types import ApplyError, Stats


@dataclass(frozen=True)
class DecodeConfig:
    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    # Sampled output only: "block" verifies the draft jointly (`verify_block`), "token" token by
    # token (`verify_sampled`). Both are exact; greedy output ignores it.
    verify: str = "block"


# Given the whole output so far and how many tokens were just added, return how many of the
# output's tokens to keep if a stop condition fired inside the new ones, else None.
StopCheck = Callable[[list[int], int], int | None]


def probs_from_logits(logits: torch.Tensor, temperature: float, top_p: float) -> torch.Tensor:
    """Rows of logits -> rows of sampling probabilities (temperature, then nucleus filtering)."""
    p = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sp, si = torch.sort(p, dim=-1, descending=True)
        # Keep the smallest prefix whose mass reaches top_p (the first token is always kept).
        drop = (sp.cumsum(-1) - sp) >= top_p
        sp = sp.masked_fill(drop, 0.0)
        p = torch.zeros_like(p).scatter(-1, si, sp)
        p = p / p.sum(-1, keepdim=True)
    return p


def verify_greedy(logits: torch.Tensor, draft: Sequence[int]) -> tuple[int, int]:
    """(number of draft tokens accepted, the model's next token) for greedy decoding."""
    best = logits.argmax(-1).tolist()
    n = 0
    while n < len(draft) and draft[n] == best[n]:
        n += 1
    return n, best[n]


def verify_sampled(probs: torch.Tensor, draft: Sequence[int], gen: torch.Generator) -> tuple[int, int]:
    """Exact speculative sampling for a deterministic draft (the draft proposes x with prob 1).

    Row i of `probs` is the target distribution for draft[i] (row len(draft) for the bonus).
    Accepting x with probability p(x), and otherwise sampling from p restricted to y != x, gives
    P(y) = p(x)[y == x] + (1 - p(x)) p(y)/(1 - p(x)) [y != x] = p(y): exactly the target.
    """
    u = torch.rand(len(draft), generator=gen).tolist() if draft else []
    for i, x in enumerate(draft):
        px = probs[i, x].item()
        if u[i] < px:
            continue
        residual = probs[i].clone()
        residual[x] = 0.0
        return i, int(torch.multinomial(residual / residual.sum(), 1, generator=gen).item())
    return len(draft), int(torch.multinomial(probs[len(draft)], 1, generator=gen).item())


def verify_block(probs: torch.Tensor, draft: Sequence[int], gen: torch.Generator) -> tuple[int, int]:
    """Block verification (Sun, Mendlovic, Leviathan et al., "Block Verification Accelerates
    Speculative Decoding", ICLR 2025, Algorithm 2) for a deterministic draft.

    Row i of `probs` is the target distribution M_b(. | X^i) after the first i draft tokens (row
    len(draft) for the bonus). The paper's algorithm, for a draft X_1..X_g sampled from M_s:
        p_0 = 1,  p_i = min(1, p_{i-1} M_b(X_i | X^{i-1}) / M_s(X_i | X^{i-1}))
        h_i = Z_i / (Z_i + 1 - p_i) for i < g, with Z_i = sum_x max(p_i M_b(x | X^i) - M_s(x | X^i), 0);
        h_g = p_g
        eta_i ~ U(0, 1) independent; accept tau = max{i : eta_i <= h_i} (h_0 = 1: tau >= 0 always)
        the next token Y ~ M_b(. | X^g) if tau = g, else Y ~ max(p_tau M_b(. | X^tau) - M_s(. | X^tau), 0)
    Our drafts are point masses (the file's next token, the draft model's argmax): M_s(. | X^{i-1}) =
    delta(X_i). With q_i = M_b(X_i | X^{i-1}):
        p_i = q_1 ... q_i   (the target's probability of the whole prefix X^i; the min never binds)
        Z_i = p_i (1 - q_{i+1})   (x = X_{i+1} contributes max(p_{i+1} - 1, 0) = 0)
        the residual at tau < g is M_b(. | X^tau) without X_{tau+1}, renormalised.
    Law of tau: 1 - h_i = (1 - p_i) / (1 - p_i q_{i+1}) = (1 - p_i) / (1 - p_{i+1}), so by induction
    from h_g = p_g, P(tau < i) = prod_{j >= i} (1 - h_j) = 1 - p_i: P(tau >= i) = p_i.
    Exactness: P(tau = i) = p_i - p_{i+1} = p_i (1 - q_{i+1}) for i < g, so for y != X_{i+1}
        P(emit X^i, y) = p_i (1 - q_{i+1}) M_b(y | X^i) / (1 - q_{i+1}) = p_i M_b(y | X^i),
    and P(emit X^g, y) = p_g M_b(y | X^g): the target's probability of each way a sample can first
    leave the draft (or follow it to its end), events that cover all samples once. So the emitted
    tokens are distributed exactly as target sampling, and the next pass starts afresh.
    Accepted tokens: any exact verifier has P(tau >= i) <= P(a target sample starts with X^i) = p_i,
    and token-wise verification (`verify_sampled`) already attains p_i for every i. For point-mass
    drafts block verification therefore accepts exactly as many tokens as token-wise in
    expectation (the same law of tau), never fewer; its gain in the paper comes from drafts sampled
    from a spread-out M_s, which our drafters do not produce.
    """
    g = len(draft)
    eta = torch.rand(g, generator=gen).tolist() if draft else []
    tau, p = 0, 1.0
    for i in range(1, g + 1):
        p *= probs[i - 1, draft[i - 1]].item()  # p_i
        if i < g:
            z = p * (1.0 - probs[i, draft[i]].item())
            denom = z + 1.0 - p
            h = z / denom if denom > 0 else 0.0
        else:
            h = p
        if eta[i - 1] < h:  # strict: h = 0 never accepts
            tau = i
    if tau == g:
        return tau, int(torch.multinomial(probs[g], 1, generator=gen).item())
    residual = probs[tau].clone()
    residual[draft[tau]] = 0.0
    if residual.sum() <= 0:  # the draft token held all the mass: tau = this i has probability 0
        residual = probs[tau]
    return tau, int(torch.multinomial(residual / residual.sum(), 1, generator=gen).item())


VERIFIERS = {"block": verify_block, "token": verify_sampled}


def record_pass(stats: Stats, segments: Sequence[tuple[str, int]], accepted: int) -> None:
    """Attribute one verify pass to the draft sources that filled it (in order), in `stats.by_source`:
    each source's drafted and accepted tokens, and whether its token was the first rejected."""
    start = 0
    for name, n in segments:
        c = stats.by_source.setdefault(name, {"drafted": 0, "accepted": 0, "rejected": 0})
        c["drafted"] += n
        c["accepted"] += min(max(accepted - start, 0), n)
        c["rejected"] += start <= accepted < start + n
        start += n
    if stats.pass_log is not None:
        stats.pass_log.append((list(segments), accepted))


def _take(new: list[int], out: list[int], max_new: int, stop_ids: set[int] | frozenset[int],
          stop_check: StopCheck | None) -> tuple[list[int], bool]:
    """Append verified tokens to `out`, trimmed at a stop token, the budget or a stop string before
    anything is emitted. Returns (the tokens kept, whether decoding is done)."""
    done = False
    for i, t in enumerate(new):
        if t in stop_ids:
            new, done = new[:i + 1], True
            break
    if len(out) + len(new) >= max_new:
        new, done = new[:max_new - len(out)], True
    out.extend(new)
    if stop_check is not None:
        keep = stop_check(out, len(new))
        if keep is not None:
            new = new[:len(new) - (len(out) - keep)]
            del out[keep:]
            done = True
    return new, done


def decode(
    backend: Backend,
    prompt_ids: Sequence[int],
    drafter: Drafter | None,
    cfg: DecodeConfig,
    stop_ids: set[int] | frozenset[int] = frozenset(),
    stop_check: StopCheck | None = None,
    should_stop: Callable[[], bool] | None = None,
    stats: Stats | None = None,
) -> Iterator[list[int]]:
    """Yield lists of verified output tokens as they are accepted; fill `stats` in place.

    `drafter=None` is plain decoding (one token per forward pass), the baseline.
    Stops at a token in `stop_ids` (kept in the output), at `stop_check`, or at max_new_tokens.
    """
    stats = stats if stats is not None else Stats()
    greedy = cfg.temperature == 0
    # A private generator: sampling never touches (or depends on) torch's global RNG.
    gen = torch.Generator().manual_seed(cfg.seed if cfg.seed is not None else secrets.randbits(63))
    out: list[int] = []

    if cfg.verify not in VERIFIERS:
        raise ValueError(f"DecodeConfig.verify must be one of {', '.join(VERIFIERS)}, not {cfg.verify!r}")
    verify = VERIFIERS[cfg.verify]

    def pick(logits: torch.Tensor, draft: list[int]) -> tuple[int, int]:
        if greedy:
            return verify_greedy(logits, draft)
        return verify(probs_from_logits(logits, cfg.temperature, cfg.top_p), draft, gen)

    t0 = time.perf_counter()
    try:
        logits = prefill_in_passes(backend, list(prompt_ids), should_stop,
                                   lambda: ApplyError("cancelled", "the apply was cancelled"))
        stats.prompt_tokens = len(prompt_ids)
        stats.forward_passes += 1
        _, tok = pick(logits[None], [])
        stats.prefill_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        new = [tok]
        while True:
            new, done = _take(new, out, cfg.max_new_tokens, stop_ids, stop_check)
            stats.output_tokens = len(out)
            stats.decode_s = time.perf_counter() - t1
            if new:
                yield new
            if done:
                return
            if should_stop is not None and should_stop():
                raise ApplyError("cancelled", "the apply was cancelled")
            if drafter is not None:
                drafter.update(new)
                # Never draft past the budget: the bonus token always comes on top.
                draft = drafter.propose(cfg.max_new_tokens - len(out) - 1)
            else:
                draft = []
            last = new[-1]
            logits = backend.forward([last] + draft)
            stats.forward_passes += 1
            n_ok, tok = pick(logits, draft)
            backend.crop(len(draft) - n_ok)
            stats.drafted_tokens += len(draft)
            stats.accepted_tokens += n_ok
            if drafter is not None:
                drafter.observe(len(draft), n_ok)
                segments = getattr(drafter, "last_segments", None) or [("draft", len(draft))]
                record_pass(stats, segments if draft else [], n_ok)
            new = draft[:n_ok] + [tok]
    finally:
        stats.decode_s = max(0.0, time.perf_counter() - t0 - stats.prefill_s)
        backend.release()
