"""Readings: the whole files a refused snippet may mean, and where they differ.

The merge answers only when one reading survives its checks. When it refuses, the readings it was
choosing between are still concrete files: a judge (a model scoring each under its apply prompt)
may pick one, and a user is shown where they differ. Each reading is a splice of the snippet into
the original that passes `fastapply.validate` (so it parses no worse and leaks no marker); the
list is deduplicated, best (cheapest) first, and capped (`MAX_READINGS`).

A splice that leaves a definition the original has once there twice (the snippet restates it, and
its copy went next to the old one instead of replacing it) is no reading. When that leaves one
line-anchor reading of where the snippet goes, the others dropped for it, and that reading deletes
no definition the snippet never names, the merge answers with it (`lone_placement`): the snippet
restated a definition, and only one place replaces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapply.markers import marker_flags
from fastapply.merge.deadline import expired
from fastapply.merge.candidates import candidate_texts, gap_texts
from fastapply.merge.core import snippet_readings
from fastapply.merge.lineplace import WRAP_HOW
from fastapply.merge.result import Reading
from fastapply.merge.whole_defs import defined_twice, deletes_unnamed_definition
from fastapply.validate import validate

MAX_READINGS = 8  # a judge scores each one: more would cost seconds each on a CPU


# The `how` of a line-anchor reading that differs from the others only in where a region goes
# (lineplace names them so); edge, wrap, head and tail readings carry doubts of their own, and the
# candidate placements (candidates.py) may splice a region anywhere it resembles.
_PLACEMENT = re.compile(r"as placed|region \d+ at line \d+")


@dataclass(frozen=True)
class Readings:
    kept: tuple[Reading, ...]  # validated, deduplicated, best first, capped
    twice: tuple[tuple[str, str], ...] = ()  # (how, header) of each splice dropped for a definition twice


def read_all(original: str, update: str, language: str | None, path: str | None = None,
             limit: int = MAX_READINGS, section: bool = False) -> Readings:
    """The readings of a snippet the merge refused, each validated, first as the merge placed it; at
    most `limit`. The line-anchor readings first (they know wraps, edges, head and tail), then the
    candidate placements (`candidates.py`), which also cover marker-free snippets. `twice` keeps
    the splices dropped because they define something twice. `section`: validated as a section's
    (`fastapply.validate`)."""
    found = snippet_readings(original, update, language, path, section)
    found += [("cheapest placement" if i == 0 else f"placement {i + 1}", t)
              for i, t in enumerate(candidate_texts(original, update, limit=limit))]
    found += [("placed in the gap its neighbours leave" if i == 0 else f"gap placement {i + 1}", t)
              for i, t in enumerate(gap_texts(original, update))]
    out: list[Reading] = []
    twice: list[tuple[str, str]] = []
    seen = {original}
    orig_lines, upd_lines = original.splitlines(), update.splitlines()
    for how, text in found:
        if expired():
            break  # readings are extras: the ones kept so far
        if text in seen:
            continue
        seen.add(text)
        if not splices_snippet(original, update, text) or \
                any(f.severity == "error" for f in validate(original, update, text, language, section)):
            continue
        header = defined_twice(orig_lines, upd_lines, text.splitlines(), language)
        if header is not None:
            twice.append((how, header))
            continue
        out.append(Reading(text, how))
    out = _marker_depth_kept(out, language)[:limit]
    return Readings(tuple(out), tuple(twice))


# Languages whose indentation is syntax: there two readings alike but for it are different programs.
_INDENT_SYNTAX = frozenset({"python"})


def _marker_depth_kept(readings: list[Reading], language: str | None) -> list[Reading]:
    """Drop a reading that is a wrap reading's code at other indentation: the snippet's deeper
    marker states the wrapped code's new depth, and a reading that keeps the code where it stood,
    the new block's lines around it, ignores that statement (a Rust `if let` wrap read as placed
    parses and differs only so; the judge could not tell the two apart: margin 0.4). Not where
    indentation is syntax."""
    if language in _INDENT_SYNTAX:
        return readings

    def code(r: Reading) -> tuple[str, ...]:
        return tuple(x.strip() for x in r.text.splitlines() if x.strip())

    wrapped = {code(r) for r in readings if r.how.startswith(WRAP_HOW)}
    return [r for r in readings if r.how.startswith(WRAP_HOW) or code(r) not in wrapped]


# The checks whose doubt is only where a region goes (`checks/region_copies.py`, and two places
# that tie): the readings of that doubt are placements, so dropping all but one answers it. Other
# doubts (attributes deleted or left out, blank lines, deletions) have readings the list lacks.
PLACEMENT_CHECKS = frozenset({"ambiguous_placement", "contested", "context_split", "tied_alternative",
                              "rests_on_repeated_lines", "repeated_edge", "added_line_at_other_anchor",
                              "edge_run_longer_elsewhere"})


def lone_placement(found: Readings, check: str, original: str, update: str,
                   language: str | None) -> tuple[Reading, str] | None:
    """A refusal by a placement doubt (`check`), one reading left, a line-anchor placement, and at
    least one other dropped because it would leave a definition twice: (the reading, why). Not when
    that reading deletes a definition the snippet never names: the readings are the places the
    anchors found, which may not hold the file meant, and a lone survivor that drops whole
    functions or tests was wrong on held-out fuzz draws (RESULTS.md). A lone edge, wrap, head or
    tail reading keeps its own doubt and is refused."""
    if check not in PLACEMENT_CHECKS or len(found.kept) != 1 or not found.twice or \
            not _PLACEMENT.fullmatch(found.kept[0].how) or \
            deletes_unnamed_definition(original.splitlines(), update.splitlines(), found.kept[0].text.splitlines(),
                                       language) is not None:
        return None
    how, header = found.twice[0]
    return found.kept[0], (f"one reading is left ({found.kept[0].how}): {len(found.twice)} other(s), such as "
                           f"{how}, would leave `{header[:60]}` in the file twice (the original has it once)")


def splices_snippet(original: str, update: str, text: str) -> bool:
    """Is `text` a splice of the snippet into the original? Every non-blank, non-marker snippet line
    is there, in order (indentation aside: a wrap re-indents), and every other non-blank line is an
    original line. (`candidate_texts` leaves unanchored regions out: those are no readings.)"""
    orig = original.splitlines()
    upd = update.splitlines()
    shown = [x.strip() for x, m in zip(upd, marker_flags(upd, orig)) if not m and x.strip()]
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    k = 0
    for x in lines:
        if k < len(shown) and x == shown[k]:
            k += 1
    known = {x.strip() for x in orig} | set(shown)
    return k == len(shown) and all(x in known for x in lines)


def first_difference(a: str, b: str) -> int:
    """The 0-based index of the first line where `a` and `b` differ (len of the shorter at a prefix)."""
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return i
    return min(len(la), len(lb))


def describe(readings: tuple[Reading, ...] | list[Reading], width: int = 60) -> str:
    """One line for a refusal message: how many readings, and the first line where each differs
    from the first (its own text there)."""
    if not readings:
        return "no reading of the snippet passes the checks"
    if len(readings) == 1:
        return f"1 reading ({readings[0].how}), which the checks doubt"
    def line(text: str, at: int) -> str:
        lines = text.splitlines()
        return f"`{lines[at].strip()[:width]}`" if at < len(lines) else "(end of file)"

    base = readings[0].text
    parts = []
    for i, r in enumerate(readings[1:], 2):
        at = first_difference(base, r.text)
        parts.append(f"reading {i} ({r.how}) differs from reading 1 at line {at + 1}: {line(r.text, at)} "
                     f"where reading 1 has {line(base, at)}")
    return f"{len(readings)} readings (reading 1: {readings[0].how}); " + "; ".join(parts)
