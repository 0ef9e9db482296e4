"""Cases for calibrating the judge on edits nobody chose: `evals.fuzz` draws of one seed that the
structural merge refuses with two readings or more, written as JSONL for `evals.judge_calibration
dump --cases` (evaluated only; the originals come from evals/cases/, never edited).

    .venv/bin/python -m evals.judge_fuzz_cases --seed 83911 --per-pattern 6 --out out/judge_fuzz_83911.jsonl

Per pattern, the first `--per-pattern` draws (in draw order, at most 400 tried) that the merge
refuses with readings.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evals.fuzz import PATTERNS, draw_case, load_sources
from fastapply.merge import structural_merge

MAX_DRAWS = 400


def refused_draws(seed: int, per_pattern: int, pool) -> list[dict]:
    out = []
    for pattern in PATTERNS:
        got = 0
        for i in range(MAX_DRAWS):
            if got >= per_pattern:
                break
            drawn = draw_case(pattern, seed, i, pool)
            if drawn is None:
                continue
            edit = drawn[1]
            merge = structural_merge(edit.original, edit.update, edit.language)
            if merge.ok or len(merge.readings) < 2:
                continue
            got += 1
            out.append({"id": f"fuzz{seed}/{pattern}/{i}", "original": edit.original, "update": edit.update,
                        "expected": edit.expected, "language": edit.language})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--per-pattern", type=int, default=6)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    rows = refused_draws(args.seed, args.per_pattern, load_sources())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} refused draws with readings -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
