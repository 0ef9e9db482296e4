"""Region rules (context: `RegionFit`): deletions that a placement implies and the snippet does not show.

Lines a marker-free snippet skips over, a deletion whose end is a repeated line or run (which copy
ends it?), a doubled line that may be the ends of two runs, a region that only adds blank lines,
a deletion far larger than the region, one next to a common anchor that may as well be new, a
declaration deleted whose name the kept lines still use.
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher

from fastapply.merge.checks.base import RegionFit
from fastapply.merge.checks.helpers import (ATTRIBUTE_STARTS, anchor_span, copies_after, copies_before,
                                            deletions_at_edges, trim_blank_ends)
from fastapply.markers import is_comment_line, looks_like_marker
from fastapply.merge.diff import edit_distance
from fastapply.merge.text import indent_of, is_blank, is_trivial, occurrences

MARKER_FREE_DROP_MIN = 3  # lines a marker-free region may drop unshown ...
MARKER_FREE_DROP_SHARE = 4  # ... or one line in this many of its span, whichever is more
# A placement deleting more than max(DELETION_MIN lines, DELETION_RATIO x the region's lines) unshown
# lines next to an anchor that repeats inside the span is refused.
DELETION_MIN, DELETION_RATIO = 10, 3
REPEAT_COPIES = 5  # further copies of a deleting region's edge line checked for a tie


def marker_free_drops_lines(fit: RegionFit) -> str | None:
    """A snippet without markers is a targeted edit: it does not silently drop what it skips over.
    Refused when the placement would replace more non-blank original lines that the region does not
    show than `MARKER_FREE_DROP_MIN` (3), or than one in `MARKER_FREE_DROP_SHARE` (4) of its span
    if that is more: a partial snippet, or a deletion? A comment line in the span that the region
    does not show is refused at any count: the doc comment above the second of two methods a
    snippet shows one after the other is left out far more often than deleted."""
    if fit.partial_ok:
        shown = set(x.strip() for x in fit.c.lines)
        dropped = sum(1 for x in fit.orig[fit.start:fit.end] if not is_blank(x) and x.strip() not in shown)
        if dropped > max(MARKER_FREE_DROP_MIN, (fit.end - fit.start) // MARKER_FREE_DROP_SHARE):
            return (f"the snippet has no markers but would replace {dropped} original lines it "
                    "does not show: a partial snippet, or a deletion?")
        # A comment between the definitions a snippet shows is what agents leave out most (a doc
        # comment above the second of two methods shown one after the other): never dropped unasked.
        comment = next((x.strip() for x in fit.orig[fit.start:fit.end]
                        if is_comment_line(x) and not looks_like_marker(x) and x.strip() not in shown), None)
        if comment is not None:
            return (f"the snippet has no markers but would drop the comment `{comment[:60]}` it does not "
                    "show: deleted, or left out?")
    return None


def _deleted(fit: RegionFit) -> int:
    """Net deletion the placement implies: non-blank original lines in the span that the region does
    not show, less the new lines it adds (an edited line is a replacement, not a deletion)."""
    shown = {x.rstrip() for x in fit.c.lines}
    span = {x.rstrip() for x in fit.orig[fit.start:fit.end]}
    gone = sum(1 for x in fit.orig[fit.start:fit.end] if not is_blank(x) and x.rstrip() not in shown)
    added = sum(1 for x in fit.c.lines if not is_blank(x) and x.rstrip() not in span)
    return max(0, gone - added)


def deletion_edge_repeats(fit: RegionFit) -> str | None:
    """The placement deletes lines right next to its last (first) anchor, and the line or run of
    lines the region shows at that edge occurs again, whole, further down (up) in the gap, where
    the region would fit as well (explaining as many of its lines): where the deletion ends is a
    tie between the copies, not a choice. (Deleting one of a family of tests or methods that end
    alike shows the tail they share, so the nearest copy, the least deletion, is a guess.) Lines
    the region shows further on are moved, not deleted: a reorder next to the edge is no deletion.
    The readings hold each other copy's deletion (`lineplace._at_seam_copies`)."""
    c = fit.c
    if c.first == c.last:
        return None
    keys = [x.rstrip() for x in fit.orig]
    rk, span = anchor_span(fit)
    # A run of several lines at the deletion's edge ties as a lone line does: deleting one of a
    # family of similar items (functions, tests, classes) shows the tail the family shares, and the
    # nearest copy, the reading that deletes least, is a guess as often as not (held-out fuzz seeds
    # 86117, 24683, 81650: `@return {app} for chaining` / `@public` / `*/` before `app.enable` and
    # again before `app.disable`). A blank line next to the deletion belongs to either side of it,
    # so it is not matched.
    alts = []
    shown = set(rk)
    for side, run, gone in reversed(deletions_at_edges(rk, span)):  # (the last anchor's copies first)
        run = trim_blank_ends(run)  # (its other end is an anchor, never blank)
        if not run or all(x in shown for x in gone if x):
            continue  # (lines the region shows further on are moved, not deleted: a reorder)
        if side == "last":
            alts += [(c.start, e) for e in copies_after(keys, run, c.end + 1, fit.next_start, REPEAT_COPIES)]
        else:
            alts += [(t, c.end) for t in copies_before(keys, run, fit.prev_end, c.start, REPEAT_COPIES)]
    for s, e in alts:
        d = edit_distance(rk, keys[s:e + 1])
        if d is not None and (len(rk) + e - s + 1 - d) // 2 >= c.matched:
            edge = keys[c.end if s == c.start else c.start].strip()
            return (f"region {fit.i + 1} deletes lines up to `{edge[:40]}`, which occurs again at line "
                    f"{(e if s == c.start else s) + 1}: which copy ends the deletion?")
    return None


def line_doubled(fit: RegionFit) -> str | None:
    """The region shows a line twice in a row (`#[doc(hidden)]` / `#[doc(hidden)]`, blank lines
    between or not) while its span holds it fewer times, and its lines up to the first (from the
    second) stand, as a run, before (after) its place too: a doubled line, or the ends of two runs
    (one definition's attributes and the next one's; two tests' last asserts) with the lines between
    deleted? Which copies are meant is not shown. (Where the lines up to the first are unique, only
    the doubled reading places them; a common line such as `}` proves nothing either way.) Other
    lines than attributes count only when the region shows nothing else: a literal's item copied
    next to itself, shown with its neighbours, is placed by them."""
    lines, o = fit.c.lines, fit.orig
    keys = [x.rstrip() for x in o]
    have = Counter(keys[fit.start:fit.end])
    want = Counter(x.rstrip() for x in lines)
    code = [p for p, x in enumerate(lines) if not is_blank(x)]  # (a blank line between them changes nothing)
    for p, q in zip(code, code[1:]):
        k = lines[p].rstrip()
        if k != lines[q].rstrip() or is_trivial(k) or want[k] <= have[k]:
            continue
        if not k.strip().startswith(ATTRIBUTE_STARTS) and any(lines[j].rstrip() != k for j in code):
            continue  # (a statement or an item doubled among other lines is an edit like any other)
        head = trim_blank_ends([x.rstrip() for x in lines[:p + 1]])
        tail = trim_blank_ends([x.rstrip() for x in lines[q:]])
        if occurrences(keys[max(fit.prev_end, 0):fit.start], head) or \
                occurrences(keys[fit.end:fit.next_start], tail):
            return (f"region {fit.i + 1} shows `{k.strip()[:40]}` twice in a row, once more than the original "
                    "has there: a doubled line, or the ends of two runs with the code between them deleted?")
    return None


def only_blank_lines_added(fit: RegionFit) -> str | None:
    """Where it fits, the region only adds blank lines, and its context is not unique in the file: a
    snippet is rarely sent to add a blank line; more likely it shows a deletion (the lines between
    two blank lines gone) up to another copy of its first or last line (`@Override`)."""
    c, o = fit.c, fit.orig
    shown = [x.rstrip() for x in c.lines if not is_blank(x)]
    span = [x.rstrip() for x in o[fit.start:fit.end] if not is_blank(x)]
    if shown != span or _inner_blanks(fit) <= sum(1 for x in o[fit.start:fit.end] if is_blank(x)):
        return None
    for edge, which in ((o[c.start].rstrip(), "first"), (o[c.end].rstrip(), "last")):
        if sum(1 for x in o if x.rstrip() == edge) > 1:
            return (f"region {fit.i + 1} only adds blank lines where it fits, and its {which} line occurs elsewhere "
                    "too: does it show a deletion at another place?")
    return None


def _inner_blanks(fit: RegionFit) -> int:
    """The region's blank lines, less those between it and a marker: a blank line the author left
    around `// ... existing code ...` lays out the snippet, it adds nothing to the file."""
    lines = fit.c.lines
    lo, hi = 0, len(lines)
    if fit.region.marker_before:
        while lo < hi and is_blank(lines[lo]):
            lo += 1
    if fit.region.marker_after:
        while hi > lo and is_blank(lines[hi - 1]):
            hi -= 1
    return sum(1 for x in lines[lo:hi] if is_blank(x))


# A statement any function may end with: the only copy in the file still bounds nothing (a new
# `return None` after a wrapped body anchored on another function's, 75 lines further down).
GENERIC_STATEMENT = re.compile(r"(return|yield)( (None|null|nil|undefined|true|false|True|False|0|-1|\[\]|\{\}|\"\"|''|"
                               r"err|Ok\(\(\)\)))?;?$|(break|continue|pass);?$")


def implied_deletion_too_large(fit: RegionFit) -> str | None:
    """A short region whose placement deletes many more lines than it shows, with an anchor line that
    repeats inside the span (so a nearer copy could end it): a two-line region spanning 32 lines is a
    guess, not an edit the snippet shows. Many is more than `DELETION_MIN` (10) lines or
    `DELETION_RATIO` (3) times the region's, whichever is more. With unique anchors, the largest
    deleted run must still end on lines unique in the file: refused too when it ends at a line that
    occurs elsewhere (even at another indentation) or at a statement any block may end with
    (`return None`, `break`)."""
    c, o = fit.c, fit.orig
    shown = sum(1 for x in c.lines if not is_blank(x))
    deleted = _deleted(fit)
    if deleted <= max(DELETION_MIN, DELETION_RATIO * shown):
        return None
    keys = [x.rstrip() for x in o[c.start:c.end + 1]]
    if keys.count(keys[0]) > 1 or keys.count(keys[-1]) > 1:
        return (f"region {fit.i + 1} shows {shown} lines but its placement would delete {deleted} original lines "
                "it does not show, between anchors that repeat inside that span: refusing to guess")
    # Each anchor is the nearest copy; the lines that bound the largest deleted run must be unique in
    # the file, even at another indentation (a re-indented line matching a deeper copy further down,
    # or a lone `@Override` that stands above many methods, is no bound). A `}` there is the nearest
    # at its indentation (checked above): the end of the block the region rewrites.
    region = [x.rstrip() for x in c.lines[c.first:c.last + 1]]
    runs = [(j1, j2) for tag, _, _, j1, j2 in SequenceMatcher(None, region, keys, autojunk=False).get_opcodes()
            if tag in ("insert", "replace")]
    j1, j2 = max(runs, key=lambda r: sum(1 for x in keys[r[0]:r[1]] if x), default=(0, 0))
    stripped = [x.strip() for x in keys]
    everywhere = Counter(x.strip() for x in o)
    for j in (j1 - 1, j2):
        if not 0 <= j < len(keys):
            continue
        generic = GENERIC_STATEMENT.match(stripped[j])
        if generic or (not is_trivial(keys[j]) and everywhere[stripped[j]] > 1):
            why = "a statement any block may end with" if generic else "which occurs elsewhere too"
            return (f"region {fit.i + 1} shows {shown} lines but its placement would delete {deleted} original "
                    f"lines it does not show, up to `{stripped[j][:40]}`, {why}: refusing to guess")
    return None


def deletion_after_common_anchor(fit: RegionFit) -> str | None:
    """The region's first (last) anchor is a common line (`}`, blank lines), the placement deletes
    original code right after (before) it, and the snippet's new lines left a bracket open: that `}`
    may as well be new (closing the block the snippet opened), and then nothing is deleted."""
    if fit.c.first == fit.c.last or fit.opened <= 0:
        return None
    for _, run, gone in deletions_at_edges(*anchor_span(fit)):
        if all(is_blank(x) or is_trivial(x) for x in run) and any(not is_blank(x) for x in gone):
            return (f"region {fit.i + 1} would delete original code next to `{run[0].strip() or run[-1].strip()}`, "
                    "a common line that may as well be new: refusing to guess")
    return None


# A line that declares a local name: JS/TS `const x =`, Go `x :=` / `var x`, Rust `let [mut] x`,
# Java `Type x =` (generics allowed), C/C++ `struct item *item =` / `int n =` (a type, then the
# name after a space, `*` or `&`), Python `x = ` (spaced, as assignments are written:
# `reason="..."` is a keyword argument).
_DECLARES = re.compile(r"\s*(?:(?:const|let|var)\s+(?:mut\s+)?([A-Za-z_$][\w$]*)\b(?!::)"
                       r"|([A-Za-z_]\w*)\s*:=|(?:final\s+)?[A-Z]\w*(?:<[^=]*>)?(?:\[\])*\s+([a-z_]\w*)\s*="
                       r"|[A-Za-z_][\w:<>,\s]*[\s*&]+([A-Za-z_]\w*)\s*=[^=]"
                       r"|([a-z_]\w*)\s+=\s)")


def _declared(line: str) -> str | None:
    """The name `line` declares (`_DECLARES`), or None."""
    m = _DECLARES.match(line)
    return next((g for g in m.groups() if g), None) if m else None


def _uses(name: str, text: str) -> bool:
    """`name` as a variable in `text`: not a member (`obj.name`), but spread (`...name`) counts."""
    return re.search(rf"(?<![\w$])(?<![\w$)\]]\.){re.escape(name)}\b", text) is not None


def deleted_declaration_still_used(fit: RegionFit) -> str | None:
    """The placement edits a line that declares a name into other lines that declare nothing, the
    region declares no such name (it may mention it: `struct item *item` under a header returning
    `struct item *`), and the original lines kept right after the span, in the same block, still
    use it: the file would use a name nobody declares. The region's lines were new ones beside the
    old (a guard `if (!id) { return undefined; }` whose last lines paired with
    another `if`'s, turning `const session = this.get(id);` above them into its opener; held-out
    agent set 5). A deletion the snippet shows (the lines around it, and nothing between) and a
    declaration edited into another (a rename) are the snippet's own say."""
    a = [x.rstrip() for x in fit.c.lines]
    b = [x.rstrip() for x in fit.orig[fit.start:fit.end]]
    declared = {_declared(x) for x in a}
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "replace" or any(_declared(x) for x in a[i1:i2]):
            continue
        for line in b[j1:j2]:
            name = _declared(line)
            if name is None or name in declared:
                continue
            used = _used_below(fit, name, len(indent_of(line)))
            if used is not None:
                return (f"region {fit.i + 1} would turn `{line.strip()[:50]}` into other code, but `{name}` is still "
                        f"used below it (line {used + 1}): are the region's lines new ones beside it?")
    return None


def _used_below(fit: RegionFit, name: str, depth: int) -> int | None:
    """The first original line kept after the span, in the block at `depth`, that uses `name`."""
    for k in range(fit.end, fit.next_start):
        x = fit.orig[k]
        if is_blank(x):
            continue
        if len(indent_of(x)) < depth:
            return None
        if _uses(name, x):
            return k
    return None
