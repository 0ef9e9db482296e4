"""Seconds per training example of `fastapply train`'s step, for a few configurations.

    .venv/bin/python -m evals.train_step_time --data cases.jsonl [--model gemma3-270m] \
        --dtypes bf16,fp32 --max-tokens 512,1024 --heads sliced,full --steps 3 --threads 1 --json out/t.json

Per configuration: one LoRA model (rank --rank on q, k, v, o), the first --steps examples of the
data (cropped to max-tokens as training crops them), one forward + backward + optimizer step per
example; the first is a warm-up and is not counted. `sliced` applies the LM head to the target
positions only (what `fastapply train` does); `full` computes the logits of every position and
masks the prompt with labels (the usual transformers loss), for comparison.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from evals.common import write_json
from fastapply.models import DEFAULT_MODEL, ModelSpec, load_causal_lm, resolve_weights
from fastapply.train.data import load_cases
from fastapply.train.examples import build_examples
from fastapply.train.loop import make_optimizer, target_loss_sum


def full_head_loss(model, ex, device) -> torch.Tensor:
    ids = torch.tensor([ex.input_ids], device=device)
    out = model(input_ids=ids, labels=torch.tensor([ex.labels()], device=device))
    return out.loss * ex.n_target


def time_config(path, spec, tok, cases, dtype: str, max_tokens: int, head: str, rank: int, steps: int) -> dict:
    from peft import LoraConfig, get_peft_model

    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    model = get_peft_model(load_causal_lm(path, torch_dtype), LoraConfig(
        r=rank, lora_alpha=2 * rank, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"], task_type="CAUSAL_LM"))
    examples, _ = build_examples(cases, spec, tok, max_tokens)
    opt, _ = make_optimizer(model, 1e-4, 1, 10)
    secs, tokens = [], []
    for ex in examples[:steps + 1]:
        t0 = time.perf_counter()
        loss = target_loss_sum(model, ex, "cpu") if head == "sliced" else full_head_loss(model, ex, "cpu")
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        secs.append(time.perf_counter() - t0)
        tokens.append(len(ex.input_ids))
    return {"dtype": dtype, "max_tokens": max_tokens, "head": head, "examples": len(secs) - 1,
            "seconds_per_example_median": round(statistics.median(secs[1:]), 2) if len(secs) > 1 else None,
            "tokens_median": statistics.median(tokens[1:]) if len(tokens) > 1 else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", default=None)
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--max-tokens", default="768")
    ap.add_argument("--heads", default="sliced,full")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    from transformers import AutoTokenizer

    torch.set_num_threads(args.threads)
    spec, path = resolve_weights(args.model or ModelSpec.load(DEFAULT_MODEL).weights_name)
    tok = AutoTokenizer.from_pretrained(path)
    cases = load_cases(args.data, limit=4 * (args.steps + 1))
    rows = []
    for dtype in args.dtypes.split(","):
        for mt in (int(x) for x in args.max_tokens.split(",")):
            for head in args.heads.split(","):
                rows.append(time_config(path, spec, tok, cases, dtype, mt, head, args.rank, args.steps))
                print(rows[-1], flush=True)
    if args.json:
        write_json(args.json, {"threads": args.threads, "model": str(path), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
