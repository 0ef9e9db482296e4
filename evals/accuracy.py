"""Accuracy of an apply engine on JSONL cases: exact, whitespace-insensitive match, refusals and
silent wrong answers (a result returned as good that differs from `expected`).

    .venv/bin/python -m evals.accuracy --engine structural --cases ../shared/evals/commits_dev.jsonl \
        --json out/acc_commits.json

Goes through the core API (`Applier.apply`), as every front-end does. Continue fixtures (`source`
starting with `continuedev/`) count as exact with blank lines ignored, as the dataset README says;
plain byte equality is reported too (`byte_exact`, `silent_wrong_strict`). `silent_wrong_eol_only`
counts the silent wrongs that differ from `expected` only in the final newline (they stay in
`silent_wrong`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict

from evals.common import load_cases, write_json
from fastapply.api import ENGINES, Applier, ApplyError, ApplyRequest


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


def run_case(applier: Applier, case: dict, engine: str) -> dict:
    req = ApplyRequest(original=case["original"], update=case["update"], language=case.get("language"),
                       engine=engine)
    t0 = time.perf_counter()
    merged, ok, reasons, code, findings, produced_by = None, False, [], None, [], None
    try:
        result = applier.apply(req)
        merged, ok, produced_by = result.merged, result.ok, result.engine
        findings = [f"{f.severity}:{f.kind}: {f.message}" for f in result.findings]
    except ApplyError as e:
        code, reasons = e.code, e.reasons or [e.message]
    except Exception as e:  # an engine crash is a result to report, not a reason to stop the eval
        code, reasons = "crash", [f"{type(e).__name__}: {e}"]
    row = {"id": case["id"], "language": case.get("language"), "variant": variant_of(case["id"]),
           "source": case.get("source", ""), "seconds": round(time.perf_counter() - t0, 4),
           "code": code, "reasons": reasons, "findings": findings,
           "produced_by": produced_by}  # the engine that produced the result (`auto`: structural or the model)
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


def summarize(rows: list[dict]) -> dict:
    summary = _bucket(rows)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=ENGINES, default="structural")
    ap.add_argument("--cases", required=True, help="JSONL file of cases")
    ap.add_argument("--limit", type=int, default=None, help="first N cases only")
    ap.add_argument("--max-lines", type=int, default=None, help="skip originals longer than this (model engines)")
    ap.add_argument("--model", default=None, help="model name for the model engines")
    ap.add_argument("--json", default=None, help="write per-case results and the summary here")
    ap.add_argument("--show-wrong", action="store_true", help="list silent wrong and refused cases")
    args = ap.parse_args(argv)

    cases = load_cases(args.cases, limit=args.limit, max_lines=args.max_lines)
    applier = Applier(model_name=args.model)
    rows = []
    for i, c in enumerate(cases):
        rows.append(run_case(applier, c, args.engine))
        if args.engine != "structural":  # model runs take minutes: say how far along they are
            r = rows[-1]
            verdict = "exact" if r["exact"] else "refused" if r["refused"] else "WRONG" if r["silent_wrong"] else "flagged"
            print(f"[{i + 1}/{len(cases)}] {c['id']}: {verdict} ({r['produced_by'] or r['code']}, {r['seconds']:.1f}s)",
                  file=sys.stderr, flush=True)
    summary = summarize(rows)
    summary.update({"engine": args.engine, "cases_file": args.cases, "model": args.model})
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


if __name__ == "__main__":
    raise SystemExit(main())
