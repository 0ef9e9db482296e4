"""An edit applied again: for each case the structural merge answers exactly, the same snippet sent
once more, to the file it produced (an agent's retry, a codemod run twice). The file should come
back unchanged; a refusal loses nothing but is a needless failure; any other file is wrong.

    .venv/bin/python -m evals.reapply --cases evals/cases/commits_dev.jsonl \
        --cases evals/cases/hard_dev.jsonl --json evals/results/reapply_dev.json

Evaluated only; the cases are never edited.
"""

from __future__ import annotations

import argparse
from collections import Counter

from evals.common import load_cases, write_json
from fastapply.merge import structural_merge


def reapply(case: dict) -> dict | None:
    """The second application's verdict, or None when the first was not exact."""
    lang = case.get("language")
    first = structural_merge(case["original"], case["update"], lang)
    if not (first.ok and first.text == case["expected"]):
        return None
    again = structural_merge(case["expected"], case["update"], lang)
    verdict = "unchanged" if again.ok and again.text == case["expected"] else "refused" if not again.ok else "changed"
    return {"id": case["id"], "verdict": verdict, "reasons": again.reasons[:1]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", action="append", required=True, help="a JSONL case file (repeatable)")
    ap.add_argument("--json", help="write the summary and each verdict here")
    args = ap.parse_args(argv)
    rows = [r for path in args.cases for r in map(reapply, load_cases(path)) if r is not None]
    counts = Counter(r["verdict"] for r in rows)
    summary = {"exact_first": len(rows), **{v: counts.get(v, 0) for v in ("unchanged", "refused", "changed")}}
    print(f"{summary['exact_first']} cases merged exactly; applied again: {summary['unchanged']} unchanged, "
          f"{summary['refused']} refused, {summary['changed']} changed")
    for r in rows:
        if r["verdict"] != "unchanged":
            print(f"  {r['verdict']:9} {r['id']}  {(r['reasons'] or [''])[0][:120]}")
    if args.json:
        write_json(args.json, {"summary": summary, "cases": rows})
    return 1 if summary["changed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
