"""The property tests' edit generators (tests/test_merge_properties.py), as pure functions of a
`Pick` so that CI (through hypothesis) and `evals.fuzz` (through a seeded random) draw the same
shapes: random line edits at one or two sites, a function's body rewritten between markers, code
appended at the end, a bare function, a whole class with a line edited, a new function added.
"""

from __future__ import annotations

from evals.fuzz_common import (
    COMMENT,
    WORDS,
    Edit,
    Pick,
    Source,
    first_indent,
    indent_of,
    marker,
    text_of,
    window,
)
from fastapply.merge.defs import collect, flatten
from fastapply.merge.text import is_trivial

STATEMENT = {"python": "{w}_{n} = {v}({m})", "go": "{w}_{n} := {v}({m})", "rust": "let {w}_{n} = {v}({m});",
             "java": "int {w}_{n} = {v}({m});"}
NEW_FN = {"python": ["def {w}_{n}(x):", "    return x + {m}"], "go": ["func {w}{n}(x int) int {{", "\treturn x + {m}", "}}"],
          "rust": ["fn {w}_{n}(x: i32) -> i32 {{", "    x + {m}", "}}"],
          "java": ["int {w}{n}(int x) {{", "  return x + {m};", "}}"]}


def _edit(src: Source, new_lines: list[str], update: list[str], variant: str = "") -> Edit:
    """The edited file keeps the original's final newline (or its absence)."""
    edited = text_of(new_lines) if src.text.endswith("\n") else "\n".join(new_lines)
    return Edit(src.language, src.text, edited, text_of(update), variant)


def random_edit(pick: Pick, src: Source) -> Edit | None:
    """Lines inserted, deleted or edited at one or two sites, shown with 1-4 lines of context;
    careful markers, or loose ones at column 0 that may leave out the first or last marker."""
    lang, lines = src.language, src.lines
    n = len(lines)
    if n < 12:
        return None
    n_sites = pick.int(1, 2)
    cuts = sorted({pick.int(2, n - 3) for _ in range(n_sites)})
    if len(cuts) == 2 and cuts[1] - cuts[0] < 12:  # keep the two edit sites apart
        cuts = cuts[:1]
    new_lines = list(lines)
    changed: list[tuple[int, int]] = []  # (start, end) in new_lines of each edited stretch
    shift = 0
    for cut in cuts:
        at = cut + shift
        n_del = pick.int(0, 2)
        n_ins = pick.int(0 if n_del else 1, 3)
        indent = indent_of(new_lines[at])
        # inserted lines: statements in Python, comment lines elsewhere (so that most edits keep the
        # file parseable and the merge is really exercised instead of refused by the parse check)
        if lang == "python":
            ins = [f"{indent}{pick.choice(WORDS)}_{pick.int(0, 999)} = {pick.choice(WORDS)}({pick.int(0, 99)})"
                   for _ in range(n_ins)]
        else:
            ins = [f"{indent}// note {pick.choice(WORDS)} {pick.int(0, 999)}" for _ in range(n_ins)]
        if n_del and pick.bool():  # an edited line: the old one with something appended
            old = new_lines[at]
            ins = [old + (f"  # {pick.choice(WORDS)}" if lang == "python" else f" // {pick.choice(WORDS)}")] + ins[1:]
        new_lines[at:at + n_del] = ins
        changed.append((at, at + len(ins)))
        shift += len(ins) - n_del
    ctx = pick.int(1, 4)  # 1: like hard_dev's sparse_context
    windows: list[tuple[int, int]] = []
    for a, b in changed:
        lo, hi = window(new_lines, a, b, ctx)
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], hi)
        else:
            windows.append((lo, hi))
    mark = marker(lang)
    # Careful writers indent a marker like the first line of the code it stands for; loose ones put
    # every marker at column 0 and may leave out the first or last one (the head or tail is kept).
    loose = pick.bool()
    drop = pick.choice(["none", "lead", "trail"]) if loose else "none"
    # A left-out edge marker is only readable when the snippet shows real code on that side of the
    # edit (blank context lines at the snippet's ends carry nothing).
    if drop == "lead" and all(not x.strip() for x in new_lines[windows[0][0]:changed[0][0]]):
        drop = "none"
    if drop == "trail" and all(not x.strip() for x in new_lines[changed[-1][1]:windows[-1][1]]):
        drop = "none"
    out: list[str] = []
    pos = 0
    for lo, hi in windows:
        if lo > pos and not (pos == 0 and drop == "lead"):
            out.append(("" if loose else first_indent(new_lines[pos:lo])) + mark)
        out.extend(new_lines[lo:hi])
        pos = hi
    if pos < len(new_lines) and drop != "trail":
        out.append(("" if loose else first_indent(new_lines[pos:])) + mark)
    variant = f"ctx{ctx} {'loose' if loose else 'careful'}" + (f" drop-{drop}" if drop != "none" else "")
    return _edit(src, new_lines, out, variant)


def fn_rows(src: Source) -> list[tuple[int, int, str]]:
    """(header row, last row, body indent) of single-line-header functions whose body can be swapped."""
    lang, lines = src.language, src.lines
    tree = src.tree
    if tree is None:
        return []
    out = []
    for d in flatten(collect(tree, src.text.encode())):
        body = d.node.child_by_field_name("body") if d.kind == "fn" else None
        if body is None or d.end - d.node_start < 2:
            continue
        first = d.node_start + 1
        if lang == "python" and body.start_point.row != first:
            continue
        if lang != "python" and (body.start_point.row != d.node_start or lines[d.end].strip() != "}"):
            continue
        out.append((d.node_start, d.end, indent_of(lines[first])))
    return out


def statements(pick: Pick, lang: str, indent: str, most: int) -> list[str]:
    """1..most new statements in the language, at `indent`."""
    stmt = STATEMENT.get(lang, "const {w}_{n} = {v}({m});")
    return [indent + stmt.format(w=pick.choice(WORDS), n=pick.int(0, 999), v=pick.choice(WORDS), m=pick.int(0, 99))
            for _ in range(pick.int(1, most))]


def rewrite_fn(pick: Pick, src: Source) -> Edit | None:
    """A function's body rewritten whole, shown as the whole function between markers (the shape an
    agent sends when it rewrites one function)."""
    lang, lines = src.language, src.lines
    fns = fn_rows(src)
    if not fns:
        return None
    head, last, indent = pick.choice(fns)
    body = statements(pick, lang, indent, 3)
    closer = [] if lang == "python" else [lines[last]]
    new_fn = [lines[head]] + body + closer
    edited = lines[:head] + new_fn + lines[last + 1:]
    mark = marker(lang)
    pad = indent_of(lines[head])
    out = ([pad + mark] if head > 0 else []) + new_fn
    if last + 1 < len(lines):
        out.append(pad + mark)
    return _edit(src, edited, out)


def tail_edit(pick: Pick, src: Source) -> Edit | None:
    """Code appended at the end of the file, shown with a few lines of context and no trailing
    marker; the appended code copies some lines that occur elsewhere in the file, so the region's
    last line may match an earlier place (an inner anchor must carry the placement)."""
    lang, lines = src.language, src.lines
    code = [ln for ln in lines if ln.strip()]
    if len(lines) < 12 or not code:
        return None
    copied = [pick.choice(code) for _ in range(pick.int(1, 3))]
    fresh = [f"{COMMENT.get(lang, '//')} appended {pick.choice(WORDS)} {pick.int(0, 999)}"]
    added = pick.shuffle(copied + fresh)
    ctx = pick.int(2, 4)
    return _edit(src, lines + added, [marker(lang)] + lines[-ctx:] + added)


def bare_function(pick: Pick, src: Source, where: str | None = None) -> Edit | None:
    """One function edited and shown alone, whole, with no marker and no enclosing class (the shape
    agents send most): statements added at the top or the bottom of its body, or the body replaced.
    The snippet may be pasted at column 0. Everything else in the file stays."""
    lang, lines = src.language, src.lines
    fns = fn_rows(src)
    if not fns:
        return None
    head, last, indent = pick.choice(fns)
    new = statements(pick, lang, indent, 2)
    body_end = last + 1 if lang == "python" else last
    body = lines[head + 1:body_end]
    where = where or pick.choice(["top", "bottom", "replace"])
    body = new + body if where == "top" else body + new if where == "bottom" else new
    new_fn = [lines[head]] + body + lines[body_end:last + 1]
    edited = lines[:head] + new_fn + lines[last + 1:]
    pad = indent_of(lines[head])
    dedent = pick.bool()
    if dedent and any(x.strip() and not x.startswith(pad) for x in new_fn):
        dedent = False  # a line left of the header cannot be pasted at column 0 and kept where it was
    if dedent:
        new_fn = [x[len(pad):] if x.startswith(pad) else x for x in new_fn]
    return _edit(src, edited, new_fn, where + (" col0" if dedent and pad else ""))


def rewrite_whole(pick: Pick, src: Source) -> Edit | None:
    """A whole-function rewrite without markers: the function alone, its body replaced."""
    return bare_function(pick, src, "replace")


def _classes(src: Source) -> list[tuple[int, int]]:
    """(first row, last row) of classes / impls / structs of at most 120 lines."""
    if src.tree is None:
        return []
    return [(d.start, d.end) for d in flatten(collect(src.tree, src.text.encode()))
            if d.kind in ("type", "impl") and 3 <= d.end - d.start <= 120]


def whole_class(pick: Pick, src: Source) -> Edit | None:
    """A class shown whole between markers (the whole_class shape) with a line inside it edited:
    something appended to it."""
    lang, lines = src.language, src.lines
    found = _classes(src)
    if not found:
        return None
    first, last = pick.choice(found)
    inner = [i for i in range(first + 1, last) if lines[i].strip() and not is_trivial(lines[i])]
    if not inner:
        return None
    at = pick.choice(inner)
    word = pick.choice(WORDS)
    new_lines = list(lines)
    new_lines[at] = lines[at] + (f"  # {word}" if lang == "python" else f" // {word}")
    mark = marker(lang)
    out = ([mark] if first > 0 else []) + new_lines[first:last + 1] + ([mark] if last + 1 < len(lines) else [])
    return _edit(src, new_lines, out)


def new_function(pick: Pick, src: Source) -> Edit | None:
    """A new function added right after an existing one, at its indentation and with the file's
    blank-line spacing, shown with 1-3 lines of context on each side between markers."""
    lang, lines = src.language, src.lines
    fns = [f for f in fn_rows(src) if f[1] + 2 < len(lines) and not lines[f[1] + 1].strip()]
    if not fns:
        return None
    head, last, _ = pick.choice(fns)
    pad = indent_of(lines[head])
    gap = 1
    while last + gap < len(lines) and not lines[last + gap].strip():
        gap += 1
    gap -= 1  # blank lines after the function
    body = NEW_FN.get(lang, ["function {w}{n}(x) {{", "  return x + {m};", "}}"])
    w, n, m = pick.choice(WORDS), pick.int(0, 999), pick.int(0, 99)
    fn = [pad + x.format(w=w, n=n, m=m) for x in body]
    new_lines = lines[:last + 1] + [""] * gap + fn + lines[last + 1:]
    a, b = last + 1, last + 1 + gap + len(fn)  # the added stretch in new_lines
    lo, hi = window(new_lines, a, b + gap, pick.int(1, 3))
    mark = marker(lang)
    out = ([first_indent(new_lines[:lo]) + mark] if lo > 0 else []) + new_lines[lo:hi]
    if hi < len(new_lines):
        out.append(first_indent(new_lines[hi:]) + mark)
    return _edit(src, new_lines, out)
