"""The merge pipeline: read the snippet (inline markers filled, regions split), place it by the
first strategy that is sure (definitions by name, line anchors, class members by name), check.

Every strategy gives a `Placement`; the accepted one must pass `fastapply.validate` here.
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from dataclasses import dataclass, replace

from fastapply.languages import detect_language, parse, unparsable
from fastapply.markers import comment_read_as_marker, marker_flags
from fastapply.merge.anchor import Region
from fastapply.merge.fold import fold_shown_wrap, keeps_snippet_lines
from fastapply.merge.fragment import SECTION_CHECK, SECTION_KIND, find_cuts
from fastapply.merge.inline import fill_inline_markers
from fastapply.merge.lineplace import line_readings, merge_lines
from fastapply.merge.members import merge_members
from fastapply.merge.result import (
    CONFIDENCE_IDENTITY,
    CONFIDENCE_ONE_LEFT,
    CONFIDENCE_WARNING,
    MergeResult,
    Placement,
)
from fastapply.merge.segment import split_regions
from fastapply.merge.text import join_lines, key, occurrences, split_lines, with_original_spacing
from fastapply.merge.tree import merge_marker_free
from fastapply.merge.whole_defs import defined_twice
from fastapply.validate import unmergeable_input, validate


@dataclass
class _Edit:
    """One merge request, read: the original's and the snippet's lines and line-ending conventions."""

    original: str
    update: str
    lang: str | None
    orig_lines: list[str]
    upd_lines: list[str]  # inline markers filled
    regions: list[Region]
    n_markers: int
    newline: str
    trailing: bool  # the original ends with a newline
    upd_trailing: bool  # ... and the snippet
    broken: bool = False  # the original does not parse (mostly): placed by lines only, see `_read`
    section: bool = False  # the request says the original is a section of a file (`validate`)

    def text(self, lines: list[str]) -> str:
        return join_lines(with_original_spacing(self.orig_lines, lines), self.newline,
                          self.trailing or not self.orig_lines)

    def errors(self, text: str) -> list[str]:
        return [f.line() for f in validate(self.original, self.update, text, self.lang, self.section)
                if f.severity == "error"]


# The check of a refusal on the input itself (empty, binary, minified): its reason says what to send
# instead, so it is the refusal's first line; no added context line could help.
INPUT_CHECK = "unmergeable_input"


def _refuse(reasons: list[str], lang: str | None, method: str = "", check: str = "") -> MergeResult:
    cut = next((r for r in reasons if r.startswith(SECTION_KIND + ": ")), None)
    if cut is not None:  # a section cut through what the snippet shows: its reason says what to send
        reasons = [cut.removeprefix(SECTION_KIND + ": ")] + [r for r in reasons if r is not cut]
        check = SECTION_CHECK
    return MergeResult(None, 0.0, reasons, lang, method, check=check)


def merge(original: str, update: str, language: str | None, path: str | None, section: bool = False) -> MergeResult:
    """`section`: the original is a section of a file, both its edges cuts (`fragment.find_cuts`)."""
    lang = detect_language(language, path, original)
    edit = _read(original, update, lang, section)
    if isinstance(edit, MergeResult):
        return edit
    if edit.n_markers == 0 and [key(x) for x in edit.upd_lines] == [key(x) for x in edit.orig_lines]:
        return MergeResult(original, CONFIDENCE_IDENTITY, [], lang, "identity")

    if edit.n_markers == 0 and _opens_more_than_it_closes(edit.update) and not _opens_more_than_it_closes(original):
        return _refuse(["the snippet has no markers and opens more `{` than it closes: cut off before its end?"], lang)
    if edit.n_markers == 0 and not edit.broken:
        by_tree = merge_marker_free(edit.orig_lines, edit.upd_lines, lang)
        if by_tree is not None and by_tree.ok:
            whole = _whole_file_reading(edit, by_tree)
            return _checked(edit, by_tree, "tree-sitter") if whole is None else _refuse([whole], lang, "tree-sitter")
        if by_tree is not None and by_tree.reasons and by_tree.final:
            return _refuse(by_tree.reasons, lang, "tree-sitter")
    by_lines = merge_lines(edit.regions, edit.orig_lines, partial_ok=edit.n_markers == 0, lang=lang)
    if edit.n_markers:
        if by_lines.ok:
            bad = edit.errors(edit.text(by_lines.lines))
            if bad:  # the line placement breaks the file: let the member alignment try
                by_lines = Placement(None, bad)
        if not by_lines.ok and not edit.broken:
            folded = _folded(edit)
            if folded is not None:
                return folded
            by_members = _by_members(edit, by_lines)
            if by_members is not None:
                return by_members
    if not by_lines.ok and by_lines.doubt is not None:
        by_lines = _one_reading_left(edit, by_lines)
    if not by_lines.ok:
        return _refuse(by_lines.reasons + _broken_note(edit), lang, "line-anchor", by_lines.check)
    if by_lines.reaches_end and edit.upd_trailing != edit.trailing and edit.orig_lines:
        # The snippet shows the file's last line but not its final-newline convention (snippets
        # rarely end in a newline): keep the file's, as an editor would, and say so.
        by_lines.reasons.append("kept the original's final newline; the snippet's end differs")
    return _checked(edit, by_lines, "line-anchor")


def _broken_note(edit: _Edit) -> list[str]:
    """A refusal's last reason where the original mostly fails to parse: the user may fix that."""
    return [f"the original does not parse as {edit.lang}, so only line anchors could place the snippet"] \
        if edit.broken else []


def _one_reading_left(edit: _Edit, refused: Placement) -> Placement:
    """A refusal whose doubt has known sides (lineplace.ONE_SIDED, `_after_wrap_doubt`) where every
    other side fails validation (deleting the unshown tail empties the file; the wide placement
    deletes most of it) or cannot be spliced (it overlaps another region): one reading survives the
    checks, and it is the answer. Otherwise the refusal stands; so it does when the sides are places
    of a region and the reading left deletes original code the snippet does not show: which copy of
    its context bounds a deletion is the doubt itself, and the anchors may not have found every
    copy (a fuzz seed's silent wrong: the expected file deleted up to a third copy of
    ` * @returns {function}`). A side that fails only the section rules (`SECTION_CHECKS`: code
    beyond a cut edge, which the snippet may restate from beyond it) is no less likely for that."""
    d = refused.doubt
    if edit.errors(edit.text(d.kept)) or (d.places and _deletes_unshown(edit, d.kept)):
        return refused
    why = []
    for side in d.others:
        if side.lines is None:
            why.append(f"the other reading ({side.how}) cannot be spliced ({side.unspliced})")
            continue
        bad = edit.errors(edit.text(side.lines))
        if not bad or all(b.startswith(SECTION_KIND + ": ") for b in bad):
            return refused
        why.append(f"the other reading ({side.how}) fails validation ({bad[0]})")
    return Placement(d.kept, [f"{d.reason} " + "; ".join(why) + ": one reading is left"], CONFIDENCE_ONE_LEFT)


def _deletes_unshown(edit: _Edit, lines: list[str]) -> bool:
    """Does `lines` lack an original line (indentation aside: a wrap re-indents; blank lines aside;
    counted) that the snippet does not show?"""
    shown = {x.strip() for x, m in zip(edit.upd_lines, marker_flags(edit.upd_lines, edit.orig_lines)) if not m}
    gone = Counter(x.strip() for x in edit.orig_lines if x.strip()) - Counter(x.strip() for x in lines if x.strip())
    return any(x not in shown for x in gone)


def _opens_more_than_it_closes(text: str) -> bool:
    """More `{` than `}` (a snippet cut inside a block; brace languages only: Python has none)."""
    return text.count("{") > text.count("}")


def _whole_file_reading(edit: _Edit, placed: Placement) -> str | None:
    """A marker-free snippet from the original's first line to its last reads two ways: a targeted
    edit (what it leaves out stays, as placed) or the whole new file (what it leaves out is
    deleted). When the two differ, refuse rather than pick."""
    def ends(lines: list[str]) -> tuple[str, str] | None:
        code = [x.strip() for x in lines if x.strip()]
        return (code[0], code[-1]) if code else None

    if ends(edit.upd_lines) != ends(edit.orig_lines) or \
            [key(x) for x in placed.lines or []] == [key(x) for x in edit.upd_lines]:
        return None
    return ("the snippet has no markers and runs from the file's first line to its last, but leaves out some of "
            "the original's code: the whole new file (that code deleted), or an edit that keeps it?")


def _read(original: str, update: str, lang: str | None, section: bool = False) -> _Edit | MergeResult:
    """The request read into lines and regions, or a refusal (empty, unparsable, unreadable)."""
    if not update.strip():
        return _refuse(["send the changed code, with markers for what stays: the update is empty"], lang,
                       check=INPUT_CHECK)
    unfit = unmergeable_input(original, update)  # binary or minified: refused before any work
    if unfit:
        return _refuse([unfit], lang, check=INPUT_CHECK)
    orig_lines, newline, trailing = split_lines(original)
    upd_lines, _, upd_trailing = split_lines(update)

    tree = parse(lang, original)
    # An original tree-sitter mostly fails to parse (a grammar gap, or code broken before the edit)
    # has no definitions to place by, and error counts check little in it: it is placed by line
    # anchors only, and validate also compares its bracket balance (measured: RESULTS.md).
    broken = tree is not None and bool(original.strip()) and unparsable(tree, original)
    # an original whose text shows a cut at either edge is a section of a file, whatever the request
    # says: `validate` reads both its edges as cuts (`fragment.BESIDE_CUT`), and here too
    cut = section or find_cuts(orig_lines, lang, tree).said

    upd_lines, problems = fill_inline_markers(upd_lines, orig_lines)
    flags = marker_flags(upd_lines, orig_lines)
    quoted = comment_read_as_marker(upd_lines, orig_lines, flags)
    if problems or quoted:
        return _refuse(problems or [quoted], lang)

    regions, n_markers = split_regions(upd_lines, flags)
    if not regions:
        return _refuse(["the snippet has no content besides markers"], lang)
    if cut and regions[0].marker_before:
        # the leading marker stands for lines above the section too, and a section starts where the
        # client cut it (inside a block): the depth of its first line says nothing of the marker's
        # care, so it makes no loose writer (`lineplace._loose_markers`) of a careful one
        regions[0] = replace(regions[0], before_indent=None)
    return _Edit(original, update, lang, orig_lines, upd_lines, regions, n_markers, newline, trailing, upd_trailing,
                 broken, section)


def _folded(edit: _Edit) -> MergeResult | None:
    """Line anchors refused: a wrap whose first lines are shown re-indented (fold.py), merged with
    those lines folded into its marker, when the answer keeps every line of the snippet as written."""
    flags = marker_flags(edit.upd_lines, edit.orig_lines)
    lines = fold_shown_wrap(edit.upd_lines, flags, edit.orig_lines, edit.lang)
    if lines is None:
        return None
    res = merge(edit.original, "\n".join(lines) + "\n", edit.lang, None, edit.section)
    if not res.ok or not keeps_snippet_lines(edit.upd_lines, flags, res.text.splitlines()):
        return None
    return MergeResult(res.text, min(res.confidence, CONFIDENCE_WARNING),
                       ["read the lines shown re-indented right inside a new block, and after the marker there, "
                        "as the wrapped code's own"] + res.reasons, edit.lang, res.method)


def _by_members(edit: _Edit, by_lines: Placement) -> MergeResult | None:
    """Line anchors could not place the snippet: align class members by kind and name instead."""
    by_members = merge_members(edit.orig_lines, edit.upd_lines, edit.lang)
    if by_members is None or not by_members.ok:
        return None
    text = edit.text(by_members.lines)
    if edit.errors(text):
        return None
    return MergeResult(text, by_members.confidence, ["placed by member names: " + by_lines.reasons[0]], edit.lang,
                       "tree-sitter")


def _checked(edit: _Edit, placement: Placement, method: str) -> MergeResult:
    """The accepted placement as a merged file, if it passes the checks every merge must pass."""
    merged = placement.lines or []
    refusal = (_no_change_from_scattered_lines(edit, merged) if edit.n_markers == 0 else None) or \
        _defined_twice(edit, merged) or _reindented_alone(edit, merged)
    if refusal:
        return _refuse([refusal], edit.lang, method)
    text = edit.text(placement.lines)
    findings = validate(edit.original, edit.update, text, edit.lang, edit.section)
    errors = [f.line() for f in findings if f.severity == "error"]
    if errors:
        return _refuse(errors + _broken_note(edit), edit.lang, method)
    doubts = placement.reasons + [f.line() for f in findings]
    confidence = placement.confidence
    if any(f.severity == "warning" for f in findings):
        confidence = min(confidence, CONFIDENCE_WARNING)
    if edit.broken:
        doubts.append(f"the original does not parse as {edit.lang}: placed by line anchors, checked by its "
                      "bracket balance")
        confidence = min(confidence, CONFIDENCE_WARNING)
    return MergeResult(text, max(0.0, min(1.0, confidence)), doubts, edit.lang, method)


def _no_change_from_scattered_lines(edit: _Edit, merged: list[str]) -> str | None:
    """A marker-free snippet placed where it changes nothing, whose lines (blank lines and
    indentation aside) do not stand together in the original: `mod lexical;` / `mod raw;` with four
    lines between them in the file says "delete those" as much as "no change". Shown together as
    they stand, it is an edit already applied, and the file comes back unchanged."""
    if [key(x) for x in merged] != [key(x) for x in edit.orig_lines]:
        return None
    code = [x.strip() for x in edit.upd_lines if x.strip()]
    if occurrences([x.strip() for x in edit.orig_lines if x.strip()], code):
        return None
    return ("the snippet has no markers and changes nothing where its lines fit, but they do not stand together "
            "in the original: is the code between them deleted?")


def _reindented_alone(edit: _Edit, merged: list[str]) -> str | None:
    """An original line the answer keeps but re-indents, between two neighbours it keeps exactly as
    they were: no block opened or closed around it, only its indentation changed. A snippet whose
    indentation drifted from the file's (a column of 20 spaces where the file has 10, which no level
    width explains) shows such a line; an edit that means it is a formatting fix the merge cannot
    tell from that drift, so it asks."""
    old = [(i, x) for i, x in enumerate(edit.orig_lines) if x.strip()]
    new = [(j, x) for j, x in enumerate(merged) if x.strip()]
    matcher = SequenceMatcher(None, [x.strip() for _, x in old], [x.strip() for _, x in new], autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag != "equal":
            continue
        for k in range(i2 - i1):
            a, b = i1 + k, j1 + k
            if old[a][1].rstrip() == new[b][1].rstrip() or not (0 < a < len(old) - 1 and 0 < b < len(new) - 1):
                continue
            kept = old[a - 1][1].rstrip() == new[b - 1][1].rstrip() and old[a + 1][1].rstrip() == new[b + 1][1].rstrip()
            if kept and matcher.a[a - 1] == matcher.b[b - 1] and matcher.a[a + 1] == matcher.b[b + 1]:
                return (f"`{new[b][1].strip()[:50]}` (line {new[b][0] + 1}) would change its indentation alone, between "
                        "lines that keep theirs: send it indented as the file has it")
    return None


def _defined_twice(edit: _Edit, merged: list[str]) -> str | None:
    """The answer would leave a definition the original has once, by the same header line, there
    twice, while the snippet shows it less than twice: the snippet's copy went next to the old one
    instead of replacing it (a marker-free snippet cut before the definition's end; a region that
    restates the next function after a new `try:` placed on that function's own `try:`, held-out
    fuzz seed 29573). The same rule drops such readings (`readings.py`)."""
    header = defined_twice(edit.orig_lines, edit.upd_lines, merged, edit.lang)
    return f"`{header[:60]}` would be in the file twice (the original has it once): misplaced?" if header else None


def snippet_readings(original: str, update: str, language: str | None, path: str | None,
                     section: bool = False) -> list[tuple[str, str]]:
    """(how, whole file) for each reading of the snippet by line anchors (lineplace.line_readings),
    unchecked and unvalidated; [] when the request cannot be read (empty, unparsable original)."""
    lang = detect_language(language, path, original)
    edit = _read(original, update, lang, section)
    if isinstance(edit, MergeResult):
        return []
    found = line_readings(edit.regions, edit.orig_lines, partial_ok=edit.n_markers == 0, lang=lang)
    return [(how, edit.text(lines)) for how, lines in found]

