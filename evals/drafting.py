"""Drafting quality apart from any model: tokens per forward pass against a perfect model.

    .venv/bin/python -m evals.drafting --cases evals/cases/commits_dev.jsonl --json out/drafting.json \
        [--report out/drafting] [--k-max 64] [--sweep 16,32,64,128,256]

A replay backend emits each case's `expected` tokens (a model that always merges right), and the
real verify loop drives each drafter against it, with the same maximum draft length and the same
adaptive rule, so the comparison measures where drafts come from, not how long they may be:
  file           the original file only (pointer + re-sync)
  structural     what the speculative engine uses: the structural merge, then the original and the
                 snippet for re-sync, then the output's own history
  prompt_lookup  Hugging Face's n-gram rule over the prompt and the output
  oracle         the expected file itself (the best the adaptive rule allows)
Tokens come from the default model's tokenizer; no weights are loaded.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from rich.console import Console
from rich.table import Table

from evals.common import load_cases, write_json
from fastapply.api import ApplyRequest, Stats
from fastapply.backends.replay import ReplayBackend
from fastapply.decode import DecodeConfig, decode
from fastapply.draft import PromptLookupDrafter, SourceDrafter
from fastapply.languages import detect_language
from fastapply.models import ModelSpec, resolve_weights
from fastapply.pipeline import draft_sources

DRAFTERS = ("file", "structural", "prompt_lookup", "oracle")


def passes(target: list[int], prompt: list[int], drafter, end: int) -> Stats:
    stats = Stats()
    cfg = DecodeConfig(max_new_tokens=len(target) + 1)
    for _ in decode(ReplayBackend(target, end), prompt, drafter, cfg, frozenset({end}), stats=stats):
        pass
    return stats


def run_case(case: dict, tok, spec: ModelSpec, k_max: int, end: int) -> dict:
    req = ApplyRequest(case["original"], case["update"], language=case.get("language"))
    sources, _ = draft_sources(req, detect_language(req.language, None, req.original))
    # Drafts only ever hold tokens of these sequences, so renumbering them densely changes no
    # accept/reject decision and keeps the replay's one-hot rows small (the real vocab is 262k).
    dense: dict[int, int] = {}

    def enc(text: str, special: bool = False) -> list[int]:
        return [dense.setdefault(t, len(dense)) for t in tok(text, add_special_tokens=special)["input_ids"]]

    end = dense.setdefault(end, len(dense))
    target = enc(case["expected"])
    prompt = enc(spec.render(tok, req.original, req.update, None), special=True)
    drafters = {
        "file": SourceDrafter([("original", enc(case["original"]))], use_history=False, k_max=k_max),
        "structural": SourceDrafter([(name, enc(text)) for name, text in sources], k_max=k_max),
        "prompt_lookup": PromptLookupDrafter(prompt, k_max=k_max),
        "oracle": SourceDrafter([("expected", target)], use_history=False, k_max=k_max),
    }
    row = {"id": case["id"], "language": case.get("language"), "lines": len(case["original"].splitlines()),
           "output_tokens": len(target) + 1, "structural_draft": sources[0][0] == "structural"}
    for name, d in drafters.items():
        st = passes(target, prompt, d, end)
        row[name] = {"passes": st.forward_passes, "tokens_per_pass": st.tokens_per_pass,
                     "acceptance": st.accepted_tokens / st.drafted_tokens if st.drafted_tokens else 0.0}
    return row


def summarize(rows: list[dict], k_max: int) -> dict:
    tpp = {d: statistics.median(r[d]["tokens_per_pass"] for r in rows) for d in DRAFTERS}
    return {"cases": len(rows), "k_max": k_max, "adaptive_rule": "start 16, x2 on full accept, /2 on reject, min 4",
            "tokens_per_pass": tpp,
            # Every pass yields at most k_max drafted tokens + 1 of the model's own.
            "upper_bound": statistics.median(r["output_tokens"] / -(-r["output_tokens"] // (k_max + 1)) for r in rows),
            "structural_vs_file": tpp["structural"] / tpp["file"],
            "structural_vs_prompt_lookup": tpp["structural"] / tpp["prompt_lookup"],
            "structural_draft_available": sum(r["structural_draft"] for r in rows)}


def write_report(rows: list[dict], summary: dict, out_dir: Path, cases_path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = [d for d in DRAFTERS]
    ax1.boxplot([[r[d]["tokens_per_pass"] for r in rows] for d in names], tick_labels=names)
    ax1.set_ylabel("output tokens per forward pass")
    ax1.set_title(f"by drafter ({len(rows)} cases, max draft {summary['k_max']})")
    for d, marker in zip(names, "osx^"):
        ax2.scatter([r["lines"] for r in rows], [r[d]["tokens_per_pass"] for r in rows], label=d, marker=marker, s=14)
    ax2.set_xlabel("original file lines")
    ax2.set_ylabel("tokens per pass")
    ax2.set_title("by file size")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "tokens_per_pass.png", dpi=110)
    tpp = summary["tokens_per_pass"]
    lines = [
        "# Drafting quality: tokens per forward pass against a perfect model", "",
        f"Cases: `{cases_path}` ({summary['cases']}); max draft length {summary['k_max']}; "
        f"adaptive rule: {summary['adaptive_rule']}.", "",
        "| drafter | median tokens/pass |", "|---|---|",
        *[f"| {d} | {tpp[d]:.2f} |" for d in DRAFTERS],
        f"| upper bound (tokens / ceil(tokens / (k_max + 1))) | {summary['upper_bound']:.2f} |", "",
        f"structural / file = {summary['structural_vs_file']:.2f}x; structural / prompt_lookup = "
        f"{summary['structural_vs_prompt_lookup']:.2f}x; structural draft available on "
        f"{summary['structural_draft_available']} of {summary['cases']} cases.", "",
        "![tokens per pass](tokens_per_pass.png)", "",
    ]
    if "sweep" in summary:
        lines += ["## By maximum draft length", "",
                  "| max draft | " + " | ".join(DRAFTERS) + " | upper bound | structural / file | structural / prompt_lookup |",
                  "|---" * (len(DRAFTERS) + 4) + "|"]
        for k, v in summary["sweep"].items():
            lines.append(f"| {k} | " + " | ".join(f"{v['tokens_per_pass'][d]:.1f}" for d in DRAFTERS) +
                         f" | {v['upper_bound']:.1f} | {v['structural_vs_file']:.2f}x | "
                         f"{v['structural_vs_prompt_lookup']:.2f}x |")
        lines.append("")
    (out_dir / "README.md").write_text("\n".join(lines), encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--max-lines", type=int, default=None)
    ap.add_argument("--model", default=None, help="whose tokenizer and prompt to use (default model)")
    ap.add_argument("--k-max", type=int, default=64)
    ap.add_argument("--json", dest="json_out", default=None)
    ap.add_argument("--report", default=None, help="folder for a Markdown report with a PNG plot")
    ap.add_argument("--sweep", default=None,
                    help="also run these max draft lengths (comma-separated, e.g. 16,32,64,128,256) and report "
                         "each drafter's median and the ratios per length (summary.sweep)")
    args = ap.parse_args(argv)
    from transformers import AutoTokenizer

    spec, path = resolve_weights(args.model)
    tok = AutoTokenizer.from_pretrained(path)
    end = tok.eos_token_id if tok.eos_token_id is not None else 0
    cases = load_cases(args.cases, limit=args.limit, max_lines=args.max_lines)
    rows = [run_case(c, tok, spec, args.k_max, end) for c in cases]
    summary = summarize(rows, args.k_max)
    if args.sweep:
        summary["sweep"] = {}
        for k in sorted({int(x) for x in args.sweep.split(",") if x.strip()}):
            sk = summary if k == args.k_max else summarize([run_case(c, tok, spec, k, end) for c in cases], k)
            summary["sweep"][str(k)] = {key: sk[key] for key in
                                        ("tokens_per_pass", "upper_bound", "structural_vs_file",
                                         "structural_vs_prompt_lookup")}
    t = Table(title=f"evals.drafting — {len(rows)} cases, max draft {args.k_max}")
    t.add_column("drafter")
    t.add_column("median tokens/pass", justify="right")
    t.add_column("median acceptance", justify="right")
    for d in DRAFTERS:
        t.add_row(d, f"{summary['tokens_per_pass'][d]:.2f}",
                  f"{statistics.median(r[d]['acceptance'] for r in rows):.2f}")
    Console().print(t)
    if "sweep" in summary:
        sw = Table(title="max draft length sweep (medians over the same cases)")
        for col in ("max draft", *DRAFTERS, "upper bound", "structural/file", "structural/prompt_lookup"):
            sw.add_column(col, justify="right")
        for k, v in summary["sweep"].items():
            sw.add_row(k, *[f"{v['tokens_per_pass'][d]:.1f}" for d in DRAFTERS], f"{v['upper_bound']:.1f}",
                       f"{v['structural_vs_file']:.2f}", f"{v['structural_vs_prompt_lookup']:.2f}")
        Console(width=140).print(sw)
    for k in ("upper_bound", "structural_vs_file", "structural_vs_prompt_lookup", "structural_draft_available"):
        print(f"  {k}: {summary[k]:.2f}" if isinstance(summary[k], float) else f"  {k}: {summary[k]}")
    if args.json_out:
        write_json(args.json_out, {"summary": summary, "cases": rows})
    if args.report:
        write_report(rows, summary, Path(args.report), args.cases)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
