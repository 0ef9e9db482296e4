"""A training run: load base + LoRA, build the examples, step, checkpoint, evaluate, plot.

Rerunning the same command resumes from the last complete checkpoint in `out`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fastapply.types import ApplyError


@dataclass
class TrainConfig:
    data: Path
    out: Path
    model: str | None = None
    dev: Path | None = None
    dev_limit: int = 20
    dev_max_tokens: int = 1024
    eval_every: int = 50
    save_every: int = 25
    steps: int = 200
    batch: int = 4
    lr: float = 2e-4
    warmup: int = 5
    max_tokens: int = 1024
    rank: int = 16
    targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
    threads: int | None = None
    device: str | None = None
    dtype: str | None = None
    seed: int = 0
    init_adapter: Path | None = None
    progress: bool = True


@dataclass
class Session:
    """What a run holds while it trains."""
    cfg: TrainConfig
    spec: object
    base_name: str
    tokenizer: object
    model: object
    device: str
    dtype: str
    examples: list = field(default_factory=list)
    dev_cases: list = field(default_factory=list)


def load_session(cfg: TrainConfig) -> Session:
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoTokenizer

    from fastapply.adapters import check_base
    from fastapply.models import DEFAULT_MODEL, ModelSpec, load_causal_lm, pick_device_dtype, resolve_weights

    # By default, the default model's base (the default itself may carry the adapter being retrained).
    spec, path = resolve_weights(cfg.model or ModelSpec.load(DEFAULT_MODEL).weights_name)
    is_dir = cfg.model is not None and Path(cfg.model).exists()
    if spec.adapter and not is_dir:
        raise ApplyError("invalid_argument", f"model {cfg.model!r} already carries an adapter; train on its base "
                                             f"{spec.weights_name!r} (with --init-adapter to start from it)")
    base_name = Path(cfg.model).name if is_dir else spec.weights_name
    device, dtype, _ = pick_device_dtype(cfg.device, cfg.dtype)
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    tok = AutoTokenizer.from_pretrained(path)
    base = load_causal_lm(path, torch_dtype).to(device)
    if cfg.init_adapter:
        check_base(cfg.init_adapter, base_name, base)
        model = PeftModel.from_pretrained(base, str(cfg.init_adapter), is_trainable=True)
    else:
        lora = LoraConfig(r=cfg.rank, lora_alpha=2 * cfg.rank, lora_dropout=0.0, target_modules=list(cfg.targets),
                          task_type="CAUSAL_LM")
        model = get_peft_model(base, lora)
    return Session(cfg, spec, base_name, tok, model, device, dtype)


def prepare_data(s: Session) -> str:
    from fastapply.train.data import load_cases
    from fastapply.train.deveval import dev_slice
    from fastapply.train.examples import build_examples

    cases = load_cases(s.cfg.data)
    s.examples, skipped = build_examples(cases, s.spec, s.tokenizer, s.cfg.max_tokens)
    if not s.examples:
        raise ApplyError("invalid_argument", f"{s.cfg.data}: no case fits --max-tokens {s.cfg.max_tokens}")
    if s.cfg.dev:
        s.dev_cases = dev_slice(load_cases(s.cfg.dev), s.spec, s.tokenizer, s.cfg.dev_limit, s.cfg.dev_max_tokens)
    cropped = sum(len(e.input_ids) for e in s.examples) / len(s.examples)
    return (f"{len(cases)} cases -> {len(s.examples)} examples (skipped {skipped} that fit no window of "
            f"{s.cfg.max_tokens} tokens; mean {cropped:.0f} tokens); dev slice {len(s.dev_cases)} cases")


def run_training(cfg: TrainConfig, on_step: Callable[[int, float], None] | None = None,
                 log: Callable[[str], None] = print) -> Path:
    """Train to `cfg.steps` optimizer steps; returns the last checkpoint. `on_step(step, loss)` is
    called after each step (tests interrupt a run from it)."""
    import torch

    from fastapply.train import checkpoint, curve
    from fastapply.train.loop import make_optimizer

    cfg.out.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    s = load_session(cfg)
    log(prepare_data(s))
    optimizer, scheduler = make_optimizer(s.model, cfg.lr, cfg.warmup, cfg.steps)
    checkpoint.clean_partial(cfg.out)
    last = checkpoint.latest(cfg.out)
    state = checkpoint.restore(last, s.model, optimizer, scheduler) if last else checkpoint.TrainState()
    if last:
        log(f"resuming from {last} (step {state.step}, {state.position} examples seen)")
    points = [p for p in curve.load(cfg.out) if p["step"] <= state.step]
    meta = {"config": {k: str(v) for k, v in asdict(cfg).items()}, "base_model": s.base_name}
    if not points:
        points.append(_point(s, state, None, 0.0))
        curve.write(cfg.out, points, _curve_meta(s, meta))
    _steps(s, state, optimizer, scheduler, points, meta, on_step, log)
    return checkpoint.latest(cfg.out)


def _curve_meta(s: Session, meta: dict) -> dict:
    return {**meta, "title": f"fastapply train: {s.base_name} + LoRA r{s.cfg.rank}, {len(s.examples)} examples"}


def _point(s: Session, state, loss: float | None, seconds: float) -> dict:
    from fastapply.train.deveval import dev_exact

    p = {"step": state.step, "examples": state.position, "loss": loss, "train_seconds": round(seconds, 1)}
    if s.dev_cases:
        t0 = time.perf_counter()
        score = dev_exact(s.model, s.spec, s.tokenizer, s.dev_cases, s.device, s.dtype)
        p.update(dev_exact=score.exact, dev_ok_exact=score.ok_exact, dev_cases=score.cases,
                 dev_seconds=round(time.perf_counter() - t0, 1), dev_exact_ids=list(score.ids_exact))
    return p


def _steps(s: Session, state, optimizer, scheduler, points: list[dict], meta: dict, on_step, log) -> None:
    from fastapply.train import checkpoint, curve
    from fastapply.train.loop import batch_at, train_step
    from fastapply.train.progress import Progress

    cfg = s.cfg
    losses: list[float] = []
    # train_seconds counts across resumed runs: a curve's time axis is the whole run's
    t0 = time.perf_counter() - (points[-1]["train_seconds"] if points else 0.0)
    with Progress(cfg.steps, state.step, enabled=cfg.progress) as bar:
        while state.step < cfg.steps:
            batch = [s.examples[i] for i in batch_at(len(s.examples), state.position, cfg.batch, cfg.seed)]
            loss = train_step(s.model, optimizer, scheduler, batch, s.device)
            state.step += 1
            state.position += cfg.batch
            losses.append(loss)
            bar.update(state.step, loss, state.position)
            evaluate = state.step % cfg.eval_every == 0 or state.step == cfg.steps
            if evaluate or state.step % cfg.save_every == 0:
                checkpoint.save(cfg.out, state, s.model, optimizer, scheduler, s.base_name,
                                {"spec": s.spec.name, "rank": cfg.rank})
                mean = sum(losses) / len(losses)
                points.append(_point(s, state, mean, time.perf_counter() - t0) if evaluate else
                              {"step": state.step, "examples": state.position, "loss": mean,
                               "train_seconds": round(time.perf_counter() - t0, 1)})
                losses.clear()
                curve.write(cfg.out, points, _curve_meta(s, meta))
                bar.log(_describe(points[-1]))
            if on_step:
                on_step(state.step, loss)


def _describe(p: dict) -> str:
    dev = f", dev exact {p['dev_exact']}/{p['dev_cases']}" if "dev_cases" in p else ""
    return f"step {p['step']}: {p['examples']} examples, loss {p['loss']:.4f}{dev}"

