"""Run hand-written messy-snippet cases through the `fastapply apply` CLI.

Each case (JSONL: id, language, path, original, update, expected, kind, note)
is written to a temp file named after its `path`, the snippet to another file,
and the CLI is run with `--in-place --engine structural --language <language>`
in the current directory (so `python -m fastapply.cli` imports the checkout
you run it from). The file's bytes afterwards are compared to `expected`:

  exact    exit 0 and file == expected
  refused  non-zero exit and the file unchanged
  wrong    exit 0 and file != expected
  broken   non-zero exit and the file changed anyway

Only counts are printed (per file, per kind, per language); pass --per-case to
also put each case's outcome in the --json output.

    cd /path/to/checkout && python evals/messy_hand.py \
        --cases evals/cases/messy_hand.jsonl --cases tests/data/messy_classes.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

OUTCOMES = ("exact", "refused", "wrong", "broken")


def load_cases(path: str) -> list[dict]:
    cases = []
    with open(path, encoding="utf-8", newline="") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            case = json.loads(line)
            for key in ("id", "language", "path", "original", "update", "expected", "kind"):
                if key not in case:
                    raise SystemExit(f"{path}:{n}: missing field {key!r}")
            cases.append(case)
    return cases


def run_cli(python: str, cwd: str, target: Path, snippet: Path, language: str | None, timeout: float):
    cmd = [python, "-m", "fastapply.cli", "apply", str(target), "--update", str(snippet),
           "--in-place", "--engine", "structural", "--quiet"]
    if language:
        cmd += ["--language", language]
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=timeout)
        return proc.returncode, proc.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return 124, "timeout"


def run_case(case: dict, python: str, cwd: str, timeout: float) -> str:
    original = case["original"].encode("utf-8")
    expected = case["expected"].encode("utf-8")
    with tempfile.TemporaryDirectory(prefix="messy_hand_") as tmp:
        rel = Path(case["path"].lstrip("/"))
        target = Path(tmp, "src", rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        snippet = Path(tmp, "snippet.txt")
        snippet.write_bytes(case["update"].encode("utf-8"))
        target.write_bytes(original)
        rc, err = run_cli(python, cwd, target, snippet, case["language"], timeout)
        if rc != 0 and "unknown language" in err:
            target.write_bytes(original)
            rc, err = run_cli(python, cwd, target, snippet, None, timeout)
        result = target.read_bytes()
    if rc == 0:
        return "exact" if result == expected else "wrong"
    return "refused" if result == original else "broken"


def table(title: str, rows: dict[str, Counter]) -> str:
    width = max([len(title)] + [len(k) for k in rows]) + 2
    head = title.ljust(width) + "".join(f"{o:>9}" for o in ("cases",) + OUTCOMES)
    lines = [head, "-" * len(head)]
    for key in sorted(rows):
        c = rows[key]
        lines.append(key.ljust(width) + f"{sum(c.values()):>9}" + "".join(f"{c[o]:>9}" for o in OUTCOMES))
    return "\n".join(lines)


def summarize(results: list[tuple[str, dict, str]]) -> dict:
    per_file: dict[str, Counter] = defaultdict(Counter)
    per_kind: dict[str, Counter] = defaultdict(Counter)
    per_lang: dict[str, Counter] = defaultdict(Counter)
    total: Counter = Counter()
    for fname, case, outcome in results:
        per_file[fname][outcome] += 1
        per_lang[case["language"]][outcome] += 1
        for kind in {k.strip() for k in case["kind"].split(",") if k.strip()}:
            per_kind[kind][outcome] += 1
        total[outcome] += 1
    return {"per_file": per_file, "per_kind": per_kind, "per_language": per_lang, "total": total}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", action="append", required=True, help="JSONL case file (repeatable)")
    ap.add_argument("--json", help="write the counts (and with --per-case each outcome) here")
    ap.add_argument("--per-case", action="store_true", help="include case ids and outcomes in --json")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs -m fastapply.cli")
    ap.add_argument("--cwd", default=os.getcwd(), help="directory to run the CLI in (the checkout under test)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    args = ap.parse_args(argv)

    probe = subprocess.run([args.python, "-c", "import fastapply; print(fastapply.__file__)"],
                           cwd=args.cwd, capture_output=True, text=True)
    print(f"fastapply under test: {probe.stdout.strip() or probe.stderr.strip()}")

    results = []
    started = time.monotonic()
    for fname in args.cases:
        for case in load_cases(fname):
            outcome = run_case(case, args.python, args.cwd, args.timeout)
            results.append((os.path.basename(fname), case, outcome))
    elapsed = time.monotonic() - started

    s = summarize(results)
    print()
    print(table("file", s["per_file"]))
    print()
    print(table("kind", s["per_kind"]))
    print()
    print(table("language", s["per_language"]))
    print()
    t = s["total"]
    print(f"total: {sum(t.values())} cases, " + ", ".join(f"{o} {t[o]}" for o in OUTCOMES)
          + f"  ({elapsed:.0f}s)")

    if args.json:
        out = {k: {name: dict(c) for name, c in v.items()} for k, v in s.items() if k != "total"}
        out["total"] = dict(t)
        if args.per_case:
            out["cases"] = [{"file": f, "id": c["id"], "outcome": o} for f, c, o in results]
        Path(args.json).write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
