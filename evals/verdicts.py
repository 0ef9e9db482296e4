"""The structural merge's verdict on every case of every set, case by case, and what moved.

    .venv/bin/python -m evals.verdicts --json out/verdicts.json            # every set in evals/cases
    .venv/bin/python -m evals.verdicts --json out/after.json --compare evals/results/verdicts.json

A verdict is `exact`, `refused` or `wrong` (a file returned that is not the expected one; Continue
fixtures compare with blank lines ignored, as `evals.accuracy` does), with a hash of the file
returned, so that a change that keeps the verdict but changes the answer shows too. `--compare`
lists every case whose verdict or answer differs from an earlier run, and exits 1 when a case that
was exact or refused became wrong.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

from evals.accuracy import blank_insensitive
from evals.common import load_cases, write_json
from fastapply.merge import structural_merge

CASES = Path(__file__).resolve().parent / "cases"
# Every set with expected files; the held-out langs set is left out unless asked for (it is run once).
SETS = ("commits_dev", "hard_dev", "public_fixtures", "wrap_table", "agent_heldout", "agent_heldout2",
        "agent_heldout3", "agent_heldout4", "agent_heldout5", "agent_heldout6", "agent_heldout7",
        "langs_commits", "langs_agent")


def verdict(case: dict) -> dict:
    t0 = time.perf_counter()
    res = structural_merge(case["original"], case["update"], case.get("language"), case.get("path"))
    seconds = time.perf_counter() - t0
    if not res.ok:
        return {"verdict": "refused", "answer": None, "s": round(seconds, 4)}
    same = res.text == case["expected"]
    if not same and blank_insensitive(case):
        same = [x for x in res.text.splitlines() if x.strip()] == \
            [x for x in case["expected"].splitlines() if x.strip()]
    return {"verdict": "exact" if same else "wrong", "answer": hashlib.sha1(res.text.encode()).hexdigest()[:12],
            "s": round(seconds, 4)}


def run(sets: list[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for name in sets:
        for case in load_cases(CASES / f"{name}.jsonl"):
            out[f"{name}/{case['id']}"] = verdict(case)
    return out


def table(rows: dict[str, dict]) -> dict[str, Counter]:
    per: dict[str, Counter] = {}
    for cid, r in rows.items():
        per.setdefault(cid.split("/", 1)[0], Counter())[r["verdict"]] += 1
    return per


def compare(before: dict[str, dict], after: dict[str, dict]) -> tuple[list[str], int]:
    lines, worse = [], 0
    for cid in sorted(set(before) & set(after)):
        b, a = before[cid], after[cid]
        if b["verdict"] != a["verdict"] or b["answer"] != a["answer"]:
            lines.append(f"{cid}: {b['verdict']} -> {a['verdict']}" +
                         (" (another answer)" if b["verdict"] == a["verdict"] else ""))
            worse += a["verdict"] == "wrong"
    return lines, worse


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="*", default=list(SETS), help="set names under evals/cases")
    ap.add_argument("--json", help="write every case's verdict here")
    ap.add_argument("--compare", help="an earlier run's JSON: list what moved")
    args = ap.parse_args(argv)
    rows = run(args.sets)
    for name, c in table(rows).items():
        print(f"{name:18} cases {sum(c.values()):4}  exact {c['exact']:4}  refused {c['refused']:4}  wrong {c['wrong']:3}")
    total = Counter(r["verdict"] for r in rows.values())
    print(f"{'all':18} cases {len(rows):4}  exact {total['exact']:4}  refused {total['refused']:4}  wrong {total['wrong']:3}")
    times = sorted(r["s"] for r in rows.values())
    print(f"merge time: median {times[len(times) // 2] * 1000:.1f} ms, max {times[-1] * 1000:.0f} ms")
    if args.json:
        write_json(args.json, {"cases": rows})
    if args.compare:
        before = json.loads(Path(args.compare).read_text(encoding="utf-8"))["cases"]
        moved, worse = compare(before, rows)
        print(f"{len(moved)} cases moved from {args.compare}" + (":" if moved else ""))
        for line in moved:
            print("  " + line)
        return 1 if worse else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
