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

from fastapply.languages import parse
from fastapply.markers import marker_flags
from fastapply.merge.defs import Definition, brace_off_indent, cut_inside_prefix, iter_children, restate
from fastapply.merge.text import indent_of, is_blank, reindent
from fastapply.merge.result import CONFIDENCE_MEMBERS, Placement
from fastapply.merge.splice import apply_edits


class Refuse(Exception):
    pass


def _items(container, src: bytes, markers: set[int]) -> list:
    """('marker', row) / ('def', Definition) / ('other', node) for a container's children."""
    return list(iter_children(container, src, markers))


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
    edits: list[tuple[int, int, list[str]]] = []
    top = _items(u_tree.root_node, u_src_b, markers)
    covered = set(markers)
    try:
        _align(top, o_top, None, orig_lines, upd_lines, u_src_b, markers, edits, covered, lang != "python")
    except Refuse as e:
        return Placement(None, [str(e)])
    # every snippet line must have been placed: comments cut off by a marker, statements, ...
    if any(not is_blank(ln) and i not in covered for i, ln in enumerate(upd_lines)):
        return Placement(None, ["the snippet has lines the member alignment cannot place"])
    if not edits:
        return None
    out = apply_edits(orig_lines, sorted(edits, key=lambda e: (e[0], e[1])))
    if out is None:
        return Placement(None, ["member edits overlap"])
    return Placement(out, [], CONFIDENCE_MEMBERS)


def _restate_gap(u_prev: Definition, u: Definition, o_prev: Definition, start: int, orig: list[str],
                 upd: list[str], edits: list) -> None:
    """Two members shown back to back: the blank lines between them are the snippet's (an edit may
    add or remove them), when both gaps hold nothing but blank lines."""
    u_gap, o_gap = upd[u_prev.end + 1:u.start], orig[o_prev.end + 1:start]
    if len(u_gap) != len(o_gap) and all(is_blank(x) for x in u_gap + o_gap):
        edits.append((o_prev.end + 1, start, [""] * len(u_gap)))


def _text(u_lines: list[str], d: Definition) -> list[str]:
    return u_lines[d.start:d.end + 1]


def _has_markers_inside(d: Definition, markers: set[int]) -> bool:
    return any(d.start < m < d.end for m in markers)


def _align(items, o_members: list[Definition], container: Definition | None, orig: list[str], upd: list[str],
           u_src: bytes, markers: set[int], edits: list, covered: set[int], brace: bool = True) -> None:
    for kind, x in items:
        if kind == "other":
            raise Refuse(f"the snippet has a statement the member alignment cannot place "
                         f"(line {x.start_point.row + 1})")
    # match named members
    matched: dict[int, Definition] = {}
    for n, (kind, u) in enumerate(items):
        if kind != "def":
            continue
        same = [o for o in o_members if o.kind == u.kind and o.name == u.name]
        if len(same) > 1:
            same = [o for o in same if o.header == u.header] or same
        if len(same) > 1:
            raise Refuse(f"`{u.name}` occurs {len(same)} times in the original")
        if same:
            matched[n] = same[0]
    order = [o_members.index(o) for _, o in sorted(matched.items())]
    if order != sorted(order) or len(set(order)) != len(order):
        raise Refuse("the snippet names members in another order than the original")
    if container is not None and not matched and not any(k == "marker" for k, _ in items):
        raise Refuse(f"nothing in the snippet's `{container.name}` matches its original members")
    member_indent = indent_of(orig[o_members[0].node_start]) if o_members else None

    cursor = 0  # next original member not yet kept, replaced or deleted
    marker_open = False
    last: Definition | None = None  # last original member emitted (kept or replaced)

    def keep_until(k: int) -> None:
        nonlocal cursor, last
        if k > cursor:
            last = o_members[k - 1]
        cursor = max(cursor, k)

    def delete_until(k: int) -> None:
        nonlocal cursor
        run = o_members[cursor:k]
        if run and container is None and (last is None or k >= len(o_members)):
            raise Refuse("no marker at the snippet's start or end: keep or delete the file's other definitions?")
        if run:
            start = (last.end + 1) if last is not None else run[0].start
            end = run[-1].end + 1
            if last is None:  # also the blank lines after the run
                while end < len(orig) and is_blank(orig[end]) and (k >= len(o_members) or end < o_members[k].start):
                    end += 1
            for line_no in range(start, end):
                if not is_blank(orig[line_no]) and not any(d.start <= line_no <= d.end for d in run):
                    raise Refuse("deleting members would also delete other code between them")
            edits.append((start, end, []))
        cursor = max(cursor, k)

    shown_prev: Definition | None = None  # the snippet's member right before, when it was matched
    for n, (kind, u) in enumerate(items):
        if kind == "marker":
            marker_open, shown_prev = True, None
            continue
        o = matched.get(n)
        if o is not None:
            k = o_members.index(o)
            (keep_until if marker_open else delete_until)(k)
            marker_open = False
            if u.members and o.members and _has_markers_inside(u, markers) and u.body is not None:
                inner = _items(u.body, u_src, markers)
                body_first = u.body.start_point.row
                covered.update(range(u.start, body_first + 1))  # the header
                covered.add(u.end)  # the closing line
                _align(inner, o.members, o, orig, upd, u_src, markers, edits, covered, brace)
            elif _has_markers_inside(u, markers):
                raise Refuse(f"`{u.name}` has a marker inside that the member alignment cannot place")
            else:
                covered.update(range(u.start, u.end + 1))
                nxt = items[n + 1][0] if n + 1 < len(items) else None
                if brace_off_indent(upd, u):
                    raise Refuse(f"the closing brace of `{u.name}` is not indented like its header: a line missing?")
                closed = nxt == "def" or (brace and upd[u.end].strip()[:1] == "}")
                if nxt == "marker":  # a marker indented deeper than the header is still inside it
                    m_row = items[n + 1][1]
                    if len(indent_of(upd[m_row])) > len(indent_of(upd[u.node_start])):
                        closed = False
                if not closed:  # e.g. a Python def followed by a marker: it may go on in the original
                    raise Refuse(f"`{u.name}` is not shown to its end")
                new = reindent(_text(upd, u), upd[u.node_start], orig[o.node_start])
                if new is None:
                    raise Refuse(f"cannot re-indent `{u.name}`")
                # Comments and attributes that open the snippet or follow a marker may be the cut-off
                # end of the original's: when they are its last lines, the marker stands for the rest.
                u_pre = [x.strip() for x in upd[u.start:u.node_start]]
                o_pre = [x.strip() for x in orig[o.start:o.node_start]]
                after_marker = (u.start - 1) in markers
                cut_off = cut_inside_prefix(u, upd[u.start:], o, orig)  # restate() keeps the original's
                if u_pre != o_pre and not cut_off and u.start < u.attr_start and \
                        (after_marker or all(is_blank(x) for x in upd[:u.start])):
                    raise Refuse(f"the comment above `{u.name}` starts the snippet or follows a marker and "
                                 "differs from the original's: is it shown whole?")
                edits.append((o.start, o.end + 1, restate(u, new, o, orig)))
                if shown_prev is not None and last is not None and o_members.index(last) == k - 1:
                    _restate_gap(shown_prev, u, last, o.start, orig, upd, edits)
            last, cursor, shown_prev = o, k + 1, u
            continue
        shown_prev = None
        # a new member
        rest = items[n + 1:]
        if marker_open:
            if container is None:
                raise Refuse(f"new `{u.name}` follows a marker at the top level: its place in the file is unknown")
            if any(k2 != "def" or (n + 1 + j) in matched for j, (k2, _) in enumerate(rest)):
                raise Refuse(f"new `{u.name}` sits between a marker and more of the snippet: its place among the "
                             "elided members is unknown")
            keep_until(len(o_members))
            marker_open = False
        elif rest and rest[-1][0] == "marker" and all(k2 == "def" and (n + 1 + j) not in matched
                                                      for j, (k2, _) in enumerate(rest[:-1])):
            raise Refuse(f"new `{u.name}` is followed by a marker: it could go before or after the elided members")
        anchor_line = orig[last.node_start] if last is not None else (
            orig[o_members[cursor].node_start] if cursor < len(o_members) else None)
        if anchor_line is None and member_indent is None:
            raise Refuse(f"no original member to place new `{u.name}` next to")
        target = (member_indent if anchor_line is None else indent_of(anchor_line)) + "x"
        new = reindent(_text(upd, u), upd[u.node_start], target)
        if new is None:
            raise Refuse(f"cannot re-indent new `{u.name}`")
        covered.update(range(u.start, u.end + 1))
        if last is not None:
            edits.append((last.end + 1, last.end + 1, [""] + new))
        elif container is not None:
            close = container.end
            edits.append((close, close, new + [""] if cursor < len(o_members) else new))
        else:
            raise Refuse(f"no place for new top-level `{u.name}`")
    (keep_until if marker_open else delete_until)(len(o_members))
