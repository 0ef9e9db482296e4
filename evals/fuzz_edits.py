"""The edit patterns agents write every day, as pure generators `gen(pick, src) -> Edit | None`:
wrap statements in a new block (shown, or with the marker one level deeper), unwrap a block, add a
decorator / annotation / attribute, extend a literal by one item, rename a local through a function
shown whole, reorder two adjacent statements, change a signature and its body, delete lines between
anchors. Each returns the edited file (exact by construction) and its snippet; None when the
pattern does not fit this original or this draw.
"""

from __future__ import annotations

import re

from evals.fuzz_common import WORDS, Edit, Pick, Source, Stretch, indent_of, snippet
from evals.fuzz_nodes import COMPOUND, LITERALS, Block, blocks, functions, walk, whole_line

BRACE_HEADS = {  # language -> (opening line, closing lines); the body is re-indented one step
    "python": [("if enabled:", []), ("with lock:", []), ("for _ in range(2):", []),
               ("try:", ["except Exception:", "{u}raise"])],
    "go": [("if enabled {", ["}"]), ("for i := 0; i < 2; i++ {", ["}"])],
    "rust": [("if enabled {", ["}"]), ("for _ in 0..2 {", ["}"])],
    "java": [("if (enabled) {", ["}"]), ("for (int i = 0; i < 2; i++) {", ["}"]),
             ("try {", ["} catch (RuntimeException e) {", "{u}throw e;", "}"])],
    "js": [("if (enabled) {", ["}"]), ("for (let i = 0; i < 2; i++) {", ["}"]),
           ("try {", ["} catch (e) {", "{u}throw e;", "}"])],
}
STATEMENT = {"python": "{w}_{n} = {v}", "go": "_ = {v}", "rust": "let _ = {v};", "java": "boolean {w}{n} = {v};"}
DECORATORS = {
    "python": ["@functools.lru_cache(maxsize=None)", "@deprecated(\"use {w}\")", "@pytest.mark.slow", "@traced"],
    "java": ["@Deprecated", "@Override", "@SuppressWarnings(\"unchecked\")", "@Nullable"],
    "rust": ["#[inline]", "#[must_use]", "#[allow(dead_code)]", "#[cfg(test)]"],
    "js": ["@memoize()", "@traced", "@log(\"{w}\")"],
}
PARAM = {"python": "verbose=False", "go": "verbose bool", "rust": "verbose: bool", "java": "boolean verbose",
         "js": "verbose = false"}
BRACES = ("go", "rust", "java", "javascript", "typescript", "tsx", "jsx")


def group(language: str) -> str:
    return "js" if language in ("javascript", "typescript", "tsx", "jsx") else language


def _ctx(pick: Pick) -> int:
    return pick.choice([0, 1, 1, 2, 3])  # 0: only the edited lines between markers


def _reindent(lines: list[str], add: str = "", cut: str = "") -> list[str] | None:
    """Lines shifted one step deeper (`add`) or shallower (`cut`); None when a line is not indented
    enough to cut (a multi-line string at column 0, say)."""
    out = []
    for x in lines:
        if not x.strip():
            out.append(x)
        elif cut and not x.startswith(cut):
            return None
        else:
            out.append(add + x[len(cut):])
    return out


def _run(pick: Pick, src: Source, least: int, most: int) -> tuple[Block, int, int] | None:
    """A run of `least`..`most` consecutive statements of one block: (block, first index, count)."""
    cands = [b for b in blocks(src) if len(b.stmts) >= least]
    if not cands:
        return None
    b = pick.choice(cands)
    k = pick.int(least, min(most, len(b.stmts)))
    i = pick.int(0, len(b.stmts) - k)
    return b, i, k


# -- wrap ---------------------------------------------------------------------------------------

def _wrap(pick: Pick, src: Source, least: int):
    found = _run(pick, src, least, 4)
    if found is None or src.language not in BRACES + ("python",):
        return None
    b, i, k = found
    if b.kind in ("class_body", "declaration_list"):
        return None
    s, e = b.stmts[i].start, b.stmts[i + k - 1].end
    unit = b.unit or src.unit
    body = _reindent(src.lines[s:e + 1], add=unit)
    if body is None or any(x.strip() and not x.startswith(b.indent) for x in src.lines[s:e + 1]):
        return None
    head, tail = pick.choice(BRACE_HEADS[group(src.language)])
    new = ([b.indent + head] + body + [b.indent + t.replace("{u}", unit) for t in tail])
    lines = src.lines[:s] + new + src.lines[e + 1:]
    return lines, s, s + len(new), b, i, k


def wrap_shown(pick: Pick, src: Source) -> Edit | None:
    """Statements wrapped in a new `if` / `for` / `try` block, all of them shown re-indented."""
    got = _wrap(pick, src, 1)
    if got is None:
        return None
    lines, a, z, *_ = got
    return snippet(pick, src, lines, [Stretch(a, z)], _ctx(pick))


def wrap_marker(pick: Pick, src: Source) -> Edit | None:
    """Statements wrapped in a new block, the first or last of them elided by a marker one level
    deeper inside the new block (`if enabled:` / `    # ... existing code ...`)."""
    got = _wrap(pick, src, 2)
    if got is None:
        return None
    lines, a, z, b, i, k = got
    j = pick.int(1, k - 1)  # statements elided
    shift = a + 1 - b.stmts[i].start  # original row -> row inside the new block
    if pick.bool():  # the first j statements elided, the rest shown
        hide = (b.stmts[i].start + shift, b.stmts[i + j].start + shift)
        tag = "hide-first"
    else:
        hide = (b.stmts[i + k - j - 1].end + 1 + shift, b.stmts[i + k - 1].end + 1 + shift)
        tag = "hide-last"
    return snippet(pick, src, lines, [Stretch(a, z)], _ctx(pick), [hide], tag)


# -- unwrap -------------------------------------------------------------------------------------

def _compounds(src: Source):
    """(node, header first row, body first row, body last row, closing row or None) of compound
    statements without an else branch whose body can be dedented."""
    py = src.language == "python"
    kinds = COMPOUND["python" if py else "brace"]
    out = []
    for n in walk(src.tree.root_node) if src.tree is not None else ():
        if n.type not in kinds or n.has_error or n.child_by_field_name("alternative") is not None:
            continue
        if any(c.type in ("else_clause", "elif_clause") for c in n.children):
            continue
        stmt = n.parent if n.parent is not None and n.parent.type == "expression_statement" else n
        if not whole_line(stmt, src.lines):
            continue
        body = n.child_by_field_name("body") or n.child_by_field_name("consequence")
        if body is None or not body.named_children:
            continue
        if py:  # the body starts after the header's `:` (comments before its first statement included)
            colons = [c.end_point.row for c in n.children if c.type == ":" and c.end_byte <= body.start_byte]
            if not colons:
                continue
            first, last, close = colons[-1] + 1, body.end_point.row, None
            if first > body.start_point.row:
                continue
        else:
            first, last, close = body.start_point.row + 1, body.end_point.row - 1, body.end_point.row
            if (src.lines[close].strip() != "}" or close != stmt.end_point.row
                    or not src.lines[body.start_point.row].rstrip().endswith("{") or last < first):
                continue
        out.append((n, stmt.start_point.row, first, last, close))
    return out


def _unwrap(pick: Pick, src: Source):
    found = _compounds(src)
    if not found:
        return None
    n, h, first, last, close = pick.choice(found)
    head_indent = indent_of(src.lines[h])
    step = indent_of(src.lines[first])
    if not step.startswith(head_indent) or step == head_indent:
        return None
    body = _reindent(src.lines[first:last + 1], cut=step[len(head_indent):])
    if body is None:
        return None
    end = close if close is not None else last
    lines = src.lines[:h] + body + src.lines[end + 1:]
    return lines, h, h + len(body), n, first


def unwrap(pick: Pick, src: Source) -> Edit | None:
    """An `if` / `for` / `with` without else removed, its body dedented one step and shown."""
    got = _unwrap(pick, src)
    if got is None:
        return None
    lines, a, z, *_ = got
    stretches = [Stretch(a, a, 1), Stretch(a, z), Stretch(z, z, 1)]  # both deletions show their neighbours
    return snippet(pick, src, lines, stretches, _ctx(pick))


def unwrap_marker(pick: Pick, src: Source) -> Edit | None:
    """An unwrap whose dedented body shows its first and last statements and elides the middle by
    a marker at the new (shallower) indentation."""
    got = _unwrap(pick, src)
    if got is None:
        return None
    lines, a, z, n, first = got
    body = n.child_by_field_name("body") or n.child_by_field_name("consequence")
    kids = [c for c in body.named_children if whole_line(c, src.lines)]
    if len(kids) < 3:
        return None
    shift = a - first
    hide = (kids[0].end_point.row + 1 + shift, kids[-1].start_point.row + shift)
    if hide[0] >= hide[1]:
        return None
    stretches = [Stretch(a, a, 1), Stretch(a, z), Stretch(z, z, 1)]
    return snippet(pick, src, lines, stretches, _ctx(pick), [hide], "hide-middle")


# -- additions ----------------------------------------------------------------------------------

def decorator(pick: Pick, src: Source) -> Edit | None:
    """A decorator (Python, TS/JS methods), annotation (Java) or attribute (Rust) added above a
    definition, shown with context, or as the definition's head with its body elided."""
    g = group(src.language)
    if g not in DECORATORS:
        return None
    fns = [f for f in functions(src) if g != "js" or f.node.type == "method_definition"]
    if not fns:
        return None
    f = pick.choice(fns)
    at = pick.choice([f.start, f.head]) if f.start != f.head else f.start
    deco = indent_of(src.lines[f.head]) + pick.choice(DECORATORS[g]).replace("{w}", pick.choice(WORDS))
    lines = src.lines[:at] + [deco] + src.lines[at:]
    if pick.bool():
        return snippet(pick, src, lines, [Stretch(at, at + 1, 1)], _ctx(pick), tag="context")
    # the head: decorators, header, body elided, closing line
    shown = [Stretch(min(at, f.start), f.head_end + 2)]
    if src.language != "python":
        shown.append(Stretch(f.end + 1, f.end + 2))
    hide = [(f.head_end + 2, f.end + (2 if src.language == "python" else 1))]
    return snippet(pick, src, lines, shown, pick.choice([0, 1]), hide, "head")


def _new_item(pick: Pick, text: str) -> str:
    w, n = pick.choice(WORDS), pick.int(0, 999)
    m = re.fullmatch(r"""(["'`])(.*)\1""", text)
    if m:
        return f"{m.group(1)}fuzz_{w}_{n}{m.group(1)}"
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return str(n)
    m = re.fullmatch(r"""(["']?)([A-Za-z_][\w]*)\1(\s*[:=]\s*)(.+)""", text, re.S)
    if m and pick.bool():
        return f"{m.group(1)}{m.group(2)}_{w}{n}{m.group(1)}{m.group(3)}{m.group(4)}"
    return text  # the same item again: a repeated line, as real lists have


def literal_item(pick: Pick, src: Source) -> Edit | None:
    """A multi-line list / dict / array / object literal extended by one item after one of its
    items (a comma added to the last item where the literal has none)."""
    lits = [n for n in walk(src.tree.root_node) if n.type in LITERALS and n.end_point.row > n.start_point.row] \
        if src.tree is not None else []
    if not lits:
        return None
    lit = pick.choice(lits)
    items = [c for c in lit.named_children if "comment" not in c.type and c.start_point.row == c.end_point.row
             and whole_line_item(c, src.lines)]
    if not items:
        return None
    item = pick.choice(items)
    row = item.start_point.row
    line = src.lines[row]
    text = line.strip().rstrip(",")
    new = indent_of(line) + _new_item(pick, text)
    if line.rstrip().endswith(","):
        added, old = [new + ","], [line]
    else:
        added, old = [new], [line.rstrip() + ","]
    lines = src.lines[:row] + old + added + src.lines[row + 1:]
    a = row if old[0] != line else row + 1
    return snippet(pick, src, lines, [Stretch(a, row + 2, 1)], _ctx(pick))


def whole_line_item(node, lines: list[str]) -> bool:
    """The item alone on its row (a trailing comma allowed)."""
    r, c0 = node.start_point
    c1 = node.end_point.column
    return not lines[r][:c0].strip() and lines[r][c1:].strip() in ("", ",")
