"""Named definitions in a tree-sitter tree: functions, methods, classes, impls, types, tests.

A definition is identified by (kind group, name); its line span includes the comments, decorators
and attributes directly above it, since a snippet that re-states a function re-states those too.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

from fastapply.languages import BY_NAME, node_def_kinds, node_roles, parse, union, unparsable
from fastapply.merge.text import indent_of, is_blank

# Per-language node types come from the language table (fastapply/languages.py), over every
# language, keyed by (grammar symbol, type) (`_key`): one type may play two roles in two grammars.
_KIND = node_def_kinds()  # definition node -> kind group
_WRAPPERS = node_roles("wrappers")  # wrappers whose span replaces the inner definition's (decorators, `export`)
_ATTACHED = node_roles("attached")  # nodes that attach to the definition below them
_CONTAINERS = node_roles("containers")  # containers whose children may be definitions
_TEST_CALLEES = union("test_callees")
_FUNC_VALUES = node_roles("func_values")


def _key(node) -> tuple[int, str]:
    return node.kind_id, node.type


@dataclass
class Definition:
    kind: str
    name: str
    start: int  # first line, including attached comments/decorators
    attr_start: int  # first line of attached attributes/decorators (after any comments)
    end: int  # last line (inclusive)
    node_start: int  # first line of the definition proper (after attached comments)
    header: str  # first line of the definition proper, stripped
    node: object = field(repr=False, default=None)
    # the stripped line that holds the name, which is the header unless attributes or modifiers
    # stand above it on their own lines (Java's `@SuppressWarnings(...)` before `public ... f(...) {`)
    signature: str = ""
    members: list["Definition"] = field(default_factory=list, repr=False)
    body: object = field(repr=False, default=None)  # the node holding the members (class body, ...)


def same_definitions(u: Definition, pool: list[Definition]) -> list[Definition]:
    """The definitions in `pool` that `u` names: same kind and name (and, among several, the same
    header line if any has it)."""
    same = [o for o in pool if o.kind == u.kind and o.name == u.name]
    if len(same) > 1:
        # the same header line; else (an annotation added or dropped above it) the same name line
        same = [o for o in same if o.header == u.header] or \
            [o for o in same if u.signature and o.signature == u.signature] or same
    return same


def restate(u: Definition, u_new: list[str], o: Definition, orig: list[str]) -> list[str]:
    """What replaces orig[o.start:o.end + 1] when the snippet restates `o` as `u` (u_new: the
    snippet's lines from u.start, re-indented for the original). The comments and the attributes
    above a definition are separate parts: each one the snippet shows replaces the original's, each
    one it leaves out stays (a bare `fn` keeps its `#[test]`, a bare `def` its decorators). When what
    the snippet shows above it is the last lines of the original's, the snippet was cut inside
    them: all of the original's stay."""
    if cut_inside_prefix(u, u_new, o, orig):
        return orig[o.start:name_row(o)] + u_new[name_row(u) - u.start:]
    c, a = u.attr_start - u.start, u.node_start - u.start
    comments = u_new[:c] if c else orig[o.start:o.attr_start]
    attrs = u_new[c:a] if a > c else orig[o.attr_start:o.node_start]
    return comments + attrs + u_new[a:]


def cut_inside_prefix(u: Definition, u_lines: list[str], o: Definition, orig: list[str]) -> bool:
    """What the snippet shows above `u`'s name (u_lines: its lines from u.start) is a proper tail of
    what the original has above `o`'s: the snippet starts inside a comment or an attribute block.
    Up to the name line, since Java's annotations are inside the definition node."""
    shown = [x.strip() for x in u_lines[:name_row(u) - u.start]]
    kept = [x.strip() for x in orig[o.start:name_row(o)]]
    return 0 < len(shown) < len(kept) and kept[-len(shown):] == shown


def names_header(d: Definition, line: str) -> bool:
    """`line` names `d` right before its parameters or type parameters (`Render(` for Go's
    `Mixer.Render`, `compatible<'a>(`): a header of that definition, whatever else changed."""
    name = d.name.rsplit(".", 1)[-1] if d.name else ""
    return bool(name) and re.search(rf"\b{re.escape(name)}\s*[(<]", line) is not None


def restates_header(d: Definition, new: str, old: str) -> bool:
    """`new` restates `d`'s header line `old`, edited (a new parameter or return type): the same
    indentation and first word, and it names `d` before its parameters."""
    return indent_of(new) == indent_of(old) and new.split()[:1] == old.split()[:1] and names_header(d, new)


def name_row(d: Definition) -> int:
    """The line holding the definition's name (its header line for most grammars)."""
    name = d.node.child_by_field_name("name") if d.node is not None else None
    row = name.start_point.row if name is not None else d.node_start
    return row if d.node_start <= row <= d.end else d.node_start


def brace_off_indent(lines: list[str], d: Definition) -> bool:
    """The definition's closing brace is indented unlike its header: braces and indentation
    disagree, so a line is missing or extra (the brace may close a block inside, or the container)."""
    last = lines[d.end]
    if not last.strip().startswith("}"):
        return False
    header = lines[d.node_start]
    return len(last) - len(last.lstrip()) != len(header) - len(header.lstrip())


def _end_row(node) -> int:
    """Last line of a node (some grammars end a line comment at column 0 of the next line)."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _is_comment(node) -> bool:
    return "comment" in node.type


def _text(node, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _name(node, src: bytes) -> str | None:
    t = node.type
    if t == "impl_item":  # `impl Trait for Type`
        ty, tr = node.child_by_field_name("type"), node.child_by_field_name("trait")
        return (_text(tr, src) + " for " if tr else "") + (_text(ty, src) if ty else "")
    if t == "method_declaration" and node.child_by_field_name("receiver") is not None:  # go
        recv = node.child_by_field_name("receiver")
        types = [c for c in _walk(recv) if c.type == "type_identifier"]
        nm = node.child_by_field_name("name")
        return (types[0].text.decode() + "." if types else "") + (_text(nm, src) if nm else "")
    if t in ("function_definition",) and node.child_by_field_name("declarator") is not None:  # c/c++
        d = node.child_by_field_name("declarator")
        while d is not None and d.child_by_field_name("declarator") is not None:
            d = d.child_by_field_name("declarator")
        return _text(d, src) if d is not None else None
    nm = node.child_by_field_name("name")
    return _text(nm, src) if nm is not None else None


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _call_test_name(node, src: bytes) -> str | None:
    """`it("does x", ...)` / `describe("x", ...)` / `test(...)` statements: JS test blocks are the
    'functions' of a test file."""
    if node.type != "expression_statement" or not node.named_children:
        return None
    call = node.named_children[0]
    if call.type != "call_expression":
        return None
    fn, args = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if fn is None or args is None or not args.named_children:
        return None
    first = args.named_children[0]
    if first.type not in ("string", "template_string"):
        return None
    callee = _text(fn, src).split(".")[0]
    if callee not in _TEST_CALLEES:
        return None
    return _text(fn, src) + "(" + _text(first, src) + ")"




def _assigned_function_name(node, src: bytes) -> str | None:
    """`res.send = function send() {...}` or `const f = () => {...}`: a function bound to a name."""
    if node.type == "expression_statement" and node.named_children:
        ex = node.named_children[0]
        if ex.type == "assignment_expression":
            left, right = ex.child_by_field_name("left"), ex.child_by_field_name("right")
            if left is not None and right is not None and _key(right) in _FUNC_VALUES:
                return _text(left, src)
    if node.type in ("lexical_declaration", "variable_declaration"):
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) == 1:
            value = decls[0].child_by_field_name("value")
            nm = decls[0].child_by_field_name("name")
            if value is not None and nm is not None and _key(value) in _FUNC_VALUES:
                return _text(nm, src)
    return None


def collect(tree, src: bytes) -> list[Definition]:
    """Top-level definitions, each with its nested member definitions."""
    return _collect_in(tree.root_node, src)


def iter_children(container, src: bytes, markers: frozenset[int] | set[int] = frozenset()):
    """A container's children as ('def', Definition) / ('marker', row) / ('other', node).

    Comments and attributes directly above a definition become part of it (its `start`); a
    comment on the same line as the previous sibling's end trails that sibling and is skipped;
    comment lines listed in `markers` are reported as markers."""
    pending: list = []  # attached nodes (comments, attributes) waiting for the next definition
    prev_end = -1
    for child in container.named_children:
        row = child.start_point.row
        if _key(child) in _ATTACHED:
            if row in markers:
                pending = []
                yield "marker", row
            elif row == prev_end or (pending and row == _end_row(pending[-1])):
                pass  # `} // note`, `#[attr] // note`: trails the node on its line
            else:
                if pending and row > _end_row(pending[-1]) + 1:
                    pending = []  # a blank line separates it from the earlier comments
                pending.append(child)
            continue
        found = _as_definition(child, src)
        if found is not None:
            if pending and found.node_start <= _end_row(pending[-1]) + 1:
                found.start = pending[0].start_point.row
                # attributes/decorators right above belong to the definition; comments above them
                # are replaced only when a snippet restates comments
                k = len(pending)
                while k > 0 and not _is_comment(pending[k - 1]):
                    k -= 1
                found.attr_start = pending[k].start_point.row if k < len(pending) else found.node_start
            yield "def", found
        else:
            yield "other", child
        pending = []
        prev_end = _end_row(child)


def _collect_in(container, src: bytes) -> list[Definition]:
    out: list[Definition] = []
    for kind, item in iter_children(container, src):
        if kind == "def":
            out.append(item)
        elif kind == "other":
            # look inside non-definition containers (e.g. a describe() block, an export)
            if _key(item) in _CONTAINERS or item.type.endswith("_body") or item.type.endswith("block"):
                out.extend(_collect_in(item, src))
    return out


def as_definition(node, src: bytes) -> Definition | None:
    """The definition a node is (with its members), or None."""
    return _as_definition(node, src)


def _as_definition(node, src: bytes) -> Definition | None:
    inner = node
    while _key(inner) in _WRAPPERS:
        named = [c for c in inner.named_children if c.type not in ("decorator", "comment")]
        defs = [c for c in named if _key(c) in _KIND or _key(c) in _WRAPPERS or c.type == "type_declaration"]
        if not defs:
            break
        inner = defs[-1]
    if inner.type == "type_declaration":  # go: `type X struct {...}`
        specs = [c for c in inner.named_children if c.type == "type_spec"]
        if len(specs) == 1:
            inner = specs[0]
    kind = _KIND.get(_key(inner))
    name = _name(inner, src) if kind else None
    if kind is None:
        name = _assigned_function_name(inner, src)
        kind = "fn"
        if name is None:
            name = _call_test_name(node, src)
            kind = "test"
        if name is None:
            return None
    if not name:
        return None
    start = node.start_point.row
    row, at = inner.start_point.row, inner.start_byte
    proper = _after_annotations(inner)
    if proper is not None and proper.start_point.row > row:  # (`@Test` on its own lines, inside the node)
        row, at = proper.start_point.row, proper.start_byte
    line_start = src.rfind(b"\n", 0, at) + 1
    line_end = src.find(b"\n", at)
    header = src[line_start:line_end if line_end >= 0 else len(src)].decode("utf-8", "replace").strip()
    d = Definition(kind, name, start, start, _end_row(node), row, header, node, _line_of(inner, src) or header)
    d.body = _body(inner) if kind in ("type", "impl", "test") else None
    d.members = _collect_in(d.body or inner, src) if kind in ("type", "impl", "test") else []
    return d


# Annotations a grammar puts inside the definition's node (Java's and Kotlin's `modifiers`, C#'s
# attribute lists, Swift's and Scala's annotations): on lines of their own above the definition
# they are its attributes, as Rust's `#[test]` and Python's decorators are (separate nodes there).
_INNER_ANNOTATIONS = frozenset({"annotation", "marker_annotation", "attribute_list", "attribute", "attributes"})


def _after_annotations(inner):
    """The definition's first node after its leading annotations (inside `modifiers` too), or None
    when it opens with none."""
    seen = False
    for child in inner.children:
        if child.type == "modifiers":
            for m in child.children:
                if m.type in _INNER_ANNOTATIONS:
                    seen = True
                elif m.type not in ("comment", "line_comment", "block_comment"):
                    return m if seen else None
            continue
        if child.type in _INNER_ANNOTATIONS:
            seen = True
            continue
        if child.type in ("comment", "line_comment", "block_comment"):
            continue
        return child if seen else None
    return None


def _line_of(inner, src: bytes) -> str:
    """The stripped line that holds the definition's name node ("" without one)."""
    name = inner.child_by_field_name("name")
    if name is None:
        return ""
    a = src.rfind(b"\n", 0, name.start_byte) + 1
    b = src.find(b"\n", name.start_byte)
    return src[a:b if b >= 0 else len(src)].decode("utf-8", "replace").strip()


def _body(node):
    b = node.child_by_field_name("body")
    if b is not None:
        return b
    if node.type == "expression_statement":
        call = node.named_children[0]
        args = call.child_by_field_name("arguments")
        if args is not None:
            for a in args.named_children:
                if a.type in ("function_expression", "arrow_function", "function"):
                    return a.child_by_field_name("body")
    return None


def flatten(defs: list[Definition]) -> list[Definition]:
    out = []
    for d in defs:
        out.append(d)
        out.extend(flatten(d.members))
    return out


# -- definitions of a snippet (a fragment, maybe bare methods) ---------------------------------------------

def parse_snippet(lines: list[str], lang: str) -> tuple[list[Definition], list[str], int] | None:
    """Definitions of a dedented snippet, its lines, and the line offset of the snippet inside
    the parsed text (1 when wrapped in a class)."""
    src = "\n".join(lines) + "\n"
    tree = parse(lang, src)
    if tree is not None and not _broken(tree, src):
        defs = collect(tree, src.encode("utf-8"))
        if defs and _covers(defs, lines, 0):
            return defs, lines, 0
    info = BY_NAME.get(lang)
    wrap = info.member_wrap if info is not None else None  # lets a bare method parse as a member
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
    language has no grammar, or its table names no definitions (a Makefile rule, a YAML key: it
    cannot tell)."""
    info = BY_NAME.get(lang)
    if parse(lang, "") is None or info is None or not info.def_kinds:
        return None
    src = "\n".join(lines) + "\n"
    tree = parse(lang, src)
    if not tree.root_node.has_error:  # valid as it stands: do not read `if (x) {` as a method
        return collect(tree, src.encode("utf-8"))
    parsed = parse_snippet(lines, lang)
    return parsed[0] if parsed else []


def _covers(defs: list[Definition], lines: list[str], offset: int) -> bool:
    """Every non-blank snippet line belongs to one of the definitions (no loose statements)."""
    covered = set()
    for d in defs:
        covered.update(range(d.start - offset, d.end - offset + 1))
    return all(i in covered for i, ln in enumerate(lines) if not is_blank(ln))
