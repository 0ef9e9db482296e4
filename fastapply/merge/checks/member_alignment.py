"""Rules for the member alignment (`members.py`): a container's members matched by kind and name.

By context: the container (`MemberList`: statements, ambiguous or reordered names, nothing
matched), a run of members deleted (`DeletedRun`), a member replaced (`ShownMember`: markers
inside, not shown to its end, comments and attributes left out or cut) and a new member
(`NewMember`: its place among elided members).
"""

from __future__ import annotations

from fastapply.merge.checks.base import DeletedRun, MemberList, NewMember, ShownMember
from fastapply.merge.defs import brace_off_indent, cut_inside_prefix
from fastapply.merge.text import indent_of, is_blank


def statement_among_members(ms: MemberList) -> str | None:
    """A statement among a container's members: the alignment places definitions only."""
    for kind, x in ms.items:
        if kind == "other":
            return f"the snippet has a statement the member alignment cannot place (line {x.start_point.row + 1})"
    return None


def ambiguous_member(ms: MemberList) -> str | None:
    """A snippet member names an original member that occurs several times: which one is meant is unknown."""
    if ms.duplicate is not None:
        u, n = ms.duplicate
        return f"`{u.name}` occurs {n} times in the original"
    return None


def members_reordered(ms: MemberList) -> str | None:
    """The original members the snippet names come in another order (or one is named twice): a move the
    alignment does not place."""
    order = [ms.o_members.index(o) for _, o in sorted(ms.matched.items())]
    if order != sorted(order) or len(set(order)) != len(order):
        return "the snippet names members in another order than the original"
    return None


def nothing_matches(ms: MemberList) -> str | None:
    """A container shown without markers, none of whose members names an original member: no anchor at all."""
    if ms.container is not None and not ms.matched and not any(k == "marker" for k, _ in ms.items):
        return f"nothing in the snippet's `{ms.container.name}` matches its original members"
    return None


def unmarked_top_level_edge(d: DeletedRun) -> str | None:
    """Top-level definitions skipped before the snippet's first or after its last member with no marker
    there: kept or deleted?"""
    if d.container is None and (d.last is None or d.k >= len(d.o_members)):
        return "no marker at the snippet's start or end: keep or delete the file's other definitions?"
    return None


def deletes_code_between(d: DeletedRun) -> str | None:
    """Deleting the skipped members would delete other code between them too (a comment, a statement), which
    the snippet does not show going."""
    for line_no in range(d.start, d.end):
        if not is_blank(d.orig[line_no]) and not any(m.start <= line_no <= m.end for m in d.run):
            return "deleting members would also delete other code between them"
    return None


def marker_inside_member(m: ShownMember) -> str | None:
    """A member shown with a marker inside it: the alignment replaces whole members only."""
    if any(m.u.start < row < m.u.end for row in m.markers):
        return f"`{m.u.name}` has a marker inside that the member alignment cannot place"
    return None


def closing_brace_off_indent(m: ShownMember) -> str | None:
    """A member's closing brace is not indented like its header: the snippet probably lost a line, and the
    member is not shown whole."""
    if brace_off_indent(m.upd, m.u):
        return f"the closing brace of `{m.u.name}` is not indented like its header: a line missing?"
    return None


def member_not_shown_to_its_end(m: ShownMember) -> str | None:
    """A member the snippet does not show to its end: a Python `def` followed by a marker may go on
    in the original, and so may any member followed by a marker indented deeper than its header
    (still inside it). A member is shown to its end when the next item is another member, or, in a
    brace language, when its last line is its `}`."""
    u, upd = m.u, m.upd
    nxt = m.next_item[0] if m.next_item is not None else None
    closed = nxt == "def" or (m.brace and upd[u.end].strip()[:1] == "}")
    if nxt == "marker":  # a marker indented deeper than the header is still inside it
        if len(indent_of(upd[m.next_item[1]])) > len(indent_of(upd[u.node_start])):
            closed = False
    return None if closed else f"`{u.name}` is not shown to its end"


def member_not_reindentable(m: ShownMember) -> str | None:
    """The member's lines cannot be re-indented to the original member's depth (a line less indented than
    its header)."""
    return f"cannot re-indent `{m.u.name}`" if m.new_lines is None else None


def cut_comment_differs(m: ShownMember) -> str | None:
    """Comments and attributes that open the snippet or follow a marker may be the cut-off end of
    the original's: when they are its last lines, the marker stands for the rest (restate() keeps
    the original's). Otherwise they must equal the original's."""
    u, o, upd = m.u, m.o, m.upd
    u_pre = [x.strip() for x in upd[u.start:u.node_start]]
    o_pre = [x.strip() for x in m.orig[o.start:o.node_start]]
    after_marker = (u.start - 1) in m.markers
    cut_off = cut_inside_prefix(u, upd[u.start:], o, m.orig)
    if u_pre != o_pre and not cut_off and u.start < u.attr_start and \
            (after_marker or all(is_blank(x) for x in upd[:u.start])):
        return (f"the comment above `{u.name}` starts the snippet or follows a marker and "
                "differs from the original's: is it shown whole?")
    return None


def attributes_left_out(m: ShownMember) -> str | None:
    """The snippet shows the member bare while the original's has attributes (`#[test]`,
    `@Override`), and right above it the snippet shows code, not a marker: read that way the
    attributes are deleted; read as a bare member (which keeps them) they are elided. Refuse."""
    u, o = m.u, m.o
    if o.node_start <= o.attr_start or u.node_start > u.attr_start or not _below_shown_code(m):
        return None
    return (f"`{u.name}` is shown without the original's `{m.orig[o.attr_start].strip()[:40]}` and right below "
            "other code: are its attributes deleted, or left out?")


def comments_left_out(m: ShownMember) -> str | None:
    """The same for comments: the snippet shows the member with no comment above it while the
    original's has one, and right above it the snippet shows code. Read line by line the comment
    is deleted (the two lines stand together); read as a bare member (which keeps it) it is
    elided. Refuse (held-out fuzz seed 15497: a doc comment deleted between two methods)."""
    u, o = m.u, m.o
    if o.attr_start <= o.start or u.attr_start > u.start or not _below_shown_code(m):
        return None
    return (f"`{u.name}` is shown without the original's comment `{m.orig[o.start].strip()[:40]}` and right "
            "below other code: is the comment deleted, or left out?")


def _below_shown_code(m: ShownMember) -> bool:
    """Right above the member the snippet shows code (its nearest non-blank line is no marker)."""
    above = next((row for row in range(m.u.start - 1, -1, -1) if not is_blank(m.upd[row])), None)
    return above is not None and above not in m.markers


def new_member_after_top_level_marker(m: NewMember) -> str | None:
    """A new top-level definition right after a marker: its place in the file is unknown."""
    if m.marker_open and m.container is None:
        return f"new `{m.u.name}` follows a marker at the top level: its place in the file is unknown"
    return None


def new_member_among_elided(m: NewMember) -> str | None:
    """A new member between a marker and more of the snippet (a marker, or a member the original has): its
    place among the elided members is unknown."""
    if m.marker_open and any(kind != "def" or named for kind, named in m.rest):
        return (f"new `{m.u.name}` sits between a marker and more of the snippet: its place among the "
                "elided members is unknown")
    return None


def new_member_before_marker(m: NewMember) -> str | None:
    """A new member followed only by other new members and then a marker: before or after the elided
    members?"""
    if not m.marker_open and m.rest and m.rest[-1][0] == "marker" and \
            all(kind == "def" and not named for kind, named in m.rest[:-1]):
        return f"new `{m.u.name}` is followed by a marker: it could go before or after the elided members"
    return None
