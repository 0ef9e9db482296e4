"""The verify loop: greedy identity, budget and stop handling, exact speculative sampling."""

import collections

import pytest
import torch

from fastapply.api import ApplyError, Stats
from fastapply.backends.hf import HFBackend
from fastapply.backends.replay import ReplayBackend
from fastapply.decode import DecodeConfig, decode, probs_from_logits
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
