"""`fastapply train`: the command line of fastapply.train (registered in cli.FRONTENDS)."""

from __future__ import annotations

from pathlib import Path

from fastapply.types import ApplyError


def register(sub) -> None:
    p = sub.add_parser("train", help="LoRA fine-tune a causal LM to apply edits (resumes from --out's last checkpoint)")
    p.add_argument("--data", required=True, type=Path, help="training cases, JSONL (original, update, expected, ...)")
    p.add_argument("--out", required=True, type=Path, help="run directory: checkpoints/, curve.json, curve.png")
    p.add_argument("--model", default=None, help="base: model spec name (default: the default model's base) or HF dir")
    p.add_argument("--dev", type=Path, default=None, help="dev cases, JSONL: exact match every --eval-every steps")
    p.add_argument("--dev-limit", type=int, default=20, help="dev cases in the fixed slice (default 20)")
    p.add_argument("--dev-max-tokens", type=int, default=1024, help="only dev cases whose prompt fits (default 1024)")
    p.add_argument("--eval-every", type=int, default=50, help="steps between dev evaluations (default 50)")
    p.add_argument("--save-every", type=int, default=25, help="steps between checkpoints (default 25)")
    p.add_argument("--steps", type=int, default=200, help="optimizer steps in all (default 200)")
    p.add_argument("--batch", type=int, default=4, help="examples per step, by gradient accumulation (default 4)")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--warmup", type=int, default=5, help="warm-up steps (default 5)")
    p.add_argument("--max-tokens", type=int, default=1024,
                   help="prompt + target tokens per example; longer cases are cropped around the edit (default 1024)")
    p.add_argument("--rank", type=int, default=16, help="LoRA rank (default 16)")
    p.add_argument("--targets", default="q_proj,k_proj,v_proj,o_proj", help="LoRA target modules, comma-separated")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    p.add_argument("--dtype", default=None, choices=["fp32", "bf16", "fp16"], help="default: bf16 on CUDA, fp32 on CPU")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init-adapter", type=Path, default=None, help="start from this adapter (same base)")
    p.add_argument("--no-progress", action="store_true", help="log lines instead of a progress bar")
    p.add_argument("--export", type=Path, default=None,
                   help="after training, write the best checkpoint's adapter (bf16, no optimizer state) here")
    p.add_argument("--export-step", type=int, default=None, help="export this step instead of the best dev step")
    p.set_defaults(func=cmd_train)


def cmd_train(args) -> int:
    from fastapply.train.run import TrainConfig, run_training

    for name in ("steps", "batch", "eval_every", "save_every", "max_tokens", "rank", "dev_limit"):
        if getattr(args, name) < 1:
            raise ApplyError("invalid_argument", f"--{name.replace('_', '-')} must be at least 1")
    cfg = TrainConfig(data=args.data, out=args.out, model=args.model, dev=args.dev, dev_limit=args.dev_limit,
                      dev_max_tokens=args.dev_max_tokens, eval_every=args.eval_every, save_every=args.save_every,
                      steps=args.steps, batch=args.batch, lr=args.lr, warmup=args.warmup, max_tokens=args.max_tokens,
                      rank=args.rank, targets=tuple(t for t in args.targets.split(",") if t), threads=args.threads,
                      device=args.device, dtype=args.dtype, seed=args.seed, init_adapter=args.init_adapter,
                      progress=not args.no_progress)
    last = run_training(cfg)
    print(f"fastapply train: last checkpoint {last}")
    if args.export:
        print(f"fastapply train: exported {export(args.out, args.export, args.export_step)}")
    return 0


def export(out: Path, dest: Path, step: int | None) -> Path:
    from fastapply.train import checkpoint, curve

    step = step if step is not None else curve.best_step(curve.load(out))
    ckpt = checkpoint.step_dir(out, step) if step is not None else checkpoint.latest(out)
    if ckpt is None or not (ckpt / checkpoint.STATE_FILE).is_file():
        raise ApplyError("invalid_argument", f"{out}: no checkpoint for step {step}")
    return checkpoint.export_adapter(ckpt, dest)
