"""File edits from a git repository's history, read with the `git` command (bare mirror or work tree).

One `FileEdit` per modified source file in a non-merge commit that touches one or a few of them:
original = the blob at the parent, expected = the blob at the commit, byte-exact. Renames (listed
as a delete and an add: rename detection would read blobs, and a mirror may lack its largest ones),
binary and non-UTF-8 blobs, CRLF files, missing blobs, huge files and huge diffs are skipped. The walk is `git log`
order from one resolved revision, so the same repository and revision give the same edits.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

from fastapply.languages import detect_language, get_language

NULL_OID = "0" * 40


class DataError(Exception):
    """A bad repository, revision or input: one line for the user."""


@dataclass(frozen=True)
class Limits:
    min_lines: int = 10  # originals shorter than this teach little
    max_lines: int = 800  # originals longer than this are skipped (--max-lines)
    max_bytes: int = 200_000  # a blob over this is generated or vendored code
    max_files: int = 3  # source files a commit may modify and still count as one focused edit
    max_changed: int = 150  # changed lines (old + new) in one file
    max_hunks: int = 6


@dataclass(frozen=True)
class Commit:
    sha: str
    parent: str
    subject: str
    files: tuple[tuple[str, str, str, str], ...]  # (status, old blob, new blob, path)


@dataclass(frozen=True)
class FileEdit:
    repo: str
    sha: str
    path: str
    language: str
    subject: str
    original: str
    expected: str


def git_dir_of(path: str) -> str:
    """The git directory for a bare mirror or a work tree; DataError when it is neither."""
    if not os.path.isdir(path):
        raise DataError(f"{path!r} is not a directory")
    dot_git = os.path.join(path, ".git")
    candidate = dot_git if os.path.exists(dot_git) else path
    r = subprocess.run(["git", "--git-dir", candidate, "rev-parse", "--git-dir"], capture_output=True, text=True)
    if r.returncode != 0:
        raise DataError(f"{path!r} is not a git repository")
    return candidate


def git(git_dir: str, *args: str) -> str:
    r = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True)
    if r.returncode != 0:
        msg = r.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DataError(f"git {args[0]} failed: {msg[0] if msg else 'exit ' + str(r.returncode)}")
    return r.stdout.decode("utf-8", "replace")


def resolve(git_dir: str, rev: str) -> str:
    """The commit sha a revision names; DataError for an unknown revision or an empty repository."""
    r = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                       capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise DataError(f"revision {rev!r} is not a commit in this repository")
    return r.stdout.strip()


def commits(git_dir: str, head: str) -> Iterator[Commit]:
    """Non-merge commits reachable from head, newest first, with their raw file changes."""
    out = git(git_dir, "log", "--no-merges", "--no-renames", "--raw", "--no-abbrev", "--format=%x00%H %P%x00%s", head)
    parts = out.split("\0")  # "", "sha parents", "subject\n\n:raw lines", "sha parents", ...
    for ids, body in zip(parts[1::2], parts[2::2]):
        shas = ids.split()
        subject, _, raw = body.partition("\n")
        yield Commit(shas[0], shas[1] if len(shas) > 1 else NULL_OID, subject.strip(), _raw_files(raw))


def _raw_files(raw: str) -> tuple[tuple[str, str, str, str], ...]:
    """`:100644 100644 OLD NEW M\tpath` lines -> (status, old blob, new blob, path); renames keep the new path."""
    files = []
    for line in raw.splitlines():
        if line.startswith(":"):
            meta, *paths = line.split("\t")
            fields = meta.split()
            files.append((fields[4], fields[2], fields[3], paths[-1]))
    return tuple(files)


def source_files(commit: Commit, limits: Limits) -> list[tuple[str, str, str, str]]:
    """The modified files in a language with a grammar, or [] when the commit is not a focused edit."""
    if commit.parent == NULL_OID:
        return []
    picked = [(s, a, b, p) for s, a, b, p in commit.files
              if s == "M" and get_language(detect_language(path=p)) is not None]
    return picked if len(picked) <= limits.max_files else []


class BlobReader:
    """`git cat-file --batch`: one process for every blob of the walk."""

    def __init__(self, git_dir: str):
        self.proc = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, oid: str) -> bytes | None:
        self.proc.stdin.write(oid.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            return None
        data = self.proc.stdout.read(int(header[2]) + 1)
        return data[:-1]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def text_of(blob: bytes | None, limits: Limits) -> str | None:
    """The blob as text, or None when it is too big, binary, not UTF-8 or has CRLF/CR line ends."""
    if blob is None or len(blob) > limits.max_bytes or b"\0" in blob or b"\r" in blob:
        return None
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return None


def file_edits(git_dir: str, repo: str, head: str, limits: Limits) -> Iterator[tuple[Commit, FileEdit]]:
    """Every usable file edit reachable from head, in walk order."""
    reader = BlobReader(git_dir)
    try:
        for commit in commits(git_dir, head):
            for _, old, new, path in source_files(commit, limits):
                original, expected = text_of(reader.read(old), limits), text_of(reader.read(new), limits)
                if original is None or expected is None or original == expected:
                    continue
                n = original.count("\n")
                if not limits.min_lines <= n <= limits.max_lines or expected.count("\n") > 2 * limits.max_lines:
                    continue
                lang = detect_language(path=path)
                yield commit, FileEdit(repo, commit.sha, path, lang, commit.subject, original, expected)
    finally:
        reader.close()
