"""Time `fastapply codemod` on a temporary git repo built from commit cases.

    python -m evals.codemod_bench --files 50 --engine structural
    python -m evals.codemod_bench --files 5 --max-lines 60            # the model (speculative)

Builds the repo from the first `--files` cases of commits_dev.jsonl with distinct paths (and at
most `--max-lines` lines), runs the real CLI in a subprocess with `--write --report`, and prints
the run's figures: apply wall time and files/s (from the report), model load time, the whole
process time, how many files came out exactly as the commit did, and output tokens/s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EVALS = Path(__file__).resolve().parents[1] / "evals" / "cases"


def build_repo(root: Path, n: int, max_lines: int | None, structural_exact: bool) -> list[dict]:
    meta = {m["id"]: m for m in map(json.loads, (EVALS / "commits_dev.meta.jsonl").read_text().splitlines())}
    picked, seen = [], set()
    for row in map(json.loads, (EVALS / "commits_dev.jsonl").read_text().splitlines()):
        path = row["id"].split("@")[0].split("/")[1] + "/" + meta[row["id"]]["path"]
        if path in seen or (max_lines and row["original"].count("\n") > max_lines):
            continue
        if structural_exact:
            from fastapply.merge import structural_merge

            if structural_merge(row["original"], row["update"], None, path).text != row["expected"]:
                continue
        seen.add(path)
        f = root / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(row["original"])
        picked.append({"path": path, "update": row["update"], "expected": row["expected"]})
        if len(picked) == n:
            break
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false",
                  "commit", "-qm", "init"]):
        subprocess.run(["git", "-C", str(root), *args], check=True)
    return picked


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--engine", default="speculative")
    ap.add_argument("--max-lines", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--json", default=None, help="also write the figures here")
    ap.add_argument("extra", nargs="*", help="more codemod arguments (after --)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        cases = build_repo(root, a.files, a.max_lines, a.engine == "structural")
        manifest = Path(tmp) / "edits.jsonl"
        manifest.write_text("".join(json.dumps({"path": c["path"], "update": c["update"]}) + "\n" for c in cases))
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "fastapply.cli", "codemod", "--manifest", str(manifest), "--root", str(root),
               "--engine", a.engine, "--write", "--jobs", str(a.jobs), "--report", str(report), "--no-progress",
               "--quiet", *a.extra]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        process_s = time.perf_counter() - t0
        if not report.exists():
            print(proc.stderr, file=sys.stderr)
            return 1
        doc = json.loads(report.read_text())
        s = doc["summary"]
        exact = sum((root / c["path"]).read_text() == c["expected"] for c in cases)
    for f, c in zip(doc["files"], cases, strict=True):
        print(f"{f['path']}: {c['expected'].count(chr(10))} lines, {f['status']} {f['reason'] or ''} "
              f"{(f['message'] or '')[:100]} {f['elapsed_s']:.1f}s", file=sys.stderr)
    figures = {"files": len(cases), "engine": a.engine, "jobs": a.jobs, "exit_code": proc.returncode,
               "written": s["written"], "unchanged": s["unchanged"], "failed": s["failed"], "exact": exact,
               "apply_wall_s": s["wall_s"], "files_per_s": s["files_per_s"], "model_load_s": s["model_load_s"],
               "process_s": round(process_s, 2), "output_tokens": s["output_tokens"],
               "tokens_per_wall_s": s["tokens_per_wall_s"], "decode_tokens_per_s": s["decode_tokens_per_s"]}
    print(json.dumps(figures, indent=2))
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
