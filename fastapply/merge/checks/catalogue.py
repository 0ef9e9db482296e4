"""The rulebook as Markdown, rendered from the rules' own docstrings (docs/RULEBOOK.md).

    python -m fastapply.merge.checks.catalogue                          # print it
    python -m fastapply.merge.checks.catalogue --out docs/RULEBOOK.md   # regenerate the committed copy

What the book says about a rule is the rule's docstring, and its order is the order of the tuples
in `checks/__init__.py` (the order they run in, which is behaviour), so the catalogue cannot drift
from the code: to change what it says, edit the docstring and regenerate. `tests/test_docs.py`
fails when the committed file differs from `render()`. Links point from docs/ to the rule modules.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

import fastapply.merge.checks as checks
from fastapply.fsutil import atomic_write

PACKAGE = Path(checks.__file__).parent
# Where the book lives, relative to the repository root, and the way from there to the modules.
DOC_PATH = "docs/RULEBOOK.md"
SOURCE_LINK = "../fastapply/merge/checks/"
REGENERATE = f"python -m fastapply.merge.checks.catalogue --out {DOC_PATH}"
# Modules that hold no rules: the contexts and the runner, shared helpers, this renderer.
NOT_RULES = ("base", "helpers", "catalogue")
# A docstring line that would open a Markdown block (a list, a heading, a quote) if it began a line.
_BLOCK_START = re.compile(r"([-+*>#]|\d+[.)])(\s|$)")


@dataclass(frozen=True)
class Rule:
    name: str
    module: str  # the module's own name in the package (`region_copies`)
    doc: str


@dataclass(frozen=True)
class Book:
    """One ordered tuple of rules: what it judges, its context, and its rules in the order they run."""

    name: str  # `REGION_CHECKS`
    comment: str  # the source comment above the tuple in `checks/__init__.py`
    context: str  # the context class every rule of the tuple reads (`RegionFit`)
    rules: tuple[Rule, ...]


def books() -> list[Book]:
    """Every `*_CHECKS` tuple of `checks/__init__.py`, in source order."""
    source = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    out = []
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else \
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id.endswith("_CHECKS"):
            rules = tuple(_rule(f) for f in getattr(checks, target.id))
            out.append(Book(target.id, _comment_above(lines, node.lineno), _context(target.id, rules), rules))
    return out


def _rule(func) -> Rule:
    return Rule(func.__name__, func.__module__.rsplit(".", 1)[-1], inspect.getdoc(func) or "")


def _context(book: str, rules: tuple[Rule, ...]) -> str:
    """The one context class the tuple's rules read (their first parameter's annotation)."""
    names = {str(next(iter(inspect.signature(getattr(checks, r.name)).parameters.values())).annotation)
             for r in rules}
    if len(names) != 1:
        raise ValueError(f"{book}: its rules read different contexts {sorted(names)}; give each context its tuple")
    return names.pop()


def _comment_above(lines: list[str], lineno: int) -> str:
    """The `#` comment lines right above line `lineno` (1-based), joined."""
    above = []
    for line in reversed(lines[:lineno - 1]):
        if not line.startswith("#"):
            break
        above.insert(0, line.lstrip("#").strip())
    return " ".join(above)


def rule_modules() -> list[str]:
    """The package's modules that hold rules, in name order."""
    return sorted(m.name for m in pkgutil.iter_modules([str(PACKAGE)]) if m.name not in NOT_RULES)


def _module_doc(name: str) -> str:
    return inspect.getdoc(importlib.import_module(f"{checks.__name__}.{name}")) or ""


def _link(module: str) -> str:
    return f"[`{module}.py`]({SOURCE_LINK}{module}.py)"


def _indented(doc: str, indent: str) -> str:
    """`doc` as the body of a list item: every line but the first indented, and a line that would
    open a Markdown block (`- x`, `1. x`) joined to the line above so that it stays text."""
    out: list[str] = []
    for line in doc.splitlines():
        if out and out[-1] and _BLOCK_START.match(line):
            out[-1] += " " + line
        else:
            out.append(line)
    return "\n".join(out[:1] + [indent + x if x else "" for x in out[1:]])


def _render_book(book: Book) -> list[str]:
    context_doc = inspect.getdoc(getattr(checks, book.context)) or ""
    out = [f"## `{book.name}`", "", book.comment, "",
           f"Context `{book.context}`: {context_doc}", "",
           f"{len(book.rules)} rules, run in this order; the first reason wins.", ""]
    for k, rule in enumerate(book.rules, 1):
        marker = f"{k}. "
        out.append(f"{marker}**`{rule.name}`** ({_link(rule.module)}):")
        out.append(" " * len(marker) + _indented(rule.doc, " " * len(marker)))
        out.append("")
    return out


def _render_modules(all_books: list[Book]) -> list[str]:
    where: dict[str, list[str]] = {}
    for book in all_books:
        for k, rule in enumerate(book.rules, 1):
            where.setdefault(rule.module, []).append(f"`{rule.name}`: [`{book.name}`](#{book.name.lower()}) {k}")
    out = ["## The modules", "",
           "Each module holds the rules about one kind of doubt; its docstring says which.", ""]
    for name in rule_modules():
        out += [f"### {_link(name)}", "", _module_doc(name), "", "Its rules:", ""]
        out += [f"- {entry}" for entry in where.get(name, ["none"])] + [""]
    return out


def render() -> str:
    """The whole rulebook, as Markdown."""
    all_books = books()
    head = [f"<!-- Generated by `{REGENERATE}` from the docstrings in fastapply/merge/checks/."
            " Do not edit by hand: edit the docstrings and regenerate (tests/test_docs.py checks). -->",
            "", "# The merge's rulebook", "",
            inspect.getdoc(checks) or "", "",
            "Where the rulebook sits in the merge, and the refusals that live outside these tuples: "
            "[ARCHITECTURE.md](ARCHITECTURE.md#the-structural-merge).", "",
            "## Contexts", "", _module_doc("base"), "",
            "| tuple | context | rules | what it judges |", "|---|---|---|---|"]
    head += [f"| [`{b.name}`](#{b.name.lower()}) | `{b.context}` | {len(b.rules)} | {b.comment} |"
             for b in all_books]
    body = [line for book in all_books for line in _render_book(book)]
    return "\n".join(head + [""] + body + _render_modules(all_books)).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m fastapply.merge.checks.catalogue",
                                description="Render the merge's rulebook (Markdown) from the rules' docstrings.")
    p.add_argument("--out", type=Path, help=f"write it to this file (the committed copy is {DOC_PATH}); "
                                            "default: print it")
    args = p.parse_args(argv)
    text = render()
    if args.out is None:
        print(text, end="")
    else:
        atomic_write(args.out, text.encode("utf-8"))


if __name__ == "__main__":
    main()
