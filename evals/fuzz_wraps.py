"""The edit agents write most: error handling or a guard put around a function's body, or around its
last statements. Pure generators `gen(pick, src) -> Edit | None` (see fuzz_common).

A function (method, closure, arrow function) of the original is picked, and its whole body, or its
last k statements, moves one level deeper (two in a Rust `match` arm) into a new block: try/except,
try/finally, with, if/else, a retry loop (Python); try/catch, try/finally, if/else, a retry loop
(JavaScript / TypeScript); those and `synchronized` (Java); `if cond {` with a return after it, a
retry loop, a closure or goroutine (Go); if/else, `if let`, `match`, `unsafe` (Rust). The handler,
else branch or statement after the block often ends with a line like the body's last one (`return []`
for `return rows`, `return nil, errNotReady` for `return rows, nil`, `Err(..)` for `Ok(..)`): the
shape that a merge reads as an edit of that line.

The snippet is written as agents write it: the function's header (maybe a line or two above it), a
marker at the body's depth for the statements left outside (tail), the new opener, ONE marker at
the new, deeper depth for the wrapped code (sometimes with its first or last statement shown), the
handler and closers, then the next function shown whole or elided by an outer marker, with careful
or loose outer markers and one of a few marker wordings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evals.fuzz_common import COMMENT, WORDS, Edit, Pick, Source, indent_of, keeps_syntax, render, style, text_of
from evals.fuzz_edits import _reindent, group
from evals.fuzz_nodes import _cache, walk, whole_line

FN_TYPES = {"function_definition", "function_declaration", "method_definition", "method_declaration",
            "function_item", "constructor_declaration", "generator_function_declaration", "arrow_function",
            "function_expression", "function", "func_literal"}
BODY_TYPES = {"block", "statement_block", "constructor_body"}
OUTSIDE = {"explicit_constructor_invocation"}  # `super(...)` / `this(...)` must stay first in a constructor
FALLS = {"if", "for", "if-else", "if-let", "match"}  # shapes whose code after the wrapped code ends the function
MAX_WRAPPED_ROWS = 150  # a longer body is rewritten whole, not wrapped behind one marker
MAX_NEXT_ROWS = 25  # the function after it is shown whole only when it is this short
WORDINGS = ["... existing code ...", "... existing code ...", "... existing code ...", "... rest of the function ...",
            "... original body ...", "...", "... unchanged ..."]


@dataclass(frozen=True)
class Body:
    """A function body that can be wrapped."""

    head: int  # first row of the definition (annotations / decorators inside the node included)
    open: int  # last header row (the `:` or `{` row)
    stmts: tuple[tuple[int, int], ...]  # (first, last) row of each statement that may be wrapped
    close: int | None  # the `}` row; None in Python
    end: int  # last row of the definition
    indent: str  # the body's indentation
    step: str  # the body's indentation less the header's
    returns: bool  # Go / Rust: a declared result, so every path ends with a value
    rtype: tuple[str, ...]  # the declared result type(s) (Go: one per value), () where none is written


@dataclass(frozen=True)
class Shape:
    """A new block: `before` the wrapped code, `after` it; `{u}` is one step, `{h}` the handler's
    lines (a log line and the last line), `{a}` the last line alone. `depth`: steps the wrapped code
    moves. `bare`: it runs in a closure, so it may not `return`. `value`: the block may end a function
    that returns a value (Rust: needs an else branch)."""

    tag: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    depth: int = 1
    bare: bool = False
    value: bool = True


def _shapes(lang: str, pick: Pick) -> list[Shape]:
    """The new blocks of one language, the first (try/catch, Go's guard, Rust's if/else: what
    agents write most) drawn three times as often as each of the others."""
    shapes = _shapes_of(lang, pick)
    return shapes[:1] * 3 + shapes[1:]


def _shapes_of(lang: str, pick: Pick) -> list[Shape]:
    g, w = group(lang), pick.choice(WORDS)
    if g == "python":
        exc = pick.choice(["Exception", "OSError", "(KeyError, ValueError)", "DatabaseError", "RuntimeError"])
        cond = pick.choice(["enabled", "self.enabled", "path is not None", "not self._closed"])
        return [Shape("try", ("try:",), (f"except {exc} as exc:", "{h}")),
                Shape("try-finally", ("try:",), ("finally:", "{u}" + pick.choice(["conn.close()", "lock.release()"]))),
                Shape("with", (pick.choice(["with self._lock:", "with lock:", f"with timer('{w}'):"]),), ()),
                Shape("if-else", (f"if {cond}:",), ("else:", "{h}")),
                Shape("if", (f"if {cond}:",), ("{a}",)),
                Shape("for", ("for attempt in range(MAX_ATTEMPTS):",), ("{a}",))]
    if g == "js":
        err = pick.choice(["err", "error", "e"] + (["err: unknown"] if lang in ("typescript", "tsx") else []))
        catch = pick.choice(["} catch (" + err + ") {"] * 3 + ["} catch {"])  # an optional binding, sometimes
        return [Shape("try", ("try {",), (catch, "{h}", "}")),
                Shape("try-finally", ("try {",), ("} finally {", "{u}release(){;}", "}")),
                Shape("if-else", ("if (" + pick.choice(["isReady()", "this.enabled", "options.enabled"]) + ") {",),
                      ("} else {", "{h}", "}")),
                Shape("if", ("if (" + pick.choice(["isReady()", "!options.dryRun"]) + ") {",), ("}", "{a}")),
                Shape("for", ("for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {",), ("}", "{a}"))]
    if g == "java":
        exc = pick.choice(["Exception", "RuntimeException", "IllegalStateException"])
        return [Shape("try", ("try {",), ("} catch (" + exc + " e) {", "{h}", "}")),
                Shape("try-finally", ("try {",), ("} finally {", "{u}lock.unlock();", "}")),
                Shape("synchronized", ("synchronized (" + pick.choice(["this", "lock"]) + ") {",), ("}",)),
                Shape("if-else", ("if (" + pick.choice(["enabled", "isReady()"]) + ") {",), ("} else {", "{h}", "}")),
                Shape("if", ("if (" + pick.choice(["enabled", "isReady()"]) + ") {",), ("}", "{a}")),
                Shape("for", ("for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {",), ("}", "{a}"))]
    if g == "go":
        cond = pick.choice(["s != nil", "ctx.Err() == nil", "err := validate(); err == nil", "len(args) > 0"])
        return [Shape("if", ("if " + cond + " {",), ("}", "{a}")),
                Shape("if-else", ("if " + cond + " {",), ("} else {", "{h}", "}")),
                Shape("for", ("for attempt := 0; attempt < maxAttempts; attempt++ {",), ("}", "{a}")),
                Shape("closure", ("mu.Lock()", "func() {", "{u}defer mu.Unlock()"), ("}()",), bare=True),
                Shape("goroutine", ("go func() {",), ("}()",), bare=True)]
    if g == "rust":
        return [Shape("if-else", ("if " + pick.choice(["self.enabled", "ready()", "!dry_run"]) + " {",),
                      ("} else {", "{h}", "}")),
                Shape("if-let", ("if let " + pick.choice(["Ok(_guard) = LOCK.lock()", "Some(cfg) = config()"]) + " {",),
                      ("} else {", "{h}", "}")),
                Shape("match", ("match mode() {", "{u}Mode::Ready => {"), ("{u}}", "{u}_ => {", "{u}{h}", "{u}}", "}"),
                      depth=2),
                Shape("unsafe", ("unsafe {",), ("}",)),
                Shape("for", ("for _ in 0..MAX_ATTEMPTS {",), ("}",), bare=True, value=False)]
    return []


# -- the handler's last line ----------------------------------------------------------------------

NUMERIC = re.compile(r"(u?int\d*|float\d*|byte|rune|uintptr|[iu](8|16|32|64|128|size)|f32|f64|int|long|short|"
                     r"double|float|char|number|Integer|Long|Double)")


def _zero_of_type(t: str, g: str) -> str | None:
    """The value a writer returns for "nothing" of declared type `t`; None when the type says
    nothing (the value's own shape decides then)."""
    t = re.sub(r"^(Promise|Awaitable)<(.*)>$", r"\2", t.strip().lstrip(":").strip())
    if g == "go":
        return ("errNotReady" if t == "error" else '""' if t == "string" else "false" if t == "bool"
                else "0" if NUMERIC.fullmatch(t) else "nil" if t.startswith(("*", "[]", "map[", "chan", "func", "any",
                                                                            "interface")) else t + "{}")
    if g == "rust":
        if re.fullmatch(r"((fmt|io)::)?Result(<\(\)(, *\w+)?>)?", t):
            return "Ok(())"
        return ("None" if t.startswith("Option<") else "Err(Error::NotReady)" if re.match(r"(\w+::)?Result<", t)
                else "false" if t == "bool" else "0" if NUMERIC.fullmatch(t) else "String::new()" if t == "String"
                else "Vec::new()" if t.startswith("Vec<") else '""' if t.startswith("&") and t.endswith("str")
                else "Default::default()")
    if g == "java":
        return ("false" if t == "boolean" else "-1" if NUMERIC.fullmatch(t) else "Optional.empty()" if
                t.startswith("Optional<") else "Collections.emptyList()" if re.match(r"(List|Collection)<", t)
                else "Collections.emptyMap()" if t.startswith("Map<") else "null" if t else None)
    if g == "python":
        return ("[]" if re.match(r"(list|List|Sequence)\b", t) else "{}" if re.match(r"(dict|Dict|Mapping)\b", t)
                else "False" if t == "bool" else "0" if t in ("int", "float") else '""' if t == "str"
                else "None" if t else None)
    if g == "js":
        return ("[]" if t.endswith("[]") or t.startswith("Array<") else "false" if t == "boolean" else "-1"
                if t == "number" else "''" if t == "string" else None)
    return None


def _zero(value: str, g: str) -> str:
    """A value like `value` that says "nothing" (`[]` for a list, the other boolean, ...)."""
    v = value.strip().rstrip(";").strip()
    flip = {"True": "False", "False": "True", "true": "false", "false": "true"}
    if v in flip:
        return flip[v]
    if re.fullmatch(r"-?\d+(\.\d+)?", v):
        return "0" if g in ("go", "rust") else "-1"
    if v[:1] in "\"'`":
        return {"python": '""', "js": "''", "rust": "String::new()"}.get(g, '""')
    if g == "python":
        return "[]" if v.startswith("[") else "{}" if v.startswith("{") else "()" if v.startswith("(") else "None"
    if g == "js":
        return "[]" if v.startswith("[") else "{}" if v.startswith("{") else "null"
    if g == "rust":
        return ("Err(Error::NotReady)" if v.startswith("Ok(") else "None" if v.startswith(("Some(", "None"))
                else "Vec::new()" if v.startswith("vec!") else "Default::default()")
    return "nil" if g == "go" else "null"


def _split_top(text: str) -> list[str]:
    """`a, f(b, c), d` -> its top-level comma-separated parts."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()] if cur.strip() else parts


def _similar(last: str, g: str, b: Body, rust_value: bool) -> str | None:
    """The handler's last line resembling `last` (the wrapped code's last line: `return []` for
    `return rows`), or None when `last` gives no value to resemble."""
    s = last.strip()
    semi = ";" if s.endswith(";") else ""
    m = re.fullmatch(r"return\b\s*(.*?);?", s)
    if g == "rust" and rust_value and not m:
        return (_zero_of_type(b.rtype[0], g) if b.rtype else None) or _zero(s, g)
    if not m:
        return None
    if not m.group(1):
        return "return" + semi
    vals = _split_top(m.group(1)) if g == "go" else [m.group(1)]
    if len(b.rtype) == len(vals):
        zeros = [_zero_of_type(t, g) or _zero(v, g) for t, v in zip(b.rtype, vals)]
    else:
        zeros = [_zero(v, g) for v in vals]
        if g == "go" and (vals[-1] in ("nil", "err") or vals[-1].endswith(("Err", "err", "Error"))):
            zeros[-1] = "errNotReady"
    return "return " + ", ".join(zeros) + semi


def _typed_return(g: str, b: Body, semi: str) -> str | None:
    """`return` with a "nothing" value of each declared result type (a body that ends otherwise than
    with `return`: a `switch`, a `try`, a `panic`)."""
    if g == "go" and b.rtype:
        return "return " + ", ".join(_zero_of_type(t, g) for t in b.rtype)
    if g == "java" and b.rtype and b.rtype[0] != "void":
        return f"return {_zero_of_type(b.rtype[0], g)}{semi}"
    return None


LOG = {"python": 'log.warning("{w} failed")', "js": "console.error('{w} failed'){;}",
       "java": 'LOG.warn("{w} failed");', "go": 'log.Printf("{w}: skipped")', "rust": 'log::warn!("{w} skipped");'}
GIVE_UP = {"python": ["raise", "return None"], "js": ["throw new Error('{w} failed'){;}", "return null{;}"],
           "java": ["throw new IllegalStateException(\"{w} failed\");", "return;"], "go": [], "rust": []}


def _handler(pick: Pick, g: str, shape: Shape, last: str, needs: bool, semi: str, b: Body, rust_value: bool):
    """(handler lines relative to the branch, its last line alone or None, tag), or None when no
    handler fits (a value is needed and none can be made)."""
    w = pick.choice(WORDS)
    like = _similar(last, g, b, rust_value) or (_typed_return(g, b, semi) if needs else None)
    if like is not None and (needs or pick.int(0, 2) > 0):
        end, tag = like, "similar"
    elif needs:
        return None
    else:
        give = [x for x in GIVE_UP[g] if not x.startswith("return") or last.strip().startswith("return")]
        if g == "python" and shape.tag != "try":
            give = [x.replace("raise", 'raise RuntimeError("{w} failed")') for x in give]  # no exception to re-raise
        if "{a}" in shape.after:
            give = []  # a statement after the block only when it resembles the body's last line
        end, tag = (pick.choice(give) if give and pick.bool() else None), "other"
    log = LOG[g].replace("{w}", w).replace("{;}", semi)
    end = end.replace("{w}", w).replace("{;}", semi) if end else None
    if any(x.endswith(" as exc:") for x in shape.after):
        log = log.replace('failed")', 'failed: %s", exc)')
    lines = ([log] if pick.int(0, 3) or end is None else []) + ([end] if end else [])
    return lines, end, tag


# -- where a body can be wrapped ------------------------------------------------------------------

def bodies(src: Source) -> list[Body]:
    return _cache(src, "wrap_bodies", _bodies)


def _is_comment(line: str, lang: str) -> bool:
    s = line.strip()
    return s.startswith(COMMENT.get(lang, "//")) or (lang != "python" and s.startswith(("/*", "*")))


def _bodies(src: Source) -> list[Body]:
    lines, py = src.lines, src.language == "python"
    out = []
    for n in walk(src.tree.root_node):
        if n.type not in FN_TYPES or n.has_error:
            continue
        body = n.child_by_field_name("body")
        if body is None or body.type not in BODY_TYPES:
            continue
        kids = body.named_children
        if len(kids) == 1 and kids[0].type == "statement_list":  # Go
            kids = kids[0].named_children
        kids = [k for k in kids if "comment" not in k.type]
        if py and kids and kids[0].type == "expression_statement" and kids[0].named_children \
                and kids[0].named_children[0].type == "string":
            kids = kids[1:]  # a docstring stays the first statement
        if kids and kids[0].type in OUTSIDE:
            kids = kids[1:]
        if not kids or not all(whole_line(k, lines) for k in kids):
            continue
        stmts = _statements(kids)
        if any(a[1] >= b[0] for a, b in zip(stmts, stmts[1:])):
            continue
        if py:
            open_, close, end = body.start_point.row - 1, None, n.end_point.row
            if open_ < n.start_point.row or not lines[open_].rstrip().endswith(":"):
                continue
        else:
            open_, close = body.start_point.row, body.end_point.row
            end = close
            if not lines[open_].rstrip().endswith("{") or body.start_point.column != len(lines[open_].rstrip()) - 1 \
                    or lines[close][:body.end_point.column - 1].strip() or stmts[0][0] <= open_ \
                    or stmts[-1][1] >= close:
                continue
        indent, outer = indent_of(lines[stmts[0][0]]), indent_of(lines[n.start_point.row])
        if not indent.startswith(outer) or indent == outer:
            continue
        result = n.child_by_field_name("result") or n.child_by_field_name("return_type")
        out.append(Body(n.start_point.row, open_, stmts, close, end, indent, indent[len(outer):], result is not None,
                        _types(result if result is not None else n.child_by_field_name("type"))))
    return out


def _statements(kids) -> tuple[tuple[int, int], ...]:
    """(first, last) rows of each statement, a Rust `#[attr]` joined to the statement it marks."""
    out, start = [], None
    for k in kids:
        if k.type == "attribute_item":
            start = k.start_point.row if start is None else start
            continue
        out.append((k.start_point.row if start is None else start, k.end_point.row))
        start = None
    return tuple(out) if start is None else ()


def _types(node) -> tuple[str, ...]:
    """A declared result's type(s): Go's `(n int, err error)` -> ("int", "error")."""
    if node is None:
        return ()
    if node.type != "parameter_list":
        return (node.text.decode(),)
    out = []
    for p in node.named_children:
        t = p.child_by_field_name("type")
        names = sum(p.field_name_for_child(i) == "name" for i in range(p.child_count))
        out += [t.text.decode() if t is not None else ""] * max(names, 1)
    return tuple(out)


def _definitions(src: Source) -> dict[int, int]:
    """First row -> last row of each definition that stands on whole lines (decorators included)."""
    out = {}
    for n in walk(src.tree.root_node):
        if n.type in FN_TYPES or n.type in ("decorated_definition", "class_definition", "class_declaration"):
            if whole_line(n, src.lines):
                out.setdefault(n.start_point.row, n.end_point.row)
    return out


def _extend_comments(lines: list[str], lang: str, a: int, z: int, lo: int, hi: int, indent: str) -> tuple[int, int]:
    """[a, z] grown over the comment lines right above and below it at the body's depth (they go
    with the code they annotate), within (lo, hi)."""
    while a - 1 > lo and _is_comment(lines[a - 1], lang) and indent_of(lines[a - 1]) == indent:
        a -= 1
    while z + 1 < hi and _is_comment(lines[z + 1], lang) and indent_of(lines[z + 1]) == indent:
        z += 1
    return a, z


# -- the generators --------------------------------------------------------------------------------

def wrap_body(pick: Pick, src: Source) -> Edit | None:
    """A function's whole body (after a docstring / `super(...)`) wrapped in a new block."""
    return _wrap(pick, src, tail=False)


def wrap_tail(pick: Pick, src: Source) -> Edit | None:
    """A function's last statements (not all of them) wrapped in a new block."""
    return _wrap(pick, src, tail=True)


def _wrap(pick: Pick, src: Source, tail: bool) -> Edit | None:
    lang, lines = src.language, src.lines
    g = group(lang)
    found = [b for b in bodies(src) if len(b.stmts) >= (2 if tail else 1)]
    if not found:
        return None
    b = pick.choice(found)
    first = pick.int(1, len(b.stmts) - 1) if tail else 0
    a, z = b.stmts[first][0], b.stmts[-1][1]
    lo = b.stmts[first - 1][1] if first else b.open
    a, z = _extend_comments(lines, lang, a, z, lo, b.close if b.close is not None else len(lines), b.indent)
    wrapped = lines[a:z + 1]
    if z - a + 1 > MAX_WRAPPED_ROWS or any(x.strip() and not x.startswith(b.indent) for x in wrapped):
        return None
    last_stmt = lines[b.stmts[-1][0]:b.stmts[-1][1] + 1]
    last = last_stmt[0] if len(last_stmt) == 1 else last_stmt[0].split("(")[0]
    rust_value = g == "rust" and b.returns and not last_stmt[-1].rstrip().endswith(";")
    has_return = any(re.search(r"\breturn\b", x) for x in wrapped)
    shape = pick.choice(_shapes(lang, pick))
    if (shape.bare and has_return) or (rust_value and not shape.value):
        return None
    # the function ends with a value, so a branch that falls through to its end needs one too
    # (Go and Java require it; a JavaScript catch does it to keep the function's type)
    valued = {"go": b.returns, "rust": rust_value, "java": bool(b.rtype) and b.rtype[0] != "void"}.get(
        g, re.match(r"\s*return\s*\S", last) is not None)
    needs = valued and (shape.tag in FALLS or (shape.tag == "try" and g != "python"))
    semi = ";" if g == "java" or (g == "js" and any(x.rstrip().endswith(";") for x in lines)) else ""
    got = _handler(pick, g, shape, last, needs, semi, b, rust_value)
    if got is None:
        return None
    handler, end_line, tag = got
    if not any(x.endswith("{h}") for x in shape.after) and ("{a}" not in shape.after or end_line is None):
        tag = "none"
    new = _block(shape, wrapped, handler, end_line, b.indent, b.step, semi)
    if new is None:
        return None
    new_lines = lines[:a] + new + lines[z + 1:]
    edited = text_of(new_lines) if src.text.endswith("\n") else "\n".join(new_lines)
    if not keeps_syntax(src, edited):
        return None
    return _snippet(pick, src, b, first, a, z, new_lines, edited, shape, len(shape.before), tag, tail)


def _block(shape: Shape, wrapped: list[str], handler: list[str], end_line: str | None, indent: str,
           u: str, semi: str) -> list[str] | None:
    """The new block's lines: opener(s), the wrapped code re-indented, the handler and closers."""
    body = _reindent(wrapped, add=u * shape.depth)
    if body is None:
        return None
    out = [indent + x.replace("{u}", u) for x in shape.before] + body
    for x in shape.after:
        if x.endswith("{h}"):
            pad = x[:-3].replace("{u}", u) + u
            if not handler:
                return None  # an else / except branch needs a line
            out += [indent + pad + h for h in handler]
        elif x == "{a}":
            if end_line is not None:
                out.append(indent + end_line)
        else:
            out.append(indent + x.replace("{u}", u).replace("{;}", semi))
    return out


def _snippet(pick: Pick, src: Source, b: Body, first: int, a: int, z: int, new_lines: list[str], edited: str,
             shape: Shape, n_before: int, tag: str, tail: bool) -> Edit:
    """Render the edited file as the agent's snippet (see the module docstring)."""
    lang = src.language
    shift = len(new_lines) - len(src.lines)
    block_end = z + shift  # last row of the new block (handler and closers included)
    shown = [False] * len(new_lines)
    ctx = _show_head(pick, src.lines, b, a, tail, shown)
    # where a tail's block starts is shown by the statement before it or by the first wrapped
    # statement (or not at all: then the snippet can be read more ways than one)
    anchor = pick.choice(["prev", "prev", "first", "none"]) if tail else "none"
    if anchor == "prev":
        _show(shown, *b.stmts[first - 1])
    _show(shown, a, a + n_before - 1)  # the opener(s)
    _show(shown, z + n_before + 1, block_end)  # handler and closers
    wrapped = [(s0 + n_before, s1 + n_before) for s0, s1 in b.stmts[first:]]
    show, hidden_from = _show_wrapped(pick, a + n_before, wrapped, anchor == "first", new_lines, shown)
    after = _show_after(pick, src, b, shift, block_end, new_lines, shown)
    breaks = frozenset({hidden_from, block_end + 1})  # the deeper marker, then an outer one right after it
    loose, drop = style(pick, new_lines, shown, a, block_end + 1)
    wording = pick.choice(WORDINGS)
    mark = COMMENT.get(lang, "//") + " " + wording
    update = render(new_lines, shown, lang, loose, drop, frozenset({hidden_from}), mark, breaks)
    variant = (f"ctx{ctx} {'loose' if loose else 'careful'}" + (f" drop-{drop}" if drop != "none" else "")
               + f" {'tail' if tail else 'body'} {shape.tag} handler-{tag} show-{show} {after}"
               + f" mark{WORDINGS.index(wording)}")
    return Edit(lang, src.text, edited, update, variant)


def _show(shown: list[bool], first: int, last: int) -> None:
    for r in range(first, last + 1):
        shown[r] = True


def _show_head(pick: Pick, lines: list[str], b: Body, a: int, tail: bool, shown: list[bool]) -> int:
    """The header shown, 0-2 code lines above it, and for a whole body maybe what stays before the
    new block (a docstring, `super(...)`); returns the lines shown above."""
    _show(shown, b.head, b.open)
    ctx = pick.choice([0, 0, 1, 2])
    r, left = b.head, ctx
    while left and r > 0:
        r -= 1
        shown[r] = True
        if lines[r].strip() and lines[r].strip() not in ("}", "*/"):
            left -= 1
    if not tail and b.open + 1 < a <= b.open + 4 and pick.bool():
        _show(shown, b.open + 1, a - 1)
    return ctx


def _show_wrapped(pick: Pick, start: int, wrapped: list[tuple[int, int]], first: bool, new_lines: list[str],
                  shown: list[bool]) -> tuple[str, int]:
    """The wrapped code (from row `start`, comments above its first statement included) is one
    marker, with its first or last statement (of at most 3 lines) shown beside it when there are
    several; returns ("none" | "first" | "last", the marker's first row)."""
    show = "first" if first else pick.choice(["none", "none", "first", "last"])
    show = show if len(wrapped) > 1 else "none"
    if show == "first" and wrapped[0][1] - wrapped[0][0] < 3:
        _show(shown, start, wrapped[0][1])  # with the comments above it
        hidden_from = wrapped[0][1] + 1
    elif show == "last" and wrapped[-1][1] - wrapped[-1][0] < 3:
        _show(shown, *wrapped[-1])
        hidden_from = start
    else:
        show, hidden_from = "none", start
    while hidden_from < len(new_lines) and not new_lines[hidden_from].strip():
        hidden_from += 1
    return show, hidden_from


def _show_after(pick: Pick, src: Source, b: Body, shift: int, block_end: int, new_lines: list[str],
                shown: list[bool]) -> str:
    """The function's closer shown, and the definition right after it shown whole (when short) or
    left to a marker; returns "next-shown" or "next-elided"."""
    end = b.end + shift
    _show(shown, block_end + 1, end)
    nxt = end + 1
    while nxt < len(new_lines) and not new_lines[nxt].strip():
        nxt += 1
    defs = _definitions(src)
    if nxt - shift in defs and defs[nxt - shift] - (nxt - shift) < MAX_NEXT_ROWS and pick.bool():
        _show(shown, end + 1, defs[nxt - shift] + shift)
        return "next-shown"
    return "next-elided"
