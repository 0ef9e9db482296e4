"""Tree-sitter placement for marker-free snippets: bare functions/methods, one whole class.

A snippet without markers is a targeted edit, not a new file: each definition it contains replaces
the definition of the same kind and name in the original (at any depth), new definitions go next to
their matched neighbours, and everything the snippet does not mention stays. A class whose snippet
lacks some of the original's members is treated member by member (its other members stay).
"""

from __future__ import annotations

from fastapply.languages import parse
from fastapply.merge.checks import DEFINITION_CHECKS, TREE_CHECKS, DefinitionMatch, ShownDefinition, first_refusal
from fastapply.merge.defs import Definition, collect, flatten, parse_snippet, restate, same_definitions
from fastapply.merge.result import CONFIDENCE_TREE, Placement
from fastapply.merge.splice import apply_edits
from fastapply.merge.text import dedent, indent_of, reindent

def merge_marker_free(orig_lines: list[str], upd_lines: list[str], lang: str | None) -> Placement | None:
    if lang is None or parse(lang, "") is None:
        return None
    src = "\n".join(orig_lines) + "\n"
    t_orig = parse(lang, src)
    o_top = collect(t_orig, src.encode("utf-8"))
    if not o_top:
        return None
    ded, _ = dedent(upd_lines)
    parsed = parse_snippet(ded, lang)
    if parsed is None:
        return None
    u_defs, u_src_lines, offset = parsed

    edits: list[tuple[int, int, list[str]]] = []  # (orig start, orig end exclusive, new lines)
    problems: list[str] = []
    if not _plan(u_defs, u_src_lines, flatten(o_top), orig_lines, edits, problems):
        return Placement(None, problems, final=bool(problems))
    out = apply_edits(orig_lines, sorted(edits, key=lambda e: (e[0], e[1])))
    if out is None:
        return Placement(None, ["the snippet's definitions overlap in the original"], final=True)
    return Placement(out, [], CONFIDENCE_TREE)


def _plan(u_defs: list[Definition], u_lines: list[str], pool: list[Definition], orig_lines: list[str],
          edits: list[tuple[int, int, list[str]]], problems: list[str]) -> bool:
    """Add edits for u_defs matched against pool; False (with problems) when placement is unsure."""
    match = _match_definitions(u_defs, pool, u_lines, orig_lines)
    if match.duplicate is None and not any(o for _, o in match.matched):
        return False  # nothing to anchor on: not a refusal of its own, the line fallback may place it
    refusal = first_refusal(TREE_CHECKS, match)
    if refusal:
        problems.append(refusal)
        return False
    for u, o in match.matched:
        if o is not None and not _replace(u, o, u_lines, orig_lines, edits, problems):
            return False
    # new definitions: next to the nearest matched neighbour, with the snippet's spacing
    for n, (u, o) in enumerate(match.matched):
        if o is None and not _insert_new(n, u, match.matched, u_lines, orig_lines, edits, problems):
            return False
    return True


def _match_definitions(u_defs: list[Definition], pool: list[Definition], u_lines: list[str],
                       orig_lines: list[str]) -> DefinitionMatch:
    """The original definition each snippet definition names (None: a new one), up to the first
    that names several."""
    matched: list[tuple[Definition, Definition | None]] = []
    for u in u_defs:
        cands = same_definitions(u, pool)
        if len(cands) > 1:
            return DefinitionMatch(matched, (u, len(cands)), u_lines, orig_lines)
        matched.append((u, cands[0] if cands else None))
    return DefinitionMatch(matched, None, u_lines, orig_lines)


def _replace(u: Definition, o: Definition, u_lines: list[str], orig_lines: list[str],
             edits: list[tuple[int, int, list[str]]], problems: list[str]) -> bool:
    """The snippet's `u` replaces the original's `o`; a partial class edits only the members it shows."""
    shown = ShownDefinition(u, o, u_lines, orig_lines)
    refusal = first_refusal(DEFINITION_CHECKS, shown)
    if refusal:
        problems.append(refusal)
        return False
    if shown.partial:  # keep the members it does not show
        if not _plan(u.members, u_lines, flatten(o.members), orig_lines, edits, problems):
            if not problems:
                problems.append(f"cannot place the members shown for `{u.name}`")
            return False
        return True
    shifted = reindent(u_lines[u.start:u.end + 1], _indented_line(u, u_lines), _indented_line(o, orig_lines))
    if shifted is None:
        problems.append(f"cannot re-indent `{u.name}` to its place in the original")
        return False
    edits.append((o.start, o.end + 1, restate(u, shifted, o, orig_lines)))
    return True


def _indented_line(d: Definition, lines: list[str]) -> str:
    """The line whose indentation is the definition's: its first line, unless the node starts past
    that line's indentation (a section cut inside a doc comment parses the comment's words as the
    start of the method below it), then the line of its signature."""
    line = lines[d.node_start]
    start = getattr(d.node, "start_point", None)
    if start is None or start[1] <= len(indent_of(line)) or not d.signature:
        return line
    return next((x for x in lines[d.node_start:d.end + 1] if x.strip() == d.signature), line)


def _insert_new(n: int, u: Definition, matched: list[tuple[Definition, Definition | None]], u_lines: list[str],
                orig_lines: list[str], edits: list[tuple[int, int, list[str]]], problems: list[str]) -> bool:
    """New definition `u` (the n-th) goes after its nearest matched neighbour above, else before
    the one below, with the blank lines the snippet has between them."""
    prev = next(((pu, po) for pu, po in reversed(matched[:n]) if po is not None), None)
    nxt = next(((nu, no) for nu, no in matched[n + 1:] if no is not None), None)
    if prev is None and nxt is None:
        return True
    nu, no = prev if prev is not None else nxt
    shifted = reindent(u_lines[u.start:u.end + 1], u_lines[u.node_start],
                       _indent_like(orig_lines[no.node_start], u_lines, nu, u))
    if shifted is None:
        problems.append(f"cannot re-indent new `{u.name}`")
        return False
    if prev is not None:
        gap = u_lines[nu.end + 1:u.start]
        edits.append((no.end + 1, no.end + 1, [ln if ln.strip() else "" for ln in gap] + shifted))
    else:
        gap = u_lines[u.end + 1:nu.start]
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
