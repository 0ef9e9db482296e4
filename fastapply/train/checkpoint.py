"""Checkpoints: adapter + optimizer + scheduler + step + RNG + data position, written atomically.

Each checkpoint is built in a temp directory beside the others and renamed into place, so a
`step-NNNNNN` directory is always complete: a crash mid-save leaves only a `.tmp-*` directory,
which the next run removes. Resuming takes the highest complete step.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from fastapply.adapters import write_meta

STATE_FILE = "trainer_state.pt"


@dataclass
class TrainState:
    step: int = 0  # optimizer steps done
    position: int = 0  # training examples consumed (the data order's position)


def checkpoints_dir(out: Path) -> Path:
    return out / "checkpoints"


def step_dir(out: Path, step: int) -> Path:
    return checkpoints_dir(out) / f"step-{step:06d}"


def clean_partial(out: Path) -> None:
    """Remove what an interrupted save left behind."""
    for p in checkpoints_dir(out).glob(".tmp-*"):
        shutil.rmtree(p, ignore_errors=True)


def latest(out: Path) -> Path | None:
    done = sorted(p for p in checkpoints_dir(out).glob("step-*") if (p / STATE_FILE).is_file())
    return done[-1] if done else None


def atomic_dir(final: Path, write) -> Path:
    """Call `write(tmp_dir)`, then rename tmp_dir to `final` (replacing an older one)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=".tmp-" + final.name))
    try:
        write(tmp)
        if final.exists():
            shutil.rmtree(final)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def save(out: Path, state: TrainState, model, optimizer, scheduler, base_name: str, meta: dict) -> Path:
    def write(tmp: Path) -> None:
        model.save_pretrained(tmp)
        write_meta(tmp, base_name, model, {**meta, "step": state.step, "examples_seen": state.position})
        torch.save({"step": state.step, "position": state.position, "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "torch_rng": torch.get_rng_state(),
                    "python_rng": random.getstate()}, tmp / STATE_FILE)
    return atomic_dir(step_dir(out, state.step), write)


def load_adapter_weights(model, adapter_dir: Path) -> None:
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    set_peft_model_state_dict(model, load_file(adapter_dir / "adapter_model.safetensors"))


def restore(ckpt: Path, model, optimizer, scheduler) -> TrainState:
    load_adapter_weights(model, ckpt)
    st = torch.load(ckpt / STATE_FILE, weights_only=False)
    optimizer.load_state_dict(st["optimizer"])
    scheduler.load_state_dict(st["scheduler"])
    torch.set_rng_state(st["torch_rng"])
    random.setstate(st["python_rng"])
    return TrainState(step=st["step"], position=st["position"])


def export_adapter(ckpt: Path, dest: Path, dtype: torch.dtype = torch.bfloat16) -> Path:
    """The adapter alone (no optimizer state), its weights cast to `dtype`: what ships in models/."""
    from safetensors.torch import load_file, save_file

    def write(tmp: Path) -> None:
        weights = load_file(ckpt / "adapter_model.safetensors")
        save_file({k: v.to(dtype).contiguous() for k, v in weights.items()}, tmp / "adapter_model.safetensors")
        shutil.copy(ckpt / "fastapply_adapter.json", tmp / "fastapply_adapter.json")
        # peft records the base's local path; the shipped copy names the base model instead.
        config = json.loads((ckpt / "adapter_config.json").read_text())
        config["base_model_name_or_path"] = json.loads((ckpt / "fastapply_adapter.json").read_text())["base_model"]
        (tmp / "adapter_config.json").write_text(json.dumps(config, indent=2) + "\n")
    return atomic_dir(dest, write)
