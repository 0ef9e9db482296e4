"""`fastapply data`: lazy-edit training cases (eval JSONL schema) from a git repository's history.

    fastapply data --git-dir REPO --out cases.jsonl [--max-cases N] [--rev REV] [--max-lines N]
                   [--dev-out dev.jsonl --dev-percent 5]

Deterministic for a given repository and revision. With --dev-out, the commits whose hashed sha
falls in --dev-percent go to that file instead (never the same commit in both). Files are written
atomically once the walk is done; on any error nothing is written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

from fastapply.data.cases import held_out, make_case
from fastapply.data.gitcases import DataError, Limits, file_edits, git_dir_of, resolve
from fastapply.fsutil import atomic_write

PROGRESS_EVERY = 500  # file edits between progress lines


def register(subparsers) -> None:
    p = subparsers.add_parser("data", help="training cases from a git repository's history (JSONL)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--git-dir", required=True, help="a bare mirror or a work tree")
    p.add_argument("--out", required=True, help="the JSONL file to write")
    p.add_argument("--rev", default="HEAD", help="walk the history reachable from this revision (default HEAD)")
    p.add_argument("--max-cases", type=_positive, default=None, help="stop after this many cases (both files)")
    p.add_argument("--max-lines", type=_positive, default=Limits.max_lines,
                   help=f"skip originals longer than this (default {Limits.max_lines})")
    p.add_argument("--min-lines", type=_positive, default=Limits.min_lines)
    p.add_argument("--max-per-path", type=_positive, default=4, help="cases from one file path at most (default 4)")
    p.add_argument("--repo-name", default=None, help="owner/name for ids and `source` (default: from the path)")
    p.add_argument("--dev-out", default=None, help="write held-out commits' cases here")
    p.add_argument("--dev-percent", type=float, default=5.0, help="share of commits held out (default 5)")
    p.set_defaults(func=cmd_data)


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {n}")
    return n


def repo_name(path: str) -> str:
    """owner/name from a mirror path such as /work/.mirror/owner+name/repo, else the folder's name."""
    parts = os.path.abspath(path).rstrip("/").split("/")
    for part in reversed(parts):
        if "+" in part:
            return part.replace("+", "/", 1)
    name = parts[-1]
    return parts[-2] if name in (".git", "repo") and len(parts) > 1 else name.removesuffix(".git")


def generate(git_dir: str, rev: str, limits: Limits, repo: str, max_cases: int | None = None,
             max_per_path: int = 4, dev_percent: float | None = None, progress=None) -> tuple[list, list]:
    """(train rows, dev rows) in walk order; dev rows only when dev_percent is given. An edit seen
    before (a cherry-pick, a revert of a revert) is skipped, so it cannot land on both sides."""
    head = resolve(git_dir, rev)
    train, dev, per_path, seen, edits = [], [], {}, 0, set()
    for commit, edit in file_edits(git_dir, repo, head, limits):
        seen += 1
        if progress and seen % PROGRESS_EVERY == 0:
            progress(seen, len(train) + len(dev))
        key = hashlib.sha256(f"{edit.original}\0{edit.expected}".encode()).digest()
        if per_path.get(edit.path, 0) >= max_per_path or key in edits:
            continue
        edits.add(key)
        row = make_case(edit, limits)
        if row is None:
            continue
        per_path[edit.path] = per_path.get(edit.path, 0) + 1
        (dev if dev_percent is not None and held_out(commit.sha, dev_percent) else train).append(row)
        if max_cases and len(train) + len(dev) >= max_cases:
            break
    return train, dev


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def cmd_data(args) -> int:
    t0 = time.monotonic()
    try:
        for out in (args.out, args.dev_out):
            if out and not os.path.isdir(os.path.dirname(os.path.abspath(out))):
                raise DataError(f"the folder of {out!r} does not exist")
        git_dir = git_dir_of(args.git_dir)
        repo = args.repo_name or repo_name(args.git_dir)
        limits = Limits(min_lines=args.min_lines, max_lines=args.max_lines)
        report = lambda seen, n: print(f"fastapply data: {repo}: {seen} file edits read, {n} cases",  # noqa: E731
                                       file=sys.stderr, flush=True)
        train, dev = generate(git_dir, args.rev, limits, repo, args.max_cases, args.max_per_path,
                              args.dev_percent if args.dev_out else None, report)
        if not train and not dev:
            raise DataError(f"no usable commits in {args.git_dir!r} at {args.rev!r} (no modified source file "
                            "gave a well-defined case)")
    except DataError as e:
        print(f"fastapply data: error: {e}", file=sys.stderr)
        return 1
    atomic_write(args.out, _jsonl(train))
    if args.dev_out:
        atomic_write(args.dev_out, _jsonl(dev))
    print(f"fastapply data: {repo}: {len(train)} cases -> {args.out}"
          + (f", {len(dev)} held out -> {args.dev_out}" if args.dev_out else "")
          + f" ({time.monotonic() - t0:.1f}s)", file=sys.stderr)
    return 0
