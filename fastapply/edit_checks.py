"""Did a model's output apply the edit, and only the edit? Line-level checks, no parsing.

`validate()` catches broken files; these catch files that parse but are wrong in the three ways a
small or unfaithful model fails: it copies the original and ignores the update (`edit_missing`),
it stops early / skips code that the snippet never touched (`lost_code`), or it writes the
snippet's lines in another order (`snippet_order`: a new `else` branch's body put in the `if`).

A lazy snippet deletes code only *between* lines it shows (two adjacent context lines with the
deleted lines gone from between them), so an original line may vanish only inside the span of
the original that one of the snippet's regions covers.
"""

from __future__ import annotations

from fastapply.markers import marker_flags, split_inline
from fastapply.types import Finding


def _key(line: str) -> str:
    return line.strip()


def _regions(update_lines: list[str], original_lines: list[str]) -> list[list[str]]:
    """Runs of non-marker, non-blank update lines between whole-line markers."""
    regions: list[list[str]] = [[]]
    for line, is_marker in zip(update_lines, marker_flags(update_lines, original_lines)):
        if is_marker:
            regions.append([])
        elif line.strip():
            regions[-1].append(line)
    return [r for r in regions if r]


def _spans(regions: list[list[str]], original_lines: list[str]) -> list[tuple[int, int]]:
    """For each region, the original line range between its first and last line found in the original."""
    index: dict[str, list[int]] = {}
    for i, line in enumerate(original_lines):
        if line.strip():
            index.setdefault(_key(line), []).append(i)
    spans = []
    for region in regions:
        found = [j for j, line in enumerate(region) if _key(line) in index]
        if not found:
            continue
        hits = [i for line in region for i in index.get(_key(line), [])]
        # New lines at a region's edge replace the original lines just beyond its outermost anchor.
        lead, trail = found[0], len(region) - 1 - found[-1]
        spans.append((min(hits) - lead, max(hits) + trail))
    return spans


def check_edit_applied(original: str, update: str, merged: str) -> list[Finding]:
    o_lines, u_lines = original.splitlines(), update.splitlines()
    o_keys = {_key(line) for line in o_lines}
    m_keys = {_key(line) for line in merged.splitlines()}
    findings = []
    # Lines the update adds (not in the original, not markers, no inline marker) must be in the result.
    regions = _regions(u_lines, o_lines)
    new = [line for r in regions for line in r
           if _key(line) not in o_keys and split_inline(line) is None and "..." not in line]
    missing = [line for line in new if _key(line) not in m_keys]
    if missing:
        findings.append(Finding("edit_missing", f"{len(missing)} of {len(new)} new line(s) of the update are not in "
                                                f"the result, e.g. {missing[0].strip()[:80]!r}"))
    # Each region's lines stand in the result in the snippet's order (a merge splices a region whole).
    out_of_order = next((r for r in regions if not _in_order(r, merged.splitlines())), None)
    if out_of_order is not None:
        findings.append(Finding("snippet_order", "the result does not hold the snippet's lines in the snippet's order, "
                                                 f"e.g. in the region that starts {out_of_order[0].strip()[:60]!r}"))
    # Original lines gone from the result must lie inside a span the update covers.
    if any(marker_flags(u_lines, o_lines)):
        spans = _spans(regions, o_lines)
        u_keys = {_key(line) for line in u_lines}
        lost = [i for i, line in enumerate(o_lines)
                if line.strip() and _key(line) not in m_keys and _key(line) not in u_keys
                and not any(a <= i <= b for a, b in spans)]
        if lost:
            findings.append(Finding("lost_code", f"{len(lost)} original line(s) outside the edited regions are gone, "
                                                 f"e.g. line {lost[0] + 1}: {o_lines[lost[0]].strip()[:80]!r}"))
    return findings


def _in_order(region: list[str], merged: list[str]) -> bool:
    """Are the region's lines a subsequence of the result, indentation aside (a wrap re-indents)?
    Not lines with an inline marker, which the merge expands, nor with `...` anywhere (a spread, or
    a marker of a kind the flags missed: as for `edit_missing`)."""
    shown = [_key(x) for x in region if split_inline(x) is None and "..." not in x]
    k = 0
    for line in merged:
        if k < len(shown) and _key(line) == shown[k]:
            k += 1
    return k == len(shown)
