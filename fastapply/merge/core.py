"""The merge pipeline: normalise, fill inline markers, place the snippet (tree or lines), check."""

from __future__ import annotations

from fastapply.languages import detect_language, parse, unparsable
from fastapply.merge.inline import fill_inline_markers
from fastapply.merge.lineplace import merge_lines
from fastapply.merge.result import MergeResult
from fastapply.merge.segment import split_regions
from fastapply.merge.text import join_lines, key, split_lines
from fastapply.validate import validate


def _refuse(reasons: list[str], lang: str | None, method: str = "") -> MergeResult:
    return MergeResult(None, 0.0, reasons, lang, method)


def merge(original: str, update: str, language: str | None, path: str | None) -> MergeResult:
    lang = detect_language(language, path, original)
    if not update.strip():
        return _refuse(["the update is empty"], lang)
    orig_lines, newline, trailing = split_lines(original)
    upd_lines, _, upd_trailing = split_lines(update)

    tree = parse(lang, original)
    if tree is not None and original.strip() and unparsable(tree, original):
        # An original that does not parse cannot be checked afterwards; refuse rather than guess.
        return _refuse([f"the original does not parse as {lang}"], lang)

    upd_lines, problems = fill_inline_markers(upd_lines, orig_lines)
    if problems:
        return _refuse(problems, lang)

    regions, n_markers = split_regions(upd_lines, orig_lines)
    if not regions:
        return _refuse(["the snippet has no content besides markers"], lang)

    if n_markers == 0 and [key(x) for x in upd_lines] == [key(x) for x in orig_lines]:
        return MergeResult(original, 1.0, [], lang, "identity")

    result = None
    method = "line-anchor"
    if n_markers == 0:
        from fastapply.merge.tree import merge_marker_free

        tm = merge_marker_free(orig_lines, upd_lines, lang)
        if tm is not None and tm.lines is not None:
            result, method, confidence, doubts = tm.lines, "tree-sitter", tm.confidence, tm.reasons
        elif tm is not None and tm.reasons and tm.final:
            return _refuse(tm.reasons, lang, "tree-sitter")
    if result is None:
        lm = merge_lines(regions, orig_lines, partial_ok=n_markers == 0, lang=lang)
        if lm.lines is not None and n_markers:
            text = join_lines(lm.lines, newline, trailing or not orig_lines)
            bad = [f"{f.kind}: {f.message}" for f in validate(original, update, text, lang) if f.severity == "error"]
            if bad:  # the line placement breaks the file: let the member alignment try
                lm = type(lm)(None, bad)
        if lm.lines is None and n_markers:
            # line anchors could not place it: align class members by kind and name instead
            from fastapply.merge.members import merge_members

            mm = merge_members(orig_lines, upd_lines, lang)
            if mm is not None and mm.lines is not None:
                text = join_lines(mm.lines, newline, trailing or not orig_lines)
                if not [f for f in validate(original, update, text, lang) if f.severity == "error"]:
                    return MergeResult(text, mm.confidence, ["placed by member names: " + lm.reasons[0]], lang,
                                       "tree-sitter")
        if lm.lines is None:
            return _refuse(lm.reasons, lang, method)
        result = lm.lines
        confidence = 0.95 if lm.margin >= 2 else 0.8 if lm.margin == 1 else 0.7
        confidence -= 0.05 * min(lm.fuzzy, 4)
        doubts = []
        if lm.fuzzy:
            doubts.append(f"{lm.fuzzy} edge line(s) matched by similarity")
        if lm.kept_edges:
            confidence = min(confidence, 0.7)
            doubts.append("kept the original's lines above/below the snippet, which has no marker there: its "
                          "markers are loose (column 0 inside indented code), read as elision, not deletion")
        if lm.reaches_end and upd_trailing != trailing and orig_lines:
            # The snippet shows the file's last line but not its final-newline convention (snippets
            # rarely end in a newline): keep the file's, as an editor would, and say so.
            doubts.append("kept the original's final newline; the snippet's end differs")

    text = join_lines(result, newline, trailing or not orig_lines)
    findings = validate(original, update, text, lang)
    errors = [f"{f.kind}: {f.message}" for f in findings if f.severity == "error"]
    if errors:
        return _refuse(errors, lang, method)
    doubts = doubts + [f"{f.kind}: {f.message}" for f in findings]
    if any(f.severity == "warning" for f in findings):
        confidence = min(confidence, 0.6)
    return MergeResult(text, max(0.0, min(1.0, confidence)), doubts, lang, method)
