"""The docs stay true to the code: docs/RULEBOOK.md is the rules' own docstrings, every relative link
in README.md and docs/*.md resolves (to a file, and to a heading where it names one), every
`fastapply` / `fastapply-lsp` flag a doc shows exists in the real parser, the README keeps the
sections of a user's guide and stays short, and docs/ARCHITECTURE.md names every merge module."""

from __future__ import annotations

import argparse
import difflib
import re
from collections import Counter
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

import fastapply.merge.checks as checks
from fastapply.merge.checks import catalogue

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]  # (not docs/drafts/: work in progress)
README_MAX_LINES = 460
README_SECTIONS = [
    "Install",
    "Two commands for a fresh machine",
    "Apply an edit: fastapply apply",
    "Python API",
    "Serve: fastapply serve (gRPC and HTTP) and fastapply client",
    "HTTP clients",
    "Editors: fastapply-lsp, VS Code, Neovim",
    "Batch edits: fastapply codemod",
    "Models",
    "Training data and adapters: fastapply data, fastapply train",
    "Serving on vLLM",
    "Evals",
    "Limits and bad input",
    "Tests",
]
MD = MarkdownIt("commonmark").enable("table")


def _headings(path: Path, level: int | None = None) -> list[str]:
    """The plain text of the file's headings (code spans without their backticks), in order."""
    tokens = MD.parse(path.read_text(encoding="utf-8"))
    return ["".join(c.content for c in tokens[k + 1].children or []) for k, t in enumerate(tokens)
            if t.type == "heading_open" and (level is None or t.tag == f"h{level}")]


def _slugs(path: Path) -> set[str]:
    """GitHub's anchors for the file's headings: lower case, punctuation dropped, spaces to hyphens,
    a repeated anchor numbered (`-1`, `-2`)."""
    seen: Counter[str] = Counter()
    out = set()
    for text in _headings(path):
        slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
        out.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return out


def _links(path: Path) -> list[str]:
    """Every link and image target in the file (code spans and code blocks hold none)."""
    out = []
    for tok in MD.parse(path.read_text(encoding="utf-8")):
        for child in tok.children or []:
            if child.type == "link_open":
                out.append(child.attrs["href"])
            elif child.type == "image":
                out.append(child.attrs["src"])
    return out


# -- the rulebook ----------------------------------------------------------------------------------

def test_rulebook_is_generated_from_the_rules_docstrings():
    committed = (ROOT / catalogue.DOC_PATH).read_text(encoding="utf-8")
    rendered = catalogue.render()
    if committed != rendered:
        diff = "".join(list(difflib.unified_diff(committed.splitlines(True), rendered.splitlines(True),
                                                 "committed", "rendered"))[:40])
        pytest.fail(f"{catalogue.DOC_PATH} differs from the rules' docstrings: regenerate it with "
                    f"`.venv/bin/{catalogue.REGENERATE}` and commit it.\n{diff}")


def test_rulebook_has_every_tuple_and_each_rule_as_one_list_item_in_order():
    tuples = [name for name in vars(checks) if name.endswith("_CHECKS")]
    books = catalogue.books()
    assert [b.name for b in books] == tuples
    tokens = MD.parse(catalogue.render())
    items: dict[str, list[str]] = {}
    section = None
    for k, tok in enumerate(tokens):
        if tok.type == "heading_open":
            section = tokens[k + 1].content.strip("`")
        elif tok.type == "list_item_open" and tok.level == 1 and section in tuples:
            first_line = tokens[k + 2].content.splitlines()[0]  # (list_item_open, paragraph_open, inline)
            items.setdefault(section, []).append(re.match(r"\*\*`(\w+)`\*\*", first_line).group(1))
    for book in books:
        assert items[book.name] == [r.__name__ for r in getattr(checks, book.name)], book.name


def test_a_docstring_line_that_would_open_a_list_stays_text():
    assert catalogue._indented("the edit:\n- a line\n\nnext paragraph\n1. x", "   ") == \
        "the edit: - a line\n\n   next paragraph 1. x"


# -- links, flags, sections ------------------------------------------------------------------------

@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: Path):
    broken = []
    for href in _links(doc):
        if re.match(r"[a-z][a-z+.-]*:", href):  # (http:, https:, mailto:)
            continue
        path, _, fragment = href.partition("#")
        target = (doc.parent / path).resolve() if path else doc
        if not target.exists():
            broken.append(f"{href} (no file {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target})")
        elif fragment and target.suffix == ".md" and fragment not in _slugs(target):
            broken.append(f"{href} (no heading #{fragment} in {target.relative_to(ROOT)})")
    assert not broken, f"{doc.relative_to(ROOT)}: fix these links: {broken}"


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """`fastapply <cmd> [<subcmd>]` and `fastapply-lsp` -> the parser that reads their options."""
    from fastapply.cli import build_parser
    from lsp.server import build_parser as build_lsp_parser

    out = {"fastapply-lsp": build_lsp_parser()}
    todo = [("fastapply", build_parser())]
    while todo:
        name, parser = todo.pop()
        out[name] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {sub}", p) for sub, p in action.choices.items()]
    return out


def _documented_command_lines() -> list[tuple[Path, str]]:
    """(doc, command line) for every `fastapply ...` line in a code block, continuations joined."""
    out = []
    for doc in DOCS:
        for tok in MD.parse(doc.read_text(encoding="utf-8")):
            if tok.type in ("fence", "code_block"):
                for line in tok.content.replace("\\\n", " ").splitlines():
                    line = re.sub(r"^\.venv/bin/", "", line.strip())
                    if re.match(r"fastapply(-lsp)?(\s|$)", line):
                        out.append((doc, line))
    return out


def test_every_documented_flag_exists_in_the_cli():
    parsers = _parsers()
    lines = _documented_command_lines()
    assert len(lines) > 20
    wrong = []
    for doc, line in lines:
        words = line.split("#")[0].split()
        name = words[0]
        for word in words[1:]:  # the longest run of subcommand names picks the parser
            if f"{name} {word}" not in parsers:
                break
            name = f"{name} {word}"
        known = {s for a in parsers[name]._actions for s in a.option_strings}
        for flag in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", " ".join(words[1:])):
            if flag not in known:
                wrong.append(f"{doc.relative_to(ROOT)}: `{line}` uses {flag}, which `{name} --help` does not list")
    assert not wrong, "fix the docs or the CLI:\n" + "\n".join(wrong)


def test_readme_is_a_short_users_guide_with_its_sections():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < README_MAX_LINES, (f"README.md has {lines} lines: move detail into docs/ (it is a "
                                      f"user's guide, under {README_MAX_LINES} lines)")
    assert _headings(README, level=2) == README_SECTIONS, (
        "README.md's sections changed: keep them, or change README_SECTIONS in tests/test_docs.py on purpose")


def test_architecture_names_every_merge_module():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    merge = ROOT / "fastapply" / "merge"
    missing = [p.name for p in sorted(merge.glob("*.py")) if p.name != "__init__.py" and p.name not in text]
    assert not missing, f"say what these merge modules do in docs/ARCHITECTURE.md: {missing}"
