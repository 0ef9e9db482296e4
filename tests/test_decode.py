"""The verify loop: greedy identity, budget and stop handling, exact speculative sampling."""

import collections

import pytest
import torch

from fastapply.api import ApplyError, Stats
from fastapply.backends.hf import HFBackend
from fastapply.backends.replay import ReplayBackend
from fastapply.decode import DecodeConfig, decode, probs_from_logits, verify_block, verify_sampled
from fastapply.draft import SourceDrafter

END = 0


def run(backend, drafter, max_new, stop_ids=frozenset({END}), **kw):
    stats = Stats()
    chunks = list(decode(backend, [1, 2, 3], drafter, DecodeConfig(max_new_tokens=max_new, **kw), stop_ids,
                         stats=stats))
    return [t for c in chunks for t in c], stats


def test_replay_perfect_draft_takes_few_passes():
    target = list(range(5, 405))
    out, st = run(ReplayBackend(target, END), SourceDrafter([("file", target)], k_max=64), 1000)
    assert out == target + [END]
    assert st.forward_passes < 15  # 401 tokens with drafts of 16, 32, 64, 64...
    assert st.output_tokens == 401


def test_replay_with_edits_is_identical_to_plain():
    original = list(range(5, 305))
    target = original[:100] + [900, 901, 902] + original[100:200] + original[230:]
    spec, st = run(ReplayBackend(target, END), SourceDrafter([("file", original)]), 1000)
    plain, st_plain = run(ReplayBackend(target, END), None, 1000)
    assert spec == plain == target + [END]
    assert st_plain.forward_passes == len(target) + 1
    assert st.forward_passes < len(target) / 5


def test_budget_cuts_output_and_draft_never_exceeds_it():
    target = list(range(5, 105))
    out, st = run(ReplayBackend(target, END), SourceDrafter([("file", target)]), 37)
    assert out == target[:37]
    assert st.drafted_tokens <= 37


def test_stop_check_trims_inside_a_chunk():
    target = list(range(5, 105))

    def stop_at_50(out, n_new):
        return out.index(50) + 1 if 50 in out[len(out) - n_new:] else None

    stats = Stats()
    chunks = list(decode(ReplayBackend(target, END), [1], SourceDrafter([("f", target)]),
                         DecodeConfig(max_new_tokens=500), frozenset({END}), stop_at_50, stats=stats))
    out = [t for c in chunks for t in c]
    assert out == list(range(5, 51))


def test_should_stop_cancels():
    target = list(range(5, 105))
    with pytest.raises(ApplyError) as e:
        list(decode(ReplayBackend(target, END), [1], None, DecodeConfig(max_new_tokens=500), should_stop=lambda: True))
    assert e.value.code == "cancelled"


def test_top_p_keeps_smallest_nucleus():
    p = probs_from_logits(torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]])), 1.0, 0.7)
    assert torch.allclose(p, torch.tensor([[0.625, 0.375, 0.0, 0.0]]))


@pytest.fixture(scope="module")
def tiny_model():
    # A tiny random Llama built from a config (no download). Random weights give a spread-out
    # next-token distribution, which is what the sampling test needs.
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    # One thread: a model this small gains nothing from more, and oversubscribed threads on a busy
    # CI machine made the 3000-sample test crawl.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    cfg = LlamaConfig(vocab_size=12, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128)
    yield LlamaForCausalLM(cfg).eval()
    torch.set_num_threads(threads)


def test_greedy_speculative_equals_plain_on_tiny_model(tiny_model):
    be = HFBackend(tiny_model)
    plain, _ = run(be, None, 40, stop_ids=frozenset())
    # A draft that is partly right (the plain output with a corrupted stretch) exercises accept,
    # reject, crop and re-sync.
    draft = plain[:10] + [(t + 1) % 12 for t in plain[10:15]] + plain[15:]
    spec, st = run(be, SourceDrafter([("d", draft)], ngram=2), 40, stop_ids=frozenset())
    assert spec == plain
    assert st.accepted_tokens > 0 and st.forward_passes < 40


def test_speculative_sampling_matches_plain_sampling(tiny_model):
    """The joint law of the first 3 sampled tokens is the same with and without a draft."""
    be = HFBackend(tiny_model)
    n = 1500
    draft = [3, 3, 3, 3]

    def sample(drafter_factory, seed0):
        counts = collections.Counter()
        for i in range(n):
            out, _ = run(be, drafter_factory(), 3, stop_ids=frozenset(), temperature=1.0, seed=seed0 + i)
            counts[tuple(out)] += 1
        return counts

    plain = sample(lambda: None, 0)
    spec = sample(lambda: SourceDrafter([("d", draft)], use_history=False), 10**6)
    # Exact marginals of the 2nd and 3rd token (the ones the draft competes for) from the model.
    ctx = [1, 2, 3]
    with torch.no_grad():
        p1 = torch.softmax(tiny_model(torch.tensor([ctx])).logits[0, -1].float(), -1)
        m2, m3 = torch.zeros(12), torch.zeros(12)
        for a in range(12):
            lg = tiny_model(torch.tensor([ctx + [a]])).logits[0, -1].float()
            pb = torch.softmax(lg, -1)
            m2 += p1[a] * pb
            ids = torch.tensor([ctx + [a, b] for b in range(12)])
            pc = torch.softmax(tiny_model(ids).logits[:, -1].float(), -1)  # [b, c]
            m3 += p1[a] * (pb[:, None] * pc).sum(0)
    assert m2[3] < 0.6 and m3[3] < 0.6  # the draft token is not a near-certainty: the test can fail

    def marginal(counts, pos):
        m = torch.zeros(12)
        for k, c in counts.items():
            m[k[pos]] += c
        return m / n

    # 3 standard deviations of a proportion over n samples is at most 3 * sqrt(0.25 / 1500) = 0.039.
    for counts in (plain, spec):
        assert (marginal(counts, 1) - m2).abs().max() < 0.04
        assert (marginal(counts, 2) - m3).abs().max() < 0.04


# -- block verification (sampled output) -------------------------------------------------------------

@pytest.fixture(scope="module")
def draft_rows():
    """A tiny model's sampling distributions along a 4-token draft (its own greedy continuation):
    row i is M_b(. | prompt + draft[:i]). A larger init spreads the probabilities (q ~ 0.25-0.7)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=12, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128, initializer_range=0.6)
    model = LlamaForCausalLM(cfg).eval()
    seq, draft = [1, 2, 3], []
    with torch.no_grad():
        for _ in range(4):
            t = int(model(torch.tensor([seq])).logits[0, -1].argmax())
            draft.append(t)
            seq.append(t)
        probs = torch.softmax(model(torch.tensor([seq])).logits[0, 2:].double(), -1)
    return probs, draft


def departure_law(probs: torch.Tensor, draft: list[int]) -> dict[tuple[int, int], float]:
    """The target's law of where a sample first leaves the draft, and with which token (or which
    token follows the whole draft): P(i, y) = q_1 ... q_i M_b(y | draft[:i]), y != draft[i]."""
    law, prefix = {}, 1.0
    for i in range(len(draft) + 1):
        for y in range(probs.shape[1]):
            if i == len(draft) or y != draft[i]:
                law[(i, y)] = prefix * probs[i, y].item()
        if i < len(draft):
            prefix *= probs[i, draft[i]].item()
    return law


def sample_departures(verifier, probs, draft, n, seed=0):
    """n verify passes, each completed by plain sampling while the output still follows the draft
    (what the next passes of the decode loop do): counts of (departure index, token)."""
    gen = torch.Generator().manual_seed(seed)
    rows = probs.float()
    counts, accepted = collections.Counter(), []
    for _ in range(n):
        tau, y = verifier(rows, draft, gen)
        accepted.append(tau)
        out = list(draft[:tau]) + [y]
        while len(out) <= len(draft) and out == draft[:len(out)]:
            out.append(int(torch.multinomial(rows[len(out)], 1, generator=gen).item()))
        i = next(j for j in range(len(out)) if j == len(draft) or out[j] != draft[j])
        counts[(i, out[i])] += 1
    return counts, accepted


def chi_square_p(counts, law, n) -> float:
    """Pearson's chi-square goodness of fit (cells expecting fewer than 5 pooled); its p-value."""
    stat, df, pooled_obs, pooled_exp = 0.0, -1, 0, 0.0
    for cell, p in law.items():
        if p * n < 5:
            pooled_obs, pooled_exp = pooled_obs + counts.get(cell, 0), pooled_exp + p * n
            continue
        stat += (counts.get(cell, 0) - p * n) ** 2 / (p * n)
        df += 1
    if pooled_exp > 0:
        stat, df = stat + (pooled_obs - pooled_exp) ** 2 / pooled_exp, df + 1
    extra = sum(c for cell, c in counts.items() if cell not in law)  # impossible events
    if extra:
        return 0.0
    half = torch.tensor([df / 2, stat / 2], dtype=torch.float64)
    return torch.special.gammaincc(half[0], half[1]).item()


N_SAMPLES = 20000  # with this many, a verifier that sends 1% of outputs to one token fails (p ~ 1e-14)


def one_token_bias(eps):
    def biased(probs, draft, gen):
        tau, y = verify_block(probs, draft, gen)
        if torch.rand(1, generator=gen).item() < eps:  # eps of the outputs go to token 5 instead
            y = 5 if tau == len(draft) or draft[tau] != 5 else 4
        return tau, y
    return biased


def last_token_off_by_one(probs, draft, gen):
    """A deliberately wrong block verifier: it accepts the whole draft with p_{g-1} instead of p_g."""
    g = len(draft)
    eta = torch.rand(g, generator=gen).tolist()
    tau, p = 0, 1.0
    for i in range(1, g + 1):
        before, p = p, p * probs[i - 1, draft[i - 1]].item()
        z = p * (1 - probs[i, draft[i]].item()) if i < g else 0.0
        h = z / (z + 1 - p) if i < g else before
        if eta[i - 1] < h:
            tau = i
    residual = probs[tau].clone()
    if tau < g:
        residual[draft[tau]] = 0.0
    return tau, int(torch.multinomial(residual / residual.sum(), 1, generator=gen).item())


def test_block_verification_output_follows_the_target_law_and_biased_verifiers_fail(draft_rows):
    probs, draft = draft_rows
    law = departure_law(probs, draft)
    assert abs(sum(law.values()) - 1) < 1e-9
    for verifier in (verify_block, verify_sampled):
        counts, _ = sample_departures(verifier, probs, draft, N_SAMPLES)
        assert chi_square_p(counts, law, N_SAMPLES) > 1e-3, verifier.__name__
    # the same test has the power to see a one-token bias of 1%, and an off-by-one in the last h
    for biased in (one_token_bias(0.01), last_token_off_by_one):
        counts, _ = sample_departures(biased, probs, draft, N_SAMPLES)
        assert chi_square_p(counts, law, N_SAMPLES) < 1e-3


def test_block_verification_accepts_as_many_tokens_as_token_wise(draft_rows):
    probs, draft = draft_rows
    # exactly: P(tau >= i) from the h_i of block verification equals p_i = q_1 ... q_i, which is
    # token-wise verification's law and the most any exact verifier can accept (see verify_block)
    gen = torch.Generator().manual_seed(1)
    for trial in range(200):
        g = 1 + trial % 6
        rows = torch.distributions.Dirichlet(torch.full((7,), 0.3)).sample((g + 1,)).double()
        d = torch.randint(0, 7, (g,), generator=gen).tolist()
        q = [rows[i, d[i]].item() for i in range(g)]
        p = [1.0]
        for x in q:
            p.append(p[-1] * x)
        h = [p[i] * (1 - q[i]) / (p[i] * (1 - q[i]) + 1 - p[i]) if p[i] * (1 - q[i]) + 1 - p[i] > 0 else 0.0
             for i in range(1, g)] + [p[g]]
        for i in range(1, g + 1):
            never_after = 1.0
            for hj in h[i - 1:]:
                never_after *= 1 - hj
            assert abs((1 - never_after) - p[i]) < 1e-9
    # measured on the same rows and seeds: block verification's mean is not below token-wise's
    _, block = sample_departures(verify_block, probs, draft, N_SAMPLES, seed=7)
    _, token = sample_departures(verify_sampled, probs, draft, N_SAMPLES, seed=7)
    block_mean, token_mean = sum(block) / N_SAMPLES, sum(token) / N_SAMPLES
    se = (torch.tensor(token, dtype=torch.float64).var().item() / N_SAMPLES) ** 0.5
    assert block_mean >= token_mean - 3 * se
    expected = 0.0
    prefix = 1.0
    for i, x in enumerate(draft):
        prefix *= probs[i, x].item()
        expected += prefix
    assert abs(block_mean - expected) < 4 * se and abs(token_mean - expected) < 4 * se


def test_unknown_verifier_is_refused():
    with pytest.raises(ValueError, match="verify must be one of block, token"):
        run(ReplayBackend([5, 6], END), None, 5, temperature=1.0, verify="joint")


def test_a_prompt_prefilled_in_passes_decodes_as_one_pass_and_stops_between_passes(tiny_model, monkeypatch):
    """Under a `should_stop` the prompt is prefilled in passes (a cancel or a spent model budget
    waits for one pass, not for the whole prompt): the same greedy output as one pass."""
    from fastapply.backends import base

    be = HFBackend(tiny_model)
    prompt = [(7 * i + 3) % 12 for i in range(30)]
    whole = be.prefill(prompt).clone()
    be.release()
    passes = []
    forward = be.forward
    monkeypatch.setattr(be, "forward", lambda ids: passes.append(len(ids)) or forward(ids))
    stepped = base.prefill_in_passes(be, prompt, lambda: False, lambda: AssertionError("no stop"), chunk=8)
    assert passes == [8, 8, 6] and be.length == 30
    assert torch.allclose(stepped, whole, atol=1e-5)
    be.release()

    plain = list(decode(HFBackend(tiny_model), prompt, None, DecodeConfig(max_new_tokens=20), stop_ids=frozenset()))
    monkeypatch.setattr(base, "PREFILL_PASS", 8)
    stepped_out = list(decode(HFBackend(tiny_model), prompt, None, DecodeConfig(max_new_tokens=20),
                              stop_ids=frozenset(), should_stop=lambda: False))
    assert sum(stepped_out, []) == sum(plain, [])

    asked, out = [], []
    with pytest.raises(ApplyError) as e:
        for toks in decode(HFBackend(tiny_model), prompt, None, DecodeConfig(max_new_tokens=20),
                           should_stop=lambda: asked.append(1) or len(asked) > 1):
            out.append(toks)
    # stopped inside the prompt, before its third pass: no token was written (one pass would have)
    assert e.value.code == "cancelled" and len(asked) == 2 and out == []
