"""Rules for a marker-free snippet placed by definition names (`tree.py`).

`TREE_CHECKS` read the whole match (`DefinitionMatch`): a name defined several times, definitions
reordered, a closing brace off its header's indentation, attributes left out beside a neighbour
that shows its own. `DEFINITION_CHECKS` read one replaced definition (`ShownDefinition`).
"""

from __future__ import annotations

from fastapply.merge.checks.base import DefinitionMatch, ShownDefinition
from fastapply.merge.defs import brace_off_indent
from fastapply.merge.text import is_blank


def defined_several_times(m: DefinitionMatch) -> str | None:
    """A snippet definition names an original one that is defined several times: which one it replaces is
    unknown."""
    if m.duplicate is not None:
        u, n = m.duplicate
        return f"`{u.name}` is defined {n} times in the original; cannot tell which one"
    return None


def definitions_reordered(m: DefinitionMatch) -> str | None:
    """The original definitions the snippet names come in another order than in the original: a move the
    name-by-name replacement does not place."""
    last_end = -1
    for _, o in m.matched:
        if o is None:
            continue
        if o.start <= last_end:
            return "the snippet's definitions are in a different order than in the original"
        last_end = o.end
    return None


def definition_brace_off_indent(m: DefinitionMatch) -> str | None:
    """A snippet definition's closing brace is not indented like its header: the snippet probably lost a
    line, and the definition is not shown whole."""
    for u, _ in m.matched:
        if brace_off_indent(m.u_lines, u):
            return f"the closing brace of `{u.name}` is not indented like its header: a line missing?"
    return None


def attributes_left_out_beside_shown(m: DefinitionMatch) -> str | None:
    """A definition shown without the attributes (decorators) it has in the original, right after
    its original neighbour, which the snippet shows with attributes of its own, as the original
    has them back to back: the author writes attributes, and the lines between the two are all
    shown, so were these deleted, or left out (a bare definition keeps what it leaves out)?"""
    pairs = [(u, o) for u, o in m.matched if o is not None]
    for (pu, po), (u, o) in zip(pairs, pairs[1:]):
        if pu.attr_start == pu.node_start or u.attr_start != u.node_start or o.attr_start == o.node_start:
            continue
        if all(is_blank(x) for x in m.u_lines[pu.end + 1:u.start]) and \
                all(is_blank(x) for x in m.orig[po.end + 1:o.start]):
            return (f"`{u.name}` is shown right after `{pu.name}` without the attributes it has in the original "
                    f"(`{m.orig[o.attr_start].strip()[:40]}`), while `{pu.name}` shows its own: deleted, or left out?")
    return None


def partial_with_changed_header(d: ShownDefinition) -> str | None:
    """A class shown with only some of its members (the others stay) whose header differs from the
    original's: an edit of the class, or another one? A class or `describe` shown with every
    member, some renamed in place (the same place, every line the same but one, like the
    original's: `ShownDefinition._renamed_in_place`), is shown whole, not partially beside new
    members."""
    if d.partial and d.u_lines[d.u.node_start].strip() != d.orig[d.o.node_start].strip():
        return f"`{d.u.name}` is shown partially with a changed header"
    return None
