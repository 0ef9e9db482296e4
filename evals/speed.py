"""Speed benchmark: fastapply beside plain decoding and HF prompt lookup, same model, same inputs.

    .venv/bin/python -m evals.speed --cases ../shared/evals/commits_dev.jsonl --limit 8 --max-lines 120 \
        --json out/speed.json

Per case, with one loaded model, dtype and prompt:
  (a) plain      HF `generate`, greedy
  (b) lookup     HF `generate(prompt_lookup_num_tokens=10)`
  (c) fastapply  our speculative loop, drafts from the structural merge, the original and the snippet
  (d) ceiling    our loop with the plain output itself as the draft (a perfect copier)
All four stop by the same rule (stop tokens, the spec's stop strings, the same token budget).
Every figure is measured in this run; ratios are medians over cases.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from rich.console import Console
from rich.table import Table
from transformers import StoppingCriteria, StoppingCriteriaList

from evals.common import load_cases, write_json
from fastapply.api import ApplyRequest, Stats
from fastapply.engine import ModelEngine
from fastapply.languages import detect_language
from fastapply.pipeline import draft_sources


class _SameStopRule(StoppingCriteria):
    """Our stop-string rule as an HF stopping criterion, so `generate` stops where we do."""

    def __init__(self, engine: ModelEngine, prompt_len: int):
        self.engine, self.prompt_len, self.checked = engine, prompt_len, 0

    def __call__(self, input_ids, scores, **kwargs):
        # Prompt lookup appends several tokens per step: check every token added since last call.
        out = input_ids[0, self.prompt_len:].tolist()
        new, self.checked = len(out) - self.checked, len(out)
        return torch.tensor([self.engine.stop_check(out, new) is not None], device=input_ids.device)


class _FirstTokenClock:
    """A `generate` streamer that notes when the first new token arrives (= end of prefill)."""

    def __init__(self):
        self.calls, self.first = 0, None

    def put(self, value):
        self.calls += 1
        if self.calls == 2 and self.first is None:  # call 1 is the prompt itself
            self.first = time.perf_counter()

    def end(self):
        pass


def hf_generate(engine: ModelEngine, ids: list[int], max_new: int, **kw) -> tuple[list[int], float, float]:
    """(tokens, prefill seconds, total seconds) of one HF `generate` call."""
    model = engine.loaded.model
    x = torch.tensor([ids], device=engine.backend.device)
    clock = _FirstTokenClock()
    t0 = time.perf_counter()
    with torch.inference_mode():
        y = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=max_new, do_sample=False,
                           eos_token_id=sorted(engine.stop_ids) or None,
                           pad_token_id=engine.tokenizer.pad_token_id or 0,
                           stopping_criteria=StoppingCriteriaList([_SameStopRule(engine, len(ids))]),
                           streamer=clock, top_p=None, top_k=None, temperature=None, **kw)
    t1 = time.perf_counter()
    return y[0, len(ids):].tolist(), (clock.first or t1) - t0, t1 - t0


def ours(engine: ModelEngine, req: ApplyRequest, drafts, k_max: int) -> tuple[list[int], Stats, float]:
    stats = Stats()
    t0 = time.perf_counter()
    toks = [t for chunk in engine.decode_tokens(req, drafts, None, stats, k_max) for t in chunk]
    return toks, stats, time.perf_counter() - t0


def run_case(engine: ModelEngine, case: dict, args) -> dict:
    req = ApplyRequest(case["original"], case["update"], language=case.get("language"))
    ids = engine.prompt_ids(req)
    max_new = engine.budget(req, len(ids))
    if args.fidelity_only:  # how much of the model's output the drafts foresee (no baselines)
        drafts, _ = draft_sources(req, detect_language(req.language, None, req.original))
        fa, st, fa_s = ours(engine, req, drafts, args.k_max)
        return {"id": case["id"], "output_tokens": len(fa), "accepted": st.accepted_tokens,
                "finished": engine.finished(fa), "tokens_per_pass": st.tokens_per_pass, "fastapply_s": fa_s,
                "copy_fidelity": st.accepted_tokens / max(1, len(fa))}
    plain, plain_pre, plain_s = hf_generate(engine, ids, max_new)
    row = {"id": case["id"], "prompt_tokens": len(ids), "output_tokens": len(plain),
           "finished": engine.finished(plain), "plain_s": plain_s, "plain_prefill_s": plain_pre}
    if not args.skip_prompt_lookup:
        lookup, _, lookup_s = hf_generate(engine, ids, max_new, prompt_lookup_num_tokens=10)
        row |= {"lookup_s": lookup_s, "lookup_identical": lookup == plain}
    # fastapply end to end includes preparing the drafts (the structural merge).
    t0 = time.perf_counter()
    drafts, _ = draft_sources(req, detect_language(req.language, None, req.original))
    prep_s = time.perf_counter() - t0
    fa, st, fa_s = ours(engine, req, drafts, args.k_max)
    row |= {"fastapply_s": prep_s + fa_s, "prepare_s": prep_s, "fastapply_prefill_s": st.prefill_s,
            "fastapply_decode_s": st.decode_s, "passes": st.forward_passes, "drafted": st.drafted_tokens,
            "accepted": st.accepted_tokens, "tokens_per_pass": st.tokens_per_pass, "identical": fa == plain,
            "structural_draft": drafts[0][0] == "structural"}
    ceil, cst, _ = ours(engine, req, [("oracle", engine.tokenizer.decode(plain, skip_special_tokens=True))], args.k_max)
    row |= {"ceiling_decode_s": cst.decode_s, "ceiling_tokens_per_pass": cst.tokens_per_pass,
            "ceiling_identical": ceil == plain}
    plain_decode = plain_s - plain_pre
    row |= {"speedup_vs_plain": plain_s / row["fastapply_s"],
            "decode_speedup_vs_plain": plain_decode / st.decode_s if st.decode_s else None,
            "ceiling_decode_speedup": plain_decode / cst.decode_s if cst.decode_s else None,
            "plain_tokens_per_s": len(plain) / plain_decode if plain_decode else None,
            "fastapply_tokens_per_s": st.tokens_per_s}
    if "lookup_s" in row:
        row["speedup_vs_prompt_lookup"] = row["lookup_s"] / row["fastapply_s"]
    return row


def summarize(rows: list[dict]) -> dict:
    def med(key):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    fidelity = sum(r["accepted"] for r in rows) / max(1, sum(r["output_tokens"] for r in rows))
    if rows and "identical" not in rows[0]:  # --fidelity-only
        return {"cases": len(rows), "copy_fidelity": fidelity, "tokens_per_pass": med("tokens_per_pass"),
                "finished_cases": sum(r["finished"] for r in rows)}
    return {"cases": len(rows), "all_identical": all(r["identical"] for r in rows),
            "speedup_vs_plain": med("speedup_vs_plain"), "speedup_vs_prompt_lookup": med("speedup_vs_prompt_lookup"),
            "decode_speedup_vs_plain": med("decode_speedup_vs_plain"), "tokens_per_pass": med("tokens_per_pass"),
            "ceiling_decode_speedup": med("ceiling_decode_speedup"),
            "ceiling_tokens_per_pass": med("ceiling_tokens_per_pass"),
            "plain_tokens_per_s": med("plain_tokens_per_s"), "fastapply_tokens_per_s": med("fastapply_tokens_per_s"),
            "finished_cases": sum(r["finished"] for r in rows), "copy_fidelity": fidelity}


def print_table(rows: list[dict], summary: dict, meta: dict) -> None:
    con = Console()
    if "identical" not in rows[0]:
        for r in rows:
            con.print(f"  {r['id']}: copy fidelity {r['copy_fidelity']:.3f}, {r['tokens_per_pass']:.1f} tokens/pass")
        con.print(summary)
        return
    t = Table(title=f"evals.speed — model {meta['model']} ({meta['dtype']}, {meta['device']}, "
                    f"{meta['threads']} threads)")
    for col in ("case", "out tok", "plain s", "lookup s", "fastapply s", "tok/pass", "ceil tok/pass", "identical"):
        t.add_column(col, justify="right" if col != "case" else "left")
    for r in rows:
        t.add_row(r["id"][-48:], str(r["output_tokens"]), f"{r['plain_s']:.1f}",
                  f"{r['lookup_s']:.1f}" if "lookup_s" in r else "-", f"{r['fastapply_s']:.1f}",
                  f"{r['tokens_per_pass']:.1f}", f"{r['ceiling_tokens_per_pass']:.1f}", str(r["identical"]))
    con.print(t)
    for k, v in summary.items():
        con.print(f"  {k}: {v:.3f}" if isinstance(v, float) else f"  {k}: {v}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--max-lines", type=int, default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--k-max", type=int, default=128)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--skip-prompt-lookup", action="store_true")
    ap.add_argument("--fidelity-only", action="store_true",
                    help="only fastapply: accepted draft tokens / output tokens (to compare models)")
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    cases = load_cases(args.cases, limit=args.limit, max_lines=args.max_lines)
    engine = ModelEngine.load(args.model, device=args.device, dtype=args.dtype)
    meta = {"model": engine.name, "dtype": engine.loaded.dtype, "device": engine.loaded.device,
            "threads": torch.get_num_threads(), "k_max": args.k_max, "cases_file": args.cases,
            "limit": args.limit, "max_lines": args.max_lines}
    # Warm up once (first-call allocations would otherwise land on case 1's plain run).
    engine.backend.prefill(engine.prompt_ids(ApplyRequest("x = 1\n", "x = 2\n")))
    engine.backend.release()
    rows = []
    for i, case in enumerate(cases, 1):
        rows.append(run_case(engine, case, args))
        r = rows[-1]
        print(f"[{i}/{len(cases)}] {r['id']}: {r['output_tokens']} tokens, plain {r.get('plain_s', 0):.1f}s, "
              f"fastapply {r['fastapply_s']:.1f}s, identical={r.get('identical')}", flush=True)
    summary = summarize(rows)
    print_table(rows, summary, meta)
    if args.json_out:
        write_json(args.json_out, {"meta": meta, "summary": summary, "cases": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
