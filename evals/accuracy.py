"""Accuracy of an apply engine on JSONL cases: exact, whitespace-insensitive match, refusals and
silent wrong answers (a result returned as good that differs from `expected`).

    .venv/bin/python -m evals.accuracy --engine structural --cases evals/cases/commits_dev.jsonl \
        --json out/acc_commits.json

Goes through the core API (`Applier.apply`), as every front-end does. Continue fixtures (`source`
starting with `continuedev/`) count as exact with blank lines ignored, as the dataset README says;
plain byte equality is reported too (`byte_exact`, `silent_wrong_strict`). `silent_wrong_eol_only`
counts the silent wrongs that differ from `expected` only in the final newline (they stay in
`silent_wrong`).

Each run also reports the structural merge's refusals (`merge_refusals`), how many of them have the
expected file among their readings (`readings_recall`: `structural_merge(...).readings`), the
judged requests (engine `judge`: `judged`, `judged_right`, `judged_wrong`, with the wrong picks'
margins in `judged_wrong_cases`), and the model's time per request (`model_seconds_median`,
`model_seconds_p90`, over the requests that reached the model; the model is loaded before the
clock starts). Model runs go in chunks (`--offset`, `--limit`, `--subset`); `--combine` sums
chunk JSONs into one summary.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict

from evals.common import load_cases, write_json
from fastapply.api import ENGINES, Applier, ApplyError, ApplyRequest
from fastapply.merge import structural_merge


def _nonblank(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def _ws(text: str) -> list[str]:
    """Lines ignoring whitespace-only/blank lines and trailing whitespace."""
    return [ln.rstrip() for ln in text.splitlines() if ln.strip()]


def variant_of(case_id: str) -> str | None:
    return case_id.rsplit("#", 1)[1] if "#" in case_id else None


def blank_insensitive(case: dict) -> bool:
    return case.get("source", "").startswith("continuedev/")


def score_case(case: dict, merged: str | None, ok: bool) -> dict:
    """Per-case verdict. `exact` uses the dataset's comparison rule (bytes; blank lines ignored for
    Continue fixtures); `byte_exact` is plain byte equality."""
    expected = case["expected"]
    if merged is None:
        return {"exact": False, "byte_exact": False, "ws_match": False, "refused": True,
                "silent_wrong": False, "silent_wrong_strict": False, "flagged_wrong": False,
                "silent_wrong_eol_only": False}
    byte_exact = merged == expected
    ws_match = _ws(merged) == _ws(expected)
    exact = byte_exact or (blank_insensitive(case) and _nonblank(merged) == _nonblank(expected))
    return {"exact": exact, "byte_exact": byte_exact, "ws_match": ws_match, "refused": False,
            "silent_wrong": ok and not exact, "silent_wrong_strict": ok and not byte_exact,
            "flagged_wrong": (not ok) and not exact,
            # wrong only in the final newline: reported apart, still counted in silent_wrong
            "silent_wrong_eol_only": ok and not exact and merged.rstrip("\r\n") == expected.rstrip("\r\n")}


def readings_of(case: dict) -> dict:
    """What the structural merge makes of the case: refused or not, its readings, and which of them
    (1-based) is the expected file by the dataset's comparison rule, if any."""
    merge = structural_merge(case["original"], case["update"], case.get("language"))
    texts = [r.text for r in merge.readings]
    hit = expected_index(case, texts)
    return {"merge_refused": not merge.ok, "readings": len(texts), "expected_reading": None if hit < 0 else hit + 1}


def expected_index(case: dict, texts: list[str]) -> int:
    """The first of `texts` that is exact by the dataset's rule (`score_case`), or -1."""
    return next((i for i, t in enumerate(texts) if score_case(case, t, True)["exact"]), -1)


def run_case(applier: Applier, case: dict, engine: str, merge: dict | None = None) -> dict:
    req = ApplyRequest(original=case["original"], update=case["update"], language=case.get("language"),
                       engine=engine)
    merge = merge or readings_of(case)
    t0 = time.perf_counter()
    merged, ok, reasons, code, findings, produced_by, margin = None, False, [], None, [], None, None
    try:
        result = applier.apply(req)
        merged, ok, produced_by, margin = result.merged, result.ok, result.engine, result.margin
        findings = [f"{f.severity}:{f.kind}: {f.message}" for f in result.findings]
    except ApplyError as e:
        code, reasons = e.code, e.reasons or [e.message]
    except Exception as e:  # an engine crash is a result to report, not a reason to stop the eval
        code, reasons = "crash", [f"{type(e).__name__}: {e}"]
    row = {"id": case["id"], "language": case.get("language"), "variant": variant_of(case["id"]),
           "source": case.get("source", ""), "seconds": round(time.perf_counter() - t0, 4),
           "code": code, "reasons": reasons, "findings": findings,
           "produced_by": produced_by,  # the engine that produced the result (`auto`: structural, judge or the model)
           "margin": margin, **merge,
           # the request reached the model: every model-engine request, an `auto` one where the merge refused
           "model_request": engine in ("speculative", "plain") or (engine == "auto" and merge["merge_refused"])}
    row.update(score_case(case, merged, ok))
    return row


def _bucket(rows: list[dict]) -> dict:
    n = len(rows)
    exact = sum(r["exact"] for r in rows)
    byte_exact = sum(r["byte_exact"] for r in rows)
    return {"cases": n, "exact": exact, "exact_rate": round(exact / n, 4) if n else 0.0,
            "byte_exact": byte_exact, "byte_exact_rate": round(byte_exact / n, 4) if n else 0.0,
            "ws_match": sum(r["ws_match"] for r in rows),
            "refused": sum(r["refused"] for r in rows),
            "silent_wrong": sum(r["silent_wrong"] for r in rows),
            "silent_wrong_strict": sum(r["silent_wrong_strict"] for r in rows),
            "silent_wrong_eol_only": sum(r["silent_wrong_eol_only"] for r in rows),
            "flagged_wrong": sum(r["flagged_wrong"] for r in rows),
            "crashes": sum(r["code"] == "crash" for r in rows)}


# --subset: which cases a run takes, by `readings_of`
SUBSETS = {
    "all": lambda m: True,
    "accepted": lambda m: not m["merge_refused"],
    "refused": lambda m: m["merge_refused"],
    "judged": lambda m: m["merge_refused"] and m["readings"] >= 2,
    "generated": lambda m: m["merge_refused"] and m["readings"] < 2,
}


def _quantile(values: list[float], q: float) -> float | None:
    """The q-quantile by the nearest rank (median: q=0.5, p90: q=0.9); None for no values."""
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def model_summary(rows: list[dict]) -> dict:
    """The merge's refusals and their readings' recall, the judge's picks, the model's time."""
    refusals = [r for r in rows if r.get("merge_refused")]
    judged = [r for r in rows if r.get("produced_by") == "judge"]
    model_secs = [r["seconds"] for r in rows if r.get("model_request")]
    return {"merge_refusals": len(refusals),
            "readings_recall": sum(r["expected_reading"] is not None for r in refusals),
            "readings_recall_rate": round(sum(r["expected_reading"] is not None for r in refusals) / len(refusals), 4)
            if refusals else None,
            "refusals_with_two_readings_or_more": sum(r["readings"] >= 2 for r in refusals),
            "judged": len(judged), "judged_right": sum(r["exact"] for r in judged),
            "judged_wrong": sum(not r["exact"] for r in judged),
            "judged_wrong_cases": [{"id": r["id"], "margin": r["margin"], "expected_reading": r["expected_reading"],
                                    "readings": r["readings"]} for r in judged if not r["exact"]],
            "model_requests": len(model_secs),
            "model_seconds_median": _quantile(model_secs, 0.5), "model_seconds_p90": _quantile(model_secs, 0.9)}


def summarize(rows: list[dict]) -> dict:
    summary = _bucket(rows)
    if rows and "merge_refused" in rows[0]:
        summary.update(model_summary(rows))
    by_lang, by_var = defaultdict(list), defaultdict(list)
    for r in rows:
        by_lang[r["language"] or "?"].append(r)
        if r["variant"]:
            by_var[r["variant"]].append(r)
    summary["by_language"] = {k: _bucket(v) for k, v in sorted(by_lang.items())}
    summary["by_variant"] = {k: _bucket(v) for k, v in sorted(by_var.items())}
    by_engine = defaultdict(list)
    for r in rows:
        by_engine[r.get("produced_by") or "refused"].append(r)
    summary["by_engine"] = {k: _bucket(v) for k, v in sorted(by_engine.items())}
    secs = sorted(r["seconds"] for r in rows)
    if secs:
        summary["seconds_median"] = secs[len(secs) // 2]
        summary["seconds_max"] = secs[-1]
    return summary


def print_table(summary: dict, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("group", "cases", "exact", "byte_exact", "ws_match", "refused", "silent_wrong", "sw_strict",
                "exact_rate"):
        table.add_column(col, justify="left" if col == "group" else "right")

    def add(name: str, b: dict) -> None:
        table.add_row(name, str(b["cases"]), str(b["exact"]), str(b["byte_exact"]), str(b["ws_match"]),
                      str(b["refused"]), str(b["silent_wrong"]), str(b["silent_wrong_strict"]), f"{b['exact_rate']:.3f}")

    add("ALL", summary)
    for k, b in summary["by_language"].items():
        add(f"lang:{k}", b)
    for k, b in summary["by_variant"].items():
        add(f"variant:{k}", b)
    for k, b in summary["by_engine"].items():
        add(f"engine:{k}", b)
    Console(width=130).print(table)
    if "merge_refusals" in summary:
        s = summary
        print(f"merge refusals {s['merge_refusals']} (readings hold the expected file: {s['readings_recall']}; "
              f"two readings or more: {s['refusals_with_two_readings_or_more']}) | judged {s['judged']}: "
              f"right {s['judged_right']}, wrong {s['judged_wrong']} | model requests {s['model_requests']}: "
              f"seconds median {s['model_seconds_median']}, p90 {s['model_seconds_p90']}")
        for w in s["judged_wrong_cases"]:
            print(f"  judged wrong: {w['id']} margin {w['margin']} (expected reading {w['expected_reading']} "
                  f"of {w['readings']})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=ENGINES, default="structural")
    ap.add_argument("--cases", default=None, help="JSONL file of cases")
    ap.add_argument("--limit", type=int, default=None, help="first N cases only (after --offset)")
    ap.add_argument("--offset", type=int, default=0, help="skip the first N cases of the subset (run a long eval in chunks)")
    ap.add_argument("--subset", default="all", choices=sorted(SUBSETS),
                    help="by what the structural merge makes of a case: all; accepted (it answers); refused (where "
                         "`auto` reaches the model); judged (refused with two readings or more); generated "
                         "(refused with fewer)")
    ap.add_argument("--combine", nargs="+", default=None, metavar="JSON",
                    help="no run: one summary over the cases of these chunk JSONs (later files win per case id)")
    ap.add_argument("--max-lines", type=int, default=None, help="skip originals longer than this (model engines)")
    ap.add_argument("--model", default=None, help="model name for the model engines")
    ap.add_argument("--json", default=None, help="write per-case results and the summary here")
    ap.add_argument("--show-wrong", action="store_true", help="list silent wrong and refused cases")
    args = ap.parse_args(argv)
    if args.combine:
        return combine(args)
    if not args.cases:
        ap.error("--cases is required (or --combine)")

    cases = load_cases(args.cases, max_lines=args.max_lines)
    merges = [readings_of(c) for c in cases]
    keep = SUBSETS[args.subset]
    picked = [(c, m) for c, m in zip(cases, merges) if keep(m)][args.offset:]
    picked = picked[:args.limit]
    cases, merges = [c for c, _ in picked], [m for _, m in picked]
    applier = Applier(model_name=args.model)
    if args.engine in ("speculative", "plain") or (args.engine == "auto" and any(m["merge_refused"] for m in merges)):
        model = applier.model  # load it before the clock starts: the seconds are the requests'
        if args.engine == "auto" and hasattr(model, "judge_backend"):
            model.judge_backend()  # the judge's copy of the weights is loading too
    rows = []
    for i, (c, m) in enumerate(zip(cases, merges)):
        rows.append(run_case(applier, c, args.engine, m))
        if args.engine != "structural":  # model runs take minutes: say how far along they are
            r = rows[-1]
            verdict = "exact" if r["exact"] else "refused" if r["refused"] else "WRONG" if r["silent_wrong"] else "flagged"
            margin = f", margin {r['margin']:.2f}" if r["margin"] is not None else ""
            print(f"[{i + 1}/{len(cases)}] {c['id']}: {verdict} ({r['produced_by'] or r['code']}{margin}, "
                  f"{r['seconds']:.1f}s)", file=sys.stderr, flush=True)
    summary = summarize(rows)
    summary.update({"engine": args.engine, "cases_file": args.cases, "model": args.model, "offset": args.offset,
                    "limit": args.limit, "subset": args.subset})
    print_table(summary, f"accuracy: {args.engine} on {args.cases}")
    if args.show_wrong:
        for r in rows:
            if r["silent_wrong"]:
                print("SILENT WRONG", r["id"])
            elif r["refused"]:
                print("refused", r["id"], "|", "; ".join(r["reasons"])[:160])
    if args.json:
        write_json(args.json, {"summary": summary, "cases": rows})
    return 0


def combine(args) -> int:
    """One summary over chunk JSONs of one engine and case file (a case in several: the last one)."""
    rows: dict[str, dict] = {}
    meta = {}
    for path in args.combine:
        data = json.loads(open(path, encoding="utf-8").read())
        meta = data["summary"]
        rows.update({r["id"]: r for r in data["cases"]})
    summary = summarize(list(rows.values()))
    summary.update({"engine": meta.get("engine"), "cases_file": meta.get("cases_file"), "model": meta.get("model"),
                    "combined": list(args.combine)})
    print_table(summary, f"accuracy: {summary['engine']} on {summary['cases_file']} ({len(args.combine)} chunks)")
    if args.json:
        write_json(args.json, {"summary": summary, "cases": list(rows.values())})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
