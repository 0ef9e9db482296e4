"""The language table (`LANGUAGES`), detection from a name or path, and cached tree-sitter parsers.

Everything per language lives in one `LanguageInfo` record: extensions, aliases, grammar, and the
node types the structural merge and the checks read. Only the grammars installed as wheels are
parseable; other languages (markdown, sql, ...) are still detected so callers can pick the
line-anchor merge.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter

@dataclass(frozen=True)
class LanguageInfo:
    """Everything fastapply knows about one language. Adding a language is one record here."""

    name: str  # canonical name (what `detect_language` returns)
    extensions: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other names callers and agents send
    grammar: tuple[str, str] | None = None  # (tree-sitter wheel module, function returning the language)
    # -- the structural merge (merge/defs.py, merge/tree.py) and the checks (validate.py) --
    def_kinds: dict[str, str] = field(default_factory=dict)  # definition node type -> kind group ("fn",
    # "type", "impl"): a method may be pasted as a function and vice versa, so they share one group
    containers: tuple[str, ...] = ()  # nodes whose children may be definitions (besides *_body, *block)
    wrappers: tuple[str, ...] = ()  # nodes whose span replaces the inner definition's (decorators, `export`)
    attached: tuple[str, ...] = ()  # nodes that belong to the definition below them (comments, attributes)
    func_values: tuple[str, ...] = ()  # values that make `x = <value>` a named function definition
    test_callees: tuple[str, ...] = ()  # `it("...", ...)`: calls whose blocks are a test file's functions
    member_wrap: tuple[str, str] | None = None  # lines that let a bare method parse as a member
    body_defs: tuple[str, ...] = ()  # definitions whose `body` must not become empty (validate)
    body_types: tuple[str, ...] = ()  # block bodies: empty when they hold no statement


_JS = dict(
    grammar=("tree_sitter_javascript", "language"),  # the JavaScript grammar parses JSX too
    def_kinds={"function_declaration": "fn", "generator_function_declaration": "fn", "method_definition": "fn",
               "class_declaration": "type"},
    containers=("class_body", "statement_block", "program", "export_statement", "lexical_declaration",
                "variable_declarator", "expression_statement", "call_expression", "arguments", "arrow_function",
                "function_expression"),
    wrappers=("export_statement",),
    attached=("comment", "decorator"),
    func_values=("function_expression", "function", "arrow_function", "generator_function", "class"),
    test_callees=("it", "test", "describe", "suite", "context", "specify", "bench"),
    member_wrap=("class __Wrap__ {", "}"),
    body_defs=("function_declaration", "method_definition", "class_declaration", "arrow_function",
               "function_expression"),
    body_types=("statement_block", "class_body"),
)
_TS = _JS | dict(
    def_kinds=_JS["def_kinds"] | {"abstract_class_declaration": "type", "interface_declaration": "type",
                                  "enum_declaration": "type", "type_alias_declaration": "type",
                                  "function_signature": "fn"},
    containers=_JS["containers"] + ("enum_body", "interface_body", "module"),
    body_defs=_JS["body_defs"] + ("interface_declaration", "enum_declaration"),
    body_types=_JS["body_types"] + ("interface_body", "enum_body"),
)
_C = dict(
    def_kinds={"function_definition": "fn", "struct_specifier": "type"},
    containers=("translation_unit", "declaration_list", "field_declaration_list", "expression_statement",
                "call_expression"),
    attached=("comment",),
    body_defs=("function_definition",),
    body_types=("compound_statement", "field_declaration_list", "declaration_list"),
)

LANGUAGES: tuple[LanguageInfo, ...] = (
    LanguageInfo(
        "python", (".py", ".pyi"), ("py", "python3"), ("tree_sitter_python", "language"),
        def_kinds={"function_definition": "fn", "class_definition": "type"},
        containers=("block", "module", "decorated_definition", "expression_statement"),
        wrappers=("decorated_definition",), attached=("comment", "decorator"),
        body_defs=("function_definition", "class_definition"), body_types=("block",)),
    LanguageInfo("javascript", (".js", ".mjs", ".cjs"), ("js", "node", "mjs", "cjs"), **_JS),
    LanguageInfo("jsx", (".jsx",), (), **_JS),
    LanguageInfo("typescript", (".ts", ".mts", ".cts"), ("ts",),
                 **_TS | {"grammar": ("tree_sitter_typescript", "language_typescript")}),
    LanguageInfo("tsx", (".tsx",), (), **_TS | {"grammar": ("tree_sitter_typescript", "language_tsx")}),
    LanguageInfo(
        "go", (".go",), ("golang",), ("tree_sitter_go", "language"),
        def_kinds={"function_declaration": "fn", "method_declaration": "fn", "type_spec": "type"},
        containers=("block", "source_file", "type_declaration", "field_declaration_list", "expression_statement",
                    "call_expression"),
        attached=("comment",),
        body_defs=("function_declaration", "method_declaration", "func_literal"),
        body_types=("block", "field_declaration_list")),
    LanguageInfo(
        "rust", (".rs",), ("rs",), ("tree_sitter_rust", "language"),
        def_kinds={"function_item": "fn", "impl_item": "impl", "struct_item": "type", "enum_item": "type",
                   "trait_item": "type", "mod_item": "type", "union_item": "type", "macro_definition": "fn"},
        containers=("block", "source_file", "declaration_list", "field_declaration_list", "expression_statement",
                    "call_expression", "arguments"),
        attached=("line_comment", "block_comment", "attribute_item"),
        member_wrap=("impl __Wrap__ {", "}"),
        body_defs=("function_item", "impl_item", "trait_item", "struct_item", "enum_item"),
        body_types=("block", "declaration_list", "field_declaration_list", "enum_variant_list")),
    LanguageInfo(
        "java", (".java",), (), ("tree_sitter_java", "language"),
        def_kinds={"class_declaration": "type", "interface_declaration": "type", "enum_declaration": "type",
                   "method_declaration": "fn", "constructor_declaration": "fn", "record_declaration": "type",
                   "annotation_type_declaration": "type"},
        containers=("class_body", "program", "module", "block", "enum_body", "interface_body",
                    "enum_body_declarations", "variable_declarator", "expression_statement"),
        attached=("line_comment", "block_comment", "annotation"),
        member_wrap=("class __Wrap__ {", "}"),
        body_defs=("method_declaration", "class_declaration", "constructor_declaration", "interface_declaration",
                   "enum_declaration"),
        body_types=("block", "class_body", "interface_body", "constructor_body", "enum_body")),
    LanguageInfo("c", (".c", ".h"), ("h",), ("tree_sitter_c", "language"), **_C),
    LanguageInfo(
        "cpp", (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"), ("c++", "cxx", "cc", "hpp"),
        ("tree_sitter_cpp", "language"),
        **_C | dict(def_kinds=_C["def_kinds"] | {"class_specifier": "type"},
                    containers=_C["containers"] + ("template_declaration", "namespace_definition"),
                    member_wrap=("class __Wrap__ {", "};"))),
    # Detected (so that callers can pick the grammar-free line-anchor merge), but no grammar installed.
    LanguageInfo("markdown", (".md", ".markdown"), ("md",)),
    LanguageInfo("sql", (".sql",)),
    LanguageInfo("bash", (".sh", ".bash"), ("sh", "shell", "zsh")),
    LanguageInfo("json", (".json",)),
    LanguageInfo("yaml", (".yaml", ".yml"), ("yml",)),
    LanguageInfo("toml", (".toml",)),
    LanguageInfo("html", (".html",)),
    LanguageInfo("css", (".css",)),
    LanguageInfo("ruby", (".rb",), ("rb",)),
    LanguageInfo("kotlin", (".kt",), ("kt",)),
    LanguageInfo("csharp", (".cs",), ("cs", "c#")),
)

BY_NAME: dict[str, LanguageInfo] = {info.name: info for info in LANGUAGES}
_ALIASES = {alias: info.name for info in LANGUAGES for alias in info.aliases}
_EXTENSIONS = {ext: info.name for info in LANGUAGES for ext in info.extensions}

# Every name an explicit `language` may take (an unknown one is refused, not quietly read as text).
# "text" asks for the grammar-free line-anchor merge.
KNOWN_LANGUAGES = frozenset(BY_NAME) | {"text", "plaintext"}


def union(table: str) -> frozenset[str]:
    """One per-language table over every language (node types do not collide across grammars)."""
    return frozenset(x for info in LANGUAGES for x in getattr(info, table))


def def_kinds() -> dict[str, str]:
    """Definition node type -> kind group, over every language."""
    return {t: kind for info in LANGUAGES for t, kind in info.def_kinds.items()}


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
    info = BY_NAME.get(name)
    if info is None or info.grammar is None:
        return None
    module, function = info.grammar
    try:
        return tree_sitter.Language(getattr(importlib.import_module(module), function)())
    except ImportError:
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
    return _error_bytes(root) > 0.10 * max(1, len(text.encode("utf-8")))


def _error_bytes(root) -> int:
    """Bytes inside ERROR / MISSING nodes (a MISSING node counts one)."""
    bad, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            bad += max(1, node.end_byte - node.start_byte)
        elif node.has_error:
            stack.extend(node.children)
    return bad


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


_BRACKETS = ("(", ")", "{", "}", "[", "]")


def bracket_balance(tree) -> tuple[int, int, int]:
    """Opened minus closed `(`, `{` and `[` over the tree's bracket tokens, outside strings and
    comments (MISSING ones, which the parser made up, not counted). In a file tree-sitter mostly
    fails to parse, error nodes say little about a new error (one big ERROR node swallows it), but
    the tokens inside are still read: a lost or doubled line with a bracket on it shows here."""
    count = dict.fromkeys(_BRACKETS, 0)
    if tree is None:
        return (0, 0, 0)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.child_count == 0:
            if node.type in count and not node.is_missing:
                count[node.type] += 1
        elif "string" not in node.type and "comment" not in node.type and "template" not in node.type:
            stack.extend(node.children)
    return (count["("] - count[")"], count["{"] - count["}"], count["["] - count["]"])


# -- guessing the language from content (front-ends whose requests carry no file name) ---------------

GUESS_MAX_CHARS = 16 * 1024  # the guess parses at most this much of a file's head
GUESS_MAX_ERROR_SHARE = 0.10  # the best grammar may leave at most this share of the bytes in errors
GUESS_MIN_MARGIN = 0.003  # the next family must leave at least max(best + this, 2 x best) in errors
# Grammars read supersets of each other's languages (TypeScript parses plain JavaScript, C++ most C):
# within a family the best fit wins, ties going to the first. Across families the best must win clearly.
GUESS_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("python",), ("javascript", "typescript", "tsx"), ("go",), ("rust",), ("java",), ("c", "cpp"))
_SHEBANG = {"python": "python", "node": "javascript", "nodejs": "javascript", "deno": "typescript",
            "ts-node": "typescript", "tsx": "typescript", "bun": "typescript", "sh": "bash", "bash": "bash",
            "zsh": "bash", "dash": "bash", "ruby": "ruby"}
_TOP_LEVEL_START = re.compile(r"\n\n(?=\S)")  # a blank line, then a line at column 0: where a sample is cut


@dataclass(frozen=True)
class LanguageGuess:
    """`guess_language`'s answer: the language (None: no confident guess) and why."""

    language: str | None
    reason: str


def guess_language(text: str) -> LanguageGuess:
    """The language of a file from its content alone: its shebang, else tree-sitter parse scores
    over the installed grammars (the share of bytes in ERROR/MISSING nodes). A guess is made only
    when one family of grammars fits the text clearly better than every other; `detect_language`
    never sniffs content, this is for callers that have no file name at all (Morph's message format)."""
    shebang = _shebang_language(text)
    if shebang is not None:
        return shebang
    sample = _guess_sample(text)
    if not sample.strip():
        return LanguageGuess(None, "the file is empty")
    shares = {name: _error_share(name, sample) for family in GUESS_FAMILIES for name in family}
    best = sorted((min((shares[n], family.index(n), n) for n in family if shares[n] is not None))
                  for family in GUESS_FAMILIES if any(shares[n] is not None for n in family))
    if not best or best[0][0] > GUESS_MAX_ERROR_SHARE:
        return LanguageGuess(None, "no installed grammar parses it")
    share, _, name = best[0]
    runner = best[1] if len(best) > 1 else None
    if runner is not None and runner[0] < share + max(GUESS_MIN_MARGIN, share):
        return LanguageGuess(None, f"ambiguous: parses as {name} ({share:.1%} in errors) and as {runner[2]} "
                                   f"({runner[0]:.1%})")
    return LanguageGuess(name, f"parses as {name} ({share:.1%} in errors); the next grammar, "
                               f"{runner[2] if runner else 'none'}, fits worse")


def _shebang_language(text: str) -> LanguageGuess | None:
    """`#!/usr/bin/env python3` -> python: the interpreter named by the first line, version digits dropped."""
    first = text[:200].split("\n", 1)[0]
    if not first.startswith("#!"):
        return None
    words = [os.path.basename(w) for w in first[2:].split()]
    if words and words[0] == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    name = _SHEBANG.get(re.sub(r"[\d.]+$", "", words[0])) if words else None
    return LanguageGuess(name, f"shebang {first.strip()!r}") if name else None


def _guess_sample(text: str) -> str:
    """The head of a long file, cut where a top-level line starts after a blank line (between two
    definitions, seldom inside a comment or a string, whose cut would leave errors in every
    grammar), else at a line end."""
    if len(text) <= GUESS_MAX_CHARS:
        return text
    cut = max((m.start() + 1 for m in _TOP_LEVEL_START.finditer(text, 0, GUESS_MAX_CHARS)), default=0)
    cut = cut or text.rfind("\n", 0, GUESS_MAX_CHARS) + 1
    return text[:cut] if cut > 0 else text[:GUESS_MAX_CHARS]


def _error_share(language: str, text: str) -> float | None:
    """Share of the text's bytes inside ERROR/MISSING nodes; None without the grammar."""
    tree = parse(language, text)
    if tree is None:
        return None
    root = tree.root_node
    return _error_bytes(root) / max(1, len(text.encode("utf-8"))) if root.has_error else 0.0
