"""Where an edit can go in a parsed original: statement blocks and their whole-line statements,
compound statements that can be unwrapped, functions with their header and body rows, multi-line
literals, definitions that take a decorator. Pure readers of a `Source`'s tree, cached per source.
"""

from __future__ import annotations

from dataclasses import dataclass

from evals.fuzz_common import Source, indent_of

BLOCKS = {"block", "module", "statement_block", "program", "source_file", "statement_list", "class_body",
          "declaration_list", "constructor_body"}
COMPOUND = {  # language group -> compound statement types that can be unwrapped (no else branch)
    "python": ("if_statement", "with_statement", "for_statement", "while_statement"),
    "brace": ("if_statement", "for_statement", "while_statement", "for_in_statement", "enhanced_for_statement",
              "if_expression", "for_expression", "while_expression"),
}
LITERALS = {"list", "dictionary", "set", "array", "object", "literal_value", "array_expression",
            "array_initializer"}
FUNCS = {"function_definition", "function_declaration", "method_definition", "method_declaration",
         "function_item", "constructor_declaration", "generator_function_declaration"}


@dataclass(frozen=True)
class Stmt:
    start: int  # first row
    end: int  # last row (inclusive)
    node_type: str


@dataclass(frozen=True)
class Block:
    stmts: tuple[Stmt, ...]  # whole-line statements, in order
    indent: str
    kind: str  # the block node's type
    unit: str  # the indentation step from the enclosing statement to this block ("" at top level)


def walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def whole_line(node, lines: list[str]) -> bool:
    """The node alone on its rows: nothing before it on its first row, nothing after on its last."""
    r0, c0 = node.start_point
    r1, c1 = node.end_point
    if r1 >= len(lines) or r0 >= len(lines):
        return False
    return not lines[r0][:c0].strip() and not lines[r1][c1:].strip()


def _cache(src: Source, key: str, build):
    store = src.__dict__.setdefault("_fuzz_cache", {})
    if key not in store:
        store[key] = build(src) if src.tree is not None else []
    return store[key]


def blocks(src: Source) -> list[Block]:
    return _cache(src, "blocks", _blocks)


def _blocks(src: Source) -> list[Block]:
    out = []
    for n in walk(src.tree.root_node):
        if n.type not in BLOCKS:
            continue
        kids = [c for c in n.named_children if c.type != "statement_list"]
        if any(c.type == "statement_list" for c in n.named_children):
            continue  # Go: the statements sit in the inner statement_list (visited on its own)
        stmts = []
        for c in kids:
            if c.start_point.row == n.start_point.row and n.type not in ("module", "program", "source_file"):
                continue  # on the block's `{` row
            if whole_line(c, src.lines) and not c.has_error:
                stmts.append(Stmt(c.start_point.row, c.end_point.row, c.type))
        # two statements sharing a row are not whole lines
        rows = [(s.start, s.end) for s in stmts]
        clean = [s for i, s in enumerate(stmts)
                 if (i == 0 or rows[i - 1][1] < s.start) and (i + 1 == len(stmts) or s.end < rows[i + 1][0])]
        if clean:
            indent = indent_of(src.lines[clean[0].start])
            out.append(Block(tuple(clean), indent, n.type, _step(n, indent, src.lines)))
    return out


def _step(block, indent: str, lines: list[str]) -> str:
    """`indent` less the indentation of the statement that holds the block."""
    outer = block.parent.parent if block.type == "statement_list" and block.parent else block.parent
    if outer is None:
        return ""
    base = indent_of(lines[outer.start_point.row])
    return indent[len(base):] if indent.startswith(base) and len(indent) > len(base) else ""


@dataclass(frozen=True)
class Func:
    start: int  # first row of the definition (decorators / attributes / annotations included)
    head: int  # the row holding the name
    head_end: int  # last header row (python: the `:` row; braces: the `{` row)
    body_start: int  # first body row (the first statement)
    end: int  # last row (python: last body row; braces: the `}` row)
    body_indent: str
    node: object


def functions(src: Source) -> list[Func]:
    return _cache(src, "functions", _functions)


def _functions(src: Source) -> list[Func]:
    lines, py = src.lines, src.language == "python"
    out = []
    for n in walk(src.tree.root_node):
        if n.type not in FUNCS or n.has_error:
            continue
        body = n.child_by_field_name("body")
        name = n.child_by_field_name("name")
        if body is None or name is None or not body.named_children:
            continue
        outer = n.parent if n.parent is not None and n.parent.type == "decorated_definition" else n
        if not whole_line(outer, lines):
            continue
        first = body.named_children[0].start_point.row
        if py:
            head_end, end = body.start_point.row - 1, n.end_point.row
            if first != body.start_point.row or head_end < name.start_point.row:
                continue
        else:
            head_end, end = body.start_point.row, n.end_point.row
            if lines[end].strip() != "}" or first <= head_end or not lines[head_end].rstrip().endswith("{"):
                continue
        out.append(Func(outer.start_point.row, name.start_point.row, head_end, first, end,
                        indent_of(lines[first]), n))
    return out
