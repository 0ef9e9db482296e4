"""The hardware side of the speedup formula, on whatever device runs it (the device check).

    python -m evals.gpu_cost --config qwen2.5-7b --draft-config qwen2.5-0.5b --device cuda --dtype bf16 \
        --patterns evals/results/draft_model/speed_qwen15_dm05_commits_dev_8.json --json out/gpu_cost.json

A model of a published shape (Qwen2.5-7B's configuration: random weights, so no weights travel)
runs through our HF backend and decode loop:
  1. verify-pass cost: one `HFBackend.forward` of a chunk of 1, 16, 64, 128, 256 tokens at
     contexts of 1k-8k tokens (median of a few repeats; a chunk is cropped after each);
  2. the loop's overhead per pass: our decode loop (drafter, verifier, crop) minus its forward
     passes, with drafts that are always accepted (the loop's own greedy output as the draft);
  3. the same costs for the draft model's shape (`--draft-config`): its one-token step, hence c;
  4. with acceptance patterns measured on CPU (`evals.speed` JSON: each request's passes as
     file tokens, model tokens, accepted; or `evals.drafting` JSON: tokens per pass and acceptance),
     the predicted tokens/s per request and the median, plain decoding's beside it.
Random weights give the real cost of every pass (the arithmetic does not depend on the values);
what they cannot give, acceptance, comes from the CPU runs.
"""

from __future__ import annotations

import argparse
import bisect
import json
import statistics
import time
from collections.abc import Callable, Sequence

import torch

# Published shapes (Hugging Face config.json of Qwen/Qwen2.5-7B-Instruct and Qwen/Qwen2.5-0.5B-Instruct),
# and a tiny one for the test suite.
CONFIGS: dict[str, dict] = {
    "qwen2.5-7b": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                       num_key_value_heads=4, vocab_size=152064, max_position_embeddings=32768, rope_theta=1e6,
                       rms_norm_eps=1e-6, tie_word_embeddings=False),
    "qwen2.5-0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                         num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1e6,
                         rms_norm_eps=1e-6, tie_word_embeddings=True),
    # the CPU pair's target (the converted Qwen2.5-Coder-1.5B-Instruct's config.json): checks the
    # replay against what evals.speed measured on the same machine
    "qwen2.5-1.5b": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                         num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1e6,
                         rms_norm_eps=1e-6, tie_word_embeddings=False),
    "tiny": dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=512, max_position_embeddings=4096, rope_theta=1e6,
                 rms_norm_eps=1e-6, tie_word_embeddings=False),
}
CHUNKS = (1, 16, 64, 128, 256)
CONTEXTS = (1024, 2048, 4096, 8192)
REPEATS = 3  # timed forwards per (context, chunk), after one untimed warm-up; the median counts
LOOP_TOKENS = 256  # tokens the decode loop writes to measure its overhead per pass
DEFAULT_CONTEXT = 2048  # a request's context when its pattern does not say (evals.drafting rows)


def build(config: str, device: str, dtype: torch.dtype):
    """A Qwen2 causal LM of a named shape with random weights, made directly on the device."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(**CONFIGS[config], attn_implementation="sdpa")
    torch.manual_seed(0)
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = Qwen2ForCausalLM(cfg)
    finally:
        torch.set_default_dtype(old)
    return model.eval()


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn: Callable[[], object], device: str) -> float:
    _sync(device)
    t0 = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - t0


def pass_costs(backend, device: str, contexts: Sequence[int], chunks: Sequence[int], vocab: int,
               repeats: int = REPEATS) -> dict:
    """{"prefill": {ctx: s}, "forward": {ctx: {chunk: s}}}: seconds of one prefill and one verify pass."""
    gen = torch.Generator().manual_seed(1)
    out: dict = {"prefill": {}, "forward": {}}
    for ctx in contexts:
        ids = torch.randint(0, vocab, (ctx,), generator=gen).tolist()
        out["prefill"][ctx] = timed(lambda: backend.prefill(ids), device)
        row = {}
        for n in chunks:
            chunk = torch.randint(0, vocab, (n,), generator=gen).tolist()
            times = []
            for r in range(repeats + 1):
                times.append(timed(lambda: backend.forward(chunk), device))
                backend.crop(n)
            row[n] = statistics.median(times[1:])
        out["forward"][ctx] = row
        backend.release()
    return out


class CostModel:
    """Seconds of one forward pass of `chunk` tokens at `context`, interpolated linearly between the
    measured grid (clamped at its edges)."""

    def __init__(self, forward: dict, prefill: dict | None = None):
        self.contexts = sorted(int(c) for c in forward)
        self.table = {int(c): {int(n): s for n, s in row.items()} for c, row in forward.items()}
        self.chunks = sorted(self.table[self.contexts[0]])
        self.prefills = {int(c): s for c, s in (prefill or {}).items()}

    def prefill(self, context: float) -> float:
        """Seconds of a prefill of `context` tokens (0 when not measured)."""
        if not self.prefills:
            return 0.0
        return self._interp(sorted(self.prefills), context, lambda c: self.prefills[c])

    @staticmethod
    def _interp(xs: list[int], x: float, f: Callable[[int], float]) -> float:
        if x <= xs[0]:
            return f(xs[0])
        if x >= xs[-1]:
            return f(xs[-1])
        j = bisect.bisect_left(xs, x)
        x0, x1 = xs[j - 1], xs[j]
        w = (x - x0) / (x1 - x0)
        return (1 - w) * f(x0) + w * f(x1)

    def __call__(self, chunk: float, context: float) -> float:
        return self._interp(self.contexts, context,
                            lambda c: self._interp(self.chunks, chunk, lambda n: self.table[c][n]))


def loop_overhead(model, backend, device: str, cost: CostModel, vocab: int, tokens: int = LOOP_TOKENS) -> dict:
    """Our decode loop's seconds per pass beyond its forward passes: plain (one token a pass) and
    speculative (its own greedy output as the draft, so every draft is accepted)."""
    from fastapply.decode import DecodeConfig, decode
    from fastapply.draft import SourceDrafter
    from fastapply.types import Stats

    prompt = torch.randint(0, vocab, (1024,), generator=torch.Generator().manual_seed(2)).tolist()
    cfg = DecodeConfig(max_new_tokens=tokens)

    def run(drafter) -> tuple[list[int], Stats, float]:
        st = Stats(pass_log=[])
        _sync(device)
        t0 = time.perf_counter()
        out = [t for c in decode(backend, prompt, drafter, cfg, frozenset(), stats=st) for t in c]
        _sync(device)
        return out, st, time.perf_counter() - t0

    plain, pst, plain_s = run(None)
    plain_fwd = sum(cost(1, len(prompt) + i) for i in range(1, len(plain)))
    _, sst, spec_s = run(SourceDrafter([("oracle", plain)], use_history=False))
    spec_fwd, done = 0.0, 1
    for segments, accepted in sst.pass_log:
        spec_fwd += cost(1 + sum(n for _, n in segments), len(prompt) + done)
        done += accepted + 1
    decode_plain = plain_s - pst.prefill_s
    decode_spec = spec_s - sst.prefill_s
    return {"plain_per_pass_s": max(0.0, decode_plain - plain_fwd) / max(1, pst.forward_passes - 1),
            "spec_per_pass_s": max(0.0, decode_spec - spec_fwd) / max(1, sst.forward_passes - 1),
            "plain_decode_s": decode_plain, "spec_decode_s": decode_spec, "spec_passes": sst.forward_passes - 1,
            "tokens": len(plain)}


def request_patterns(data: dict) -> list[dict]:
    """Acceptance patterns per request from `evals.speed` JSON (exact passes) or `evals.drafting`
    JSON (tokens per pass and acceptance: a mean pass)."""
    rows = []
    for r in data.get("cases", []):
        if "file" in r and isinstance(r["file"], dict) and "pass_shapes" in r["file"]:  # evals.speed
            runs = {"file": r["file"]["pass_shapes"]}
            if "file+model" in r:
                runs["file+model"] = r["file+model"]["pass_shapes"]
            rows.append({"id": r["id"], "context": r.get("prompt_tokens", DEFAULT_CONTEXT),
                         "output_tokens": r["output_tokens"], "runs": runs})
        elif "structural" in r:  # evals.drafting: the speculative engine's drafter
            s = r["structural"]
            accepted_per_pass = s["tokens_per_pass"] - 1
            drafted = accepted_per_pass / s["acceptance"] if s["acceptance"] else 0.0
            shape = [drafted, 0, accepted_per_pass]
            rows.append({"id": r["id"], "context": DEFAULT_CONTEXT, "output_tokens": r["output_tokens"],
                         "runs": {"file": [shape] * s["passes"]}})
    return rows


def predict_request(req: dict, cost: CostModel, overhead: dict, draft_cost: CostModel | None) -> dict:
    """Predicted decode seconds and tokens/s of one request: plain, and each drafting run replayed
    pass by pass (verify cost at its chunk and context, the loop's overhead, the draft model's
    prefill of the prompt at its first proposal, its catch-up chunks and its steps)."""
    ctx0, n_out = req["context"], req["output_tokens"]
    plain_s = sum(cost(1, ctx0 + i) + overhead["plain_per_pass_s"] for i in range(n_out))
    out = {"id": req["id"], "output_tokens": n_out, "plain_tokens_per_s": n_out / plain_s if plain_s else None}
    for run, passes in req["runs"].items():
        # lag: output tokens the draft model's cache has not seen (at least the last pass's own token)
        t, done, lag = 0.0, 1, 1
        if draft_cost is not None and any(model_n for _, model_n, _ in passes):
            t += draft_cost.prefill(ctx0)
        for file_n, model_n, accepted in passes:
            ctx = ctx0 + done
            t += cost(1 + file_n + model_n, ctx) + overhead["spec_per_pass_s"]
            if model_n and draft_cost is not None:
                # one forward catches up (and yields the first model token), then a step per token
                t += draft_cost(lag + file_n, ctx) + (model_n - 1) * draft_cost(1, ctx)
                lag = 1
            else:
                lag += accepted + 1
            done += accepted + 1
        tokens = max(done, 1)
        out[f"{run}_tokens_per_pass"] = tokens / max(1, len(passes))
        out[f"{run}_tokens_per_s"] = tokens / t if t else None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="qwen2.5-7b", choices=sorted(CONFIGS))
    ap.add_argument("--draft-config", default=None, choices=sorted(CONFIGS), help="the draft model's shape (c)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    ap.add_argument("--contexts", default=",".join(map(str, CONTEXTS)))
    ap.add_argument("--chunks", default=",".join(map(str, CHUNKS)))
    ap.add_argument("--repeats", type=int, default=REPEATS)
    ap.add_argument("--loop-tokens", type=int, default=LOOP_TOKENS)
    ap.add_argument("--patterns", nargs="*", default=[], help="evals.speed / evals.drafting JSON files")
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args(argv)
    from fastapply.backends.hf import HFBackend

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    contexts = [int(x) for x in args.contexts.split(",")]
    chunks = [int(x) for x in args.chunks.split(",")]
    t0 = time.perf_counter()
    device_name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu"
    print(f"gpu_cost: {args.config} ({args.dtype}) on {device_name}; torch {torch.__version__}", flush=True)
    model = build(args.config, args.device, dtype)
    vocab = CONFIGS[args.config]["vocab_size"]
    backend = HFBackend(model, args.device)
    costs = pass_costs(backend, args.device, contexts, chunks, vocab, args.repeats)
    cost = CostModel(costs["forward"])
    for ctx in contexts:
        print(f"  context {ctx:>6}: prefill {costs['prefill'][ctx] * 1e3:8.1f} ms; verify pass "
              + "  ".join(f"{n}:{costs['forward'][ctx][n] * 1e3:.1f}ms" for n in chunks), flush=True)
    overhead = loop_overhead(model, backend, args.device, cost, vocab, args.loop_tokens)
    print(f"  loop overhead per pass: plain {overhead['plain_per_pass_s'] * 1e3:.2f} ms, speculative "
          f"{overhead['spec_per_pass_s'] * 1e3:.2f} ms ({overhead['spec_passes']} passes)", flush=True)
    result = {"meta": {"config": args.config, "draft_config": args.draft_config, "device": device_name,
                       "dtype": args.dtype, "torch": torch.__version__},
              "target": costs, "loop_overhead": overhead}
    del backend, model
    if args.device.startswith("cuda"):
        torch.cuda.empty_cache()
    draft_cost = None
    if args.draft_config:
        dmodel = build(args.draft_config, args.device, dtype)
        # a draft model catches up in chunks of a few tokens and steps one at a time
        draft_chunks = [c for c in chunks if c <= 64] or [1]
        dcosts = pass_costs(HFBackend(dmodel, args.device), args.device, contexts, draft_chunks,
                            CONFIGS[args.draft_config]["vocab_size"], args.repeats)
        draft_cost = CostModel(dcosts["forward"], dcosts["prefill"])
        c = {ctx: dcosts["forward"][ctx][1] / costs["forward"][ctx][1] for ctx in contexts}
        result["draft"], result["cost_ratio"] = dcosts, c
        print("  cost ratio c (draft step / target pass): " + "  ".join(f"{ctx}:{v:.3f}" for ctx, v in c.items()),
              flush=True)
        del dmodel
    predictions = []
    for path in args.patterns:
        with open(path, encoding="utf-8") as f:
            predictions += [predict_request(r, cost, overhead, draft_cost) for r in request_patterns(json.load(f))]
    if predictions:
        suffix = "_tokens_per_s"
        runs = list(dict.fromkeys(k[:-len(suffix)] for p in predictions for k in p if k.endswith(suffix)))
        print(f"  predicted decode tokens/s per request ({args.config} on {device_name}):")
        print("    " + f"{'request':<50} {'out tok':>7} " + " ".join(f"{r:>14}" for r in runs))
        for p in predictions:
            print("    " + f"{p['id'][-50:]:<50} {p['output_tokens']:>7} "
                  + " ".join(f"{v:>14.1f}" if v else f"{'-':>14}" for v in (p.get(f"{r}_tokens_per_s") for r in runs)))
        medians = {r: statistics.median(p[f"{r}_tokens_per_s"] for p in predictions if p.get(f"{r}_tokens_per_s"))
                   for r in runs}
        print("    " + f"{'median':<50} {'':>7} " + " ".join(f"{medians[r]:>14.1f}" for r in runs), flush=True)
        result["predictions"], result["median_tokens_per_s"] = predictions, medians
    result["wall_s"] = time.perf_counter() - t0
    if args.json_out:
        from pathlib import Path

        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"gpu_cost: done in {result['wall_s']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
