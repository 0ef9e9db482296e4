"""Edit patterns that move, rename or remove code, as pure generators `gen(pick, src) -> Edit | None`:
rename a local through a function shown whole, reorder two adjacent statements, change a signature
and its body, delete lines between two anchors, delete one of a family of items that end alike.
"""

from __future__ import annotations

from evals.fuzz_common import WORDS, Edit, Pick, Source, Stretch, snippet
from evals.fuzz_edits import PARAM, STATEMENT, _ctx, _run, group
from evals.fuzz_nodes import blocks, functions, walk

ASSIGNED = {  # node type -> field holding the assigned name (a local's definition)
    "assignment": "left", "variable_declarator": "name", "let_declaration": "pattern",
    "short_var_declaration": "left", "for_statement": "left",
}
TUPLES = {"pattern_list", "tuple_pattern", "expression_list", "list_pattern", "tuple"}
NOT_A_LOCAL = {("attribute", "attribute"), ("keyword_argument", "name"), ("field_access", "field"),
               ("method_invocation", "name"), ("selector_expression", "field"), ("field_expression", "field")}


def _field_of(node) -> str | None:
    p = node.parent
    if p is None:
        return None
    for i, c in enumerate(p.children):
        if c.id == node.id:
            return p.field_name_for_child(i)
    return None


def _locals(fn, src: bytes) -> dict[str, list]:
    """name -> identifier nodes inside the function, for names assigned in it."""
    names: set[str] = set()
    idents: dict[str, list] = {}
    for n in walk(fn):
        field = ASSIGNED.get(n.type)
        target = n.child_by_field_name(field) if field else None
        if target is not None:  # `x = ...`, `a, b = ...`; not `self.x = ...` nor `d[k] = ...`
            parts = [target] if target.type == "identifier" else target.named_children \
                if target.type in TUPLES else []
            names.update(src[t.start_byte:t.end_byte].decode() for t in parts if t.type == "identifier")
        if n.type == "identifier" and (n.parent.type if n.parent else "", _field_of(n)) not in NOT_A_LOCAL:
            idents.setdefault(src[n.start_byte:n.end_byte].decode(), []).append(n)
    return {k: v for k, v in idents.items() if k in names and len(k) > 1}


def rename_local(pick: Pick, src: Source) -> Edit | None:
    """A local renamed at every use in one function, the function shown whole."""
    fns = functions(src)
    if not fns:
        return None
    f = pick.choice(fns)
    data = src.text.encode()
    found = _locals(f.node, data)
    if not found:
        return None
    old = pick.choice(sorted(found))
    new = f"{old}_{pick.choice(WORDS)}" if "_" in old or old.islower() else old + pick.choice(WORDS).title()
    if new in src.text:
        return None
    out = bytearray(data)
    for n in sorted(found[old], key=lambda n: -n.start_byte):
        out[n.start_byte:n.end_byte] = new.encode()
    lines = out.decode().split("\n")[:len(src.lines)]
    return snippet(pick, src, lines, [Stretch(f.start, f.end + 1)], pick.choice([0, 1, 2]), tag="whole-fn")


def reorder(pick: Pick, src: Source) -> Edit | None:
    """Two adjacent one-line statements swapped."""
    found = _run(pick, src, 2, 2)
    if found is None:
        return None
    b, i, _ = found
    s, t = b.stmts[i], b.stmts[i + 1]
    if s.start != s.end or t.start != t.end or t.start != s.start + 1:
        return None
    if src.lines[s.start].strip() == src.lines[t.start].strip():
        return None
    lines = list(src.lines)
    lines[s.start], lines[t.start] = lines[t.start], lines[s.start]
    return snippet(pick, src, lines, [Stretch(s.start, t.start + 1)], _ctx(pick))


def signature(pick: Pick, src: Source) -> Edit | None:
    """A parameter added to a one-line header and a first body statement that uses it; shown as
    the head (header, new statement, the rest of the body elided) or as the whole function."""
    g = group(src.language)
    fns = [f for f in functions(src) if f.head == f.head_end]
    if not fns or g not in PARAM:
        return None
    f = pick.choice(fns)
    params = f.node.child_by_field_name("parameters")
    if params is None or params.start_point.row != f.head or params.end_point.row != f.head:
        return None
    line = src.lines[f.head]
    inner = line[params.start_point.column + 1:params.end_point.column - 1]
    if "..." in inner or "**" in inner:
        return None
    sep = "" if not inner.strip() or inner.rstrip().endswith(",") else ", "
    cut = params.end_point.column - 1
    header = line[:cut] + sep + PARAM[g] + line[cut:]
    stmt = STATEMENT.get(g, "const {w}{n} = {v};").format(w=pick.choice(WORDS), n=pick.int(0, 999), v="verbose")
    lines = src.lines[:f.head] + [header] + src.lines[f.head + 1:f.body_start] + [f.body_indent + stmt] \
        + src.lines[f.body_start:]
    a, z = f.head, f.body_start + 1
    if pick.bool():
        return snippet(pick, src, lines, [Stretch(f.start, f.end + 2)], pick.choice([0, 1]), tag="whole-fn")
    body_end = f.end + (2 if src.language == "python" else 1)
    shown = [Stretch(a, z)] + ([Stretch(f.end + 1, f.end + 2)] if src.language != "python" else [])
    return snippet(pick, src, lines, shown, pick.choice([0, 1]), [(z, body_end)], "head")


def delete_between(pick: Pick, src: Source) -> Edit | None:
    """One to three consecutive statements or members deleted; the snippet shows the lines on both
    sides of the gap, adjacent."""
    found = _run(pick, src, 2, 4)
    if found is None:
        return None
    b, i, k = found
    k = min(k, len(b.stmts) - 1, 3)
    i = min(i, len(b.stmts) - k)
    s, e = b.stmts[i].start, b.stmts[i + k - 1].end
    if s == 0 or e + 1 >= len(src.lines):
        return None  # a deletion at the file's edge shows no line on one side
    lines = src.lines[:s] + src.lines[e + 1:]
    return snippet(pick, src, lines, [Stretch(s, s, 1)], _ctx(pick), tag=f"del{e - s + 1}")


def delete_look_alike(pick: Pick, src: Source) -> Edit | None:
    """One item deleted from a family whose items end alike (tests ending in the same two lines,
    methods ending `return this;` / `}`), blank lines before it too: the snippet shows the previous
    item's tail, the same as the deleted item's, and the next item's head. It also reads as "no
    change" (the tail read as the deleted item's own), which the other patterns leave out; agents
    send it to delete a test or a method among look-alikes."""
    keys = [x.rstrip() for x in src.lines]
    found = []
    for b in blocks(src):
        for prev, item, nxt in zip(b.stmts, b.stmts[1:], b.stmts[2:]):
            if item.end - item.start < 2 or not (prev.end + 1 < item.start and item.end + 1 < nxt.start):
                continue  # (items of three lines or more, each set apart by blank lines)
            if any(keys[r].strip() for r in range(prev.end + 1, item.start)):
                continue
            if keys[prev.end - 1:prev.end + 1] == keys[item.end - 1:item.end + 1]:
                found.append((prev, item))
    if not found:
        return None
    prev, item = pick.choice(found)
    lines = src.lines[:prev.end + 1] + src.lines[item.end + 1:]
    return snippet(pick, src, lines, [Stretch(prev.end + 1, prev.end + 1, 1)], _ctx(pick), tag="look-alike",
                   reads_as_no_change=True)
