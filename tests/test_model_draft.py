"""The model drafter: its cache follows the output, it composes with the file sources, greedy output
stays the model's own, and a draft model that cannot serve is refused with one line."""

from __future__ import annotations

import copy

import pytest
import torch

from fastapply.api import ApplyError, Stats
from fastapply.backends.hf import HFBackend
from fastapply.decode import DecodeConfig, decode
from fastapply.draft import FileModelDrafter, ModelDraftLength, SourceDrafter
from fastapply.model_draft import ModelDrafter, cache_plan, check_same_vocab

VOCAB = 24


class RuleBackend:
    """A `Backend` whose next token is a fixed function of the whole sequence, recording every call:
    what its cache holds must always be the sequence the drafter believes it holds."""

    def __init__(self, rule, vocab: int = VOCAB):
        self.rule, self.vocab_size = rule, vocab
        self.seq: list[int] = []
        self.prefills = self.forwards = self.fed = 0

    @property
    def length(self) -> int:
        return len(self.seq)

    def _row(self, seq: list[int]) -> torch.Tensor:
        row = torch.full((self.vocab_size,), -10.0)
        row[self.rule(seq)] = 10.0
        return row

    def prefill(self, ids):
        self.prefills += 1
        self.seq = list(ids)
        return self._row(self.seq)

    def forward(self, ids):
        self.forwards += 1
        self.fed += len(ids)
        rows = []
        for t in ids:
            self.seq.append(t)
            rows.append(self._row(self.seq))
        return torch.stack(rows)

    def crop(self, n):
        assert 0 <= n <= len(self.seq)
        del self.seq[len(self.seq) - n:]

    def release(self):
        self.seq = []


def test_cache_plan_keeps_the_common_prefix():
    assert cache_plan([], [1, 2]) == (0, [1, 2])
    assert cache_plan([1, 2, 3], [1, 2, 3]) == (0, [])
    assert cache_plan([1, 2, 3], [1, 9]) == (2, [9])
    assert cache_plan([1, 2, 3], [1]) == (2, [])
    assert cache_plan([4], [5, 6]) == (1, [5, 6])


def test_model_drafter_cache_follows_the_output_with_one_prefill():
    prompt = [1, 2, 3]

    def rule(seq):  # a deterministic "model": the next token depends on the last two
        return (seq[-1] * 3 + seq[-2]) % VOCAB

    be = RuleBackend(rule)
    d = ModelDrafter(be, prompt, k_max=6, confidence=0.0)
    output: list[int] = []
    for step in range(12):
        draft = d.propose(6)
        assert be.seq == prompt + d.cached  # the cache is what the drafter thinks it is
        # the drafts are the model's greedy continuation of the output
        seq = prompt + output
        want = []
        for _ in draft:
            want.append(rule(seq + want))
        assert draft == want
        # the verifier keeps a prefix (varying) and adds its own token, sometimes a different one
        kept = step % (len(draft) + 1)
        bonus = (draft[kept] + 1) % VOCAB if kept < len(draft) else 5
        new = draft[:kept] + [bonus]
        d.observe(len(draft), kept)
        d.update(new)
        output += new
    d.propose(1)
    assert be.prefills == 1  # prefilled once per request, never again
    assert be.seq == prompt + output  # cropped past every rejection, nothing else lost
    # accepted draft tokens were computed once: fed tokens = output + drafted-then-cropped ones
    assert be.fed < 2 * len(output) + 6 * 12


def test_model_drafter_stops_where_it_is_unsure():
    be = RuleBackend(lambda seq: 7)
    d = ModelDrafter(be, [1], k_max=8, confidence=0.99)
    assert d.propose(8) == [7] * 8  # logits of +-10 give the argmax p ~ 1
    d2 = ModelDrafter(RuleBackend(lambda seq: 7, vocab=VOCAB), [1], k_max=8, confidence=1.01)
    assert d2.propose(8) == [7]  # every token below the threshold: the run is one token long


class FixedModel:
    """A stand-in continuer: proposes `tokens` after any prefix, and records its feedback."""

    def __init__(self, tokens, k=6):
        self.tokens, self.length, self.seen, self.asked = tokens, ModelDraftLength(k=k), [], []

    def propose_after(self, prefix, max_k):
        self.asked.append((list(prefix), max_k))
        return self.tokens[:max_k]

    def update(self, new):
        pass

    def observe(self, drafted, accepted):
        self.seen.append((drafted, accepted))


def test_file_drafts_alone_on_a_long_copy_run_and_the_model_extends_a_short_one():
    model = FixedModel([90, 91, 92, 93, 94, 95, 96], k=6)
    file = SourceDrafter([("merge", list(range(10, 40)))], use_history=False)  # first draft: 16 tokens
    d = FileModelDrafter(file, model)
    assert d.propose(64) == list(range(10, 26))  # 16 >= the model's cap: the model is not asked
    assert model.asked == [] and d.last_segments == [("merge", 16)]
    d.observe(16, 16)
    d.update(list(range(10, 26)) + [26])
    # the verifier rejects everything of the next draft: the file's length halves; then a new token
    # nobody holds loses the file's pointer, and the model drafts alone
    d.propose(64)
    d.observe(32, 0)
    d.update([77])
    assert d.propose(64) == [90, 91, 92, 93, 94, 95] and d.last_segments == [("model", 6)]
    d.observe(6, 2)
    assert model.seen == [(6, 2)]


def test_model_extends_a_file_draft_cut_by_the_end_of_its_source():
    model = FixedModel([90, 91, 92, 93], k=6)
    d = FileModelDrafter(SourceDrafter([("merge", [1, 2])], use_history=False), model)
    assert d.propose(64) == [1, 2, 90, 91, 92, 93]
    assert model.asked == [([1, 2], 4)] and d.last_segments == [("merge", 2), ("model", 4)]
    d.observe(6, 1)  # rejected inside the file's part: the model's tokens were never reached
    assert model.seen == []
    d.propose(64)
    d.observe(6, 4)  # the file's 2 kept, then 2 of the model's 4
    assert model.seen == [(4, 2)]


def test_record_pass_attributes_tokens_and_the_first_rejection():
    from fastapply.decode import record_pass

    st = Stats(pass_log=[])
    record_pass(st, [("merge", 3), ("model", 4)], 5)
    record_pass(st, [("merge", 2)], 0)
    record_pass(st, [("model", 2)], 2)
    assert st.by_source == {"merge": {"drafted": 5, "accepted": 3, "rejected": 1},
                            "model": {"drafted": 6, "accepted": 4, "rejected": 1}}
    assert st.pass_log == [([("merge", 3), ("model", 4)], 5), ([("merge", 2)], 0), ([("model", 2)], 2)]


@pytest.fixture(scope="module")
def tiny_pair():
    """A target and a draft sharing a vocabulary: the draft is the target with noise on its
    weights, so it agrees often but not always (accepts, rejects and crops all happen)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256)
    target = LlamaForCausalLM(cfg).eval()
    draft = copy.deepcopy(target)
    with torch.no_grad():
        for p in draft.model.layers[1].parameters():
            p.add_(torch.randn_like(p) * 0.5 * p.std())
    yield target, draft
    torch.set_num_threads(threads)


def _decode(backend, drafter, n, prompt=(1, 2, 3), **kw):
    st = Stats(pass_log=[])
    out = [t for c in decode(backend, list(prompt), drafter, DecodeConfig(max_new_tokens=n, **kw), frozenset(),
                             stats=st) for t in c]
    return out, st


def test_greedy_with_the_model_drafter_is_plain_greedy_on_a_tiny_pair(tiny_pair):
    target, draft = tiny_pair
    tb, db = HFBackend(target), HFBackend(draft)
    plain, _ = _decode(tb, None, 60)
    # the file holds the first 20 tokens of the answer, then a wrong stretch, then nothing: the
    # model drafts alone, extends the file, and is rejected and cropped along the way
    file = plain[:20] + [(t + 1) % VOCAB for t in plain[20:26]]
    dst = Stats()
    drafter = FileModelDrafter(SourceDrafter([("file", file)], ngram=2, use_history=False),
                               ModelDrafter(db, [1, 2, 3], k_max=8, confidence=0.0, stats=dst))
    out, st = _decode(tb, drafter, 60)
    assert out == plain
    model = st.by_source["model"]
    assert model["accepted"] > 0 and model["rejected"] > 0  # both paths ran
    assert st.forward_passes < len(plain)
    assert dst.draft_model_steps > 0 and drafter.model.prefills == 1
    # the drafter alone (no file) is also plain greedy
    out2, _ = _decode(tb, ModelDrafter(HFBackend(draft), [1, 2, 3], k_max=8), 60)
    assert out2 == plain


def test_the_draft_models_incremental_cache_matches_a_fresh_forward(tiny_pair):
    target, draft = tiny_pair
    db = HFBackend(draft)
    d = ModelDrafter(db, [1, 2, 3], k_max=8, confidence=0.0)
    out, _ = _decode(HFBackend(target), FileModelDrafter(SourceDrafter([], use_history=False), d), 40)
    d.propose(4)  # catch up with the whole output, then draft
    seq = [1, 2, 3] + d.cached
    with torch.no_grad():
        fresh = draft(torch.tensor([seq])).logits[0].argmax(-1).tolist()
    assert [g for g, _ in d.greedy[1:]] == fresh[3:]  # the greedy token after every cached position
    assert d.cached[:len(out)] == out


def test_a_draft_model_with_another_vocabulary_is_refused():
    a = {"a": 0, "b": 1, "c": 2}
    check_same_vocab(a, dict(a), "t", "d")
    with pytest.raises(ApplyError) as e:
        check_same_vocab(a, {"a": 0, "b": 2, "c": 1}, "qwen-target", "gemma-draft")
    assert e.value.code == "invalid_argument"
    assert "gemma-draft" in e.value.message and "2 of 3 tokens differ" in e.value.message
    assert "vocabularies must agree" in e.value.message


@pytest.mark.model
def test_cli_refuses_a_draft_model_with_another_tokenizer_before_any_request(tmp_path, capsys):
    from fastapply.cli import main

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "u.py").write_text("x = 2\n")
    code = main(["apply", str(tmp_path / "a.py"), "--update", str(tmp_path / "u.py"), "--engine", "plain",
                 "--model", "qwen2.5-coder-0.5b", "--draft-model", "gemma3-270m"])
    err = capsys.readouterr().err
    assert code == 1 and "--draft-model gemma3-270m" in err and "vocabularies must agree" in err
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_cli_draft_model_bad_name_usage_and_structural_note(tmp_path, capsys):
    from fastapply.cli import main

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "u.py").write_text("x = 2\n")
    args = ["apply", str(tmp_path / "a.py"), "--update", str(tmp_path / "u.py")]
    # the structural engine runs no model: the option is ignored with a note, and the merge answers
    assert main(args + ["--engine", "structural", "--draft-model", "nosuch", "--quiet"]) == 0
    out = capsys.readouterr()
    assert out.out == "x = 2\n" and "--draft-model is ignored with --engine structural" in out.err
    # an unknown name is an error before anything runs
    assert main(args + ["--engine", "plain", "--draft-model", "nosuch"]) == 1
    assert "unknown model spec 'nosuch'" in capsys.readouterr().err
    # vLLM drafts with its own proposer
    assert main(args + ["--engine", "plain", "--backend", "vllm", "--draft-model", "qwen2.5-coder-0.5b"]) == 2
    assert "--draft-model: only with --backend hf" in capsys.readouterr().err


def test_a_draft_model_that_cannot_load_fails_the_engine_load_with_one_line(monkeypatch):
    from fastapply import model_draft
    from fastapply.models import LoadedModel, ModelSpec

    def broken(name, device=None, dtype=None):
        raise OSError("safetensors: file truncated")

    monkeypatch.setattr(model_draft, "load_model", broken)
    target = LoadedModel(ModelSpec("t", "{original}{update}"), None, None, "cpu", "fp32", "")
    with pytest.raises(ApplyError) as e:
        model_draft.load_draft_model("qwen2.5-coder-0.5b", target, HFBackend)
    assert e.value.code == "unavailable"
    assert ("--draft-model qwen2.5-coder-0.5b could not be loaded (OSError: safetensors: file truncated)"
            in e.value.message)
    assert "\n" not in e.value.message


def test_lsp_and_codemod_take_the_draft_model_option(tmp_path, capsys):
    from fastapply.cli import main
    from lsp.server import main as lsp_main

    assert lsp_main(["--draft-model", "nosuch"]) == 1
    assert "fastapply-lsp: error: unknown model spec 'nosuch'" in capsys.readouterr().err
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "edits.jsonl").write_text('{"path": "a.py", "update": "x = 2\\n"}\n')
    code = main(["codemod", "--manifest", str(tmp_path / "edits.jsonl"), "--root", str(tmp_path), "--engine", "plain",
                 "--draft-model", "nosuch", "--no-progress"])
    assert code == 1 and "unknown model spec 'nosuch'" in capsys.readouterr().err
    assert (tmp_path / "a.py").read_text() == "x = 1\n"
