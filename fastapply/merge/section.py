"""What a merge writes beyond the edges of an original that may be a section of a file: the context
of the section rules (`checks/fragments.py`, `SECTION_CHECKS`, run by `fastapply.validate`).

The lines an answer adds above the original's first kept line and below its last, whether the
snippet has a marker beyond them (a marker that stands for nothing in the original), where the
original is cut (`fragment.find_cuts`), and the questions the rules ask about a cut edge: does
the snippet show the section's edge lines with code beyond them, a doc comment that goes on past
the edge, more of a definition than the section holds; does the answer write a line less
indented than the edge inside the block the section is cut in?
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from dataclasses import dataclass
from functools import cached_property

from fastapply.markers import looks_like_marker, marker_flags
from fastapply.merge.defs import Definition
from fastapply.merge.fragment import Cuts, line_map
from fastapply.merge.text import CLOSERS, indent_of, is_blank, is_trivial, similar
from fastapply.merge.whole_defs import original_definitions

EDGE_RUN = 4  # at most this many non-blank lines at a cut edge, shown, say that the snippet crosses it
MIN_TWICE = 10  # a line shorter than this (`try {`) may well be written twice on purpose


@dataclass
class SectionEdit:
    """A merge's answer for an original that may be a section of a file: where the original is cut
    (`Cuts`), the lines the answer writes beyond its first and last kept lines (not original
    lines), and whether the snippet has a marker beyond those lines."""

    orig: list[str]
    upd: list[str]
    merged: list[str]
    lang: str | None
    cuts: Cuts
    head_added: list[str]  # merged lines above the first non-blank original line it keeps as written
    tail_added: list[str]  # ... below the last
    marker_before: bool = False  # the snippet has a marker above the first line of `head_added`
    marker_after: bool = False  # ... below the last line of `tail_added`
    broken: bool = False  # the original mostly fails to parse (`languages.unparsable`): placed by lines only

    @cached_property
    def tail_cut(self) -> str:
        """Why the section's end may be cut: its own reason (`Cuts.tail`) or, where only its start
        says so, code the merge writes below its last line inside that line's block (the rest of a
        body, restated past the end, or new lines?). New code after it at column 0 is read as at a
        file's end."""
        code = [x for x in self.tail_added if not is_blank(x)]
        if self.cuts.tail or not (self.cuts.head and code and indent_of(code[0])):
            return self.cuts.tail
        return "its start is cut, and the snippet goes on below its last line, inside that line's block" \
            if indent_of(self.orig[self.cuts.last]) else ""

    @property
    def head_cut(self) -> str:
        """Why the section's start is cut (`Cuts.head`): read from its own lines only, since new code
        above a file's first line is common (imports) where its end is cut."""
        return self.cuts.head

    @cached_property
    def upd_defs(self) -> list[Definition]:
        """The snippet's definitions (parsed as it stands, markers being comments)."""
        return original_definitions(self.upd, self.lang)

    @cached_property
    def orig_defs(self) -> list[Definition]:
        return original_definitions(self.orig, self.lang)

    def shown_longer(self, d: Definition) -> bool:
        """The snippet shows definition `d` (its header line) whole, no marker inside, in more lines
        (not blank) than the original holds of it."""
        flags = marker_flags(self.upd, self.orig)
        held = sum(not is_blank(x) for x in self.orig[d.node_start:d.end + 1])
        return any(u.header == d.header and not any(flags[u.node_start:u.end + 1]) and
                   sum(not is_blank(x) for x in self.upd[u.node_start:u.end + 1]) > held for u in self.upd_defs)

    def shown_past_cut(self, at_head: bool) -> str | None:
        """The code line the snippet shows beyond the section's first (last) lines: where it shows
        them once (`edge_runs`: as they stand, or edited), the nearest line above (below) them that
        is not blank, unless it is a marker. It is code restated from beyond the cut or new code at
        the section's edge; nothing in the section says which."""
        flags = marker_flags(self.upd, self.orig)
        rows = [i for i, x in enumerate(self.upd) if not is_blank(x)]
        if not at_head:
            rows = rows[::-1]
        shown = [self.upd[i].rstrip() for i in rows]
        o, u = Counter(x.rstrip() for x in self.orig), Counter(shown)
        once = {x for x in u if u[x] == 1 and o[x] == 1}
        for run in edge_runs(self.orig, at_head):
            starts = [k for k in range(len(shown) - len(run) + 1) if _shows_run(shown[k:k + len(run)], run, once)]
            if len(starts) > 1:
                return None
            if starts:
                k = starts[0] - 1
                return None if k < 0 or flags[rows[k]] else self.upd[rows[k]]
        return None

    def lead_beyond_cut(self, at_head: bool) -> str | None:
        """A line of the snippet's first (last) region, after (before) a marker, that may stand above
        the section's first line (below its last), the marker standing for lines beyond the cut:
        reading the region from the marker, a line the section does not hold, where it is the first,
        or the region also reads across the cut, deleting whole definitions there (`straddle`), or
        the answer changes the section within its first `EDGE_RUN` lines,
        or the lines between it and the marker are look-alikes the section holds twice and the
        answer drops lines of the section;
        or the region's first line that the section holds once (and is not trivial) stands there;
        or, where the lines before that line are ones the section holds elsewhere only, the first
        of them, when the section does not hold them right before it and not `EDGE_RUN` lines short
        of the cut (the answer keeping those as written: the region's edge lines are then edits).
        The merge would read such a line as new code or pair it with a look-alike inside
        (`@MaxLength(80)` / `company?: string;` read as an edit of `jobTitle?: string;`; a `from {`
        of the keyframes above the cut)."""
        edge = self._marked_edge_region(at_head)
        if edge is None:
            return None  # no marker beyond it: the snippet starts (ends) at the section's edge
        region = [x.strip() for x in edge]
        code = [x.strip() for x in self.orig if not is_blank(x)][::1 if at_head else -1]
        held = Counter(code)

        def anchors(line: str) -> bool:
            return held[line] == 1 and not is_trivial(line)

        straddle = self.straddle(region, code, at_head)
        if straddle is not None:
            return straddle
        for n, line in enumerate(region):
            if anchors(line):
                at = code.index(line)
                if code[max(0, at - n):at] == region[:n]:
                    return None
                # The region's lines beyond its anchor are edited, not the section's own; they stop
                # short of the cut where the section holds `EDGE_RUN` more lines beyond that anchor
                # than the region shows and the answer keeps them as written: the marker stands for those.
                clear = at - n >= EDGE_RUN and self.first_change(at_head) >= EDGE_RUN
                return None if clear else region[0]
            if not held[line]:
                later = next((x for x in region[n + 1:] if anchors(x)), None)
                if self.edits_in_place(region, code, at_head):
                    return None
                near = self.first_change(at_head) < EDGE_RUN or later is not None and code.index(later) < EDGE_RUN
                # the lines between it and the marker are look-alikes the section holds more than
                # once (`"dependencies": {`): they may be the file's own beyond the cut
                alike = any(held[x] > 1 and not is_trivial(x) for x in region[:n]) and self.drops_lines()
                return line if n == 0 or near or alike else None
        return None

    def edits_in_place(self, region: list[str], code: list[str], at_head: bool) -> bool:
        """The region reads onto the section's lines at one place (`_one_for_one`, or up to its first
        line held once, `_up_to_anchor`), each line as written or edited (`similar`), at most one
        edited; that place stands `EDGE_RUN` lines or more from the cut, and the answer changes
        nothing before it: the region edits lines in place (`time.Sleep(Backoff(i))` →
        `time.Sleep(Backoff(i + 1))`), the marker standing for the lines between them and the cut.
        Read as lines beyond the cut instead, the region would delete the section's lines up to
        there, unshown and unmarked. Lines unlike those in place (an import block above the cut,
        before a class the section starts with) are no such edit. `code`, `region`: stripped, from
        the edge."""
        place = self._one_for_one(region, code) or self._up_to_anchor(region, code)
        if place is None:
            return False
        start, end, edited = place
        if not EDGE_RUN <= start <= self.first_change(at_head):
            return False
        # One line edited: more lines each like the section's (`case "pull":` / `case "fsck":`, the
        # call and the message below it) are as well a look-alike block above the cut
        if edited > 1:
            return False
        # Within one definition only: a region that reaches a definition's header from the lines
        # before it reads as well as the end of a look-alike above the cut, the section's lines
        # between deleted (`return err` / `}` of the function above, then `func (s *Store) audit`).
        rows = sorted([i for i, x in enumerate(self.orig) if not is_blank(x)][::1 if at_head else -1][start:end])
        return not any(rows[0] < d.start <= rows[-1] for d in self.orig_defs)

    @staticmethod
    def _one_for_one(region: list[str], code: list[str]) -> tuple[int, int, int] | None:
        """(start, end, lines edited) of the only place where the region reads one for one onto the
        section's lines, each as written or `similar`, one of them as written and held once."""
        held = Counter(code)
        places = [s for s in range(len(code) - len(region) + 1)
                  if any(x == code[s + i] and held[x] == 1 for i, x in enumerate(region))
                  and all(similar(x, code[s + i]) for i, x in enumerate(region))]
        if len(places) != 1:
            return None
        start = places[0]
        return start, start + len(region), sum(x != code[start + i] for i, x in enumerate(region))

    @staticmethod
    def _up_to_anchor(region: list[str], code: list[str]) -> tuple[int, int, int] | None:
        """(start, end, lines edited) where the region's lines before its first line held once (not
        trivial) read onto the section's lines before that line, in order, each as written or
        `similar`, with section lines between them that the edit deletes (a comment gone from a
        test whose header is renamed); no new line among them."""
        held = Counter(code)
        k = next((i for i, x in enumerate(region) if held[x] == 1 and not is_trivial(x)), None)
        if not k:
            return None
        at = code.index(region[k])
        # aligned from the anchor back, so that a look-alike nearest it is the one paired
        before = code[max(0, at - 3 * k - 3):at][::-1]  # room for a deleted line or two
        ops = SequenceMatcher(None, region[:k][::-1], before, autojunk=False).get_opcodes()
        while ops and ops[-1][0] == "insert":  # the section's lines before the region: the marker's
            ops = ops[:-1]
        if not ops or ops[-1][2] != k:
            return None
        edited = 0
        for tag, i1, i2, j1, j2 in ops:
            if tag == "delete" or tag == "replace" and (i2 - i1 > j2 - j1 or not _in_order_similar(
                    region[:k][::-1][i1:i2], before[j1:j2])):
                return None
            edited += i2 - i1 if tag == "replace" else 0
        span = ops[-1][4]  # the section's lines from the region's first to the anchor
        # one section line deleted among them at most: a block of them deleted under look-alike
        # lines (`"dependencies": {` of `net40` read as `dotnet5.1`'s) is the file's own beyond the cut
        if span - k > 1:
            return None
        return at - span, at + 1, edited

    def straddle(self, region: list[str], code: list[str], at_head: bool) -> str | None:
        """The region's first line the section does not hold, where the region also reads as
        standing across the cut: its lines up to that one (and the lines after it up to its next
        line that the section holds once) above the section's first line (below its last), the rest
        from that next line on in place, and the section's lines between the cut and that line
        deleted, being whole definitions (a test the file's edit deletes by showing the test
        above the cut next to the one after it). `code`, `region`: stripped, from the edge."""
        held = Counter(code)
        n = next((k for k, x in enumerate(region) if not held[x]), None)
        if n is None:
            return None
        m = next((k for k in range(n + 1, len(region)) if held[region[k]] == 1 and not is_trivial(region[k])), None)
        if m is None:
            return None
        at = code.index(region[m])
        while m - 1 > n and at > 0 and code[at - 1] == region[m - 1]:  # the lines in place before it
            at, m = at - 1, m - 1
        if at <= 0 or _held_in_place(region[:n], code[:at], held):
            return None
        rows = [i for i, x in enumerate(self.orig) if not is_blank(x)]
        gone = rows[:at] if at_head else rows[len(rows) - at:]
        lo, hi = gone[0], gone[-1]
        whole = [d for d in self.orig_defs if lo <= d.start and d.end <= hi]
        return region[n] if whole and all(any(d.start <= r <= d.end for d in whole) for r in gone) else None

    def edge_region_order(self, at_head: bool) -> tuple[str, str] | None:
        """(a line, the region's first line held once) of the snippet's first (last) region, both
        held once by the section (not trivial), where the section holds the line before (after)
        the first one, among its first (last) `2 * EDGE_RUN` lines: the region's first anchor is
        a look-alike of a line beyond the cut (two `@keyframes` blocks alike, the first above it)."""
        flags = marker_flags(self.upd, self.orig)
        regions, current = [], []
        for x, m in zip(self.upd, flags):
            if m:
                regions, current = regions + [current] * bool(current), []
            elif not is_blank(x):
                current.append(x.strip())
        regions += [current] * bool(current)
        if len(regions) < 1 or not any(flags):
            return None
        code = [x.strip() for x in self.orig if not is_blank(x)]
        region = regions[0 if at_head else -1]
        if not at_head:
            code, region = code[::-1], region[::-1]
        held = Counter(code)
        anchors = [(code.index(x), x) for x in region if held[x] == 1 and not is_trivial(x)]
        return next(((x, anchors[0][1]) for at, x in anchors[1:] if at < anchors[0][0] and at < 2 * EDGE_RUN), None)

    def marker_at_edge_for_nothing(self, at_head: bool) -> str | None:
        """The snippet's first (last) line that is not a marker, where a marker stands before (after)
        it and the answer starts (ends) with the snippet's first (last) lines, up to `EDGE_RUN` of
        them: that marker stands for nothing in the section, so for lines beyond the cut, and the
        region's edge lines may be the file's own there, paired with look-alikes inside."""
        edge = self._marked_edge_region(at_head)
        if edge is None:
            return None
        shown = [x.strip() for x in edge]
        code = [x.strip() for x in self.merged if not is_blank(x)][::1 if at_head else -1]
        n = min(EDGE_RUN, len(shown))
        return edge[0] if code[:n] == shown[:n] else None

    def _marked_edge_region(self, at_head: bool) -> list[str] | None:
        """The non-blank lines of the snippet's first (last) region, from the edge inward, where a
        marker stands before (after) it; None where the snippet starts (ends) with code, or is
        markers only."""
        flags = marker_flags(self.upd, self.orig)
        rows = [i for i, x in enumerate(self.upd) if not is_blank(x)][::1 if at_head else -1]
        k = next((n for n, i in enumerate(rows) if not flags[i]), len(rows))
        if k == 0 or k == len(rows):
            return None
        end = next((n for n in range(k, len(rows)) if flags[rows[n]]), len(rows))
        return [self.upd[i] for i in rows[k:end]]

    def unmarked_start_unheld(self, at_head: bool) -> str | None:
        """The snippet's first (last) line, where no marker stands before (after) it and the snippet
        has markers, when the section does not hold it and the answer does not start (end) with
        it: the snippet starts at lines above the section (its file's first lines), and the merge
        kept section lines above them."""
        flags = marker_flags(self.upd, self.orig)
        rows = [i for i, x in enumerate(self.upd) if not is_blank(x)]
        code = [x.strip() for x in self.merged if not is_blank(x)]
        if not rows or not code or not any(flags):
            return None
        edge = rows[0] if at_head else rows[-1]
        line = self.upd[edge].strip()
        if flags[edge] or line in {x.strip() for x in self.orig} or line == (code[0] if at_head else code[-1]):
            return None
        return self.upd[edge]

    def markerless_end_unheld(self) -> str | None:
        """The last line of a snippet without markers, when the section does not hold it and the
        answer ends with it: the snippet runs past the section's last line (the file's
        `export default` below the cut, restated with the rest)."""
        flags = marker_flags(self.upd, self.orig)
        code = [x.strip() for x in self.merged if not is_blank(x)]
        shown = [x for x in self.upd if not is_blank(x)]
        if any(flags) or not shown or not code:
            return None
        line = shown[-1].strip()
        return None if line in {x.strip() for x in self.orig} or line != code[-1] else line

    def header_twice(self) -> str | None:
        """The header line of a definition the snippet shows, which the section holds, and which the
        answer holds more often than the section: the snippet's copy went beside the section's
        (a section cut inside that definition parses too badly for it to count as one)."""
        held = Counter(x.strip() for x in self.orig if not is_blank(x))
        answer = Counter(x.strip() for x in self.merged if not is_blank(x))
        return next((u.header for u in self.upd_defs if held[u.header] and answer[u.header] > held[u.header]), None)

    def edge_line_twice(self) -> str | None:
        """A line the snippet shows once next to a marker, which the section holds once (not trivial,
        `MIN_TWICE` characters at least), and which the answer holds twice: the snippet's copy was
        written beside the section's, so its region was placed by look-alikes (a `}` and a similar
        call further down) instead of by that line, likely because its other lines stand beyond the cut."""
        flags = marker_flags(self.upd, self.orig)
        code = [(x.strip(), m) for x, m in zip(self.upd, flags) if not is_blank(x)]
        shown = Counter(x for x, m in code if not m)
        held = Counter(x.strip() for x in self.orig if not is_blank(x))
        answer = Counter(x.strip() for x in self.merged if not is_blank(x))
        for k, (x, m) in enumerate(code):
            beside = k > 0 and code[k - 1][1] or k + 1 < len(code) and code[k + 1][1]
            if not m and beside and held[x] == shown[x] == 1 and answer[x] > 1 and len(x) >= MIN_TWICE \
                    and not is_trivial(x):
                return x
        return None

    def first_change(self, at_head: bool) -> int:
        """How many non-blank lines the answer keeps as written at the section's start (end) before
        its first change there."""
        a = [x for x in self.orig if not is_blank(x)]
        b = [x for x in self.merged if not is_blank(x)]
        if not at_head:
            a, b = a[::-1], b[::-1]
        return next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))

    def drops_lines(self) -> bool:
        """The answer leaves out some of the section's non-blank lines (deleted, or replaced by fewer)."""
        a = [x.strip() for x in self.orig if not is_blank(x)]
        b = [x.strip() for x in self.merged if not is_blank(x)]
        ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        return any(tag in ("delete", "replace") and i2 - i1 > j2 - j1 for tag, i1, i2, j1, j2 in ops)

    def blank_lines_changed(self) -> bool:
        """The answer has more or fewer blank lines than the section between two lines that follow
        each other in both (kept, or edited one for one)."""
        a = [i for i, x in enumerate(self.orig) if not is_blank(x)]
        b = [j for j, x in enumerate(self.merged) if not is_blank(x)]
        ops = SequenceMatcher(None, [self.orig[i].strip() for i in a], [self.merged[j].strip() for j in b],
                              autojunk=False).get_opcodes()
        pairs = {i1 + k: j1 + k for tag, i1, i2, j1, j2 in ops if tag == "equal" or i2 - i1 == j2 - j1
                 for k in range(i2 - i1)}
        return any(k + 1 in pairs and pairs[k + 1] == j + 1 and a[k + 1] - a[k] != b[j + 1] - b[j]
                   for k, j in pairs.items() if k + 1 < len(a) and j + 1 < len(b))

    def restated_around_head(self) -> Definition | None:
        """A definition the snippet shows whole (no marker inside), whose header the section does
        not hold, and whose last lines are the block the section starts in (its lines up to the
        first one less indented than its first line, that closer included; one of them may be
        edited, and one that is not trivial stands as written), or that block whole inside it:
        the section starts inside it."""
        first = self.cuts.first
        depth = len(indent_of(self.orig[first])) if 0 <= first < len(self.orig) else 0
        if not depth:
            return None
        end = next((r for r in range(first + 1, len(self.orig))
                    if not is_blank(self.orig[r]) and len(indent_of(self.orig[r])) < depth), None)
        if end is None:
            return None
        if self.orig[end].strip() not in CLOSERS:
            end -= 1
        block = [x.strip() for x in self.orig[first:end + 1] if not is_blank(x)]
        held = {x.strip() for x in self.orig}
        flags = marker_flags(self.upd, self.orig)
        for u in self.upd_defs:
            if u.header in held or any(flags[u.node_start:u.end + 1]):
                continue
            body = [x.strip() for x in self.upd[u.node_start:u.end + 1] if not is_blank(x)]
            if self._head_body_shown_in(u, body, depth):
                return u
            if len(block) >= 2 and any(not is_trivial(x) for x in block) and \
                    any(body[k:k + len(block)] == block for k in range(1, len(body) - len(block) + 1)):
                return u  # the block stands inside it as written (an `if` of the method cut above)
            tail = body[-len(block):]
            same = [a == b for a, b in zip(tail, block)]
            if len(block) >= 2 and len(tail) == len(block) and sum(not x for x in same) <= 1 and \
                    all(x or similar(a, b) for x, a, b in zip(same, tail, block)) and \
                    any(x and not is_trivial(b) for x, b in zip(same, block)):
                return u
        return None

    def _head_body_shown_in(self, u: Definition, body: list[str], depth: int) -> bool:
        """The section's first lines, down to the first one no deeper than `u`'s header (the rest of
        a body cut above), are mostly `u`'s own lines (half of those not trivial, two at least):
        the section starts inside `u`, which the snippet restates edited (a Java method whose
        header and first lines are above the cut)."""
        h = len(indent_of(self.upd[u.node_start]))
        if depth <= h:
            return False
        head = []
        for x in self.orig[self.cuts.first:]:
            if is_blank(x):
                continue
            if len(indent_of(x)) <= h:
                break
            head.append(x.strip())
        code = [x for x in head if not is_trivial(x)]
        shown = sum(x in set(body) for x in code)
        if shown < 2 or 2 * shown < len(code):
            return False
        # and the answer keeps them beside `u`'s copy: more of them than the section holds
        held = Counter(x.strip() for x in self.orig if not is_blank(x))
        answer = Counter(x.strip() for x in self.merged if not is_blank(x))
        return any(answer[x] > held[x] for x in code if x in body)

    def comment_across_edge(self, at_head: bool) -> str | None:
        """The comment line the snippet shows right above the section's first line (below its last)
        where that line is a doc comment line of the same kind (`///`, `//!`, a block comment's ` * `)
        and the snippet shows it as it stands, once: the section starts (ends) inside a comment the
        snippet shows more of."""
        code = [x.rstrip() for x in self.orig if not is_blank(x)]
        if not code or self.lang == "markdown":
            return None
        edge = code[0] if at_head else code[-1]
        kind = _comment_kind(edge)
        rows = [i for i, x in enumerate(self.upd) if not is_blank(x)]
        at = [k for k, i in enumerate(rows) if self.upd[i].rstrip() == edge]
        if kind is None or len(at) != 1:
            return None
        k = at[0] - 1 if at_head else at[0] + 1
        line = self.upd[rows[k]] if 0 <= k < len(rows) else None
        return line if line is not None and _comment_kind(line) == kind and not looks_like_marker(line) else None

    def shallower_new_line(self, at_head: bool) -> str | None:
        """A line the merge writes, not an original one, less indented than the section's first (last)
        line, before the first original line that is (after the last): inside the block the section
        is cut in, a line that closes or opens it (the header of the definition the section starts
        inside, pasted below the cut)."""
        cut_row, n = (self.cuts.first if at_head else self.cuts.last), len(self.orig)
        depth = len(indent_of(self.orig[cut_row]))
        if not depth:
            return None
        rows = range(cut_row + 1, n) if at_head else range(cut_row - 1, -1, -1)
        out = next((r for r in rows if not is_blank(self.orig[r]) and len(indent_of(self.orig[r])) < depth), None)
        where = line_map(self.orig, self.merged)
        if at_head:  # the merged rows of that block: up to the first kept original line from `out` on
            span = range(0, min((j for i, j in where.items() if out is not None and out <= i < n),
                                default=len(self.merged)))
        else:
            span = range(max((j for i, j in where.items() if out is not None and i <= out), default=-1) + 1,
                         len(self.merged))
        images = set(where.values())
        return next((self.merged[j] for j in span if j not in images and not is_blank(self.merged[j]) and
                     len(indent_of(self.merged[j])) < depth), None)


def section_edit(orig: list[str], upd: list[str], merged: list[str], lang: str | None,
                 cuts: Cuts, broken: bool = False) -> SectionEdit | None:
    """The context of the section rules (`cuts`: `find_cuts` of the original), or None when the
    original shows no cut and the merge writes nothing beyond its edges (the common case, said
    without a diff)."""
    if not cuts.fragment and _same_edges(orig, merged):
        return None
    head, tail = _edge_additions(orig, merged, cuts) if orig != merged else ([], [])
    flags = marker_flags(upd, orig)
    shown = [i for i, (x, m) in enumerate(zip(upd, flags)) if not m and not is_blank(x)]
    if not shown:
        return SectionEdit(orig, upd, merged, lang, cuts, head, tail, broken=broken)

    def row_of(lines: list[str], rows: list[int], default: int) -> int:
        code = [x.strip() for x in lines if not is_blank(x)]
        return next((i for i in rows if code and upd[i].strip() == code[0]), default)

    first = row_of(head, shown, shown[0])  # blank lines only: the snippet's first code line
    last = row_of(tail[::-1], shown[::-1], shown[-1])
    return SectionEdit(orig, upd, merged, lang, cuts, head, tail,
                       marker_before=bool(head) and any(flags[:first]),
                       marker_after=bool(tail) and any(flags[last + 1:]), broken=broken)


def _same_edges(orig: list[str], merged: list[str]) -> bool:
    """The merged lines start and end as the original's do, blank lines included: nothing was
    written beyond either edge (an edit of an edge line itself is no addition)."""
    if not orig or not merged:
        return not merged
    code = [i for i, x in enumerate(orig) if not is_blank(x)]
    if not code:
        return False
    first, last = code[0], code[-1]
    tail = len(orig) - last
    return merged[:first + 1] == orig[:first + 1] and merged[len(merged) - tail:] == orig[last:]


def _edge_additions(orig: list[str], merged: list[str], cuts: Cuts) -> tuple[list[str], list[str]]:
    """(merged lines above the first non-blank original line kept as written, ... below the last),
    less the original's own lines there (counted), in order. At a cut edge, the more of two line
    maps finds: one that pins the common edge lines, and one that leaves them to the diff (new
    code after a section's last `}` that ends in a `}` of its own: the common tail pairs the two)."""
    maps = [line_map(orig, merged)]
    if cuts.head or cuts.tail:
        maps.append(line_map(orig, merged, pin_head=not cuts.head, pin_tail=not cuts.tail))
    heads, tails = zip(*(_additions(orig, merged, where) for where in maps))
    return max(heads, key=len), max(tails, key=len)


def _additions(orig: list[str], merged: list[str], where: dict[int, int]) -> tuple[list[str], list[str]]:
    kept = sorted((i, j) for i, j in where.items() if i < len(orig) and not is_blank(orig[i]))
    if not kept:
        return list(merged), []
    (i1, j1), (i2, j2) = kept[0], kept[-1]
    return _less(merged[:j1], orig[:i1]), _less(merged[j2 + 1:][::-1], orig[i2 + 1:])[::-1]


def _less(lines: list[str], own: list[str]) -> list[str]:
    """The lines of `lines` (read from the section's edge inward) that are more than `own` has: the
    same lines (counted) are `own`'s, and an edited one stands for one of `own`'s (the edge line
    written anew is no line beyond it); the rest, from the edge, were added."""
    left = Counter(own)
    out = []
    for x in lines:
        if left[x] > 0:
            left[x] -= 1
        else:
            out.append(x)
    return out[:max(0, len(lines) - len(own))]


def _in_order_similar(lines: list[str], section: list[str]) -> bool:
    """Each of `lines` `similar` to a line of `section`, in order (the others deleted)."""
    j = 0
    for x in lines:
        while j < len(section) and not similar(x, section[j]):
            j += 1
        if j == len(section):
            return False
        j += 1
    return True


def _held_in_place(lines: list[str], code: list[str], held: Counter) -> bool:
    """`lines` (from the edge) stand together in `code` (the section's lines from the edge, up to
    the region's next anchor), one of them held once: the region's edge lines are the section's
    own, in place, and no reading puts them beyond the cut."""
    n = len(lines)
    if not any(held[x] == 1 and not is_trivial(x) for x in lines):
        return False
    return any(code[j:j + n] == lines for j in range(len(code) - n + 1))


def edge_runs(orig: list[str], at_head: bool) -> list[list[str]]:
    """The original's first (last) non-blank lines, from its edge out, 2 to `EDGE_RUN` of them: each
    run that stands once in it."""
    code = [x.rstrip() for x in orig if not is_blank(x)]
    if not at_head:
        code = code[::-1]
    return [code[:n] for n in range(2, min(EDGE_RUN, len(code)) + 1)
            if sum(code[k:k + n] == code[:n] for k in range(len(code) - n + 1)) == 1]


def _shows_run(shown: list[str], run: list[str], once: set[str]) -> bool:
    """Snippet lines that show `run` (both from the edge out): every line as it stands but one,
    which may be edited (`similar`), and among them one that is not trivial and stands once in the
    original (`once`) and in the snippet: a lone `});` or `request(app)` says nothing."""
    same = [a == b for a, b in zip(shown, run)]
    return sum(not x for x in same) <= 1 and all(x or similar(a, b) for x, a, b in zip(same, shown, run)) and \
        any(x and not is_trivial(b) and b in once for x, b in zip(same, run))


# Doc comment lines, which run on to the item they document (a plain `//` or `#` comment run at a
# file's top gets new lines above it in edits: a licence, a `# syntax=` line)
_COMMENT_KINDS = ("///", "//!", "* ", "*")


def _comment_kind(line: str) -> str | None:
    s = line.strip()
    return next((k for k in _COMMENT_KINDS if s.startswith(k) or k == "* " and s == "*"), None)


def open_definition(defs: list[Definition], row: int) -> Definition | None:
    """The innermost definition that holds `row` and goes on past it (or ends on it: a section cut
    there may hold only its start)."""
    around = [d for d in defs if d.node_start <= row <= d.end]
    return min(around, key=lambda d: d.end - d.start) if around else None
