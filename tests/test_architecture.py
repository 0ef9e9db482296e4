"""No import cycle (by `scripts/architecture.py`, and as Python runs imports) and no function in fastapply/ is long."""

from __future__ import annotations

import ast
import functools
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "architecture.py"


@functools.cache
def _module():
    spec = importlib.util.spec_from_file_location("architecture", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cycle_finder_finds_cycles():
    arch = _module()
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert arch.cycles(graph) == [["a", "b", "c"]]
    assert arch.cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_and_no_function_over_80_lines():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--max-lines", "80"], capture_output=True, text=True,
                          timeout=120)
    assert "cycles: none" in proc.stdout, proc.stdout[-2000:]
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "fastapply.api -> " in proc.stdout and "longest function in fastapply/: " in proc.stdout


# -- import cycles as Python runs them -------------------------------------------------------------
# scripts/architecture.py counts every import, function-level ones included, and `from pkg import mod`
# as an edge to pkg.mod only. What fails at import time is narrower and one edge wider: only
# statements that run when the module is imported (module and class bodies, not function bodies,
# not `if TYPE_CHECKING:`), and `from pkg import mod` (or `import pkg.mod as m`, which compiles to
# the same attribute read) runs and reads pkg/__init__ as well as pkg.mod. `from pkg.mod import name`
# and a plain `import pkg.mod` read only pkg.mod: pkg/__init__ runs first, but when it is the module
# still initialising, nothing is read from it.

def _run_on_import(node: ast.AST):
    """The statements below `node` that run when its module is imported."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(child, ast.If) and _module()._is_type_checking(child):
            for other in child.orelse:
                yield other
                yield from _run_on_import(other)
            continue
        yield child
        yield from _run_on_import(child)


def _targets(node: ast.AST, name: str, is_pkg: bool, known: set[str]) -> list[str]:
    """The modules one import statement runs and reads (before trimming to known modules)."""
    if isinstance(node, ast.Import):
        out = []
        for alias in node.names:
            parent, _, _ = alias.name.rpartition(".")
            out += [alias.name] + ([parent] if alias.asname and parent else [])
        return out
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        here = name.split(".") if is_pkg else name.split(".")[:-1]
        base = ".".join(here[:len(here) - (node.level - 1)] + ([base] if base else []))
    return [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> the project modules its import runs and reads (see above)."""
    paths = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    known = set(paths)
    graph = {}
    for name, path in paths.items():
        edges = set()
        for node in _run_on_import(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for t in _targets(node, name, path.name == "__init__.py", known):
                while t and t not in known:  # `import pkg.mod.attr`: the longest known prefix
                    t = t.rpartition(".")[0]
                if t and t != name:
                    edges.add(t)
        graph[name] = edges
    return graph


def test_import_graph_counts_what_runs_at_import(tmp_path):
    """The issue-40 cycle in miniature, and what does not count: function bodies, TYPE_CHECKING."""
    files = {
        "pkg/__init__.py": "from pkg.api import Applier\n",
        "pkg/api.py": "from pkg.pipeline import run\nclass Applier:\n    pass\n",
        "pkg/pipeline.py": "from pkg import judge as judge_mod\ndef run():\n    pass\n",
        "pkg/judge.py": "import pkg.api as api\n",
        "pkg/lazy.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import api\n"
                        "def f():\n    from pkg import pipeline\nclass C:\n    from . import judge\n"),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.pipeline"] == {"pkg", "pkg.judge"}  # the package's __init__ and the module
    assert graph["pkg.judge"] == {"pkg", "pkg.api"}  # `import a.b as c` reads a too
    assert graph["pkg.lazy"] == {"pkg", "pkg.judge"}  # a class body runs; a function body does not
    assert _module().cycles(graph) == [["pkg", "pkg.api", "pkg.judge", "pkg.pipeline"]]


def test_no_import_cycle_at_import_time():
    found = _module().cycles(import_graph(ROOT, ("fastapply", "lsp")))
    assert not found, ("Break these import cycles (each module imports, at import time, one that leads "
                       "back to it; import the module itself rather than its package's re-exports, or "
                       "import inside the function that needs it): "
                       + "; ".join(" <-> ".join(c) for c in found))
