"""LoRA adapters (peft) on top of a base model: their metadata, the base check, and applying one.

An adapter directory is what `fastapply train` writes: peft's `adapter_config.json` and
`adapter_model.safetensors`, plus `fastapply_adapter.json` naming the base model it was trained
on and a signature of that base's config. Loading refuses an adapter made for another base with
one line, rather than letting peft fail on a shape deep inside, or worse, load it silently onto
a base of the same shape.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from fastapply.types import ApplyError

META_FILE = "fastapply_adapter.json"
# The config fields that must agree for an adapter's weights to mean anything on a base.
_SIGNATURE_KEYS = ("model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads")


def config_signature(model) -> dict:
    cfg = model.config.get_text_config()
    return {k: getattr(cfg, k, None) for k in _SIGNATURE_KEYS}


def write_meta(adapter_dir: Path, base_name: str, model, extra: dict | None = None) -> None:
    meta = {"base_model": base_name, "base_config": config_signature(model), **(extra or {})}
    (adapter_dir / META_FILE).write_text(json.dumps(meta, indent=1) + "\n")


def read_meta(adapter_dir: Path) -> dict:
    path = adapter_dir / META_FILE
    if not (adapter_dir / "adapter_config.json").is_file():
        raise ApplyError("invalid_argument", f"{adapter_dir}: not an adapter directory (no adapter_config.json)")
    if not path.is_file():
        raise ApplyError("invalid_argument", f"{adapter_dir}: no {META_FILE}; cannot tell which base it was trained on")
    return json.loads(path.read_text())


def check_base(adapter_dir: Path, base_name: str, model) -> None:
    """Refuse an adapter trained on another base: by name, then by the config's shape."""
    meta = read_meta(adapter_dir)
    if meta.get("base_model") != base_name:
        raise ApplyError("invalid_argument", f"adapter {adapter_dir} was trained on base model "
                                             f"{meta.get('base_model')!r}, not {base_name!r}")
    sig = config_signature(model)
    if meta.get("base_config") != sig:
        raise ApplyError("invalid_argument", f"adapter {adapter_dir} was trained on a base with config "
                                             f"{meta.get('base_config')}, not {sig}")


def adapter_hash(adapter_dir: Path) -> str:
    """A short content hash of the adapter's files (keys the merged-weights cache)."""
    h = hashlib.sha256()
    for p in sorted(adapter_dir.iterdir()):
        if p.is_file():
            h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def apply_adapter(model, adapter_dir: Path, base_name: str, merge: bool = True):
    """The base `model` with the adapter on top. Merged (merge_and_unload) for inference: a plain
    model again, so the decode loop and its backends see no difference and pay nothing per token."""
    from peft import PeftModel

    check_base(adapter_dir, base_name, model)
    peft_model = PeftModel.from_pretrained(model, str(adapter_dir))
    return peft_model.merge_and_unload() if merge else peft_model
