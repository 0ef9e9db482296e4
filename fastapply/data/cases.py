"""One eval-schema case per file edit: the first variant (in a seeded order) whose snippet is well defined."""

from __future__ import annotations

import hashlib
import random

from fastapply.data.defined import has_marker_lines, why_undefined
from fastapply.data.gitcases import FileEdit, Limits
from fastapply.data.hunks import Diff, diff, whitespace_only
from fastapply.data.regions import definitions
from fastapply.data.snippets import VARIANTS, WEIGHTS, choose_style, plan, render

MAX_ATTEMPTS = 3  # widenings of the context variants before trying the next variant
INSTRUCTION_RATE = 0.5  # share of cases that carry the commit subject as the instruction


def seeded(*parts: str) -> random.Random:
    """A generator seeded by text (commit sha, path): the same case every run, whatever else changed."""
    return random.Random(int(hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16], 16))


def held_out(sha: str, percent: float) -> bool:
    """The dev split: a fixed share of commits chosen by hash, so no commit lands on both sides."""
    return int(hashlib.sha256(sha.encode()).hexdigest()[:8], 16) % 10_000 < percent * 100


def variant_order(rng: random.Random) -> list[str]:
    """All variants, shuffled with WEIGHTS deciding who tends to come first."""
    names, weights, out = list(VARIANTS), list(WEIGHTS), []
    while names:
        k = rng.choices(range(len(names)), weights)[0]
        out.append(names.pop(k))
        weights.pop(k)
    return out


def usable(d: Diff, limits: Limits) -> bool:
    hunks = d.hunks
    return (0 < len(hunks) <= limits.max_hunks and d.changed_lines() <= limits.max_changed
            and not whitespace_only(d) and not has_marker_lines(d))


def make_case(edit: FileEdit, limits: Limits) -> dict | None:
    if edit.original.endswith("\n") != edit.expected.endswith("\n"):
        return None  # a change of the final newline alone: no snippet shows it
    d = diff(edit.original, edit.expected)
    if not d.orig or not d.exp or not d.orig[-1].strip() or not d.exp[-1].strip():
        return None  # blank last lines: a snippet's trailing blank lines are read as noise
    if not usable(d, limits):
        return None
    rng = seeded(edit.sha, edit.path)
    edefs, odefs = definitions(edit.expected, edit.language), definitions(edit.original, edit.language)
    for variant in variant_order(rng):
        for attempt in range(MAX_ATTEMPTS):
            regions = plan(variant, d, edefs, odefs, attempt)
            if regions is None:
                break
            style = choose_style(rng, edit.language, variant)
            if why_undefined(d, regions, style) is None:
                instruction = edit.subject if edit.subject and rng.random() < INSTRUCTION_RATE else None
                return _row(edit, variant, render(regions, d.exp, style), instruction)
    return None


def _row(edit: FileEdit, variant: str, update: str, instruction: str | None) -> dict:
    return {"id": f"{edit.repo}@{edit.sha[:12]}:{edit.path}#{variant}",
            "source": f"{edit.repo}@{edit.sha}:{edit.path}", "language": edit.language, "path": edit.path,
            "original": edit.original, "update": update, "expected": edit.expected, "instruction": instruction,
            "variant": variant}
