"""Fuzz the structural merge with random real edits of the shared originals: per edit pattern, how
many cases merge exactly, are refused, or come back silently wrong (returned as good, != expected).

    .venv/bin/python -m evals.fuzz --per-pattern 2000 --seed 1 --json out/fuzz.json [--jobs 2]

Each case is one edit of one original from evals/cases/*.jsonl (evaluated only, never edited),
drawn by a generator in evals/fuzz_edits.py, fuzz_moves.py, fuzz_wraps.py or fuzz_props.py (the
property tests' shapes), rendered as a lazy snippet with or without context lines and careful or
loose markers.
`expected` is the edited file, exact by construction. Case i of pattern p is drawn from the seed
string "S:p:i:attempt" alone, so a run is deterministic for a seed whatever `--jobs`. The first
wrong cases of each pattern are written next to the JSON (`<json stem>-wrong/<pattern>/<i>/`).
A benchmark, not a CI test: CI runs the same generators at small sizes (test_merge_properties.py).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import signal
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from evals import fuzz_edits, fuzz_messy, fuzz_moves, fuzz_props, fuzz_wraps
from evals.common import write_json
from evals.fuzz_common import RandomPick, Source, keeps_syntax

DATA = Path(__file__).resolve().parents[1] / "evals" / "cases"
SETS = ("commits_dev.jsonl", "hard_dev.jsonl", "public_fixtures.jsonl")
GROUPS = {"python": ("python",), "js": ("javascript", "typescript", "tsx", "jsx"), "go": ("go",),
          "rust": ("rust",), "java": ("java",)}
ALL = tuple(GROUPS)
PATTERNS = {  # name -> (generator, language groups it applies to)
    "wrap_shown": (fuzz_edits.wrap_shown, ALL),
    "wrap_marker": (fuzz_edits.wrap_marker, ALL),
    "unwrap": (fuzz_edits.unwrap, ALL),
    "unwrap_marker": (fuzz_edits.unwrap_marker, ALL),
    "decorator": (fuzz_edits.decorator, ("python", "js", "rust", "java")),
    "literal_item": (fuzz_edits.literal_item, ALL),
    "rename_local": (fuzz_moves.rename_local, ALL),
    "reorder": (fuzz_moves.reorder, ALL),
    "signature": (fuzz_moves.signature, ALL),
    "delete_between": (fuzz_moves.delete_between, ALL),
    "rewrite_whole": (fuzz_props.rewrite_whole, ALL),
    "prop_random_edit": (fuzz_props.random_edit, ALL),
    "prop_rewrite_fn": (fuzz_props.rewrite_fn, ALL),
    "prop_tail": (fuzz_props.tail_edit, ALL),
    "prop_bare_function": (fuzz_props.bare_function, ALL),
    "prop_whole_class": (fuzz_props.whole_class, ALL),
    "prop_new_function": (fuzz_props.new_function, ALL),
    "wrap_body": (fuzz_wraps.wrap_body, ALL),
    "wrap_tail": (fuzz_wraps.wrap_tail, ALL),
    "delete_look_alike": (fuzz_moves.delete_look_alike, ALL),
    "messy": (fuzz_messy.messy, ALL),
}
ATTEMPTS = 40  # draws per case before the case is given up (the pattern fits few originals)
EXT = {"python": "py", "javascript": "js", "jsx": "jsx", "typescript": "ts", "tsx": "tsx", "go": "go",
       "rust": "rs", "java": "java"}

_POOL: dict[str, list[Source]] = {}  # group -> originals; loaded once per process


def load_sources(data: Path = DATA) -> dict[str, list[Source]]:
    """The shared sets' originals in the fuzzed languages, deduplicated, in file order; CRLF files
    are left out (the generators write LF lines)."""
    seen: set[str] = set()
    pool: dict[str, list[Source]] = defaultdict(list)
    of_lang = {lang: g for g, langs in GROUPS.items() for lang in langs}
    for name in SETS:
        path = data / name
        if not path.exists():
            continue
        for line in path.open(encoding="utf-8"):
            case = json.loads(line)
            text, lang = case["original"], case.get("language")
            if lang not in of_lang or text in seen or "\r" in text or len(text.splitlines()) < 8:
                continue
            seen.add(text)
            pool[of_lang[lang]].append(Source(lang, text, case.get("source", case["id"])))
    return dict(pool)


def draw_case(pattern: str, seed: int, i: int, pool: dict[str, list[Source]]):
    """(source, edit) for case i of `pattern`, or None when no draw fits."""
    gen, groups = PATTERNS[pattern]
    groups = [g for g in groups if pool.get(g)]
    for attempt in range(ATTEMPTS):
        pick = RandomPick(f"{seed}:{pattern}:{i}:{attempt}")
        src = pick.choice(pool[pick.choice(groups)])
        edit = gen(pick, src)
        if edit is not None and edit.expected != src.text and keeps_syntax(src, edit.expected):
            return src, edit
    return None


class _CaseTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise _CaseTimeout()


def merge_verdict(edit, limit_s: float) -> tuple[str, str | None, list[str]]:
    """('exact' | 'refused' | 'silent_wrong' | 'crash' | 'timeout', returned text, reasons)."""
    from fastapply.api import Applier, ApplyError, ApplyRequest

    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        res = Applier().apply(ApplyRequest(original=edit.original, update=edit.update, language=edit.language,
                                           engine="structural"))
    except ApplyError as e:
        return "refused", None, e.reasons or [e.message]
    except _CaseTimeout:
        return "timeout", None, [f"over {limit_s}s"]
    except Exception as e:  # a crash is a finding to report, not a reason to stop the run
        return "crash", None, [f"{type(e).__name__}: {e}"]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if not res.ok:
        return "refused", None, [f.line() for f in res.findings]
    return ("exact" if res.merged == edit.expected else "silent_wrong"), res.merged, []


# `--broken-original`: a line that opens a block and is never closed, put above the original and
# the expected file alike, so that tree-sitter fails on most of the file (`languages.unparsable`),
# as on an original with a grammar gap or a missing `)` (the merge then places by line anchors
# only and checks the bracket balance). A draw whose original still parses is not counted.
# (Python and Go have none: tree-sitter recovers from every opener tried there but an unterminated
# string, and a file that is one string checks nothing.)
BROKEN_OPENER = {"javascript": "describe('broken', () => {\n", "typescript": "describe('broken', () => {\n",
                 "tsx": "describe('broken', () => {\n", "jsx": "describe('broken', () => {\n",
                 "rust": "fn broken() {\n", "java": "@Broken(\n"}


def broken(edit):
    """The edit with its original and expected file broken alike (BROKEN_OPENER), or None when the
    original still parses, or when the snippet starts without a marker: it then shows the file's
    top, and a line put above it would stand unshown and unmarked, kept by the expected file
    whatever the edit did to the lines below it (seed 44790, `delete_between` #377: the head's
    doc comments and `require` deleted, the broken line above them kept)."""
    from fastapply.languages import parse, unparsable  # (fastapply loads in the workers, as merge_verdict)
    from fastapply.markers import looks_like_marker

    head = BROKEN_OPENER.get(edit.language)
    first = next((x for x in edit.update.splitlines() if x.strip()), "")
    if head is None or not looks_like_marker(first):
        return None
    out = replace(edit, original=head + edit.original, expected=head + edit.expected)
    tree = parse(edit.language, out.original)
    return out if tree is not None and unparsable(tree, out.original) else None


def run_one(task: tuple) -> dict:
    pattern, seed, i, limit_s, data = task[:5]
    broken_original = len(task) > 5 and task[5]
    if not _POOL:
        _POOL.update(load_sources(Path(data)))
    got = draw_case(pattern, seed, i, _POOL)
    if got is not None and broken_original:
        got = (got[0], broken(got[1]))
    if got is None or got[1] is None:
        return {"pattern": pattern, "i": i, "verdict": "ungenerated"}
    src, edit = got
    t0 = time.perf_counter()
    verdict, text, reasons = merge_verdict(edit, limit_s)
    row = {"pattern": pattern, "i": i, "verdict": verdict, "language": edit.language, "variant": edit.variant,
           "source": src.name, "seconds": round(time.perf_counter() - t0, 4), "reasons": reasons[:3]}
    if verdict == "silent_wrong":
        row.update(original=edit.original, update=edit.update, expected=edit.expected, got=text)
    return row


VERDICTS = ("exact", "refused", "silent_wrong", "crash", "timeout")


def _bucket(rows: list[dict]) -> dict:
    n = len(rows)
    out = {"cases": n} | {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    for v in ("exact", "refused", "silent_wrong"):
        out[f"{v}_rate"] = round(out[v] / n, 4) if n else 0.0
    return out


def _split(rows: list[dict], key) -> dict:
    groups = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return {k: _bucket(v) for k, v in sorted(groups.items()) if k}


def _context(r: dict) -> str:
    tok = next((t for t in r.get("variant", "").split() if t.startswith("ctx")), "")
    return "" if not tok else "no_context" if tok == "ctx0" else "context"


def _markers(r: dict) -> str:
    words = r.get("variant", "").split()
    return "loose" if "loose" in words else "careful" if "careful" in words else ""


def summarize(rows: list[dict], per_pattern: int, seed: int) -> dict:
    done = [r for r in rows if r["verdict"] != "ungenerated"]
    by = defaultdict(list)
    for r in rows:
        by[r["pattern"]].append(r)
    per = {}
    for p, prs in by.items():
        real = [r for r in prs if r["verdict"] != "ungenerated"]
        per[p] = _bucket(real) | {"ungenerated": len(prs) - len(real),
                                  "by_language": _split(real, lambda r: r["language"]),
                                  "by_context": _split(real, _context), "by_markers": _split(real, _markers)}
    total = _bucket(done)
    return {"cases": total["cases"], "patterns": len(per), "exact": total["exact"], "refused": total["refused"],
            "silent_wrong": total["silent_wrong"], "crashes": total["crash"], "timeouts": total["timeout"],
            "per_pattern": per, "per_pattern_requested": per_pattern, "seed": seed}


def write_wrong(rows: list[dict], out_dir: Path, first: int) -> list[dict]:
    """The first `first` silent wrong cases of each pattern as files, for reading and diffing."""
    listed, count = [], defaultdict(int)
    for r in rows:
        if r["verdict"] != "silent_wrong":
            continue
        entry = {k: r[k] for k in ("pattern", "i", "language", "variant", "source")}
        count[r["pattern"]] += 1
        if count[r["pattern"]] <= first:
            d = out_dir / r["pattern"] / f"{r['i']:05d}"
            d.mkdir(parents=True, exist_ok=True)
            ext = EXT.get(r["language"], "txt")
            for name in ("original", "update", "expected", "got"):
                (d / f"{name}.{ext}").write_text(r[name], encoding="utf-8")
            (d / "info.json").write_text(json.dumps(entry, indent=2) + "\n", encoding="utf-8")
            entry["dir"] = str(d)
        listed.append(entry)
    return listed


def print_table(summary: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"evals.fuzz: structural merge, seed {summary['seed']}")
    for col in ("pattern", "cases", "exact", "refused", "silent_wrong", "wrong no_ctx", "wrong loose", "exact_rate",
                "crash/timeout"):
        table.add_column(col, justify="left" if col == "pattern" else "right")
    for p, b in summary["per_pattern"].items():
        table.add_row(p, str(b["cases"]), str(b["exact"]), str(b["refused"]), str(b["silent_wrong"]),
                      str(b["by_context"].get("no_context", {}).get("silent_wrong", "-")),
                      str(b["by_markers"].get("loose", {}).get("silent_wrong", "-")),
                      f"{b['exact_rate']:.3f}", f"{b['crash']}/{b['timeout']}")
    table.add_row("ALL", str(summary["cases"]), str(summary["exact"]), str(summary["refused"]),
                  str(summary["silent_wrong"]), "", "", "", f"{summary['crashes']}/{summary['timeouts']}")
    Console(width=140).print(table)


def _progress(rows, total: int) -> list[dict]:
    """The rows, saying how far along the run is on stderr (a 2,000-per-pattern run takes minutes)."""
    out, t0 = [], time.perf_counter()
    for n, row in enumerate(rows, 1):
        out.append(row)
        if n % 1000 == 0 or n == total:
            print(f"[{n}/{total}] {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-pattern", type=int, default=200, help="cases per pattern")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="write the summary and the wrong cases' list here")
    ap.add_argument("--patterns", default=None, help="comma-separated subset of: " + ", ".join(PATTERNS))
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--case-timeout", type=float, default=10.0, help="seconds per merge before it counts as a timeout")
    ap.add_argument("--show-wrong", type=int, default=5, help="wrong cases written out per pattern")
    ap.add_argument("--wrong-dir", default=None, help="where they go (default: next to --json, <stem>-wrong/)")
    ap.add_argument("--data", default=str(DATA), help="the shared evals folder")
    ap.add_argument("--broken-original", action="store_true",
                    help="break each original (and expected) with an unclosed opener above it (BROKEN_OPENER)")
    args = ap.parse_args(argv)

    names = args.patterns.split(",") if args.patterns else list(PATTERNS)
    unknown = [n for n in names if n not in PATTERNS]
    if unknown:
        ap.error(f"unknown pattern(s) {', '.join(unknown)}; use: {', '.join(PATTERNS)}")
    if not load_sources(Path(args.data)):
        ap.error(f"no originals under {args.data}")
    tasks = [(p, args.seed, i, args.case_timeout, args.data, args.broken_original)
             for p in names for i in range(args.per_pattern)]
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            rows = _progress(pool.imap(run_one, tasks, chunksize=8), len(tasks))
    else:
        rows = _progress(map(run_one, tasks), len(tasks))
    summary = summarize(rows, args.per_pattern, args.seed)
    print_table(summary)
    wrong_dir = Path(args.wrong_dir) if args.wrong_dir else (
        Path(args.json).with_name(Path(args.json).stem + "-wrong") if args.json else None)
    wrong = write_wrong(rows, wrong_dir, args.show_wrong) if wrong_dir else []
    if args.json:
        write_json(args.json, {"summary": summary, "wrong": wrong})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
