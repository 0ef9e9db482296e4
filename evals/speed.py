"""Speed benchmark: fastapply beside plain decoding and HF prompt lookup, same model, same inputs.

    .venv/bin/python -m evals.speed --cases evals/cases/commits_dev.jsonl --limit 8 --max-lines 120 \
        --json out/speed.json
    .venv/bin/python -m evals.speed --model qwen2.5-coder-1.5b --draft-model qwen2.5-coder-0.5b \
        --cases evals/cases/commits_dev.jsonl --min-new-fraction 0.15 --max-lines 120 --json out/dm.json

Per case, with one loaded model, dtype and prompt:
  (a) plain      HF `generate`, greedy
  (b) lookup     HF `generate(prompt_lookup_num_tokens=10)`
  (c) fastapply  our speculative loop, drafts from the structural merge, the original and the snippet
  (c') file+model  the same, and the draft model extends where the file has nothing (`--draft-model`)
  (d) ceiling    our loop with the plain output itself as the draft (a perfect copier)
All stop by the same rule (stop tokens, the spec's stop strings, the same token budget).
Every figure is measured in this run; ratios are medians over cases.

Beside the measurement, the formula (`evals.spec_formula`, Leviathan et al.): per run, the
per-token acceptance alpha of each draft source group ("file", "model"), tokens per pass, the cost
ratio c = one draft-model step / one plain decoding step (both measured in the run), and the
speedup the formula predicts from alpha, each pass's k and c, next to the measured decode speedup.
JSON `summary` keys (an interface): `all_identical`, `speedup_vs_plain` (the file run, end to end),
`tokens_per_pass`, `alpha_by_source`, `predicted_speedup` and `measured_speedup` (each keyed by run:
"file", "file+model"; `predicted_speedup` also at `--predict-c`), `cost_ratio` and
`speedup_vs_file_only` (file run decode time / file+model run decode time: the prefill is the same
work in both, and the draft model's own prefill runs inside decoding) with `--draft-model`.

`--min-new-fraction F` keeps the cases whose expected file has at least that fraction of tokens
that no source holds: a token of the expected file (the model's tokenizer) is held when it lies
inside some window of NEW_NGRAM consecutive expected tokens that occurs verbatim in a source's
tokens; `--new-against original` (default) takes the original file as the only source (the tokens
the edit brings), `sources` takes every draft source (the merge or its candidates, the original,
the snippet).
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
from evals.spec_formula import alpha_by_group, pool, predicted_speedup
from fastapply.api import ApplyRequest, Stats
from fastapply.engine import ModelEngine
from fastapply.languages import detect_language
from fastapply.models import check_model_name
from fastapply.pipeline import draft_sources

# A window this long matching a source means copied text, not a coincidence of short common
# tokens (`) {`, a newline and indentation).
NEW_NGRAM = 4
FILE_RUN, MODEL_RUN = "file", "file+model"


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
    stats = Stats(pass_log=[])
    t0 = time.perf_counter()
    toks = [t for chunk in engine.decode_tokens(req, drafts, None, stats, k_max) for t in chunk]
    return toks, stats, time.perf_counter() - t0


def new_token_fraction(target: list[int], sources: list[list[int]], n: int = NEW_NGRAM) -> float:
    """The fraction of `target` tokens no source holds: not inside any window of n consecutive
    target tokens that occurs verbatim in one of `sources`."""
    grams = {tuple(src[i:i + n]) for src in sources for i in range(len(src) - n + 1)}
    held = [False] * len(target)
    for i in range(len(target) - n + 1):
        if tuple(target[i:i + n]) in grams:
            held[i:i + n] = [True] * n
    return 1.0 - sum(held) / len(target) if target else 0.0


def case_new_fraction(encode, case: dict, against: str) -> float:
    """`new_token_fraction` of one case, `encode` being the model's tokenizer (text -> ids)."""
    req = ApplyRequest(case["original"], case["update"], language=case.get("language"))
    if against == "original":
        texts = [case["original"]]
    else:
        texts = [text for _, text in draft_sources(req, detect_language(req.language, None, req.original))[0]]
    return new_token_fraction(encode(case["expected"]), [encode(t) for t in texts])


def select_cases(args) -> list[dict]:
    """The cases a run takes: file order, `--max-lines`, `--min-new-fraction` (the model's tokenizer
    only, no weights), `--limit`, then `--case-index`; each gets its `new_fraction` when filtered."""
    filtering = args.min_new_fraction is not None
    cases = load_cases(args.cases, limit=None if filtering else args.limit, max_lines=args.max_lines)
    if filtering:
        from transformers import AutoTokenizer

        from fastapply.models import resolve_weights

        tok = AutoTokenizer.from_pretrained(resolve_weights(args.model)[1])

        def encode(text):
            return tok(text, add_special_tokens=False)["input_ids"]

        for c in cases:
            c["new_fraction"] = case_new_fraction(encode, c, args.new_against)
        cases = [c for c in cases if c["new_fraction"] >= args.min_new_fraction][:args.limit]
    if args.case_index is not None:
        cases = cases[args.case_index:args.case_index + 1]
    return cases


def run_figures(st: Stats, c: float, plain_decode_s: float | None, predict_c: list[float]) -> dict:
    """One speculative run's drafting figures: alpha per group and per source, the formula's
    prediction (at the measured c, and at each `predict_c`), the measured decode speedup."""
    alphas = alpha_by_group(st.by_source)
    fig = {"alpha_by_source": alphas,
           "alpha_by_name": {name: cnt["accepted"] / max(1, cnt["accepted"] + cnt["rejected"])
                             for name, cnt in st.by_source.items()},
           "by_source": st.by_source,
           "predicted_speedup": predicted_speedup(st.pass_log, alphas, c),
           "measured_speedup": plain_decode_s / st.decode_s if plain_decode_s and st.decode_s else None,
           # (file tokens, model tokens, accepted) per pass: the acceptance pattern the device check replays
           "pass_shapes": [[sum(n for name, n in seg if name != "model"), sum(n for name, n in seg if name == "model"),
                            acc] for seg, acc in st.pass_log]}
    if any(name == "model" for name in st.by_source):
        fig["predicted_speedup_at"] = {str(x): predicted_speedup(st.pass_log, alphas, x) for x in predict_c}
    return fig


def run_case(engine: ModelEngine, case: dict, args, engine_dm: ModelEngine | None = None) -> dict:
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
    row = {"id": case["id"], "new_fraction": case.get("new_fraction"), "prompt_tokens": len(ids),
           "output_tokens": len(plain),
           "finished": engine.finished(plain), "plain_s": plain_s, "plain_prefill_s": plain_pre}
    if not args.skip_prompt_lookup:
        lookup, _, lookup_s = hf_generate(engine, ids, max_new, prompt_lookup_num_tokens=10)
        row |= {"lookup_s": lookup_s, "lookup_identical": lookup == plain}
    # fastapply end to end includes preparing the drafts (the structural merge).
    t0 = time.perf_counter()
    drafts, _ = draft_sources(req, detect_language(req.language, None, req.original))
    prep_s = time.perf_counter() - t0
    fa, st, fa_s = ours(engine, req, drafts, args.k_max)
    plain_decode = plain_s - plain_pre
    row |= {"fastapply_s": prep_s + fa_s, "prepare_s": prep_s, "fastapply_prefill_s": st.prefill_s,
            "fastapply_decode_s": st.decode_s, "passes": st.forward_passes, "drafted": st.drafted_tokens,
            "accepted": st.accepted_tokens, "tokens_per_pass": st.tokens_per_pass, "identical": fa == plain,
            "structural_draft": drafts[0][0] == "structural"}
    row[FILE_RUN] = run_figures(st, 0.0, plain_decode, [])
    if engine_dm is not None:
        row[MODEL_RUN] = model_run(engine_dm, req, drafts, args, row, plain, st)
    if not args.skip_ceiling:
        ceil, cst, _ = ours(engine, req, [("oracle", engine.tokenizer.decode(plain, skip_special_tokens=True))],
                            args.k_max)
        row |= {"ceiling_decode_s": cst.decode_s, "ceiling_tokens_per_pass": cst.tokens_per_pass,
                "ceiling_identical": ceil == plain,
                "ceiling_decode_speedup": plain_decode / cst.decode_s if cst.decode_s else None}
    row |= {"speedup_vs_plain": plain_s / row["fastapply_s"],
            "decode_speedup_vs_plain": plain_decode / st.decode_s if st.decode_s else None,
            "plain_tokens_per_s": len(plain) / plain_decode if plain_decode else None,
            "fastapply_tokens_per_s": st.tokens_per_s}
    if "lookup_s" in row:
        row["speedup_vs_prompt_lookup"] = row["lookup_s"] / row["fastapply_s"]
    return row


def model_run(engine_dm: ModelEngine, req: ApplyRequest, drafts, args, row: dict, plain: list[int],
              file_stats: Stats) -> dict:
    """The file+model run of one case, beside its plain and file-only runs (`row`)."""
    dm, dst, dm_s = ours(engine_dm, req, drafts, args.k_max)
    plain_decode = row["plain_s"] - row["plain_prefill_s"]
    # c: one draft-model step against one plain decoding step of the target, both timed in this case.
    step = dst.draft_model_step_s / dst.draft_model_steps if dst.draft_model_steps else None
    plain_step = plain_decode / len(plain) if plain else None
    c = step / plain_step if step and plain_step else 0.0
    s = row["prepare_s"] + dm_s
    out = {"s": s, "decode_s": dst.decode_s, "passes": dst.forward_passes, "tokens_per_pass": dst.tokens_per_pass,
           "identical": dm == plain, "draft_model_s": dst.draft_model_s, "draft_steps": dst.draft_model_steps,
           "draft_step_s": step, "cost_ratio": c, "speedup_vs_plain": row["plain_s"] / s,
           # decode time: the prefill is the same work in both runs (the draft model's own prefill
           # runs inside decoding), and under a shared CPU it varies most
           "speedup_vs_file_only": file_stats.decode_s / dst.decode_s if dst.decode_s else None,
           "end_to_end_vs_file_only": row["fastapply_s"] / s}
    return out | run_figures(dst, c, plain_decode, args.predict_c)


def summarize(rows: list[dict]) -> dict:
    def med(key):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    fidelity = sum(r["accepted"] for r in rows) / max(1, sum(r["output_tokens"] for r in rows))
    if rows and "identical" not in rows[0]:  # --fidelity-only
        return {"cases": len(rows), "copy_fidelity": fidelity, "tokens_per_pass": med("tokens_per_pass"),
                "finished_cases": sum(r["finished"] for r in rows)}
    runs = [FILE_RUN] + ([MODEL_RUN] if rows and MODEL_RUN in rows[0] else [])

    def run_med(run, key):
        vals = [(r if run == FILE_RUN else r[run])[key] for r in rows]
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    summary = {"cases": len(rows),
               "all_identical": all(r["identical"] and r.get(MODEL_RUN, {}).get("identical", True) for r in rows),
               "speedup_vs_plain": med("speedup_vs_plain"), "speedup_vs_prompt_lookup": med("speedup_vs_prompt_lookup"),
               "decode_speedup_vs_plain": med("decode_speedup_vs_plain"),
               "tokens_per_pass": {run: run_med(run, "tokens_per_pass") for run in runs},
               "alpha_by_source": {run: alpha_by_group(pool(r[run]["by_source"] for r in rows)) for run in runs},
               "predicted_speedup": {run: _median(r[run]["predicted_speedup"] for r in rows) for run in runs},
               "measured_speedup": {run: _median(r[run]["measured_speedup"] for r in rows) for run in runs},
               "ceiling_decode_speedup": med("ceiling_decode_speedup"),
               "ceiling_tokens_per_pass": med("ceiling_tokens_per_pass"),
               "plain_tokens_per_s": med("plain_tokens_per_s"), "fastapply_tokens_per_s": med("fastapply_tokens_per_s"),
               "finished_cases": sum(r["finished"] for r in rows), "copy_fidelity": fidelity}
    if MODEL_RUN in runs:
        steps = sum(r[MODEL_RUN]["draft_steps"] for r in rows)
        step_s = sum((r[MODEL_RUN]["draft_step_s"] or 0.0) * r[MODEL_RUN]["draft_steps"] for r in rows)
        plain_decode = sum(r["plain_s"] - r["plain_prefill_s"] for r in rows)
        plain_step = plain_decode / max(1, sum(r["output_tokens"] for r in rows))
        summary["cost_ratio"] = step_s / steps / plain_step if steps and plain_step else None
        summary["speedup_vs_file_only"] = _median(r["fastapply_decode_s"] / r[MODEL_RUN]["decode_s"] for r in rows
                                                  if r[MODEL_RUN]["decode_s"])
        for x in rows[0][MODEL_RUN].get("predicted_speedup_at", {}):
            summary["predicted_speedup"][f"{MODEL_RUN} at c={x}"] = _median(
                r[MODEL_RUN]["predicted_speedup_at"].get(x) for r in rows)
    return summary


def _median(values) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def print_table(rows: list[dict], summary: dict, meta: dict) -> None:
    con = Console(width=220)
    if "identical" not in rows[0]:
        for r in rows:
            con.print(f"  {r['id']}: copy fidelity {r['copy_fidelity']:.3f}, {r['tokens_per_pass']:.1f} tokens/pass")
        con.print(summary)
        return
    t = Table(title=f"evals.speed — model {meta['model']} ({meta['dtype']}, {meta['device']}, "
                    f"{meta['threads']} threads)"
                    + (f", draft model {meta['draft_model']}" if meta.get("draft_model") else ""))
    dm = MODEL_RUN in rows[0]
    cols = ["case", "out tok", "plain s", "lookup s", "fastapply s", "tok/pass", "ceil tok/pass", "identical"]
    if dm:
        cols += ["file+model s", "tok/pass", "α file", "α model", "c", "pred", "meas", "identical"]
    for col in cols:
        t.add_column(col, justify="right" if col != "case" else "left")

    def num(v, fmt=".1f"):
        return "-" if v is None else format(v, fmt)

    for r in rows:
        cells = [r["id"][-48:], str(r["output_tokens"]), f"{r['plain_s']:.1f}", num(r.get("lookup_s")),
                 f"{r['fastapply_s']:.1f}", f"{r['tokens_per_pass']:.1f}", num(r.get("ceiling_tokens_per_pass")),
                 str(r["identical"])]
        if dm:
            m = r[MODEL_RUN]
            cells += [f"{m['s']:.1f}", f"{m['tokens_per_pass']:.1f}", num(m["alpha_by_source"].get("file"), ".2f"),
                      num(m["alpha_by_source"].get("model"), ".2f"), num(m["cost_ratio"], ".2f"),
                      num(m["predicted_speedup"], ".2f"), num(m["measured_speedup"], ".2f"), str(m["identical"])]
        t.add_row(*cells)
    con.print(t)
    for k, v in summary.items():
        con.print(f"  {k}: {_rounded(v)}", highlight=False)


def _rounded(v):
    if isinstance(v, float):
        return round(v, 3)
    if isinstance(v, dict):
        return {k: _rounded(x) for k, x in v.items()}
    return v


def merge_runs(paths: list[str], json_out: str | None) -> int:
    """One summary over the rows of several runs (same model and options, different cases)."""
    import json

    runs = [json.loads(open(p, encoding="utf-8").read()) for p in paths]
    rows = [r for run in runs for r in run["cases"]]
    meta = runs[0]["meta"] | {"merged": paths, "case_index": None}
    summary = summarize(rows)
    print_table(rows, summary, meta)
    if json_out:
        write_json(json_out, {"meta": meta, "summary": summary, "cases": rows})
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=None, help="JSONL cases (required unless --merge)")
    ap.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                    help="summarise the rows of earlier runs' JSON files (one --case-index each) instead of running")
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
    ap.add_argument("--draft-model", default=None,
                    help="also run file+model: this small model (the target's tokenizer) extends the file's drafts")
    ap.add_argument("--predict-c", default="0.05",
                    help="cost ratios (comma-separated) at which to print the formula's prediction too (default 0.05: "
                         "a 0.5B draft against a 7B target on a GPU)")
    ap.add_argument("--min-new-fraction", type=float, default=None,
                    help="keep cases whose expected file has at least this fraction of tokens no source holds")
    ap.add_argument("--new-against", default="original", choices=["original", "sources"],
                    help="what holds a token for --min-new-fraction: the original file (default) or every draft source")
    ap.add_argument("--skip-ceiling", action="store_true", help="no perfect-copier run (saves one decode per case)")
    ap.add_argument("--case-index", type=int, default=None,
                    help="run only the N-th selected case (0-based, after the filters): one case per process")
    ap.add_argument("--list", action="store_true", help="print the selected cases (and their new fraction) and stop")
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args(argv)
    args.predict_c = [float(x) for x in args.predict_c.split(",") if x.strip()]
    if args.merge:
        return merge_runs(args.merge, args.json_out)
    if not args.cases:
        ap.error("--cases is required (or --merge)")
    if args.threads:
        torch.set_num_threads(args.threads)
    cases = select_cases(args)
    if args.min_new_fraction is not None or args.list:
        print(f"{len(cases)} cases" + (f" with >= {args.min_new_fraction:.0%} new tokens (against {args.new_against})"
                                       if args.min_new_fraction is not None else "") + ":", flush=True)
        for c in cases:
            print(f"  {c['id']}: {len(c['original'].splitlines())} lines"
                  + (f", new {c['new_fraction']:.3f}" if "new_fraction" in c else ""), flush=True)
    if args.list:
        return 0
    if args.draft_model:
        check_model_name(args.draft_model)  # a bad name fails before the target loads
    engine = ModelEngine.load(args.model, device=args.device, dtype=args.dtype)
    engine_dm = None
    if args.draft_model:
        from fastapply.model_draft import load_draft_model

        # The same loaded target, with and without the draft model: the two runs differ only in drafting.
        engine_dm = ModelEngine(engine.loaded, draft=load_draft_model(args.draft_model, engine.loaded,
                                                                        type(engine.backend)))
    meta = {"model": engine.name, "dtype": engine.loaded.dtype, "device": engine.loaded.device,
            "threads": torch.get_num_threads(), "k_max": args.k_max, "cases_file": args.cases,
            "limit": args.limit, "max_lines": args.max_lines, "draft_model": args.draft_model,
            "min_new_fraction": args.min_new_fraction, "new_against": args.new_against,
            "case_index": args.case_index}
    # Warm up once (first-call allocations would otherwise land on case 1's plain run).
    for backend in [engine.backend] + ([engine_dm.draft.backend] if engine_dm else []):
        backend.prefill(engine.prompt_ids(ApplyRequest("x = 1\n", "x = 2\n")))
        backend.forward([0])
        backend.release()
    rows = []
    for i, case in enumerate(cases, 1):
        rows.append(run_case(engine, case, args, engine_dm))
        r = rows[-1]
        extra = (f", file+model {r[MODEL_RUN]['s']:.1f}s identical={r[MODEL_RUN]['identical']}"
                 if MODEL_RUN in r else "")
        print(f"[{i}/{len(cases)}] {r['id']}: {r['output_tokens']} tokens, plain {r.get('plain_s', 0):.1f}s, "
              f"fastapply {r['fastapply_s']:.1f}s, identical={r.get('identical')}{extra}", flush=True)
    summary = summarize(rows)
    print_table(rows, summary, meta)
    if args.json_out:
        write_json(args.json_out, {"meta": meta, "summary": summary, "cases": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
