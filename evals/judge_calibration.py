"""Calibrate the judge (`fastapply.judge`) offline: dump each refused case's readings and the
model's score of each reading once, then compute the curve of exact vs wrong picks against the
margin threshold from the dump, without running a model again.

    # scores of one model configuration, appended to a JSONL dump (resumes: done cases are skipped)
    flock /tmp/fastapply-model.lock .venv/bin/python -m evals.judge_calibration dump \\
        --cases evals/cases/hard_dev.jsonl --model qwen2.5-coder-0.5b --mode window --dtype bf16 \\
        --out out/judge_dump.jsonl --budget-s 300
    # the curve (table, JSON, PNG) of one configuration, over every dumped case file
    .venv/bin/python -m evals.judge_calibration curve --dump out/judge_dump.jsonl \\
        --config qwen2.5-coder-0.5b/fastapply-format/window/bf16 --json out/curve.json --png out/curve.png

A dump line is one (case, configuration): the case id and file, its readings count, which reading
is the expected file (-1: none), each reading's score (and with `--contrast` its score under an
empty snippet, `null_scores`; the judge's contrast score is the difference), the judge's seconds
and scored tokens. Only
refusals with two readings or more are scored (the judge's cases); the others are listed too
(scores empty) so that recall can be counted from the dump.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from evals.accuracy import expected_index
from evals.common import load_cases, write_json
from fastapply.judge import CONTEXT_LINES, MARGIN_NATS, MARGIN_NATS_OTHER, WRAP_READING, margin_needed
from fastapply.merge import structural_merge

THRESHOLDS = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]


def config_name(model: str, prompt_from: str, mode: str, dtype: str, context: int = CONTEXT_LINES) -> str:
    mode = mode if mode.startswith("whole") or context == CONTEXT_LINES else f"{mode}{context}"
    return f"{model}/{prompt_from}/{mode}/{dtype}"


def _done(out: Path) -> set[tuple[str, str, str]]:
    if not out.exists():
        return set()
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return {(r["id"], r["config"], r["readings_sha"]) for r in rows}


def readings_sha(texts: list[str]) -> str:
    """Which readings were scored: a dump line stands for these texts only (the merge changes)."""
    return hashlib.sha1("\0".join(texts).encode()).hexdigest()[:12]


def latest(rows: list[dict]) -> list[dict]:
    """The last dump line of each (case, configuration): the readings of the newest merge."""
    last = {(r["id"], r["config"]): r for r in rows}
    return list(last.values())


def load_scorer(model: str, dtype: str, prompt_from: str | None):
    """The HF engine of `model` judging in `dtype`; `prompt_from` swaps in another spec's prompt fields."""
    from fastapply.engine import ModelEngine
    from fastapply.models import _PROMPT_FIELDS, ModelSpec

    engine = ModelEngine.load(model, judge_dtype=dtype)
    if prompt_from and prompt_from != engine.spec.prompt_from:
        other = ModelSpec.load(prompt_from)
        engine.spec = replace(engine.spec, prompt_from=prompt_from,
                              **{k: getattr(other, k) for k in _PROMPT_FIELDS})
    return engine


def dump(args) -> int:
    from fastapply.judge import judge
    from fastapply.types import ApplyError, ApplyRequest

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done(out)
    scorer = None
    t_start = time.perf_counter()
    judged = 0  # refusals with two readings or more seen so far (for --first)
    for path in args.cases:
        cases = load_cases(path)
        for c in cases[args.offset:]:
            if args.budget_s and time.perf_counter() - t_start > args.budget_s:
                print("budget spent; run again to go on", file=sys.stderr)
                return 0
            merge = structural_merge(c["original"], c["update"], c.get("language"))
            if merge.ok:
                continue
            if scorer is None:
                scorer = load_scorer(args.model, args.dtype, args.prompt_from)
                config = config_name(args.model, scorer.spec.prompt_from or scorer.spec.name,
                                     args.mode + ("+contrast" if args.contrast else "")
                                     + ("+branch" if args.scoring == "branch" else ""), args.dtype, args.context)
            texts = [r.text for r in merge.readings]
            if len(texts) >= 2:
                judged += 1
                if args.first and judged > args.first:
                    return 0
            if (c["id"], config, readings_sha(texts)) in done:
                continue
            row = {"id": c["id"], "cases": Path(path).name, "config": config, "lines": len(c["original"].splitlines()),
                   "readings": len(texts), "readings_sha": readings_sha(texts), "how": [r.how for r in merge.readings],
                   "expected": expected_index(c, texts),
                   "scores": [], "seconds": None, "scored_tokens": None, "error": None}
            if len(texts) >= 2:
                req = ApplyRequest(c["original"], c["update"], language=c.get("language"))
                try:
                    v = judge(scorer, req, texts, mode=args.mode, max_scored=args.max_scored, context=args.context,
                              contrast=args.contrast, scoring=args.scoring)
                    plain = [s + n for s, n in zip(v.scores, v.null_scores)] if v.null_scores else v.scores
                    row.update(scores=[round(s, 4) for s in plain], null_scores=[round(s, 4) for s in v.null_scores],
                               seconds=round(v.seconds, 3), scored_tokens=v.scored_tokens,
                               rest_tokens=list(v.rest_tokens))
                except ApplyError as e:
                    row["error"] = f"{e.code}: {e.message}"
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"{c['id']}: readings={row['readings']} expected={row['expected']} "
                  f"scores={row['scores']} {row['seconds']}s {row['error'] or ''}", file=sys.stderr, flush=True)
    return 0


def _margin(scores: list[float]) -> tuple[int, float]:
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return order[0], scores[order[0]] - scores[order[1]]


def scores_of(row: dict, scoring: str) -> list[float]:
    """A dump line's scores by one rule: `sum` (log p under the snippet), `contrast` (minus log p
    under an empty snippet), `mean` (log p per scored token)."""
    if scoring == "sum":
        return row["scores"]
    if scoring == "contrast":
        return [s - n for s, n in zip(row["scores"], row["null_scores"])]
    if scoring == "mean":
        return [s / max(1, n) for s, n in zip(row["scores"], row["rest_tokens"])]
    raise ValueError(scoring)


def curve_rows(rows: list[dict], thresholds: list[float], scoring: str = "sum") -> list[dict]:
    """Per threshold: judged right (picked = expected), judged wrong, abstained, over the scored cases."""
    scored = [r for r in rows if r["scores"]]
    out = []
    for t in thresholds:
        right = wrong = 0
        for r in scored:
            best, margin = _margin(scores_of(r, scoring))
            if margin >= t and margin > 0:
                right += best == r["expected"]
                wrong += best != r["expected"]
        out.append({"threshold": t, "judged_right": right, "judged_wrong": wrong,
                    "abstained": len(scored) - right - wrong})
    return out


def shipped_rule(rows: list[dict], scoring: str = "sum") -> dict:
    """Right, wrong and abstained under the shipped rule (`judge.margin_needed` of the best
    reading's doubt), and the same split by that doubt: wrap readings and the others."""
    out = {"wrap": {"judged_right": 0, "judged_wrong": 0, "abstained": 0},
           "other": {"judged_right": 0, "judged_wrong": 0, "abstained": 0}}
    for r in rows:
        if not r["scores"]:
            continue
        best, margin = _margin(scores_of(r, scoring))
        how = r["how"][best] if r.get("how") else None
        family = out["wrap" if how is not None and WRAP_READING in how else "other"]
        if margin >= margin_needed(how) and margin > 0:
            family["judged_right" if best == r["expected"] else "judged_wrong"] += 1
        else:
            family["abstained"] += 1
    out["all"] = {k: out["wrap"][k] + out["other"][k] for k in out["wrap"]}
    return out


def curve_by_family(rows: list[dict], thresholds: list[float], scoring: str = "sum") -> dict[str, list[dict]]:
    """The curve of the cases whose best reading is a wrap reading, and of the others."""
    def is_wrap(r: dict) -> bool:
        best, _ = _margin(scores_of(r, scoring))
        return bool(r.get("how")) and WRAP_READING in r["how"][best]

    scored = [r for r in rows if r["scores"]]
    return {"wrap": curve_rows([r for r in scored if is_wrap(r)], thresholds, scoring),
            "other": curve_rows([r for r in scored if not is_wrap(r)], thresholds, scoring)}


def curve(args) -> int:
    rows = [json.loads(line) for line in Path(args.dump).read_text().splitlines() if line.strip()]
    rows = latest([r for r in rows if r["config"] == args.config])
    if not rows:
        print(f"no rows of {args.config} in {args.dump}", file=sys.stderr)
        return 1
    table = curve_rows(rows, THRESHOLDS, args.scoring)
    scored = [r for r in rows if r["scores"]]
    secs = sorted(r["seconds"] for r in scored)
    picks = []
    for r in scored:
        best, margin = _margin(scores_of(r, args.scoring))
        picks.append({"id": r["id"], "cases": r["cases"], "readings": r["readings"], "expected": r["expected"],
                      "best": best, "margin": round(margin, 3), "right": best == r["expected"], "lines": r["lines"],
                      "seconds": r["seconds"]})
    summary = {"config": args.config, "scoring": args.scoring, "refusals": len(rows), "with_expected": sum(r["expected"] >= 0 for r in rows),
               "judged_cases": len(scored), "judged_with_expected": sum(r["expected"] >= 0 for r in scored),
               "errors": [r["id"] + ": " + r["error"] for r in rows if r["error"]],
               "seconds_median": secs[len(secs) // 2] if secs else None,
               "seconds_p90": secs[min(len(secs) - 1, int(0.9 * len(secs)))] if secs else None,
               "curve": table, "curve_by_family": curve_by_family(rows, THRESHOLDS, args.scoring),
               "shipped_rule": shipped_rule(rows, args.scoring), "picks": sorted(picks, key=lambda p: -p["margin"])}
    print(f"{args.config} ({args.scoring}): {len(scored)} judged cases ({summary['judged_with_expected']} with the expected file "
          f"among the readings), seconds median {summary['seconds_median']} p90 {summary['seconds_p90']}")
    print(f"{'threshold':>9} {'right':>6} {'wrong':>6} {'abstain':>8}")
    for row in table:
        print(f"{row['threshold']:>9} {row['judged_right']:>6} {row['judged_wrong']:>6} {row['abstained']:>8}")
    for family in ("wrap", "other"):
        print(f"best reading a {'wrap reading' if family == 'wrap' else 'reading of another doubt'}: " + ", ".join(
            f"{row['threshold']}: {row['judged_right']}/{row['judged_wrong']}" for row in summary["curve_by_family"][family])
            + " (threshold: right/wrong)")
    rule = summary["shipped_rule"]
    print(f"shipped rule (margin {MARGIN_NATS} for a wrap reading, {MARGIN_NATS_OTHER} otherwise): " + "; ".join(
        f"{k} right {v['judged_right']} wrong {v['judged_wrong']} abstained {v['abstained']}" for k, v in rule.items()))
    for p in summary["picks"]:
        if not p["right"]:
            print(f"  wrong pick: {p['id']} margin {p['margin']} (best {p['best']}, expected {p['expected']})")
    if args.json:
        write_json(args.json, summary)
    if args.png:
        _plot(table, args.config, args.png)
    return 0


def _plot(table: list[dict], title: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [r["threshold"] for r in table]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(t, [r["judged_right"] for r in table], "o-", label="judged right (exact)")
    ax.plot(t, [r["judged_wrong"] for r in table], "s-", label="judged wrong")
    ax.plot(t, [r["abstained"] for r in table], "^--", label="abstained (fallback)")
    ax.set_xlabel("margin threshold (nats)")
    ax.set_ylabel("refused cases")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="score each refused case's readings with one model configuration")
    d.add_argument("--cases", nargs="+", required=True, help="JSONL case files")
    d.add_argument("--model", default="qwen2.5-coder-0.5b")
    d.add_argument("--prompt-from", default=None, help="another spec's prompt format (e.g. morph-format)")
    d.add_argument("--mode", default="window", choices=["window", "whole"])
    d.add_argument("--dtype", default="bf16", choices=["fp32", "bf16"])
    d.add_argument("--contrast", action="store_true", help="score against an empty snippet (judge.CONTRAST)")
    d.add_argument("--scoring", default="sum", choices=["sum", "branch"],
                   help="what is scored: each reading's tokens (sum) or the model's choice at each fork (judge.branch_scores)")
    d.add_argument("--context", type=int, default=CONTEXT_LINES, help="window mode: shared lines on each side")
    d.add_argument("--max-scored", type=int, default=100_000, help="the judge's scored-token cap (high: measure all)")
    d.add_argument("--offset", type=int, default=0, help="skip the first N cases of each file")
    d.add_argument("--first", type=int, default=0, help="only the first N refusals with two readings or more")
    d.add_argument("--budget-s", type=float, default=0, help="stop after this many seconds (run again to resume)")
    d.add_argument("--out", required=True, help="JSONL dump, appended to")
    d.set_defaults(func=dump)
    c = sub.add_parser("curve", help="exact vs wrong against the margin threshold, from a dump")
    c.add_argument("--dump", required=True)
    c.add_argument("--config", required=True, help="MODEL/PROMPT/MODE/DTYPE as in the dump")
    c.add_argument("--scoring", default="sum", choices=["sum", "contrast", "mean"])
    c.add_argument("--json", default=None)
    c.add_argument("--png", default=None)
    c.set_defaults(func=curve)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
