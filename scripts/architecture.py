"""Print the project's import graph, its cycles (none, we hope) and its longest functions.

    python scripts/architecture.py [--top N] [--max-lines 80] [--quiet]

Edges are every `import` / `from ... import` of a project module, at any depth (function-level
imports count: they run too), except those under `if TYPE_CHECKING:`, which never run. A
dotted-path string naming a project module (a plug-in registry such as `cli.FRONTENDS` or
`backends.MODEL_BACKENDS`) counts as an edge as well. Importing `a.b.c` is an edge to `a.b.c`
only (not to the packages above it), as in grimp and import-linter.

Function length: from the `def` line to the last line of the body. Exit status 1 when a cycle
is found or, with --max-lines, when a function in fastapply/ is longer than that.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("fastapply", "lsp", "evals")
# "fastapply.engine", "fastapply.engine:ModelEngine"
_DOTTED = re.compile(r"^((?:%s)(?:\.\w+)+)(?::\w+)?$" % "|".join(PACKAGES))


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _walk(node: ast.AST):
    """Every node below `node`, skipping the bodies of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for orelse in child.orelse:
                yield orelse
                yield from _walk(orelse)
            continue
        yield child
        yield from _walk(child)


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Project modules that module `name` imports."""
    is_pkg = path.name == "__init__.py"
    found = set()
    for node in _walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_pkg else name.split(".")[:-1]
                here = here[:len(here) - (node.level - 1)]
                base = ".".join(here + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _DOTTED.match(node.value)
            # only a whole module name ("fastapply.applyEdit" is an LSP command, not a module)
            targets = [m.group(1)] if m and m.group(1) in known else []
        for t in targets:
            while t and t not in known:  # `import a.b.attr` style: the longest known prefix
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def functions(paths: dict[str, Path], package: str = "fastapply") -> list[tuple[int, str, str]]:
    """(lines, qualified name, path:line) of every function in `package`, longest first."""
    out = []
    for name, path in paths.items():
        if not (name == package or name.startswith(package + ".")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

        def visit(node, prefix=""):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    qual = prefix + child.name
                    where = f"{path.relative_to(ROOT)}:{child.lineno}"
                    out.append((child.end_lineno - child.lineno + 1, qual, where))
                    visit(child, qual + ".")
                elif isinstance(child, ast.ClassDef):
                    visit(child, prefix + child.name + ".")
                else:
                    visit(child, prefix)

        visit(tree)
    return sorted(out, key=lambda f: (-f[0], f[1]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top", type=int, default=5, help="how many of the longest functions to print")
    p.add_argument("--max-lines", type=int, default=None, help="fail when a function in fastapply/ is longer")
    p.add_argument("--quiet", action="store_true", help="no graph, only the verdicts")
    args = p.parse_args(argv)
    paths = modules()
    known = set(paths)
    graph = {name: imports(name, path, known) for name, path in paths.items()}
    if not args.quiet:
        print(f"import graph ({len(graph)} modules, {sum(map(len, graph.values()))} edges):")
        for name in sorted(graph):
            print(f"  {name} -> {', '.join(sorted(graph[name])) or '(nothing)'}")
    found = cycles(graph)
    print("cycles: " + ("none" if not found else "; ".join(" <-> ".join(c) for c in found)))
    funcs = functions(paths)
    lines, qual, where = funcs[0]
    print(f"longest function in fastapply/: {qual} ({where}), {lines} lines")
    for lines_i, qual_i, where_i in funcs[1:args.top]:
        print(f"  then {qual_i} ({where_i}), {lines_i} lines")
    too_long = args.max_lines is not None and lines > args.max_lines
    if too_long:
        print(f"functions over {args.max_lines} lines: "
              + ", ".join(f"{q} ({n})" for n, q, _ in funcs if n > args.max_lines))
    return 1 if found or too_long else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # piped into `head`
        sys.exit(0)
