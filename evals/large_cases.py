"""Large real files with real edits, for timing the structural merge (issue 44 item 9).

    .venv/bin/python -m evals.large_cases --out evals/cases/large_files.jsonl.gz

Each case is one real commit that touched one of the files in FILES: `original` = the file at the
parent (1,500-5,000 lines), `expected` = the file at the commit, byte-exact. The walk goes over
the file's history from the repository's pin, newest first, and takes the first PER_FILE usable
edits (1-4 hunks, at most MAX_CHANGED changed lines, no whitespace-only change, no marker-shaped
line in the file, a commit touching at most MAX_FILES files, the expected file parsing no worse
than the original).

The `update` is built with the project's own snippet code (`fastapply.data.snippets`): `context`
(the changed lines with 2, 4 or 6 non-blank context lines, the rest elided by one marker per gap,
indented like the first line it stands for), as in the shared commit cases; and two agent shapes
tried first for some edits: `bare_function` (the whole changed method restated, no marker) and
`function_in_class` (the method inside its class's first line and closing line, with markers).
A case is kept only when `fastapply.data.defined.why_undefined` finds it well defined, and a
context snippet also when `evals.lang_cases.anchor_merge` (a unique-anchor merge) rebuilds
`expected` from `original` + `update`. Deterministic for the pinned commits.
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
from collections import Counter
from dataclasses import dataclass

from evals.lang_cases import _jsonl, anchor_merge, mirror_of
from fastapply.data.defined import has_marker_lines, why_undefined
from fastapply.data.gitcases import BlobReader, Limits, git, text_of
from fastapply.data.hunks import Diff, diff, whitespace_only
from fastapply.data.regions import definitions
from fastapply.data.snippets import Style, plan, render
from fastapply.languages import detect_language, error_count, parse

MIN_LINES, MAX_LINES = 1_500, 5_000  # lines of the original
MAX_CHANGED = 60  # changed lines (old + new): a larger commit is a rewrite, not an edit an agent sends
MAX_HUNKS = 4
MAX_FILES = 6  # a commit touching more files is a sweep (a rename, a format run)
PER_FILE = 3  # edits taken from each file's history
CONTEXT_ATTEMPTS = 3  # context widths 2, 4, 6
WORDS = "... existing code ..."


@dataclass(frozen=True)
class Pinned:
    pin: str
    licence: str
    paths: tuple[str, ...]
    language: str | None = None  # when the extension does not say it (C++ in `.h` files)


# owner/name -> the pin the walk starts from, the licence, and the files whose history is read.
FILES: dict[str, Pinned] = {
    "JamesNK/Newtonsoft.Json": Pinned(
        "09bb545d72969ad7fb4ea07db0d5c34f4fc07877", "MIT",
        ("Src/Newtonsoft.Json/Utilities/ConvertUtils.cs", "Src/Newtonsoft.Json/JsonWriter.cs",
         "Src/Newtonsoft.Json/Serialization/DefaultContractResolver.cs")),
    "jhy/jsoup": Pinned(
        "46b620860af930eedc193a705eaf7cea5aec89a6", "MIT",
        ("src/main/java/org/jsoup/parser/TokeniserState.java", "src/test/java/org/jsoup/select/SelectorTest.java",
         "src/main/java/org/jsoup/nodes/Element.java")),
    "gofiber/fiber": Pinned(
        "c344047e102861ac2b7f0259ea3dd3af4b03ad63", "MIT",
        ("app.go", "middleware/cors/cors_test.go", "middleware/limiter/limiter_test.go")),
    "stretchr/testify": Pinned(
        "12f8b5612e125f337c4589e198771e5f8970f160", "MIT", ("assert/assertions.go",)),
    "dtolnay/syn": Pinned(
        "8011b1c512dbe87c6b09627790735ecdaa65c0db", "MIT OR Apache-2.0", ("src/lit.rs", "tests/test_expr.rs")),
    "colinhacks/zod": Pinned(
        "e516c3baf22615e20934116abebfed6c000222c2", "MIT",
        ("packages/zod/src/v4/core/api.ts", "packages/zod/src/v4/mini/schemas.ts",
         "packages/zod/src/v4/core/schemas.ts")),
    "marshmallow-code/marshmallow": Pinned(
        "341b927f219205704728c05cd61f04d7e9727523", "MIT", ("src/marshmallow/fields.py",)),
    "python-attrs/attrs": Pinned(
        "c1dc5dcba16ed827aa6dcad896b41a3afedb4e32", "MIT", ("src/attr/_make.py",)),
    "fmtlib/fmt": Pinned(
        "60ccad511fd680cb91d8b60a315759f71c67bef9", "MIT", ("include/fmt/chrono.h", "include/fmt/format.h"), "cpp"),
    "briannesbitt/Carbon": Pinned(
        "b13f05955dcfd7da71d60af745fd148cbdb73505", "MIT", ("tests/CarbonImmutable/DiffTest.php",)),
}


@dataclass(frozen=True)
class FileCommit:
    sha: str
    parent: str
    subject: str
    old: str  # blob ids of the path at the parent and at the commit
    new: str


def history(git_dir: str, pin: str, path: str) -> list[FileCommit]:
    """Non-merge commits that modified `path`, newest first from the pin (no rename following)."""
    out = git(git_dir, "log", "--no-merges", "--no-renames", "--raw", "--no-abbrev", "--format=%x00%H %P%x00%s",
              pin, "--", path)
    commits = []
    parts = out.split("\0")
    for ids, body in zip(parts[1::2], parts[2::2]):
        shas = ids.split()
        subject, _, raw = body.partition("\n")
        rows = [line.split("\t") for line in raw.splitlines() if line.startswith(":")]
        mine = [meta.split() for meta, *p in rows if p[-1] == path and meta.split()[4] == "M"]
        if len(shas) == 2 and mine:  # (the path-limited log lists only this path: files_touched counts the rest)
            commits.append(FileCommit(shas[0], shas[1], subject.strip(), mine[0][2], mine[0][3]))
    return commits


def files_touched(git_dir: str, sha: str) -> int:
    return len(git(git_dir, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split())


def usable(d: Diff) -> bool:
    return (0 < len(d.hunks) <= MAX_HUNKS and d.changed_lines() <= MAX_CHANGED and not whitespace_only(d)
            and not has_marker_lines(d) and bool(d.orig[-1].strip()) and bool(d.exp[-1].strip()))


def parses_no_worse(language: str, original: str, expected: str) -> bool:
    before, after = parse(language, original), parse(language, expected)
    return before is None or after is None or error_count(after) <= error_count(before)


def marker_of(language: str) -> str:
    return ("# " if language in ("python", "ruby") else "// ") + WORDS


def snippet(language: str, d: Diff, original: str, expected: str, order: tuple[str, ...]) -> tuple[str, str] | None:
    """(update, variant) of the first variant in `order` whose snippet is well defined, else None."""
    edefs = odefs = None
    style = Style(marker_of(language))
    for variant in order:
        if variant != "context" and edefs is None:
            edefs, odefs = definitions(expected, language), definitions(original, language)
        for attempt in range(CONTEXT_ATTEMPTS if variant == "context" else 1):
            regions = plan(variant, d, edefs or [], odefs or [], attempt)
            if regions is None:
                break
            shape = Style(style.marker, markers=False) if variant == "bare_function" else style
            if why_undefined(d, regions, shape) is not None:
                continue
            update = render(regions, d.exp, shape)
            if variant == "context" and anchor_merge(original, update) != expected:
                continue
            return update, variant
    return None


def file_cases(git_dir: str, repo: str, spec: Pinned, path: str, per_file: int, reader: BlobReader) -> list[dict]:
    """Up to per_file cases from the path's history, newest first; the first edit that has an agent
    shape (a restated method, in its class or bare) is written that way, the others as context."""
    limits = Limits(max_bytes=400_000)
    language = spec.language or detect_language(path=path)
    out: list[dict] = []
    for c in history(git_dir, spec.pin, path):
        if len(out) >= per_file:
            break
        original, expected = text_of(reader.read(c.old), limits), text_of(reader.read(c.new), limits)
        if original is None or expected is None or original == expected:
            continue
        if not MIN_LINES <= original.count("\n") <= MAX_LINES or original.endswith("\n") != expected.endswith("\n"):
            continue
        d = diff(original, expected)
        if not usable(d) or files_touched(git_dir, c.sha) > MAX_FILES:
            continue
        if not parses_no_worse(language, original, expected):
            continue
        want_agent = not any(x["variant"] != "context" for x in out)
        order = ("function_in_class", "bare_function", "context") if want_agent else ("context",)
        got = snippet(language, d, original, expected, order)
        if got is None:
            continue
        update, variant = got
        out.append({"id": f"{repo}@{c.sha[:12]}:{path}#{variant}", "language": language, "path": path,
                    "source": f"{repo}@{c.sha}:{path}", "license": spec.licence, "variant": variant,
                    "lines": original.count("\n"), "changed_lines": d.changed_lines(), "hunks": len(d.hunks),
                    "subject": c.subject, "original": original, "update": update, "expected": expected})
    return out


def build(mirrors: str, files: dict[str, Pinned], per_file: int) -> list[dict]:
    cases: list[dict] = []
    for repo, spec in files.items():
        git_dir = mirror_of(mirrors, repo)
        reader = BlobReader(git_dir)
        try:
            for path in spec.paths:
                got = file_cases(git_dir, repo, spec, path, per_file, reader)
                print(f"large_cases: {repo}:{path}: {len(got)} cases", file=sys.stderr)
                cases += got
        finally:
            reader.close()
    return cases


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mirrors", default="/work/.mirror", help="folder of owner+name/repo bare mirrors")
    p.add_argument("--out", required=True)
    p.add_argument("--per-file", type=int, default=PER_FILE, help=f"edits per file (default {PER_FILE})")
    p.add_argument("--repos", nargs="*", default=None, help="only these owner/name (default: all of FILES)")
    args = p.parse_args(argv)
    files = {r: FILES[r] for r in (args.repos or FILES)}
    missing = [r for r in files if not os.path.isdir(mirror_of(args.mirrors, r))]
    if missing:
        print(f"large_cases: fetch these mirrors first: {', '.join(missing)}", file=sys.stderr)
        return 1
    cases = build(args.mirrors, files, args.per_file)
    # gzipped where the name says so (mtime 0: the same cases give the same bytes)
    if str(args.out).endswith(".gz"):
        with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
            f.write(_jsonl(cases).encode("utf-8"))
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(_jsonl(cases))
    by_lang = Counter(c["language"] for c in cases)
    paths = {(c["source"].split("@")[0], c["path"]) for c in cases}
    print(f"large_cases: {len(cases)} cases from {len(paths)} files -> {args.out} "
          f"({os.path.getsize(args.out) / 1e6:.1f} MB): " + ", ".join(f"{k} {v}" for k, v in sorted(by_lang.items())),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
