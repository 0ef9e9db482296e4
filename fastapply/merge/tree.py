"""Tree-sitter placement for marker-free snippets: bare functions/methods, one whole class.

A snippet without markers is a targeted edit, not a new file: each definition it contains replaces
the definition of the same kind and name in the original (at any depth), new definitions go next to
their matched neighbours, and everything the snippet does not mention stays. A class whose snippet
lacks some of the original's members is treated member by member (its other members stay).
"""

from __future__ import annotations

from fastapply.languages import parse, unparsable
from fastapply.merge.defs import Definition, brace_off_indent, collect, flatten, restate
from fastapply.merge.result import CONFIDENCE_TREE, Placement
from fastapply.merge.splice import apply_edits
from fastapply.merge.text import dedent, indent_of, is_blank, reindent

# Wrappers that let a bare method parse as a member (pasted without its class).
_MEMBER_WRAP = {
    "javascript": ("class __Wrap__ {", "}"), "jsx": ("class __Wrap__ {", "}"),
    "typescript": ("class __Wrap__ {", "}"), "tsx": ("class __Wrap__ {", "}"),
    "java": ("class __Wrap__ {", "}"), "rust": ("impl __Wrap__ {", "}"),
    "cpp": ("class __Wrap__ {", "};"),
}


def _parse_snippet(lines: list[str], lang: str) -> tuple[list[Definition], list[str], int] | None:
    """Definitions of a dedented snippet, its lines, and the line offset of the snippet inside
    the parsed text (1 when wrapped in a class)."""
    src = "\n".join(lines) + "\n"
    tree = parse(lang, src)
    if tree is not None and not _broken(tree, src):
        defs = collect(tree, src.encode("utf-8"))
        if defs and _covers(defs, lines, 0):
            return defs, lines, 0
    wrap = _MEMBER_WRAP.get(lang)
    if wrap:
        wrapped = [wrap[0]] + lines + [wrap[1]]
        src = "\n".join(wrapped) + "\n"
        tree = parse(lang, src)
        if tree is not None and not _broken(tree, src):
            top = collect(tree, src.encode("utf-8"))
            if len(top) == 1 and top[0].members and _covers(top[0].members, lines, 1):
                return top[0].members, wrapped, 1
    return None


def _broken(tree, src: str) -> bool:
    """Errors beyond a grammar gap (see languages.unparsable); a snippet that pastes several
    definitions is still best split by the tree when a newer syntax leaves a small error node."""
    return tree.root_node.type == "ERROR" or unparsable(tree, src)


def parse_definitions(lines: list[str], lang: str) -> list[Definition] | None:
    """Definitions in a dedented fragment; [] when it parses as plain statements; None when the
    language has no grammar."""
    if parse(lang, "") is None:
        return None
    src = "\n".join(lines) + "\n"
    tree = parse(lang, src)
    if not tree.root_node.has_error:  # valid as it stands: do not read `if (x) {` as a method
        return collect(tree, src.encode("utf-8"))
    parsed = _parse_snippet(lines, lang)
    return parsed[0] if parsed else []


def _covers(defs: list[Definition], lines: list[str], offset: int) -> bool:
    """Every non-blank snippet line belongs to one of the definitions (no loose statements)."""
    covered = set()
    for d in defs:
        covered.update(range(d.start - offset, d.end - offset + 1))
    return all(i in covered for i, ln in enumerate(lines) if not is_blank(ln))


def _match(u: Definition, pool: list[Definition]) -> list[Definition]:
    same = [o for o in pool if o.kind == u.kind and o.name == u.name]
    if len(same) > 1:
        exact = [o for o in same if o.header == u.header]
        if exact:
            same = exact
    return same


def merge_marker_free(orig_lines: list[str], upd_lines: list[str], lang: str | None) -> Placement | None:
    if lang is None or parse(lang, "") is None:
        return None
    src = "\n".join(orig_lines) + "\n"
    t_orig = parse(lang, src)
    o_top = collect(t_orig, src.encode("utf-8"))
    if not o_top:
        return None
    ded, _ = dedent(upd_lines)
    parsed = _parse_snippet(ded, lang)
    if parsed is None:
        return None
    u_defs, u_src_lines, offset = parsed

    edits: list[tuple[int, int, list[str]]] = []  # (orig start, orig end exclusive, new lines)
    problems: list[str] = []
    if not _plan(u_defs, u_src_lines, offset, flatten(o_top), orig_lines, edits, problems):
        return Placement(None, problems, final=bool(problems))
    out = apply_edits(orig_lines, sorted(edits, key=lambda e: (e[0], e[1])))
    if out is None:
        return Placement(None, ["the snippet's definitions overlap in the original"], final=True)
    return Placement(out, [], CONFIDENCE_TREE)


def _plan(u_defs, u_lines, offset, pool, orig_lines, edits, problems) -> bool:
    """Add edits for u_defs matched against pool; False (with problems) when placement is unsure."""
    matched: list[tuple[Definition, Definition | None]] = []
    for u in u_defs:
        cands = _match(u, pool)
        if len(cands) > 1:
            problems.append(f"`{u.name}` is defined {len(cands)} times in the original; cannot tell which one")
            return False
        matched.append((u, cands[0] if cands else None))
    if not any(o for _, o in matched):
        return False  # nothing to anchor on: not a refusal of its own, the line fallback may place it
    last_end = -1
    for u, o in matched:
        if o is None:
            continue
        if o.start <= last_end:
            problems.append("the snippet's definitions are in a different order than in the original")
            return False
        last_end = o.end
    for u, _ in matched:
        if brace_off_indent(u_lines, u):
            problems.append(f"the closing brace of `{u.name}` is not indented like its header: a line missing?")
            return False
    for u, o in matched:
        u_text = u_lines[u.start:u.end + 1]
        if o is None:
            continue
        if u.kind in ("type", "impl", "test") and o.members and u.members:
            u_names = {(m.kind, m.name) for m in u.members}
            missing = [m for m in o.members if (m.kind, m.name) not in u_names]
            if missing:
                # a partial class: edit the members it shows, keep the others
                if u_lines[u.node_start].strip() != orig_lines[o.node_start].strip():
                    problems.append(f"`{u.name}` is shown partially with a changed header")
                    return False
                if not _plan(u.members, u_lines, offset, flatten(o.members), orig_lines, edits, problems):
                    if not problems:
                        problems.append(f"cannot place the members shown for `{u.name}`")
                    return False
                continue
        shifted = reindent(u_text, u_lines[u.node_start], orig_lines[o.node_start])
        if shifted is None:
            problems.append(f"cannot re-indent `{u.name}` to its place in the original")
            return False
        edits.append((o.start, o.end + 1, restate(u, shifted, o, orig_lines)))
    # new definitions: next to the nearest matched neighbour, with the snippet's spacing
    for n, (u, o) in enumerate(matched):
        if o is not None:
            continue
        prev = next(((pu, po) for pu, po in reversed(matched[:n]) if po is not None), None)
        nxt = next(((nu, no) for nu, no in matched[n + 1:] if no is not None), None)
        u_text = u_lines[u.start:u.end + 1]
        if prev is not None:
            pu, po = prev
            shifted = reindent(u_text, u_lines[u.node_start], _indent_like(orig_lines[po.node_start], u_lines, pu, u))
            gap = u_lines[pu.end + 1:u.start]
            if shifted is None:
                problems.append(f"cannot re-indent new `{u.name}`")
                return False
            edits.append((po.end + 1, po.end + 1, [ln if ln.strip() else "" for ln in gap] + shifted))
        elif nxt is not None:
            nu, no = nxt
            shifted = reindent(u_text, u_lines[u.node_start], _indent_like(orig_lines[no.node_start], u_lines, nu, u))
            gap = u_lines[u.end + 1:nu.start]
            if shifted is None:
                problems.append(f"cannot re-indent new `{u.name}`")
                return False
            edits.append((no.start, no.start, shifted + [ln if ln.strip() else "" for ln in gap]))
    return True


def _indent_like(orig_neighbour: str, u_lines: list[str], neighbour: Definition, u: Definition) -> str:
    """A line whose indentation is where `u` goes: the neighbour's original indentation, adjusted
    by how `u` is indented relative to the neighbour in the snippet."""
    base = indent_of(orig_neighbour)
    rel_n, rel_u = indent_of(u_lines[neighbour.node_start]), indent_of(u_lines[u.node_start])
    if rel_u == rel_n:
        return base + "x"
    if rel_u.startswith(rel_n):
        return base + rel_u[len(rel_n):] + "x"
    return base + "x"
