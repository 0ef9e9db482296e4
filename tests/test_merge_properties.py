"""Property tests: random edits of real files, rendered as lazy snippets, either merge back to the
edited file exactly or are refused; arbitrary input never crashes the merge."""

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastapply.languages import error_count, parse
from fastapply.merge import structural_merge
from fastapply.merge.text import is_trivial

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "evals"

# A few built-in files so the properties still run where ../shared is absent.
_BUILTIN = [
    ("python", "import os\n\n\nclass A:\n    def f(self, x):\n        y = x + 1\n        return y\n\n"
               "    def g(self):\n        return os.getcwd()\n\n\ndef main():\n    a = A()\n    print(a.f(1))\n"
               "    print(a.g())\n\n\nif __name__ == '__main__':\n    main()\n"),
    ("go", "package main\n\nimport \"fmt\"\n\ntype T struct {\n\tA int\n\tB string\n}\n\nfunc (t T) Show() string {\n"
           "\treturn fmt.Sprintf(\"%d %s\", t.A, t.B)\n}\n\nfunc main() {\n\tt := T{A: 1, B: \"x\"}\n"
           "\tfmt.Println(t.Show())\n}\n"),
]


def _load_originals() -> list[tuple[str, str]]:
    path = DATA / "commits_dev.jsonl"
    if not path.exists():
        return _BUILTIN
    out = []
    for line in path.open(encoding="utf-8"):
        case = json.loads(line)
        if len(case["original"].splitlines()) <= 400:
            out.append((case["language"], case["original"]))
    return out[::4] + _BUILTIN  # a spread of repos and languages, bounded


ORIGINALS = _load_originals()
COMMENT = {"python": "#"}
WORDS = ["alpha", "beta", "gamma", "delta", "value", "result", "config", "count", "total", "item"]


def _window(lines: list[str], a: int, b: int, ctx: int) -> tuple[int, int]:
    """[lo, hi) around the edited stretch [a, b) with `ctx` context lines on each side, counted in
    lines that can anchor: blank lines and `}` / ` *` alone do not show where an edit starts or ends."""
    lo, hi = a, b
    for _ in range(ctx):
        lo = max(0, lo - 1)
        while lo > 0 and is_trivial(lines[lo]):
            lo -= 1
        hi = min(len(lines), hi + 1)
        while hi < len(lines) and is_trivial(lines[hi - 1]):
            hi += 1
    return lo, hi


def _first_indent(elided: list[str]) -> str:
    """A careful marker's indentation: that of the first line of the code it stands for."""
    first = next((x for x in elided if x.strip()), "")
    return first[: len(first) - len(first.lstrip())]


@st.composite
def edits(draw):
    lang, text = draw(st.sampled_from(ORIGINALS))
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    n = len(lines)
    if n < 12:
        return None
    n_sites = draw(st.integers(1, 2))
    cuts = sorted(draw(st.lists(st.integers(2, n - 3), min_size=n_sites, max_size=n_sites, unique=True)))
    if n_sites == 2 and cuts[1] - cuts[0] < 12:  # keep the two edit sites apart
        cuts = cuts[:1]
    new_lines = list(lines)
    changed: list[tuple[int, int]] = []  # (start, end) in new_lines of each edited stretch
    shift = 0
    for cut in cuts:
        at = cut + shift
        n_del = draw(st.integers(0, 2))
        n_ins = draw(st.integers(0 if n_del else 1, 3))
        indent = new_lines[at][: len(new_lines[at]) - len(new_lines[at].lstrip())]
        # inserted lines: statements in Python, comment lines elsewhere (so that most edits keep the
        # file parseable and the merge is really exercised instead of refused by the parse check)
        if lang == "python":
            ins = [f"{indent}{draw(st.sampled_from(WORDS))}_{draw(st.integers(0, 999))} = "
                   f"{draw(st.sampled_from(WORDS))}({draw(st.integers(0, 99))})" for _ in range(n_ins)]
        else:
            ins = [f"{indent}// note {draw(st.sampled_from(WORDS))} {draw(st.integers(0, 999))}" for _ in range(n_ins)]
        if n_del and draw(st.booleans()):  # an edited line: the old one with something appended
            old = new_lines[at]
            ins = [old + (f"  # {draw(st.sampled_from(WORDS))}" if lang == "python" else
                          f" // {draw(st.sampled_from(WORDS))}")] + ins[1:]
        new_lines[at:at + n_del] = ins
        changed.append((at, at + len(ins)))
        shift += len(ins) - n_del
    ctx = draw(st.integers(1, 4))  # 1: like hard_dev's sparse_context
    windows = []
    for a, b in changed:
        lo, hi = _window(new_lines, a, b, ctx)
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], hi)
        else:
            windows.append((lo, hi))
    marker = COMMENT.get(lang, "//") + " ... existing code ..."
    # Careful writers indent a marker like the first line of the code it stands for; loose ones put
    # every marker at column 0 and may leave out the first or last one (the head or tail is kept).
    loose = draw(st.booleans())
    drop = draw(st.sampled_from(["none", "lead", "trail"])) if loose else "none"
    # A left-out edge marker is only readable when the snippet shows real code on that side of the
    # edit (blank context lines at the snippet's ends carry nothing).
    if drop == "lead" and all(not x.strip() for x in new_lines[windows[0][0]:changed[0][0]]):
        drop = "none"
    if drop == "trail" and all(not x.strip() for x in new_lines[changed[-1][1]:windows[-1][1]]):
        drop = "none"

    def indent(elided: list[str]) -> str:
        return "" if loose else _first_indent(elided)

    out: list[str] = []
    pos = 0
    for lo, hi in windows:
        if lo > pos and not (pos == 0 and drop == "lead"):
            out.append(indent(new_lines[pos:lo]) + marker)
        out.extend(new_lines[lo:hi])
        pos = hi
    if pos < len(new_lines) and drop != "trail":
        out.append(indent(new_lines[pos:]) + marker)
    return lang, text, "\n".join(new_lines) + "\n", "\n".join(out) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(edits())
def test_random_edit_merges_exactly_or_refuses(case):
    check_exact_or_refused(case)


def check_exact_or_refused(case) -> None:
    if case is None:
        return
    lang, original, edited, update = case
    res = structural_merge(original, update, lang)
    if not res.ok:
        return
    if _syntax_errors(edited, lang) > _syntax_errors(original, lang):
        # A random edit can break the file (delete a `}`, a body): the merge never returns a file
        # that parses worse than the original, so it cannot reproduce this one. It may refuse, or
        # read the snippet another way (e.g. a header shown without its body keeps the body).
        assert _syntax_errors(res.text, lang) <= _syntax_errors(original, lang), (update, res.reasons)
    else:
        assert res.text == edited, (update, res.reasons)


def _syntax_errors(text: str, lang: str) -> int:
    tree = parse(lang, text)
    return error_count(tree) if tree is not None else 0


LANGS = [None, "python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "markdown", "sql"]
_code_chars = st.sampled_from(list("abcxyz(){}[];:,.=+-*/#<>'\"\\ \t\n") + ["...", "// ... existing code ...\n",
                                                                          "# ...\n", "def f():\n", "class A {\n"])
code_text = st.lists(_code_chars, max_size=120).map("".join)


@settings(max_examples=100, deadline=None)
@given(st.one_of(code_text, st.text(max_size=300)), st.one_of(code_text, st.text(max_size=300)),
       st.sampled_from(LANGS))
def test_never_crashes_on_arbitrary_text(original, update, lang):
    res = structural_merge(original, update, lang)
    assert res.ok or res.reasons
    if res.ok:
        assert isinstance(res.text, str)


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=300), st.sampled_from(LANGS))
def test_never_crashes_on_decoded_bytes(a, b, lang):
    structural_merge(a.decode("utf-8", "replace"), b.decode("latin-1"), lang)


STATEMENT = {"python": "{w}_{n} = {v}({m})", "go": "{w}_{n} := {v}({m})", "rust": "let {w}_{n} = {v}({m});",
             "java": "int {w}_{n} = {v}({m});"}


def _functions(lang: str, lines: list[str]):
    """(header row, last row, body indent) of single-line-header functions whose body can be swapped."""
    from fastapply.languages import parse
    from fastapply.merge.defs import collect, flatten

    src = "\n".join(lines) + "\n"
    tree = parse(lang, src)
    if tree is None:
        return []
    out = []
    for d in flatten(collect(tree, src.encode())):
        body = d.node.child_by_field_name("body") if d.kind == "fn" else None
        if body is None or d.end - d.node_start < 2:
            continue
        first = d.node_start + 1
        if lang == "python" and body.start_point.row != first:
            continue
        if lang != "python" and (body.start_point.row != d.node_start or lines[d.end].strip() != "}"):
            continue
        inner = lines[first]
        out.append((d.node_start, d.end, inner[: len(inner) - len(inner.lstrip())]))
    return out


def _statements(draw, lang: str, indent: str, most: int) -> list[str]:
    """1..most new statements in the language, at `indent`."""
    stmt = STATEMENT.get(lang, "const {w}_{n} = {v}({m});")
    return [indent + stmt.format(w=draw(st.sampled_from(WORDS)), n=draw(st.integers(0, 999)),
                                 v=draw(st.sampled_from(WORDS)), m=draw(st.integers(0, 99)))
            for _ in range(draw(st.integers(1, most)))]


@st.composite
def rewrites(draw):
    """A function's body rewritten whole, shown as the whole function between markers (the shape an
    agent sends when it rewrites one function), sometimes followed by a new sibling function."""
    lang, text = draw(st.sampled_from(ORIGINALS))
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    fns = _functions(lang, lines)
    if not fns:
        return None
    head, last, indent = draw(st.sampled_from(fns))
    body = _statements(draw, lang, indent, 3)
    closer = [] if lang == "python" else [lines[last]]
    new_fn = [lines[head]] + body + closer
    edited = lines[:head] + new_fn + lines[last + 1:]
    marker = COMMENT.get(lang, "//") + " ... existing code ..."
    pad = lines[head][: len(lines[head]) - len(lines[head].lstrip())]
    out = ([pad + marker] if head > 0 else []) + new_fn
    if last + 1 < len(lines):
        out.append(pad + marker)
    return lang, text, "\n".join(edited) + "\n", "\n".join(out) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rewrites())
def test_whole_function_rewrite_merges_exactly_or_refuses(case):
    check_exact_or_refused(case)


@st.composite
def tail_edits(draw):
    """Code appended at the end of the file, shown with a few lines of context and no trailing
    marker; the appended code copies some lines that occur elsewhere in the file, so the region's
    last line may match an earlier place (an inner anchor must carry the placement)."""
    lang, text = draw(st.sampled_from(ORIGINALS))
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    code = [ln for ln in lines if ln.strip()]
    if len(lines) < 12 or not code:
        return None
    copied = draw(st.lists(st.sampled_from(code), min_size=1, max_size=3))
    fresh = [f"{COMMENT.get(lang, '//')} appended {draw(st.sampled_from(WORDS))} {draw(st.integers(0, 999))}"]
    added = draw(st.permutations(copied + fresh))
    edited = lines + list(added)
    ctx = draw(st.integers(2, 4))
    marker = COMMENT.get(lang, "//") + " ... existing code ..."
    update = [marker] + lines[-ctx:] + list(added)
    return lang, text, "\n".join(edited) + "\n", "\n".join(update) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tail_edits())
def test_code_appended_at_the_end_merges_exactly_or_refuses(case):
    check_exact_or_refused(case)


@st.composite
def bare_functions(draw):
    """One function edited and shown alone, whole, with no marker and no enclosing class (the shape
    agents send most): statements added at the top or the bottom of its body, or the body replaced.
    The snippet may be pasted at column 0. Everything else in the file stays."""
    lang, text = draw(st.sampled_from(ORIGINALS))
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    fns = _functions(lang, lines)
    if not fns:
        return None
    head, last, indent = draw(st.sampled_from(fns))
    new = _statements(draw, lang, indent, 2)
    body_end = last + 1 if lang == "python" else last
    body = lines[head + 1:body_end]
    where = draw(st.sampled_from(["top", "bottom", "replace"]))
    body = new + body if where == "top" else body + new if where == "bottom" else new
    new_fn = [lines[head]] + body + lines[body_end:last + 1]
    edited = lines[:head] + new_fn + lines[last + 1:]
    pad = lines[head][: len(lines[head]) - len(lines[head].lstrip())]
    if draw(st.booleans()):
        new_fn = [x[len(pad):] if x.startswith(pad) else x for x in new_fn]
    return lang, text, "\n".join(edited) + "\n", "\n".join(new_fn) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bare_functions())
def test_bare_function_merges_exactly_or_refuses(case):
    check_exact_or_refused(case)


def _classes(lang: str, lines: list[str]) -> list[tuple[int, int]]:
    """(first row, last row) of classes / impls / structs of at most 120 lines."""
    from fastapply.merge.defs import collect, flatten

    src = "\n".join(lines) + "\n"
    tree = parse(lang, src)
    if tree is None:
        return []
    return [(d.start, d.end) for d in flatten(collect(tree, src.encode()))
            if d.kind in ("type", "impl") and 3 <= d.end - d.start <= 120]


@st.composite
def whole_classes(draw):
    """A class shown whole between markers (the whole_class shape) with a line inside it edited:
    something appended to it, or a statement inserted after it."""
    lang, text = draw(st.sampled_from(ORIGINALS))
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    found = _classes(lang, lines)
    if not found:
        return None
    first, last = draw(st.sampled_from(found))
    inner = [i for i in range(first + 1, last) if lines[i].strip() and not is_trivial(lines[i])]
    if not inner:
        return None
    at = draw(st.sampled_from(inner))
    word = draw(st.sampled_from(WORDS))
    new_lines = list(lines)
    new_lines[at] = lines[at] + (f"  # {word}" if lang == "python" else f" // {word}")
    cls = new_lines[first:last + 1]
    marker = COMMENT.get(lang, "//") + " ... existing code ..."
    out = ([marker] if first > 0 else []) + cls + ([marker] if last + 1 < len(lines) else [])
    return lang, text, "\n".join(new_lines) + "\n", "\n".join(out) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(whole_classes())
def test_whole_class_merges_exactly_or_refuses(case):
    check_exact_or_refused(case)


NEW_FN = {"python": ["def {w}_{n}(x):", "    return x + {m}"], "go": ["func {w}{n}(x int) int {{", "\treturn x + {m}", "}}"],
          "rust": ["fn {w}_{n}(x: i32) -> i32 {{", "    x + {m}", "}}"],
          "java": ["int {w}{n}(int x) {{", "  return x + {m};", "}}"]}


@st.composite
def new_functions(draw):
    """A new function added right after an existing one, at its indentation and with the file's
    blank-line spacing, shown with 1-3 lines of context on each side between markers."""
    lang, text = draw(st.sampled_from(ORIGINALS))
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    fns = [f for f in _functions(lang, lines) if f[1] + 2 < len(lines) and not lines[f[1] + 1].strip()]
    if not fns:
        return None
    head, last, _ = draw(st.sampled_from(fns))
    pad = lines[head][: len(lines[head]) - len(lines[head].lstrip())]
    gap = 1
    while last + gap < len(lines) and not lines[last + gap].strip():
        gap += 1
    gap -= 1  # blank lines after the function
    body = NEW_FN.get(lang, ["function {w}{n}(x) {{", "  return x + {m};", "}}"])
    w, n, m = draw(st.sampled_from(WORDS)), draw(st.integers(0, 999)), draw(st.integers(0, 99))
    fn = [pad + x.format(w=w, n=n, m=m) for x in body]
    new_lines = lines[:last + 1] + [""] * gap + fn + lines[last + 1:]
    a, b = last + 1, last + 1 + gap + len(fn)  # the added stretch in new_lines
    lo, hi = _window(new_lines, a, b + gap, draw(st.integers(1, 3)))
    marker = COMMENT.get(lang, "//") + " ... existing code ..."
    out = ([_first_indent(new_lines[:lo]) + marker] if lo > 0 else []) + new_lines[lo:hi]
    if hi < len(new_lines):
        out.append(_first_indent(new_lines[hi:]) + marker)
    return lang, text, "\n".join(new_lines) + "\n", "\n".join(out) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(new_functions())
def test_new_function_merges_exactly_or_refuses(case):
    check_exact_or_refused(case)
