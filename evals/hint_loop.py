"""The hint loop: does a refusal's first line tell an agent what to resend?

    .venv/bin/python -m evals.hint_loop --cases evals/cases/hard_dev.jsonl [--cases ...] [--json out.json]
    .venv/bin/python -m evals.hint_loop --fuzz-seed S --fuzz-per-pattern N   # fuzz draws (evals.fuzz)

For each case the structural merge refuses (through the core API, as every front-end) and whose
readings hold the expected file, a scripted agent reads the refusal's hints (`ApplyError.hints`:
lines to add above or below one snippet region) and takes the first one whose lines stand at that
side of that region in the file it means (the expected file; the agent copies them from there).
It resends its snippet with those lines added, once, and the answer is compared with `expected`:
exact, wrong (a file returned that is not the expected one) or refused again. A refusal with no
hint that fits the agent's file counts as not retried. `--fuzz-seed` draws the cases from
`evals.fuzz`'s generators instead (the same draws as `evals.fuzz --seed S`): cases nobody wrote to
fit the hints.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evals.common import load_cases
from fastapply.api import Applier, ApplyError, ApplyRequest


def _region_lines(update: str, region: int, original: str) -> list[str]:
    from fastapply.refusal import snippet_regions  # the regions the hint numbers

    return [x.strip() for x in snippet_regions(original, update)[region - 1].lines if x.strip()]


def stands_beside(expected: str, region_lines: list[str], side: str, lines: list[str], marker: bool = False) -> bool:
    """Do `lines` stand right above (below) the region's lines in `expected`? The agent's own
    check, on the file it means: the region's non-blank lines in order, blank lines between them
    allowed; the hint's lines exactly adjacent. For a marker hint: does the file go on there (a
    non-blank line above (below) the region)?"""
    exp = expected.splitlines()
    stripped = [x.strip() for x in exp]
    n = len(region_lines)
    for i, x in enumerate(stripped):
        if x != region_lines[0]:
            continue
        k, j = 1, i + 1
        while k < n and j < len(exp):
            if stripped[j] == region_lines[k]:
                k += 1
            elif stripped[j]:
                break
            j += 1
        if k < n:
            continue
        first, last = i, j - 1
        if marker:
            if any(x.strip() for x in (exp[:first] if side == "above" else exp[last + 1:])):
                return True
            continue
        got = exp[first - len(lines):first] if side == "above" else exp[last + 1:last + 1 + len(lines)]
        if got == lines:
            return True
    return False


def resend(update: str, original: str, region: int, side: str, lines: list[str]) -> str:
    from fastapply.refusal import snippet_regions

    r = snippet_regions(original, update)[region - 1]
    upd = update.splitlines(keepends=True)
    at = r.start if side == "above" else r.start + len(r.lines)
    if at > 0 and not upd[at - 1].endswith("\n"):
        upd[at - 1] += "\n"
    return "".join(upd[:at] + [x + "\n" for x in lines] + upd[at:])


def run(cases: list[dict]) -> dict:
    applier = Applier()
    rows = []
    for c in cases:
        req = ApplyRequest(c["original"], c["update"], language=c.get("language"), path=c.get("path"),
                           engine="structural")
        try:
            applier.apply(req)
            continue
        except ApplyError as e:
            if e.code != "refused":
                continue
            err = e
        texts = [t for _, t in err.readings]
        row = {"id": c["id"], "readings": len(texts), "held": c["expected"] in texts, "hinted": False,
               "outcome": "not_retried", "hint": err.hint}
        rows.append(row)
        if not row["held"]:
            continue
        for h in err.hints:
            if stands_beside(c["expected"], _region_lines(c["update"], h.region, c["original"]), h.side, list(h.lines),
                             h.marker):
                row["hinted"] = True
                again = ApplyRequest(c["original"], resend(c["update"], c["original"], h.region, h.side, list(h.lines)),
                                     language=c.get("language"), path=c.get("path"), engine="structural")
                try:
                    merged = applier.apply(again).merged
                    row["outcome"] = "exact" if merged == c["expected"] else "wrong"
                except ApplyError:
                    row["outcome"] = "refused_again"
                break
    held = [r for r in rows if r["held"]]
    count = {k: sum(1 for r in held if r["outcome"] == k) for k in ("exact", "wrong", "refused_again", "not_retried")}
    return {"refusals": len(rows), "held": len(held), "hinted": sum(r["hinted"] for r in held), **count,
            "exact_share_of_held": round(count["exact"] / len(held), 3) if held else None, "cases": rows}


def fuzz_cases(seed: int, per_pattern: int) -> list[dict]:
    """evals.fuzz's draws for `seed`, as cases (its generators, over the shared originals)."""
    from evals.fuzz import DATA, PATTERNS, draw_case, load_sources

    pool = load_sources(Path(DATA))
    cases = []
    for pattern in PATTERNS:
        for i in range(per_pattern):
            got = draw_case(pattern, seed, i, pool)
            if got is not None:
                e = got[1]
                cases.append({"id": f"{pattern}#{i}", "original": e.original, "update": e.update,
                              "expected": e.expected, "language": e.language})
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", action="append", default=[], help="JSONL cases (repeatable)")
    ap.add_argument("--fuzz-seed", type=int, default=None, help="also run evals.fuzz's draws of this seed")
    ap.add_argument("--fuzz-per-pattern", type=int, default=100, help="draws per fuzz pattern (default 100)")
    ap.add_argument("--json", help="write the summary and per-case rows here")
    args = ap.parse_args(argv)
    out = {}
    print(f"{'set':<28} {'refusals':>8} {'held':>5} {'hinted':>6} {'exact':>5} {'wrong':>5} {'again':>5} {'none':>5}")
    sets = [(Path(path).stem, load_cases(path)) for path in args.cases]
    if args.fuzz_seed is not None:
        sets.append((f"fuzz_{args.fuzz_seed}", fuzz_cases(args.fuzz_seed, args.fuzz_per_pattern)))
    for name, cases in sets:
        summary = run(cases)
        out[name] = summary
        print(f"{name:<28} {summary['refusals']:>8} {summary['held']:>5} {summary['hinted']:>6} "
              f"{summary['exact']:>5} {summary['wrong']:>5} {summary['refused_again']:>5} {summary['not_retried']:>5}")
    total = {k: sum(s[k] for s in out.values()) for k in ("refusals", "held", "hinted", "exact", "wrong",
                                                          "refused_again", "not_retried")}
    print(f"{'all':<28} {total['refusals']:>8} {total['held']:>5} {total['hinted']:>6} {total['exact']:>5} "
          f"{total['wrong']:>5} {total['refused_again']:>5} {total['not_retried']:>5}")
    if args.json:
        Path(args.json).write_text(json.dumps({"total": total, "sets": out}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
