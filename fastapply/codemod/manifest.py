"""The edits of a codemod, and where each may write.

Two sources, one result (a list of `Entry`):
- a JSON Lines manifest, one `{"path": str, "update": str, "instruction"?: str}` per line
  (blank lines are skipped);
- an update folder, where `DIR/<relative path>` holds the snippet for `<root>/<relative path>`.

Anything wrong with the input itself (bad JSON, a missing or mistyped field, an unknown key, a
snippet that is not UTF-8, two entries for one file) is a usage error (`ApplyError("usage")`,
exit code 2) naming the line or file, raised before anything runs.

Two entries for one file are refused rather than applied in turn: each snippet is written against
the file as it is on disk, so a second snippet for the same file would see a file its author did
not see. Merge the snippets or run the codemod twice. Paths that reach the same file through a
symlink count as the same file.

Where a path points is checked per entry by `resolve_target`: a path that is absolute, contains
`..`, or leads outside the root through a symlink is reported as that entry's failure
(`unsafe_path`) while the other entries go on; so is a path into a `.git` folder.
"""

from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from fastapply.types import ApplyError, decode_utf8

KEYS = {"path", "update", "instruction"}


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the root, "/"-separated, as given
    update: str
    instruction: str | None = None
    origin: str = ""  # where the entry came from, for messages: "edits.jsonl:3" or the snippet file


@dataclass(frozen=True)
class Target:
    """An entry and the real file it may write, or why it may not (`unsafe`)."""

    entry: Entry
    real: Path | None
    unsafe: str = ""


def usage(message: str) -> ApplyError:
    return ApplyError("usage", message)


def _key(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def _check_duplicates(entries: list[Entry]) -> None:
    seen: dict[str, Entry] = {}
    for e in entries:
        k = _key(e.path)
        if k in seen:
            raise usage(f"{e.origin}: path {e.path!r} is already given at {seen[k].origin}; "
                        "one entry per file (merge the snippets, or run the codemod twice)")
        seen[k] = e


def parse_manifest(path: str | os.PathLike) -> list[Entry]:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise usage(f"cannot read manifest {str(p)!r}: {e.strerror}") from None
    try:
        text = decode_utf8(raw, f"manifest {str(p)!r}")
    except ApplyError as e:
        raise usage(e.message) from None
    entries: list[Entry] = []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{p.name}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise usage(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(obj, dict):
            raise usage(f"{where}: expected a JSON object, got {type(obj).__name__}")
        unknown = sorted(set(obj) - KEYS)
        if unknown:
            raise usage(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                        "allowed: path, update, instruction")
        for key in ("path", "update"):
            if key not in obj:
                raise usage(f"{where}: missing {key!r}")
            if not isinstance(obj[key], str):
                raise usage(f"{where}: {key!r} must be a string")
        if not obj["path"]:
            raise usage(f"{where}: 'path' is empty")
        if "\x00" in obj["path"]:
            raise usage(f"{where}: 'path' contains a NUL byte")
        instruction = obj.get("instruction")
        if instruction is not None and not isinstance(instruction, str):
            raise usage(f"{where}: 'instruction' must be a string")
        entries.append(Entry(obj["path"], obj["update"], instruction or None, where))
    if not entries:
        raise usage(f"manifest {str(p)!r} has no entries")
    _check_duplicates(entries)
    return entries


def load_update_dir(path: str | os.PathLike) -> list[Entry]:
    """Every regular file under `path` (symlinks to files followed, not into folders), sorted."""
    top = Path(path)
    if not top.is_dir():
        raise usage(f"update folder {str(top)!r} is not a directory")
    entries: list[Entry] = []
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            f = Path(folder) / name
            if not f.is_file():
                continue
            rel = f.relative_to(top).as_posix()
            try:
                update = decode_utf8(f.read_bytes(), f"snippet {str(f)!r}")
            except ApplyError as e:
                raise usage(e.message) from None
            except OSError as e:
                raise usage(f"cannot read snippet {str(f)!r}: {e.strerror}") from None
            entries.append(Entry(rel, update, None, str(f)))
    if not entries:
        raise usage(f"update folder {str(top)!r} holds no snippets")
    return entries


def resolve_target(root: Path, entry: Entry) -> Target:
    """Where `entry` may write under `root` (a real, absolute path), or why it may not."""
    rel = entry.path
    parts = rel.replace("\\", "/").split("/")
    if os.path.isabs(rel) or rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":"):
        return Target(entry, None, "absolute path; paths must be relative to the root")
    if ".." in parts:
        return Target(entry, None, "'..' in path; paths must stay inside the root")
    real = Path(os.path.realpath(root / rel))
    if not real.is_relative_to(root):
        return Target(entry, None, "leads outside the root through a symlink")
    if ".git" in real.relative_to(root).parts or ".git" in parts:
        return Target(entry, None, "inside a .git folder")
    return Target(entry, real)


def plan(entries: list[Entry], root: Path) -> list[Target]:
    """Resolve every entry; two entries reaching the same real file are a usage error."""
    targets = [resolve_target(root, e) for e in entries]
    seen: dict[Path, Entry] = {}
    for t in targets:
        if t.real is None:
            continue
        if t.real in seen:
            raise usage(f"{t.entry.origin}: {t.entry.path!r} is the same file as {seen[t.real].path!r} "
                        f"({seen[t.real].origin}); one entry per file")
        seen[t.real] = t.entry
    return targets
