"""An original that is a section of a file (`merge/fragment.py`): what a merge may not write beyond its cuts.

A client that sends a section splices the answer back in its place, so a line the merge writes
above the section's first line or below its last lands against the rest of the file. Where the
section is cut inside a definition, a block or a comment, such a line is as likely the snippet
restating code beyond the cut (a header, a closing brace, a blank line the file has already) as new
code, and a marker beyond such a line stands for nothing in the original. Each reason starts with
what to send instead; the merge puts it first in its refusal (`fragment.SECTION_CHECK`).
"""

from __future__ import annotations

from fastapply.markers import marker_flags
from fastapply.merge.section import SectionEdit, open_definition
from fastapply.merge.text import CLOSERS, indent_of, is_blank

WIDTH = 60  # characters of a line quoted in a reason


def definition_cut_at_head(ctx: SectionEdit) -> str | None:
    """The section starts inside something (`Cuts.head`), and the merge would write above its first
    line the header of a definition the snippet shows: the section holds only the rest of that
    definition (a Python test whose `def` line is above the cut, its body shown again)."""
    if not ctx.head_cut or not ctx.head_added:
        return None
    added = {x.strip() for x in ctx.head_added}
    shown = next((d for d in ctx.upd_defs if d.header in added), None)
    if shown is None:
        return None
    return (f"send the whole of `{shown.header[:WIDTH]}` (the section starts inside it, at line {ctx.cuts.first + 1}), "
            f"or the whole file: the snippet shows its first lines above the section's ({ctx.head_cut})")


def definition_cut_at_tail(ctx: SectionEdit) -> str | None:
    """The section ends inside a definition (its last line is in the definition's body, and the
    section's end is cut, or its start is and that line is indented), and the merge would write
    lines below the section's last line, or the snippet shows that definition whole (no marker
    inside) with more lines than the section holds of it: the snippet restates it past the cut (a
    Rust `fn` whose end is below the section, a Python test shown whole while the section ends in
    its first lines)."""
    last = ctx.cuts.last
    d = open_definition(ctx.orig_defs, last)
    if d is None or d.node_start == last or ctx.orig[last].strip() in CLOSERS:  # the cut is after it
        return None
    beyond = ctx.tail_cut and any(not is_blank(x) for x in ctx.tail_added)
    maybe_cut = ctx.cuts.tail or ctx.cuts.head and indent_of(ctx.orig[last])
    if not beyond and not (maybe_cut and ctx.shown_longer(d)):
        return None
    return (f"send the whole of `{d.header[:WIDTH]}` (the section cuts through it at line {last + 1}), or the "
            f"whole file: the snippet shows more of it than the section holds ({ctx.tail_cut or ctx.cuts.head})")


def block_opened_below_cut(ctx: SectionEdit) -> str | None:
    """The section starts (ends) inside a block, and the merge would write a line less indented than
    its first (last) line inside that block, before the section leaves it: the header of the
    definition the section starts inside, restated and pasted into its own body (a Go `func` line
    placed below the section's first statement), or a closer for a block the section does not
    close."""
    for at_head, cut, where in ((True, ctx.head_cut, "starts"), (False, ctx.tail_cut, "ends")):
        line = ctx.shallower_new_line(at_head) if cut else None
        if line is not None:
            return (f"send the whole of the block the section {where} inside, or the whole file: the snippet "
                    f"shows `{line.strip()[:WIDTH]}` less indented than the section's "
                    f"{'first' if at_head else 'last'} line, inside that block ({cut})")
    return None


def comment_shown_across_edge(ctx: SectionEdit) -> str | None:
    """The original's first (last) line is a doc comment line (`///`, `//!`, a block comment's ` * `
    line), and the snippet shows it with a line of the same comment right above (below) it: the
    section starts (ends) inside a comment, which the snippet shows more of (a Rust doc comment cut
    by the section, restated whole). Whatever the section's edge looks like: an item's doc comment
    starting a file is no place for new lines above it."""
    for at_head, where in ((True, "above its first line"), (False, "below its last line")):
        line = ctx.comment_across_edge(at_head)
        if line is not None:
            return (f"send the whole comment the section {'starts' if at_head else 'ends'} inside, or the whole "
                    f"file: the snippet shows `{line.strip()[:WIDTH]}` {where}, in the same comment")
    return None


def shown_across_cut(ctx: SectionEdit) -> str | None:
    """The section is cut at its start (end), and the snippet shows its first (last) two to four
    lines (as they stand, or one of them edited; one of them found once in each) with code right
    above (below) them, not a marker: code restated from beyond the cut, or new code at the
    section's edge? (The `}` of the function above, a test whose end is below the section: the
    merge would take the lines it cannot find for new ones, or pair them with look-alikes.)"""
    for at_head, cut, where in ((True, ctx.head_cut, "above its first line"),
                                (False, ctx.tail_cut, "below its last line")):
        line = ctx.shown_past_cut(at_head) if cut else None
        if line is not None:
            return (f"send the section with `{line.strip()[:WIDTH]}` in it, or the whole file: the snippet shows it "
                    f"{where}, where the section is cut ({cut})")
    return None


def code_beyond_cut(ctx: SectionEdit) -> str | None:
    """The section starts (ends) inside something, and the merge would write code above its first
    line (below its last): new code there, or the snippet showing code beyond the cut that the
    file has already? The client's splice would hold it twice."""
    head = [x for x in ctx.head_added if not is_blank(x)]
    if ctx.head_cut and head:
        return (f"send the lines above the section too (the snippet shows `{head[0].strip()[:WIDTH]}` above its "
                f"first line, which the section does not hold), or the whole file ({ctx.head_cut})")
    tail = [x for x in ctx.tail_added if not is_blank(x)]
    if ctx.tail_cut and tail:
        return (f"send the lines below the section too (the snippet shows `{tail[-1].strip()[:WIDTH]}` below its "
                f"last line, which the section does not hold), or the whole file ({ctx.tail_cut})")
    return None


def blank_line_at_cut(ctx: SectionEdit) -> str | None:
    """The merge would write a blank line above the first line (below the last) of a section cut
    there: the file may have one there already, and the client's splice would double it."""
    for added, cut, where in ((ctx.head_added, ctx.head_cut, "above its first line"),
                              (ctx.tail_added, ctx.tail_cut, "below its last line")):
        if cut and added:
            return (f"send the section with a line or two more {where}, or the whole file: the snippet adds a "
                    f"blank line {where}, where the section is cut ({cut}) and the file may have one already")
    return None


def unheld_line_at_marked_edge(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`), and the snippet's first region, after
    its leading marker (its last, before the trailing one), starts with lines the section does not
    hold there (`SectionEdit.lead_beyond_cut`): the marker may stand for lines above the section,
    those lines being the file's own beyond the cut (the end of the function above, the next
    test's decorator), which the merge would take for new code or pair with a look-alike inside
    (a test's `memo == "bus"` read as an edit of `memo == "lunch"`)."""
    if not ctx.cuts.said:
        return None
    for at_head, where in ((True, "above"), (False, "below")):
        line = ctx.lead_beyond_cut(at_head)
        if line is not None:
            return (f"send the lines {where} the section too (the snippet shows `{line.strip()[:WIDTH]}` "
                    f"{'after its first' if at_head else 'before its last'} marker, which the section does not "
                    f"hold there), or the whole file")
    return None


def marker_beyond_section_edge(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`), the snippet has a marker before its
    first line (after its last), and the answer starts (ends) with the snippet's first (last)
    lines: the marker stands for nothing in the section, so for lines beyond the cut, and the
    lines next to it may be the file's own there, paired with look-alikes at the section's edge
    (`return undefined;` / `}` of a new `if`, paired with the section's last lines)."""
    for at_head, where in ((True, "above"), (False, "below")):
        line = ctx.marker_at_edge_for_nothing(at_head) if ctx.cuts.said else None
        if line is not None:
            return (f"send the lines {where} the section too, or the whole file: the snippet's marker "
                    f"{'before' if at_head else 'after'} `{line.strip()[:WIDTH]}` stands for no line of the section "
                    f"(for lines {where} it?)")
    return None


def unmarked_start_not_held(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`), the snippet has markers but none
    before its first line (after its last), the section does not hold that line, and the answer
    does not start (end) with it: the snippet starts with lines above the section (the file's
    imports), which the merge placed inside, keeping the section's first lines above them."""
    for at_head, where in ((True, "above"), (False, "below")):
        line = ctx.unmarked_start_unheld(at_head) if ctx.cuts.said else None
        if line is not None:
            return (f"send the lines {where} the section too (the snippet {'starts' if at_head else 'ends'} with "
                    f"`{line.strip()[:WIDTH]}`, which the section does not hold), or the whole file")
    return None


def markerless_end_beyond_cut(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`), and a snippet without markers ends
    with a line the section does not hold, which the answer ends with
    (`SectionEdit.markerless_end_unheld`): the snippet restates the file past the section's last
    line, and the client's splice would hold those lines twice."""
    line = ctx.markerless_end_unheld() if ctx.cuts.said else None
    if line is None:
        return None
    return (f"send the lines below the section too (the snippet ends with `{line[:WIDTH]}`, which the section "
            "does not hold), or the whole file")


def edge_region_out_of_order(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`), and the snippet's first (last)
    region shows two lines the section holds once each in the other order: some of them are
    look-alikes that stand beyond the cut (two `@keyframes` blocks alike, the first cut by the
    section), and the merge would pair them with the section's own."""
    for at_head, where in ((True, "above"), (False, "below")):
        found = ctx.edge_region_order(at_head) if ctx.cuts.said else None
        if found is not None:
            return (f"send the lines {where} the section too, or the whole file: the snippet's "
                    f"{'first' if at_head else 'last'} region shows `{found[0][:WIDTH]}` after "
                    f"`{found[1][:WIDTH]}`, which the section holds in the other order (lines beyond the cut "
                    "that look like these?)")
    return None


def header_written_twice(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`), and the answer holds the header of a
    definition the snippet shows more often than the section does: the snippet's copy went beside
    the section's, which the section may hold only in part (a Java test cut at its last lines)."""
    header = ctx.header_twice() if ctx.cuts.said else None
    if header is None:
        return None
    return (f"send the whole of `{header[:WIDTH]}`, or the whole file: the answer would hold it twice (the snippet's "
            "copy beside the section's, which the section may hold only in part)")


def edge_line_written_twice(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`), and the answer holds twice a line
    that the snippet shows once next to a marker and the section holds once
    (`SectionEdit.edge_line_twice`): the snippet's region went beside that line instead of onto it,
    placed by look-alikes, likely because its other lines stand beyond the cut."""
    line = ctx.edge_line_twice() if ctx.cuts.said else None
    if line is None:
        return None
    return (f"send the lines around the section too, or the whole file: the answer would hold `{line[:WIDTH]}` "
            "twice, the snippet's copy beside the section's (do the snippet's other lines stand beyond the cut?)")


def definition_restated_around_head(ctx: SectionEdit) -> str | None:
    """The section starts inside a block (its first line is indented, and a less indented line
    closes the block below it), and the snippet shows a definition whole whose header the section
    does not hold and whose last lines are that block: the section starts inside the definition
    the snippet restates (a Java method whose header is above the cut, restated whole; the merge
    would write it again below its own end)."""
    if not ctx.head_cut:
        return None
    d = ctx.restated_around_head()
    if d is None:
        return None
    return (f"send the whole of `{d.header[:WIDTH]}` (the section starts inside it, at line {ctx.cuts.first + 1}), "
            f"or the whole file: the snippet shows it whole, and the section holds only its last lines "
            f"({ctx.head_cut})")


def markerless_on_broken_section(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`) that mostly fails to parse (cut inside
    a string or a block), the snippet has no markers, and the answer adds or drops blank lines
    alone: placed by its lines, not by the definitions it shows (which keep the file's spacing
    between them), the snippet's blank lines replaced the section's (a test shown whole, one blank
    line before the next where the file has two)."""
    if not (ctx.cuts.said and ctx.broken) or any(marker_flags(ctx.upd, ctx.orig)) or not ctx.blank_lines_changed():
        return None
    return ("send the section with the whole of the blocks it cuts, or the whole file: it does not parse where it is "
            "cut, so the snippet (without markers) is placed by its lines, and its blank lines would replace the "
            "section's")


def section_unchanged(ctx: SectionEdit) -> str | None:
    """The request says the original is a section (`Cuts.said`), and the answer is that section as
    it stands (blank lines aside): the lines the snippet shows are found in it but change nothing,
    so its edit is likely beyond the section, where the same lines stand (a deletion shown by two
    lines that stand apart in the file, the second beyond the cut), or applied already."""
    if not ctx.cuts.said or [x for x in ctx.merged if not is_blank(x)] != [x for x in ctx.orig if not is_blank(x)]:
        return None
    return ("send the section the snippet edits, or the whole file: the lines it shows change nothing in this "
            "section (is its edit beyond the section's lines, or applied already?)")


def code_beyond_marked_edge(ctx: SectionEdit) -> str | None:
    """The merge would write code or a blank line above the original's first line (below its last)
    that the snippet shows after a marker (before one): the marker stands for nothing there, so
    the original is likely a section of a file and the code stands beyond it, even where the
    section's edge is a clean cut (a top-level line). No whole file of the eval sets has this shape
    among its exact answers."""
    for added, marker, where in ((ctx.head_added, ctx.marker_before, "above the original's first line"),
                                 (ctx.tail_added, ctx.marker_after, "below the original's last line")):
        if not (added and marker):
            continue
        code = [x.strip() for x in added if not is_blank(x)]
        if not code:
            return (f"send the section with a line or two more {where.replace('original', 'section')}, or the "
                    f"whole file: the snippet adds a blank line {where}, beyond a marker that stands for nothing")
        line = code[0] if added is ctx.head_added else code[-1]
        return (f"send the section {'from' if added is ctx.head_added else 'through'} `{line[:WIDTH]}`, or the "
                f"whole file: the snippet shows it {where}, beyond a marker that stands for nothing there")
    return None
