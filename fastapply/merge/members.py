"""Tree fallback for snippets with markers inside a class: align the snippet's members with the
original's by kind and name.

Used when line anchors cannot place a region (a method whose signature changed, such as
`add(number)` -> `static add(a, b)`, or a new method whose only neighbours are a marker and the
class's closing brace). Within one container, reading the snippet's items in order:
- a marker keeps the original members up to the next member the snippet names;
- a named member replaces the original member of the same kind and name;
- original members between two named members with no marker between them are deleted, as are
  those before the first / after the last item when no marker stands there;
- a new member goes where its neighbours put it; next to a marker whose other side is open, its
  place is unknown and the merge refuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapply.languages import parse
from fastapply.markers import marker_flags
from fastapply.merge.checks import (
    CONTAINER_CHECKS,
    DELETE_CHECKS,
    MEMBER_CHECKS,
    NEW_MEMBER_CHECKS,
    DeletedRun,
    MemberList,
    NewMember,
    ShownMember,
    first_refusal,
)
from fastapply.merge.defs import Definition, iter_children, restate, same_definitions
from fastapply.merge.result import CONFIDENCE_MEMBERS, Placement
from fastapply.merge.splice import apply_edits
from fastapply.merge.text import indent_of, is_blank, reindent


class Refuse(Exception):
    pass


def _refuse_if(checks, ctx) -> None:
    reason = first_refusal(checks, ctx)
    if reason:
        raise Refuse(reason)


def _items(container, src: bytes, markers: set[int]) -> list:
    """('marker', row) / ('def', Definition) / ('other', node) for a container's children."""
    return list(iter_children(container, src, markers))


@dataclass
class _Snippet:
    """What the alignment of every container shares: the texts, and what it has produced so far."""

    orig: list[str]
    upd: list[str]
    u_src: bytes
    markers: set[int]  # snippet rows that are markers
    brace: bool  # the language closes definitions with `}` (a shown `}` ends a member)
    edits: list[tuple[int, int, list[str]]] = field(default_factory=list)  # (orig start, end exclusive, lines)
    covered: set[int] = field(default_factory=set)  # snippet rows placed


def merge_members(orig_lines: list[str], upd_lines: list[str], lang: str | None) -> Placement | None:
    if lang is None or parse(lang, "") is None:
        return None
    u_src = "\n".join(upd_lines) + "\n"
    u_tree = parse(lang, u_src)
    if u_tree is None or u_tree.root_node.has_error:  # only a snippet that parses cleanly is aligned
        return None
    o_src = "\n".join(orig_lines) + "\n"
    o_tree = parse(lang, o_src)
    flags = marker_flags(upd_lines, orig_lines)
    markers = {i for i, f in enumerate(flags) if f}
    if not markers:
        return None
    o_src_b, u_src_b = o_src.encode("utf-8"), u_src.encode("utf-8")
    # with their comments attached, as the snippet's items are
    o_top = [x for kind, x in iter_children(o_tree.root_node, o_src_b) if kind == "def"]
    snip = _Snippet(orig_lines, upd_lines, u_src_b, markers, lang != "python", covered=set(markers))
    try:
        _align(snip, _items(u_tree.root_node, u_src_b, markers), o_top, None)
    except Refuse as e:
        return Placement(None, [str(e)])
    # every snippet line must have been placed: comments cut off by a marker, statements, ...
    if any(not is_blank(ln) and i not in snip.covered for i, ln in enumerate(upd_lines)):
        return Placement(None, ["the snippet has lines the member alignment cannot place"])
    if not snip.edits:
        return None
    out = apply_edits(orig_lines, sorted(snip.edits, key=lambda e: (e[0], e[1])))
    if out is None:
        return Placement(None, ["member edits overlap"])
    return Placement(out, [], CONFIDENCE_MEMBERS)


def _align(snip: _Snippet, items: list, o_members: list[Definition], container: Definition | None) -> None:
    """Align one container's snippet items with its original members, adding edits to `snip`."""
    matched, duplicate = _match_members(items, o_members)
    _refuse_if(CONTAINER_CHECKS, MemberList(items, o_members, container, matched, duplicate))
    walk = _Walk(snip, items, o_members, container, matched)
    for n, (kind, x) in enumerate(items):
        if kind == "marker":
            walk.marker_open, walk.shown_prev = True, None
        elif n in matched:
            walk.replace_member(n, x, matched[n])
        else:
            walk.insert_member(n, x)
    walk.keep_or_delete_until(len(o_members))


def _match_members(items: list, o_members: list[Definition]) -> tuple[dict[int, Definition], tuple | None]:
    """The original member each snippet definition names (by item index), and the first one that
    names several: (definition, how many)."""
    matched: dict[int, Definition] = {}
    for n, (kind, u) in enumerate(items):
        if kind != "def":
            continue
        same = same_definitions(u, o_members)
        if len(same) > 1:
            return matched, (u, len(same))
        if same:
            matched[n] = same[0]
    return matched, None


class _Walk:
    """One container's snippet items in order, against its original members."""

    def __init__(self, snip: _Snippet, items: list, o_members: list[Definition], container: Definition | None,
                 matched: dict[int, Definition]):
        self.snip, self.items, self.o_members, self.container, self.matched = snip, items, o_members, container, matched
        self.member_indent = indent_of(snip.orig[o_members[0].node_start]) if o_members else None
        self.cursor = 0  # next original member not yet kept, replaced or deleted
        self.marker_open = False  # a marker since the last member: it keeps what it stands for
        self.last: Definition | None = None  # last original member emitted (kept or replaced)
        self.shown_prev: Definition | None = None  # the snippet's member right before, when it was matched

    def keep_or_delete_until(self, k: int) -> None:
        """Original members before k that the snippet skips: kept after a marker, else deleted."""
        if self.marker_open:
            if k > self.cursor:
                self.last = self.o_members[k - 1]
        else:
            run = self.o_members[self.cursor:k]
            if run:
                deleted = DeletedRun(run, self.last, k, self.o_members, self.container, self.snip.orig)
                _refuse_if(DELETE_CHECKS, deleted)
                self.snip.edits.append((deleted.start, deleted.end, []))
        self.cursor = max(self.cursor, k)

    def replace_member(self, n: int, u: Definition, o: Definition) -> None:
        """A snippet member that names original member `o`: aligned inside, or replacing it."""
        snip = self.snip
        k = self.o_members.index(o)
        self.keep_or_delete_until(k)
        self.marker_open = False
        if u.members and o.members and any(u.start < m < u.end for m in snip.markers) and u.body is not None:
            snip.covered.update(range(u.start, u.body.start_point.row + 1))  # the header
            snip.covered.add(u.end)  # the closing line
            _align(snip, _items(u.body, snip.u_src, snip.markers), o.members, o)
        else:
            shown = ShownMember(u, o, self.items[n + 1] if n + 1 < len(self.items) else None, snip.upd, snip.orig,
                                snip.markers, snip.brace)
            _refuse_if(MEMBER_CHECKS, shown)
            snip.covered.update(range(u.start, u.end + 1))
            snip.edits.append((o.start, o.end + 1, restate(u, shown.new_lines, o, snip.orig)))
            if self.shown_prev is not None and self.last is not None and self.o_members.index(self.last) == k - 1:
                _restate_gap(self.shown_prev, u, self.last, o.start, snip.orig, snip.upd, snip.edits)
        self.last, self.cursor, self.shown_prev = o, k + 1, u

    def insert_member(self, n: int, u: Definition) -> None:
        """A new snippet member: placed next to its neighbours, when they say where."""
        self.shown_prev = None
        rest = [(kind, n + 1 + j in self.matched) for j, (kind, _) in enumerate(self.items[n + 1:])]
        _refuse_if(NEW_MEMBER_CHECKS, NewMember(u, rest, self.marker_open, self.container))
        if self.marker_open:
            self.keep_or_delete_until(len(self.o_members))
            self.marker_open = False
        snip, last = self.snip, self.last
        anchor_line = snip.orig[last.node_start] if last is not None else (
            snip.orig[self.o_members[self.cursor].node_start] if self.cursor < len(self.o_members) else None)
        if anchor_line is None and self.member_indent is None:
            raise Refuse(f"no original member to place new `{u.name}` next to")
        target = (self.member_indent if anchor_line is None else indent_of(anchor_line)) + "x"
        new = reindent(snip.upd[u.start:u.end + 1], snip.upd[u.node_start], target)
        if new is None:
            raise Refuse(f"cannot re-indent new `{u.name}`")
        snip.covered.update(range(u.start, u.end + 1))
        if last is not None:
            snip.edits.append((last.end + 1, last.end + 1, [""] + new))
        elif self.container is not None:
            close = self.container.end
            snip.edits.append((close, close, new + [""] if self.cursor < len(self.o_members) else new))
        else:
            raise Refuse(f"no place for new top-level `{u.name}`")


def _restate_gap(u_prev: Definition, u: Definition, o_prev: Definition, start: int, orig: list[str],
                 upd: list[str], edits: list) -> None:
    """Two members shown back to back: the blank lines between them are the snippet's (an edit may
    add or remove them), when both gaps hold nothing but blank lines."""
    u_gap, o_gap = upd[u_prev.end + 1:u.start], orig[o_prev.end + 1:start]
    if len(u_gap) != len(o_gap) and all(is_blank(x) for x in u_gap + o_gap):
        edits.append((o_prev.end + 1, start, [""] * len(u_gap)))
