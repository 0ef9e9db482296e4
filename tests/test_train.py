"""`fastapply train` on a tiny random Llama with a character tokenizer (both built here, offline):
the loss, its mask, windows, checkpoints and resume, adapters and their refusals, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from fastapply.adapters import apply_adapter, check_base  # noqa: E402
from fastapply.models import ModelSpec, load_causal_lm  # noqa: E402
from fastapply.train import checkpoint  # noqa: E402
from fastapply.train.data import Case, load_cases  # noqa: E402
from fastapply.train.examples import build_examples, encode  # noqa: E402
from fastapply.train.windows import crop, edit_span, fit_window  # noqa: E402
from fastapply.types import ApplyError  # noqa: E402

# The completion prompt of the default model; its weights are not needed here.
SPEC = ModelSpec.load("gemma3-270m")


def char_tokenizer():
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<bos>", "<eos>", "<unk>"]
    chars = [chr(i) for i in range(32, 127)] + ["\n", "\t"]
    vocab = {t: i for i, t in enumerate(specials + chars)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                   unk_token="<unk>")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """A HF model directory: a 2-layer random Llama and the character tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    tok = char_tokenizer()
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                      eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id, pad_token_id=tok.pad_token_id)
    d = tmp_path_factory.mktemp("tiny")
    LlamaForCausalLM(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return d


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    monkeypatch.setenv("FASTAPPLY_SPEC", "gemma3-270m")  # a model directory's prompt format
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def case(i: int = 0, n_lines: int = 6) -> Case:
    body = "".join(f"x{j} = {j}\n" for j in range(n_lines))
    return Case(id=f"c{i}", original=f"def f{i}():\n    return 1\n" + body,
                update=f"def f{i}():\n    return {i + 2}\n# ... existing code ...\n",
                expected=f"def f{i}():\n    return {i + 2}\n" + body)


def write_jsonl(path: Path, cases: list[Case]) -> Path:
    path.write_text("".join(json.dumps(c.__dict__) + "\n" for c in cases))
    return path


def peft_tiny(tiny_dir, rank: int = 4):
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    base = load_causal_lm(tiny_dir, torch.float32)
    return get_peft_model(base, LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0,
                                           target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                                           task_type="CAUSAL_LM"))


# -- the loss --------------------------------------------------------------------------------


def test_loss_mask_covers_only_the_output(tiny_dir):
    from fastapply.train.loop import target_loss_sum

    tok = char_tokenizer()
    ex = encode(case(), SPEC, tok)
    target = tok.decode(list(ex.input_ids[ex.n_prompt:]))
    assert target == case().expected + "</code>"
    # (the prompt starts with BOS, as every engine feeds it: ModelSpec.prompt_ids)
    assert ex.input_ids[0] == tok.bos_token_id
    assert tok.decode(list(ex.input_ids[1:ex.n_prompt])) == SPEC.render(tok, case().original, case().update, None)
    labels = ex.labels()
    assert labels[:ex.n_prompt] == [-100] * ex.n_prompt and -100 not in labels[ex.n_prompt:]
    # Our sliced LM head gives the same loss as transformers' full forward with those labels.
    model = load_causal_lm(tiny_dir, torch.float32)
    ours = target_loss_sum(model, ex, "cpu") / ex.n_target
    ref = model(input_ids=torch.tensor([ex.input_ids]), labels=torch.tensor([labels])).loss
    assert torch.allclose(ours, ref, atol=1e-5)


def test_loss_falls_on_a_repeated_batch(tiny_dir):
    from fastapply.train.loop import make_optimizer, train_step

    model = peft_tiny(tiny_dir)
    tok = char_tokenizer()
    batch = [encode(case(i), SPEC, tok) for i in range(2)]
    opt, sched = make_optimizer(model, lr=1e-2, warmup=1, steps=10)
    first = train_step(model, opt, sched, batch, "cpu")
    second = train_step(model, opt, sched, batch, "cpu")
    assert second < first
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)


# -- windows ---------------------------------------------------------------------------------


def test_window_crops_original_and_expected_alike():
    c = Case("w", original="".join(f"a{i}\n" for i in range(100)),
             update="a49\nCHANGED\na51\n", expected="".join(("CHANGED\n" if i == 50 else f"a{i}\n") for i in range(100)))
    w = crop(c, 5)
    assert w.original == "".join(f"a{i}\n" for i in range(45, 56))
    assert w.expected == w.original.replace("a50\n", "CHANGED\n")
    assert w.update == c.update
    # Windows are chosen by the caller's token count: here one token per line.
    lines = lambda x: len(x.original.splitlines()) + len(x.expected.splitlines())  # noqa: E731
    fitted = fit_window(c, lines, 30)
    assert lines(fitted) <= 30 and "CHANGED" in fitted.expected
    span = edit_span(fitted.original.splitlines(), fitted.expected.splitlines())
    assert span.prefix == span.suffix  # centred on the edit
    assert fit_window(c, lines, 1000) == c  # whole when it fits
    far = Case("far", c.original, "a1\n# ... existing code ...\nCHANGED\n", c.expected)
    assert fit_window(far, lines, 30) is None  # a snippet line outside every window that fits


def test_build_examples_fits_max_tokens():
    tok = char_tokenizer()
    cases = [case(0, 2), case(1, 200)]
    examples, skipped = build_examples(cases, SPEC, tok, max_tokens=700)
    assert skipped == 0 and all(len(e.input_ids) <= 700 for e in examples)
    assert len(examples[0].input_ids) == len(encode(cases[0], SPEC, tok).input_ids)  # short: whole


# -- checkpoints, resume, adapters -----------------------------------------------------------


def train_cfg(tiny_dir, tmp_path, out: str, steps: int, **kw):
    from fastapply.train.run import TrainConfig

    data = write_jsonl(tmp_path / "train.jsonl", [case(i) for i in range(6)])
    return TrainConfig(data=data, out=tmp_path / out, model=str(tiny_dir), steps=steps, batch=2, lr=5e-3,
                       warmup=1, rank=4, save_every=1, eval_every=100, max_tokens=600, progress=False, **kw)


def test_resume_continues_at_the_right_step_with_identical_state(tiny_dir, tmp_path):
    from fastapply.train.run import run_training

    straight: dict[int, float] = {}
    run_training(train_cfg(tiny_dir, tmp_path, "a", 4), on_step=lambda s, l: straight.setdefault(s, l),
                 log=lambda _: None)

    class Stop(Exception):
        pass

    def interrupt(step, loss):
        if step == 2:
            raise Stop

    with pytest.raises(Stop):
        run_training(train_cfg(tiny_dir, tmp_path, "b", 4), on_step=interrupt, log=lambda _: None)
    assert checkpoint.latest(tmp_path / "b").name == "step-000002"
    resumed: dict[int, float] = {}
    logs: list[str] = []
    run_training(train_cfg(tiny_dir, tmp_path, "b", 4), on_step=lambda s, l: resumed.setdefault(s, l),
                 log=logs.append)
    assert sorted(resumed) == [3, 4] and any("resuming" in m and "step 2" in m for m in logs)
    assert resumed[3] == pytest.approx(straight[3], rel=1e-5) and resumed[4] == pytest.approx(straight[4], rel=1e-5)
    from safetensors.torch import load_file

    a = load_file(tmp_path / "a/checkpoints/step-000004/adapter_model.safetensors")
    b = load_file(tmp_path / "b/checkpoints/step-000004/adapter_model.safetensors")
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    curve = json.loads((tmp_path / "b/curve.json").read_text())["points"]
    assert [p["step"] for p in curve] == [0, 1, 2, 3, 4] and curve[-1]["examples"] == 8
    seconds = [p["train_seconds"] for p in curve]
    assert seconds == sorted(seconds), "time adds up across the resume"


def test_an_interrupted_save_leaves_no_half_adapter(tiny_dir, tmp_path, monkeypatch):
    from fastapply.train.loop import make_optimizer

    model = peft_tiny(tiny_dir)
    opt, sched = make_optimizer(model, 1e-3, 1, 4)
    out = tmp_path / "run"
    checkpoint.save(out, checkpoint.TrainState(1, 2), model, opt, sched, "tiny", {})

    def crash(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint.torch, "save", crash)  # dies after the adapter is written
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save(out, checkpoint.TrainState(2, 4), model, opt, sched, "tiny", {})
    names = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert names == ["step-000001"] and checkpoint.latest(out).name == "step-000001"


def greedy(model, ids: list[int], n: int = 24) -> list[int]:
    with torch.inference_mode():
        out = model.generate(input_ids=torch.tensor([ids]), max_new_tokens=n, do_sample=False, pad_token_id=0)
    return out[0, len(ids):].tolist()


def test_saved_adapter_reloads_and_gives_the_same_tokens(tiny_dir, tmp_path):
    from fastapply.train.run import run_training

    last = run_training(train_cfg(tiny_dir, tmp_path, "r", 2, dtype="fp32"), log=lambda _: None)
    tok = char_tokenizer()
    prompt = encode(case(3), SPEC, tok)
    ids = list(prompt.input_ids[:prompt.n_prompt])
    trained = peft_tiny(tiny_dir)
    checkpoint.load_adapter_weights(trained, last)
    reloaded = apply_adapter(load_causal_lm(tiny_dir, torch.float32), last, tiny_dir.name)
    base = load_causal_lm(tiny_dir, torch.float32)
    assert greedy(reloaded, ids) == greedy(trained.eval(), ids)
    assert any(not torch.equal(p, q) for p, q in zip(reloaded.parameters(), base.parameters()))
    # The shipped form (bf16, no optimizer state) is small and loads the same way.
    shipped = checkpoint.export_adapter(last, tmp_path / "shipped")
    assert sorted(p.name for p in shipped.iterdir()) == ["adapter_config.json", "adapter_model.safetensors",
                                                         "fastapply_adapter.json"]
    apply_adapter(load_causal_lm(tiny_dir, torch.float32), shipped, tiny_dir.name)


def test_an_adapter_for_another_base_is_refused(tiny_dir, tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM

    model = peft_tiny(tiny_dir)
    d = tmp_path / "ad"
    model.save_pretrained(d)
    from fastapply.adapters import write_meta

    write_meta(d, "tiny", model)
    check_base(d, "tiny", load_causal_lm(tiny_dir, torch.float32))
    with pytest.raises(ApplyError, match="trained on base model 'tiny', not 'gemma3-270m'"):
        apply_adapter(load_causal_lm(tiny_dir, torch.float32), d, "gemma3-270m")
    wider = LlamaForCausalLM(LlamaConfig(vocab_size=101, hidden_size=48, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=2))
    with pytest.raises(ApplyError, match="trained on a base with config"):
        check_base(d, "tiny", wider)


def test_a_spec_with_an_adapter_inherits_its_base(tmp_path):
    (tmp_path / "x.toml").write_text('name = "x"\nbase = "gemma3-270m"\nadapter = "adapters/x"\n')
    spec = ModelSpec.load(str(tmp_path / "x.toml"))
    assert spec.prompt == SPEC.prompt and spec.stop == SPEC.stop and spec.weights == SPEC.weights
    assert spec.weights_name == "gemma3-270m" and spec.adapter_dir() == tmp_path / "adapters/x"


# -- bad input and the command ---------------------------------------------------------------


def test_malformed_jsonl_names_the_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps(case().__dict__) + "\n\n{not json\n")
    with pytest.raises(ApplyError, match=r"bad.jsonl:3: malformed JSON"):
        load_cases(p)
    p.write_text(json.dumps({"original": "a"}) + "\n")
    with pytest.raises(ApplyError, match=r"bad.jsonl:1: missing or non-string field\(s\) update, expected"):
        load_cases(p)


def test_a_model_dir_that_is_not_a_causal_lm(tmp_path):
    from transformers import ViTConfig

    ViTConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=1, intermediate_size=8).save_pretrained(tmp_path)
    with pytest.raises(ApplyError, match="not a causal language model"):
        load_causal_lm(tmp_path, torch.float32)


def test_train_command_end_to_end(tiny_dir, tmp_path, capsys):
    """Two steps through `fastapply train`, a dev point through the speculative engine, the curve."""
    from fastapply.cli import main

    data = write_jsonl(tmp_path / "train.jsonl", [case(i) for i in range(4)])
    dev = write_jsonl(tmp_path / "dev.jsonl", [case(9, 1)])
    out = tmp_path / "run"
    argv = ["train", "--data", str(data), "--dev", str(dev), "--dev-limit", "1", "--model", str(tiny_dir),
            "--out", str(out), "--steps", "2", "--batch", "2", "--eval-every", "2", "--rank", "4",
            "--max-tokens", "600", "--no-progress", "--export", str(tmp_path / "exported")]
    assert main(argv) == 0
    points = json.loads((out / "curve.json").read_text())["points"]
    assert [p["step"] for p in points] == [0, 2] and all(p["dev_cases"] == 1 for p in points)
    assert (out / "curve.png").stat().st_size > 0 and (tmp_path / "exported/adapter_model.safetensors").is_file()
    assert main(argv) == 0  # rerun: already at --steps, resumes and trains nothing
    assert "resuming" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    assert main(["train", "--data", str(bad), "--model", str(tiny_dir), "--out", str(tmp_path / "x")]) == 1
    assert "bad.jsonl:1: missing" in capsys.readouterr().err


def test_the_shipped_adapter_is_small_and_made_for_its_base():
    from fastapply.adapters import read_meta
    from fastapply.models import SPECS_DIR

    if not (SPECS_DIR / "gemma3-270m-apply.toml").is_file():
        pytest.skip("no shipped adapter spec")
    spec = ModelSpec.load("gemma3-270m-apply")
    meta = read_meta(spec.adapter_dir())
    assert meta["base_model"] == spec.weights_name == "gemma3-270m" and spec.stop == SPEC.stop
    assert sum(p.stat().st_size for p in spec.adapter_dir().iterdir()) < 16 * 2**20


def test_merged_weights_dir_is_built_once_per_adapter(tiny_dir, tmp_path, monkeypatch):
    from fastapply import models
    from fastapply.train.run import run_training

    last = run_training(train_cfg(tiny_dir, tmp_path, "m", 1, dtype="fp32"), log=lambda _: None)
    (tmp_path / "x.toml").write_text(f'name = "x"\nbase = "gemma3-270m"\nadapter = "{last}"\n')
    spec = ModelSpec.load(str(tmp_path / "x.toml"))
    monkeypatch.setattr(models, "resolve_weights", lambda name: (spec, tiny_dir))
    monkeypatch.setenv("FASTAPPLY_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ApplyError, match="trained on base model"):  # the run's base is the directory's name
        models.merged_weights_dir(spec)
    spec = ModelSpec(**{**spec.__dict__, "base": tiny_dir.name})
    out = models.merged_weights_dir(spec)
    assert out.parent == tmp_path / "cache" / "merged" and (out / "config.json").is_file()
    assert models.merged_weights_dir(spec) == out  # cached
    tok = char_tokenizer()
    ex = encode(case(3), SPEC, tok)
    ids = list(ex.input_ids[:ex.n_prompt])
    assert greedy(load_causal_lm(out, torch.float32), ids) == greedy(
        apply_adapter(load_causal_lm(tiny_dir, torch.float32), last, tiny_dir.name), ids)
