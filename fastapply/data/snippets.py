"""Lazy update snippets the way agents write them: regions of the expected file joined by markers.

A variant picks the regions (context around each change, whole functions, whole classes, methods
inside their class lines, bare functions without any marker); a style picks the marker wording, its
indentation (like the code it stands for, or column 0), and whether the leading or trailing marker
is left out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from fastapply.data.hunks import Diff
from fastapply.data.regions import MAX_CLASS_LINES, Region, context_regions, def_regions, with_class_lines

# The first wording of each list is the standard one (half of the cases use it).
WORDINGS = {
    "#": ("# ... existing code ...", "# ... rest of code ...", "# ... same as before ...", "# ...",
          "# ... unchanged ...", "# ... existing code", "# ... rest of the file ..."),
    "//": ("// ... existing code ...", "// ... rest of code ...", "// ...", "/* ... */",
           "// ... unchanged ...", "// ... existing code", "/* ... existing code ... */"),
}
VARIANTS = ("context", "sparse_context", "function", "function_in_class", "bare_function", "whole_class",
            "loose_markers")
WEIGHTS = (5, 2, 3, 2, 2, 2, 3)  # how often each variant is tried first
FN_KINDS = ("fn", "test")
CLASS_KINDS = ("type", "impl")


@dataclass(frozen=True)
class Style:
    marker: str
    column0: bool = False  # markers at column 0 instead of indented like the code they stand for
    lead: bool = True  # a marker before the first region
    trail: bool = True  # a marker after the last region
    markers: bool = True  # False: bare definitions, no marker at all


def comment_of(language: str) -> str:
    return "#" if language == "python" else "//"


def choose_style(rng: random.Random, language: str, variant: str) -> Style:
    words = WORDINGS[comment_of(language)]
    marker = words[0] if rng.random() < 0.5 else rng.choice(words[1:])
    if variant == "bare_function":
        return Style(marker, markers=False)
    if variant == "loose_markers":
        omit = rng.randrange(3)  # one third each: both markers, no leading, no trailing
        return Style(marker, column0=True, lead=omit != 1, trail=omit != 2)
    return Style(marker)


def _indent_of(lines: list[str], lo: int, hi: int) -> str:
    for line in lines[lo:hi]:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return ""


def render(regions: list[Region], exp: list[str], style: Style) -> str:
    out: list[str] = []
    pos = 0
    for k, r in enumerate(regions):
        if r.start > pos:
            if style.markers and (k > 0 or style.lead):
                out.append(("" if style.column0 else _indent_of(exp, pos, r.start)) + style.marker)
            elif not style.markers and k > 0:
                out.append("")  # bare definitions: a blank line between them
        out.extend(exp[r.start:r.end])
        pos = r.end
    if pos < len(exp) and style.markers and style.trail:
        out.append(("" if style.column0 else _indent_of(exp, pos, len(exp))) + style.marker)
    return "\n".join(out) + "\n"


def plan(variant: str, d: Diff, edefs, odefs, attempt: int = 0) -> list[Region] | None:
    """The regions a variant shows (attempt > 0 widens the context variants); None when it does not fit."""
    if variant in ("context", "loose_markers"):
        return context_regions(d, 2 + 2 * attempt)
    if variant == "sparse_context":
        return context_regions(d, 1) if attempt == 0 else None
    if variant in ("function", "bare_function"):
        found = def_regions(d, edefs, odefs, FN_KINDS)
        return [r for r, _, _ in found] if found else None
    if variant == "function_in_class":
        found = def_regions(d, edefs, odefs, FN_KINDS)
        return with_class_lines(d, found, edefs, odefs) if found else None
    if variant == "whole_class":
        found = def_regions(d, edefs, odefs, CLASS_KINDS, max_lines=MAX_CLASS_LINES, leaf=False)
        return [r for r, _, _ in found] if found else None
    raise ValueError(f"unknown variant {variant!r}")
