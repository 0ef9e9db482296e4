"""How long the structural merge takes per case: real large files, and a fuzz draw (issue 44 item 9).

    .venv/bin/python -m evals.merge_time [--cases evals/cases/large_files.jsonl.gz ...] \\
        [--fuzz-seed N --fuzz-per-pattern K] [--runs R] [--json out.json] [--profile-over 0.5]

Target: on files up to 5,000 lines every merge answers or refuses within 1 s; past a deadline it
refuses, never a minute of work.

Each case runs in a forked child process (forked after fastapply and its grammars are loaded, so
no import is timed) under a hard cap (`--cap`, 30 s): a case past it is killed and recorded as a
`timeout` at the cap, and the run goes on. Timed: `structural_merge(original, update, language,
path)`, wall clock. A file case is run once to warm up, then `--runs` times: its time is the best
run. A fuzz case (`evals.fuzz.draw_case`: case i of each pattern of `evals.fuzz.PATTERNS` drawn
from the seed alone) is run once. The verdict compares the merge with `expected`: `exact`,
`refused` or `wrong` (or `timeout`, `crash`).

Printed: median, p90, p99 and max per set and per language, the cases over 1 s, and the slowest
cases with their ids and line counts. `--profile-over S` runs each case slower than S seconds once
more under cProfile and prints its top functions by cumulative and by own time. The machine's
load moves every figure: compare runs made on one machine at one time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import multiprocessing
import pstats
import statistics
import sys
import sysconfig
import time
from collections import defaultdict
from pathlib import Path

import fastapply.merge
from evals.common import load_cases, write_json
from fastapply.merge import structural_merge

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "evals" / "cases"
DEFAULT_CASES = CASES / "large_files.jsonl.gz"
CAP_S = 30.0  # a case still running after this long is killed and counted as a timeout
TARGET_S = 1.0  # issue 44 item 9: every merge answers or refuses within 1 s
SLOWEST = 10
PROFILE_TOP = 25  # functions listed per profile and per ordering


def _verdict(case: dict, res) -> str:
    if not res.ok:
        return "refused"
    return "exact" if res.text == case["expected"] else "wrong"


def _child(conn, case: dict, runs: int, profile: bool) -> None:
    """In the forked child: run the merge `runs` times, sending ("ok", seconds, verdict, reason) after
    each; under `profile`, once, sending the profile's text."""
    try:
        if profile:
            prof = cProfile.Profile()
            prof.enable()
            structural_merge(case["original"], case["update"], case.get("language"), case.get("path"))
            prof.disable()
            conn.send(("profile", profile_text(prof)))
            return
        for _ in range(runs):
            t0 = time.perf_counter()
            res = structural_merge(case["original"], case["update"], case.get("language"), case.get("path"))
            seconds = time.perf_counter() - t0
            conn.send(("ok", seconds, _verdict(case, res), res.reasons[0] if res.reasons and not res.ok else ""))
    except Exception as e:  # a crash is a finding, not a reason to stop the run
        conn.send(("crash", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def _forked(case: dict, runs: int, cap_s: float, profile: bool = False) -> list[tuple]:
    """The child's messages, one per run; a run past `cap_s` kills the child and ends the list with
    ("timeout",)."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, case, runs, profile), daemon=True)
    proc.start()
    send.close()
    out: list[tuple] = []
    try:
        while len(out) < (1 if profile else runs):
            if not recv.poll(cap_s):
                out.append(("timeout",))
                break
            try:
                msg = recv.recv()
            except EOFError:  # the child died without a word (killed for memory, a segfault)
                proc.join(1)
                out.append(("crash", f"the child exited with {proc.exitcode}"))
                break
            out.append(msg)
            if msg[0] != "ok":
                break
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
    return out


def time_case(case: dict, runs: int, warmup: bool, cap_s: float) -> dict:
    """{seconds, verdict, reason}: the best of `runs` timed runs (after one warm-up run when asked)."""
    msgs = _forked(case, runs + warmup, cap_s)
    last = msgs[-1]
    if last[0] == "timeout":
        return {"seconds": cap_s, "verdict": "timeout", "reason": f"over the {cap_s:g} s cap"}
    if last[0] == "crash":
        return {"seconds": None, "verdict": "crash", "reason": last[1]}
    timed = msgs[1:] if warmup else msgs
    return {"seconds": min(m[1] for m in timed), "verdict": last[2], "reason": last[3]}


def profile_case(case: dict, cap_s: float) -> str:
    msgs = _forked(case, 1, cap_s, profile=True)
    kind = msgs[-1][0]
    return msgs[-1][1] if kind in ("profile", "crash") else f"(no profile: over the {cap_s:g} s cap)"


def profile_text(prof: cProfile.Profile, top: int = PROFILE_TOP) -> str:
    """The top functions by cumulative time, then by own time, with file:line (paths from the
    repository's root, or from site-packages and the standard library)."""
    out = []
    roots = sorted({str(ROOT) + "/", sysconfig.get_paths()["purelib"] + "/", sysconfig.get_paths()["stdlib"] + "/"},
                   key=len, reverse=True)
    for order in ("cumulative", "tottime"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats(order).print_stats(top)
        text = buf.getvalue()
        for root in roots:
            text = text.replace(root, "")
        lines = text.splitlines()
        start = next((k for k, x in enumerate(lines) if x.lstrip().startswith("ncalls")), 0)
        out.append(f"-- by {order} --")
        out += [x for x in lines[start:] if x.strip()]
    return "\n".join(out)


def _lines(text: str) -> int:
    return text.count("\n") + (not text.endswith("\n") and bool(text))


def file_rows(paths: list[str], runs: int, cap_s: float, limit: int | None, progress) -> list[dict]:
    rows = []
    for path in paths:
        for case in load_cases(path, limit):
            row = {"set": Path(path).stem, "id": case["id"], "language": case.get("language") or "",
                   "lines": _lines(case["original"])}
            rows.append(row | time_case(case, runs, True, cap_s))
            progress(rows[-1])
    return rows


def fuzz_rows(pool: dict, seed: int, per_pattern: int, cap_s: float, progress) -> tuple[list[dict], dict[str, dict]]:
    """Rows for the fuzz draw from `pool` (`evals.fuzz.load_sources`), and the drawn cases by id."""
    from evals.fuzz import PATTERNS, draw_case

    rows, cases = [], {}
    for pattern in PATTERNS:
        for i in range(per_pattern):
            got = draw_case(pattern, seed, i, pool)
            if got is None:
                continue
            src, edit = got
            case = {"id": f"fuzz:{seed}:{pattern}:{i}", "language": edit.language, "original": edit.original,
                    "update": edit.update, "expected": edit.expected}
            cases[case["id"]] = case
            row = {"set": f"fuzz seed {seed}", "id": case["id"], "language": edit.language,
                   "lines": _lines(edit.original), "source": src.name}
            rows.append(row | time_case(case, 1, False, cap_s))
            progress(rows[-1])
    return rows, cases


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(values)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def stats(rows: list[dict]) -> dict:
    secs = [r["seconds"] for r in rows if r["seconds"] is not None]
    out = {"cases": len(rows), "over_1s": sum(s > TARGET_S for s in secs),
           "timeouts": sum(r["verdict"] == "timeout" for r in rows),
           "exact": sum(r["verdict"] == "exact" for r in rows), "refused": sum(r["verdict"] == "refused" for r in rows),
           "wrong": sum(r["verdict"] == "wrong" for r in rows), "crash": sum(r["verdict"] == "crash" for r in rows)}
    if secs:
        out |= {"median": statistics.median(secs), "p90": percentile(secs, 90), "p99": percentile(secs, 99),
                "max": max(secs)}
    return out


def summarize(rows: list[dict]) -> dict:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r["set"]].append(r)
        groups[f"{r['set']} / {r['language']}"].append(r)
    slowest = sorted((r for r in rows if r["seconds"] is not None), key=lambda r: -r["seconds"])[:SLOWEST]
    return {"all": stats(rows), "groups": {k: stats(v) for k, v in groups.items()},
            "slowest": [{k: r[k] for k in ("id", "set", "language", "lines", "seconds", "verdict")} for r in slowest]}


def print_tables(summary: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=160)
    table = Table(title="evals.merge_time: structural_merge wall clock (s)")
    for col in ("set / language", "cases", "median", "p90", "p99", "max", "> 1 s", "timeout", "exact", "refused",
                "wrong", "crash"):
        table.add_column(col, justify="left" if col == "set / language" else "right")
    for name, s in sorted(summary["groups"].items()) + [("ALL", summary["all"])]:
        figures = [f"{s[k]:.3f}" if k in s else "-" for k in ("median", "p90", "p99", "max")]
        table.add_row(name, str(s["cases"]), *figures, *(str(s[k]) for k in ("over_1s", "timeouts", "exact",
                                                                             "refused", "wrong", "crash")))
    console.print(table)
    slow = Table(title=f"the {len(summary['slowest'])} slowest cases")
    for col in ("seconds", "lines", "language", "verdict", "id"):
        slow.add_column(col, justify="right" if col in ("seconds", "lines") else "left")
    for r in summary["slowest"]:
        slow.add_row(f"{r['seconds']:.3f}", str(r["lines"]), r["language"], r["verdict"], r["id"])
    console.print(slow)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=None,
                    help=f"JSONL case files (default {DEFAULT_CASES.relative_to(ROOT)}; none: fuzz only)")
    ap.add_argument("--limit", type=int, default=None, help="the first N cases of each file only")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per file case after a warm-up; the best counts")
    ap.add_argument("--fuzz-seed", type=int, default=None, help="also time a fuzz draw of this seed")
    ap.add_argument("--fuzz-per-pattern", type=int, default=20, help="fuzz cases per pattern (default 20)")
    ap.add_argument("--cap", type=float, default=CAP_S, help=f"seconds before a case is killed (default {CAP_S:g})")
    ap.add_argument("--profile-over", type=float, default=None,
                    help="profile every case slower than this many seconds (cProfile, one run)")
    ap.add_argument("--json", default=None, help="write every row, the summary and the profiles here")
    ap.add_argument("--quiet", action="store_true", help="no line per case on stderr")
    args = ap.parse_args(argv)
    paths = [str(DEFAULT_CASES)] if args.cases is None else args.cases

    def progress(row: dict) -> None:
        if not args.quiet:
            secs = "-" if row["seconds"] is None else f"{row['seconds']:.3f}"
            print(f"{secs:>8}s {row['verdict']:8} {row['lines']:5} {row['id']}", file=sys.stderr, flush=True)

    pool = {}
    if args.fuzz_seed is not None:
        from evals.fuzz import DATA, SETS, load_sources

        pool = load_sources()
        if not pool:
            ap.error(f"no fuzz originals: the shared sets ({', '.join(SETS)}) are missing from {DATA}")
    fastapply.merge.structural_merge("a = 1\nb = 2\n", "a = 1\nb = 3\n", "python")  # loaded before the first fork
    rows = file_rows(paths, args.runs, args.cap, args.limit, progress)
    fuzz_cases: dict[str, dict] = {}
    if args.fuzz_seed is not None:
        more, fuzz_cases = fuzz_rows(pool, args.fuzz_seed, args.fuzz_per_pattern, args.cap, progress)
        rows += more
    if not rows:
        ap.error("no cases to time")
    summary = summarize(rows)
    print_tables(summary)
    profiles = {}
    if args.profile_over is not None:
        by_id = {c["id"]: c for p in paths for c in load_cases(p, args.limit)} | fuzz_cases
        for r in sorted((r for r in rows if r["seconds"] is not None), key=lambda r: -r["seconds"]):
            if r["seconds"] > args.profile_over and r["id"] in by_id:
                profiles[r["id"]] = profile_case(by_id[r["id"]], args.cap)
                print(f"\n== profile: {r['id']} ({r['lines']} lines, {r['seconds']:.3f} s, {r['verdict']})\n"
                      f"{profiles[r['id']]}")
    if args.json:
        write_json(args.json, {"summary": summary, "rows": rows, "profiles": profiles, "runs": args.runs,
                               "cap_s": args.cap})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
