"""Training and dev cases: JSONL in the schema of the shared eval sets."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fastapply.types import ApplyError

REQUIRED = ("original", "update", "expected")


@dataclass(frozen=True)
class Case:
    id: str
    original: str
    update: str
    expected: str
    instruction: str | None = None
    language: str | None = None
    path: str | None = None


def _case(d: object, where: str) -> Case:
    if not isinstance(d, dict):
        raise ApplyError("invalid_argument", f"{where}: a case must be a JSON object")
    missing = [k for k in REQUIRED if not isinstance(d.get(k), str)]
    if missing:
        raise ApplyError("invalid_argument", f"{where}: missing or non-string field(s) {', '.join(missing)}")
    return Case(id=str(d.get("id") or where), original=d["original"], update=d["update"], expected=d["expected"],
                instruction=d.get("instruction") or None, language=d.get("language"), path=d.get("path"))


def load_cases(path: str | Path, limit: int | None = None) -> list[Case]:
    """Every case in file order; a malformed line is an error naming its line number."""
    p = Path(path)
    if not p.is_file():
        raise ApplyError("invalid_argument", f"{p}: no such file")
    cases: list[Case] = []
    with p.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as e:
                raise ApplyError("invalid_argument", f"{p}:{n}: malformed JSON ({e.msg})") from None
            cases.append(_case(d, f"{p}:{n}"))
            if limit is not None and len(cases) >= limit:
                break
    if not cases:
        raise ApplyError("invalid_argument", f"{p}: no cases")
    return cases
