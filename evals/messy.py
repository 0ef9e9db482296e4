"""The structural merge on messy snippets: every case of our sets that the merge answers exactly
when clean, rewritten the ways real agents write (evals/messy_transforms.py: tabs for spaces,
another indent width, a dedented member, no trailing whitespace, CRLF, a BOM, no final newline, a
Markdown fence, another marker wording), each variant with an expected file still known exactly.

    .venv/bin/python -m evals.messy --json out/messy.json [--sets hard_dev ...] [--transforms crlf ...]

Scores `exact` / `refused` / `wrong` (a file returned that is not the expected one; Continue
fixtures compare with blank lines ignored, as evals.accuracy does) and `timeout` (over
--case-timeout), per transform and per language, next to exact-on-clean over the same cases (each
variant's clean case; all exact, by the selection): the ratio exact_messy / exact_clean is the
figure that matters. Variants are deterministic for a --seed. The wrong variants' files go under
`<json stem>-wrong/`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import re
import shutil
import signal
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from evals.common import load_cases, write_json
from evals.messy_transforms import TRANSFORMS, Skip, Variant

DATA = Path(__file__).resolve().parent / "cases"
SETS = ("commits_dev", "hard_dev", "public_fixtures", "wrap_table", "agent_heldout", "agent_heldout2",
        "agent_heldout3", "agent_heldout4", "agent_heldout5", "agent_heldout6", "agent_heldout7",
        "langs_commits", "langs_agent")  # langs_agent_heldout stays held out
VERDICTS = ("exact", "refused", "wrong", "timeout", "crash")


def load_sets(data: Path, names: list[str], limit: int | None) -> list[dict]:
    """The cases of each set, keyed `set:id` (ids repeat across sets)."""
    cases = []
    for name in names:
        for c in load_cases(data / f"{name}.jsonl", limit=limit):
            cases.append(c | {"set": name, "key": f"{name}:{c['id']}"})
    return cases


def make_variants(cases: list[dict], transforms: list[str], seed: int) -> tuple[list[dict], dict]:
    """Each transform applied to each case (its own rng per case and transform), and the skips
    counted per transform and reason."""
    out, skipped = [], defaultdict(Counter)
    for c in cases:
        clean = Variant(c.get("language") or "", c["original"], c["update"], c["expected"])
        for name in transforms:
            try:
                v = TRANSFORMS[name](clean, random.Random(f"{seed}:{c['id']}:{name}"))
            except Skip as e:
                skipped[name][str(e)] += 1
                continue
            out.append(c | {"transform": name, "original": v.original, "update": v.update, "expected": v.expected})
    return out, {k: dict(v) for k, v in skipped.items()}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def merge_one(task: tuple[dict, float]) -> dict:
    """The merge's verdict on one case or variant (run in a worker)."""
    from evals.accuracy import score_case
    from fastapply.merge import structural_merge

    case, limit_s = task
    row = {"key": case["key"], "transform": case.get("transform", "clean")}
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    t0 = time.perf_counter()
    try:
        res = structural_merge(case["original"], case["update"], case.get("language"), case.get("path"))
    except _Timeout:
        return row | {"verdict": "timeout", "reasons": [f"over {limit_s}s"]}
    except Exception as e:  # a crash is a finding, not a reason to stop the run
        return row | {"verdict": "crash", "reasons": [f"{type(e).__name__}: {e}"]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    row["seconds"] = round(time.perf_counter() - t0, 4)
    if not res.ok:
        return row | {"verdict": "refused", "reasons": [str(r) for r in res.reasons][:2]}
    if score_case(case, res.text, True)["exact"]:
        return row | {"verdict": "exact"}
    return row | {"verdict": "wrong", "got": res.text}


def run_all(items: list[dict], limit_s: float, jobs: int, what: str) -> list[dict]:
    tasks = [(c, limit_s) for c in items]
    t0 = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else _Serial() as pool:
        rows = []
        for n, row in enumerate(pool.imap(merge_one, tasks, chunksize=8), 1):
            rows.append(row)
            if n % 500 == 0 or n == len(tasks):
                print(f"[{what} {n}/{len(tasks)}] {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    return rows


class _Serial:
    """`Pool`'s imap in this process (--jobs 1)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def imap(self, fn, tasks, chunksize=1):
        return map(fn, tasks)


def bucket(rows: list[dict]) -> dict:
    out = {"variants": len(rows)} | {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    out["exact_clean"] = sum(r["clean_exact"] for r in rows)
    out["ratio"] = round(out["exact"] / out["exact_clean"], 4) if out["exact_clean"] else None
    return out


def summarize(clean: list[dict], rows: list[dict], cases: list[dict], transforms: list[str], skipped: dict) -> dict:
    by_set = defaultdict(Counter)
    for c, r in zip(cases, clean):
        by_set[c["set"]][r["verdict"]] += 1
    per_t, per_l = defaultdict(list), defaultdict(list)
    for r in rows:
        per_t[r["transform"]].append(r)
        per_l[r["language"]].append(r)
    return {"total": bucket(rows), "languages": len(per_l),
            "clean": {s: {"cases": sum(n.values())} | dict(n) for s, n in by_set.items()},
            "by_transform": {t: bucket(per_t[t]) | {"skipped": sum(skipped.get(t, {}).values())} for t in transforms},
            "by_language": {k: bucket(v) for k, v in sorted(per_l.items())}, "skipped": skipped,
            "wrong": [r["variant"] for r in rows if r["verdict"] == "wrong"]}


def print_tables(summary: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=140)
    cols = ("variants", "exact", "refused", "wrong", "timeout", "crash", "exact_clean", "ratio")

    def table(title: str, key: str, groups: dict, extra: tuple = ()) -> None:
        t = Table(title=title)
        for col in (key,) + cols + extra:
            t.add_column(col, justify="left" if col == key else "right")
        for name, b in list(groups.items()) + [("ALL", summary["total"])]:
            ratio = "-" if b["ratio"] is None else f"{b['ratio']:.3f}"
            t.add_row(name, *[str(b[c]) for c in cols[:-1]], ratio, *[str(b.get(c, "")) for c in extra])
        console.print(t)

    clean = Table(title="clean snippets (variants are made from the exact ones)")
    for col in ("set", "cases", "exact", "refused", "wrong", "timeout", "crash"):
        clean.add_column(col, justify="left" if col == "set" else "right")
    for s, n in summary["clean"].items():
        clean.add_row(s, str(n["cases"]), *[str(n.get(v, 0)) for v in VERDICTS])
    console.print(clean)
    table("messy variants per transform", "transform", summary["by_transform"], ("skipped",))
    table("messy variants per language", "language", summary["by_language"])
    tot = summary["total"]
    print(f"{tot['variants']} variants over {summary['languages']} languages: exact {tot['exact']}, "
          f"refused {tot['refused']}, wrong {tot['wrong']}, timeout {tot['timeout']}, crash {tot['crash']}")
    print(f"wrong ({len(summary['wrong'])}):" + "".join(f"\n  {w}" for w in summary["wrong"]))


def variant_row(v: dict, got: dict) -> dict:
    """A variant's verdict with its name (`set:id~transform`); a wrong one keeps its files."""
    row = {"variant": f"{v['key']}~{v['transform']}", "set": v["set"], "language": v.get("language") or "?",
           "transform": v["transform"], "clean_exact": True} | got  # made from clean-exact cases only
    if got["verdict"] == "wrong":
        row |= {k: v[k] for k in ("original", "update", "expected")}
    return row


EXT = {"python": "py", "javascript": "js", "typescript": "ts", "go": "go", "rust": "rs", "java": "java",
       "csharp": "cs", "kotlin": "kt", "ruby": "rb", "bash": "sh", "markdown": "md", "make": "mk", "elixir": "ex"}


def write_wrong(rows: list[dict], out_dir: Path) -> None:
    """Each wrong variant as files (original, update, expected, got) to read and diff; the folder
    is emptied first, so that it holds this run's only."""
    shutil.rmtree(out_dir, ignore_errors=True)
    for r in rows:
        if r["verdict"] != "wrong":
            continue
        d = out_dir / r["transform"] / re.sub(r"[^\w.@#-]+", "_", r["key"])
        d.mkdir(parents=True, exist_ok=True)
        ext = EXT.get(r["language"], r["language"] or "txt")
        for name in ("original", "update", "expected", "got"):
            (d / f"{name}.{ext}").write_bytes(r[name].encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="+", default=list(SETS), help="case sets under --data (names without .jsonl)")
    ap.add_argument("--transforms", nargs="+", default=list(TRANSFORMS), choices=list(TRANSFORMS), metavar="T",
                    help="of: " + ", ".join(TRANSFORMS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="write the summary and every variant's verdict here")
    ap.add_argument("--limit-per-set", type=int, default=None, help="first N cases of each set")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--case-timeout", type=float, default=10.0, help="seconds per merge before it counts as a timeout")
    ap.add_argument("--data", default=str(DATA), help="the folder of the case sets")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    cases = load_sets(Path(args.data), args.sets, args.limit_per_set)
    clean = run_all(cases, args.case_timeout, args.jobs, "clean")
    exact = [c for c, r in zip(cases, clean) if r["verdict"] == "exact"]
    variants, skipped = make_variants(exact, args.transforms, args.seed)
    got = run_all(variants, args.case_timeout, args.jobs, "messy")
    rows = [variant_row(v, g) for v, g in zip(variants, got)]
    summary = summarize(clean, rows, cases, args.transforms, skipped)
    summary |= {"seed": args.seed, "seconds": round(time.perf_counter() - t0, 1)}
    print_tables(summary)
    print(f"run time {summary['seconds']}s, --jobs {args.jobs}")
    if args.json:
        wrong_dir = Path(args.json).with_name(Path(args.json).stem + "-wrong")
        write_wrong(rows, wrong_dir)
        print(f"wrong variants' files: {wrong_dir}/<transform>/<set>_<id>/")
        keep = [{k: v for k, v in r.items() if k not in ("original", "update", "expected", "got")} for r in rows]
        write_json(args.json, {"summary": summary, "variants": keep})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
