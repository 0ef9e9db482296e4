"""Language names, detection from a name or path, and cached tree-sitter parsers.

Only the grammars installed as wheels are parseable; other languages (markdown, sql, ...)
are still detected so callers can pick the line-anchor fallback.
"""

from __future__ import annotations

import os
from functools import lru_cache

import tree_sitter

# Canonical names and their aliases (what callers or agents tend to send).
_ALIASES = {
    "py": "python", "python3": "python",
    "js": "javascript", "node": "javascript", "mjs": "javascript", "cjs": "javascript",
    "ts": "typescript",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp", "cxx": "cpp", "cc": "cpp", "hpp": "cpp",
    "h": "c",
    "md": "markdown",
    "sh": "bash", "shell": "bash", "zsh": "bash",
    "yml": "yaml",
    "cs": "csharp", "c#": "csharp",
    "kt": "kotlin", "rb": "ruby",
}

_EXTENSIONS = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "jsx",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".md": "markdown", ".markdown": "markdown",
    ".sql": "sql", ".sh": "bash", ".bash": "bash",
    ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml",
    ".html": "html", ".css": "css", ".rb": "ruby", ".kt": "kotlin", ".cs": "csharp",
}

# Every name an explicit `language` may take (an unknown one is refused, not quietly read as text).
# "text" asks for the grammar-free line-anchor merge.
KNOWN_LANGUAGES = frozenset(_EXTENSIONS.values()) | frozenset(_ALIASES.values()) | {"text", "plaintext"}

# Languages whose comments start with '#' (used by marker detection for whole-line markers).
HASH_COMMENT = frozenset({"python", "bash", "ruby", "yaml", "toml"})


def normalize_language(language: str | None) -> str | None:
    if not language:
        return None
    name = language.strip().lower()
    return _ALIASES.get(name, name) or None


def unknown_language(language: str | None) -> str | None:
    """A message when an explicit language name is not one we know (a typo such as `pyhton` would
    otherwise lose the syntax checks without a word); None when it is known or absent."""
    name = normalize_language(language)
    if name is None or name in KNOWN_LANGUAGES:
        return None
    return (f"unknown language {language!r}; use one of {', '.join(sorted(KNOWN_LANGUAGES - {'plaintext'}))} "
            "('text' merges by lines only), or leave it out to detect it from the path")


def detect_language(language: str | None = None, path: str | None = None, text: str = "") -> str | None:
    """Explicit name first, then the file extension; None when neither says (text is not sniffed:
    a wrong guess would pick the wrong grammar, and the line-anchor fallback needs no language)."""
    name = normalize_language(language)
    if name in ("text", "plaintext"):
        return None
    if name:
        return name
    if path:
        ext = os.path.splitext(path)[1].lower()
        if ext in _EXTENSIONS:
            return _EXTENSIONS[ext]
    return None


def _load_language(name: str):
    """The tree_sitter.Language for a canonical name, or None when no grammar wheel is installed."""
    try:
        if name == "python":
            import tree_sitter_python as m
            return tree_sitter.Language(m.language())
        if name in ("javascript", "jsx"):  # the JavaScript grammar parses JSX too
            import tree_sitter_javascript as m
            return tree_sitter.Language(m.language())
        if name == "typescript":
            import tree_sitter_typescript as m
            return tree_sitter.Language(m.language_typescript())
        if name == "tsx":
            import tree_sitter_typescript as m
            return tree_sitter.Language(m.language_tsx())
        if name == "go":
            import tree_sitter_go as m
            return tree_sitter.Language(m.language())
        if name == "rust":
            import tree_sitter_rust as m
            return tree_sitter.Language(m.language())
        if name == "java":
            import tree_sitter_java as m
            return tree_sitter.Language(m.language())
        if name == "c":
            import tree_sitter_c as m
            return tree_sitter.Language(m.language())
        if name == "cpp":
            import tree_sitter_cpp as m
            return tree_sitter.Language(m.language())
    except ImportError:
        return None
    return None


@lru_cache(maxsize=None)
def get_language(language: str | None):
    name = normalize_language(language)
    return _load_language(name) if name else None


def get_parser(language: str | None) -> tree_sitter.Parser | None:
    """A fresh parser for the language (parsers are cheap and not thread-safe; Language objects are
    cached). None for languages without an installed grammar."""
    lang = get_language(language)
    return tree_sitter.Parser(lang) if lang is not None else None


def parse(language: str | None, text: str):
    """The tree for text, or None when the language has no grammar."""
    parser = get_parser(language)
    if parser is None:
        return None
    return parser.parse(text.encode("utf-8"))


def unparsable(tree, text: str) -> bool:
    """Mostly broken, not merely a grammar gap: a few small error nodes (a newer syntax the grammar
    lacks) still leave a tree we can check against ('no worse than the original')."""
    root = tree.root_node
    if not root.has_error:
        return False
    if root.type == "ERROR":
        return True
    bad, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            bad += max(1, node.end_byte - node.start_byte)
        elif node.has_error:
            stack.extend(node.children)
    return bad > 0.10 * max(1, len(text.encode("utf-8")))


def error_count(tree) -> int:
    """Number of ERROR / MISSING nodes: 'parses no worse than the original' compares these."""
    if tree is None:
        return 0
    if not tree.root_node.has_error:
        return 0
    count = 0
    cursor = tree.walk()
    visited_children = False
    while True:
        node = cursor.node
        if not visited_children:
            if node.is_error or node.is_missing:
                count += 1
                visited_children = True  # don't count nested errors twice
                continue
            if node.has_error and cursor.goto_first_child():
                continue
            visited_children = True
        if cursor.goto_next_sibling():
            visited_children = False
            continue
        if not cursor.goto_parent():
            break
    return count
