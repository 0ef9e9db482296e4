"""Shared by the evals: read the JSONL cases, write JSON results."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def load_cases(path: str | Path, limit: int | None = None, max_lines: int | None = None) -> list[dict]:
    """Cases in file order; `max_lines` keeps only originals of at most that many lines."""
    cases = []
    # a large set is kept gzipped (evals/cases/large_files.jsonl.gz: two copies of a 5,000-line file a case)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            case = json.loads(line)
            if max_lines is not None and len(case["original"].splitlines()) > max_lines:
                continue
            cases.append(case)
            if limit is not None and len(cases) >= limit:
                break
    return cases


def write_json(path: str | Path, data: dict) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
