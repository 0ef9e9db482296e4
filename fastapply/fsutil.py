"""File I/O for front-ends that touch disk: strict UTF-8 reads, atomic mode-keeping writes, token files."""

from __future__ import annotations

import fcntl
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fastapply.types import ApplyError, decode_utf8


@dataclass(frozen=True)
class SourceFile:
    path: Path
    raw: bytes  # exactly what was read, to detect a change on disk before writing
    text: str  # with "\n" line endings
    newline: str  # "\n" or "\r\n": restored on write

    def encode(self, text: str) -> bytes:
        return (text.replace("\n", self.newline) if self.newline != "\n" else text).encode("utf-8")


def read_source(path: str | os.PathLike, what: str = "file") -> SourceFile:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ApplyError("invalid_argument", f"{what} {str(p)!r} does not exist") from None
    except IsADirectoryError:
        raise ApplyError("invalid_argument", f"{what} {str(p)!r} is a directory") from None
    except OSError as e:
        raise ApplyError("invalid_argument", f"cannot read {what} {str(p)!r}: {e.strerror}") from None
    text = decode_utf8(raw, f"{what} {str(p)!r}")
    # Work on "\n" internally (the model and the merge see one convention) and put CRLF back on write.
    newline = "\r\n" if "\r\n" in text and text.count("\r\n") == text.count("\n") else "\n"
    if newline == "\r\n":
        text = text.replace("\r\n", "\n")
    return SourceFile(p, raw, text, newline)


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Write via a temp file in the same folder + rename: readers see the old or the new file, never half.

    Keeps the file's permission bits. Follows a symlink to write its target.
    """
    p = Path(os.path.realpath(path))
    mode = p.stat().st_mode & 0o7777 if p.exists() else None
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".fastapply-tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def read_token_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as e:
        raise ApplyError("invalid_argument", f"cannot read token file {path!r}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ApplyError("invalid_argument", f"token file {path!r} is not UTF-8 text") from None
    if not token:
        raise ApplyError("invalid_argument", f"token file {path!r} is empty")
    if not all(33 <= ord(c) < 127 for c in token):
        raise ApplyError("invalid_argument", f"token in {path!r} must be printable ASCII without spaces")
    return token


@contextmanager
def cache_lock(path: str | os.PathLike):
    """Hold an exclusive lock on `<path>.lock` (across processes): one process builds a cache
    entry (a GGUF joined from its parts, a conversion) while the others wait, then find it built.
    Two servers, or two test processes, starting on a fresh machine would otherwise write the same
    temporary file at once."""
    lock = Path(f"{os.fspath(path)}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
