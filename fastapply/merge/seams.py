"""Seams: where a placed region meets the original lines kept around it. A snippet that changes
indentation (wraps code in a new block, or removes one) only shows part of the re-indented code; if
the merge keeps the rest at its old indentation, the file is wrong exactly at a seam: a new block
opener followed by code that is not inside it, or code indented deeper after a line that ends a
statement. tree-sitter accepts both (an empty block, stray indentation); this reads them off the lines.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapply.merge.text import indent_of, is_blank

BRACE_LANGUAGES = frozenset({"javascript", "typescript", "tsx", "jsx", "go", "rust", "java", "c", "cpp",
                             "csharp", "kotlin", "swift", "scala", "php"})
# A line starting with one of these continues the line before it (a method chain, an operator, a closer).
_CONTINUES = (".", "?", ":", "+", "-", "*", "/", "%", "&", "|", "^", ")", "]", "}", ">", "<", "=", ",")
_COMMENT = ("#", "//", "/*", "*", "--")
# Go ends statements without `;`: a line ending otherwise than with one of these ends a statement.
_GO_OPEN_ENDS = tuple("{([,:+-*/%&|^=<>!.")


def seam_pairs(orig: list[str], spans: list[tuple[int, int, list[str]]]) -> Iterator[tuple[str, str]]:
    """(line above, line below) for each seam of the merged file: the non-blank lines on either side
    of a boundary between kept original lines and a region's replacement (or a deletion). Pairs that
    are neighbours in the original already are skipped: they say nothing about the edit."""
    adjacent = set(zip(*_nonblank_pairs(orig)))
    lines: list[tuple[str, bool]] = []  # non-blank merged lines, each with: a seam lies just above it
    seam = False
    pos = 0

    def add(chunk: list[str]) -> None:
        nonlocal seam
        for x in chunk:
            if not is_blank(x):
                lines.append((x, seam))
                seam = False

    for start, end, repl in spans:
        add(orig[pos:start])
        seam = True
        add(repl)
        seam = True
        pos = end
    add(orig[pos:])
    for k in range(1, len(lines)):
        (a, _), (b, at_seam) = lines[k - 1], lines[k]
        if at_seam and (a, b) not in adjacent:
            yield a, b


def _nonblank_pairs(orig: list[str]) -> tuple[list[str], list[str]]:
    code = [x for x in orig if not is_blank(x)]
    return code[:-1], code[1:]


# Languages whose blocks open with a trailing `:` (the rest open with `{`). Without a language
# (text: no grammar, or none named) either opens one: a doubt the merge then weighs is a refusal
# at worst, where reading `try:` as no opener let a wrap through unseen.
_COLON_BLOCKS = frozenset({"python"})


def opens_block(line: str, lang: str | None) -> bool:
    s = line.rstrip()
    if not s or s.lstrip().startswith(_COMMENT):
        return False
    if lang is None:
        return s.endswith((":", "{"))
    return s.endswith(":") if lang in _COLON_BLOCKS else s.endswith("{")


def _ends_statement(line: str, lang: str | None) -> bool:
    s = line.rstrip()
    if not s or s.lstrip().startswith(_COMMENT) or "`" in s:
        return False
    if lang == "go":
        return not s.endswith(_GO_OPEN_ENDS)
    return s.endswith(";") or s.lstrip() == "}"


def broken_seam(a: str, b: str, lang: str | None) -> str | None:
    """Why the seam between lines a (above) and b (below) is wrong, or None."""
    if lang != "python" and lang not in BRACE_LANGUAGES:
        return None
    if b.lstrip().startswith(_COMMENT) or a.lstrip().startswith(_COMMENT):
        return None
    ia, ib = len(indent_of(a)), len(indent_of(b))
    if opens_block(a, lang) and ib <= ia and not b.lstrip().startswith(_CONTINUES):
        return f"`{a.strip()[:50]}` opens a block but the next line, `{b.strip()[:50]}`, is not inside it"
    if lang in BRACE_LANGUAGES and ib > ia and _ends_statement(a, lang) and not b.lstrip().startswith(_CONTINUES):
        return f"`{b.strip()[:50]}` is indented deeper than `{a.strip()[:50]}`, which ends a statement"
    return None
