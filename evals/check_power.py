"""How much `validate` catches on files tree-sitter mostly fails to parse, with and without the
bracket balance: the expected files of shared cases, corrupted at random (a line lost, doubled or
moved, or a block of 2-5 lines lost), each checked against the case's original as a merge would be.

    .venv/bin/python -m evals.check_power --per-case 200 --parsable 4

Every shared case whose original is `languages.unparsable` is measured, and the first `--parsable`
commits_dev cases for comparison (there only the parse check's error counts matter: the balance
is compared on unparsable originals alone). Evaluated only; the cases are never edited.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from fastapply.languages import bracket_balance, detect_language, parse, unparsable
from fastapply.validate import validate

DATA = Path(__file__).resolve().parents[1] / "evals" / "cases"
SETS = ("commits_dev.jsonl", "hard_dev.jsonl", "public_fixtures.jsonl")


def corruptions(text: str, rng: random.Random, n: int):
    lines = text.splitlines()
    for _ in range(n):
        out = list(lines)
        i = rng.randrange(len(out))
        kind = rng.randrange(4)
        if kind == 0:
            del out[i]
        elif kind == 1:
            out.insert(i, out[rng.randrange(len(out))])
        elif kind == 2:
            del out[i:i + rng.randrange(2, 6)]
        else:
            x = out.pop(i)
            out.insert(rng.randrange(len(out) + 1), x)
        bad = "\n".join(out) + "\n"
        if bad.strip() != text.strip():
            yield bad


def power(case: dict, n: int, seed: int) -> dict:
    lang = detect_language(case.get("language"), None, case["original"])
    tree = parse(lang, case["original"])
    broken = tree is not None and unparsable(tree, case["original"])
    base = bracket_balance(tree)
    caught = by_errors = tried = 0
    for bad in corruptions(case["expected"], random.Random(seed), n):
        tried += 1
        errors = [f for f in validate(case["original"], case["update"], bad, lang) if f.severity == "error"]
        # what the parse check alone would say: the findings less the balance one
        count_only = [f for f in errors if not (f.kind == "parse" and "bracket" in f.message)]
        by_errors += bool(count_only)
        caught += bool(errors)
    return {"id": case["id"], "unparsable": broken, "balance": base if broken else None, "corruptions": tried,
            "caught": caught, "caught_without_balance": by_errors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-case", type=int, default=200)
    ap.add_argument("--parsable", type=int, default=4, help="commits_dev cases measured for comparison")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows, parsable = [], 0
    for name in SETS:
        for case in map(json.loads, (DATA / name).open(encoding="utf-8")):
            lang = detect_language(case.get("language"), None, case["original"])
            tree = parse(lang, case["original"])
            if tree is None:
                continue
            if unparsable(tree, case["original"]):
                rows.append(power(case, args.per_case, args.seed))
            elif name == "commits_dev.jsonl" and parsable < args.parsable:
                parsable += 1
                rows.append(power(case, args.per_case, args.seed))
    for r in rows:
        print(f"{'unparsable' if r['unparsable'] else 'parses':10} {r['id'][:60]:60} caught {r['caught']}/"
              f"{r['corruptions']} ({r['caught'] / max(1, r['corruptions']):.0%}); without the balance "
              f"{r['caught_without_balance']}/{r['corruptions']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
