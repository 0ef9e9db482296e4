"""The language table (`LANGUAGES`), detection from a name, path or shebang, and cached tree-sitter parsers.

Everything per language lives in one `LanguageInfo` record: extensions, whole file names, aliases,
shebang interpreters, grammar, the marker lines agents write in it, and the node types the
structural merge and the checks read. Only the grammars installed as wheels are parseable; a
language without one (or whose wheel fails to load) is still detected, and merged by lines.

Names: every language id an editor sends is accepted (VS Code's language identifiers, Neovim's
filetypes: `EDITOR_LANGUAGE_IDS`). Aliases map them to a record; a known name without a record is
merged by lines (`grammar_problem` says so); only a name no editor uses is refused, with the
nearest known name suggested (`unknown_language`).
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import json
import os
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter

from fastapply.memo import per_thread_lru


@dataclass(frozen=True)
class LanguageInfo:
    """Everything fastapply knows about one language. Adding a language is one record here."""

    name: str  # canonical name (what `detect_language` returns)
    extensions: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other names callers, agents and editors send
    grammar: tuple[str, str] | None = None  # (tree-sitter wheel module, function returning the language)
    # whole file names (`Makefile`), or glob patterns matched at the path's end (`Dockerfile.*`,
    # `.vscode/*.json`); they win over the extension (`tsconfig.json` is JSON with comments)
    filenames: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()  # shebang interpreters (`#!/usr/bin/env ruby`), version digits dropped
    # the marker lines agents write for elided code, the usual one first (case generators read [0])
    marker_templates: tuple[str, ...] = ()
    config_parser: str | None = None  # the format's own parser that validate also runs: json, jsonc, toml, yaml
    component_blocks: bool = False  # a single-file component: its <script>/<style>/<template> blocks are checked
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


_SLASHES = ("// ... existing code ...", "/* ... existing code ... */")
_HASH = ("# ... existing code ...",)
_DASHES = ("-- ... existing code ...",)
_TAGS = ("<!-- ... existing code ... -->",)

_JS = dict(
    grammar=("tree_sitter_javascript", "language"),  # the JavaScript grammar parses JSX too
    marker_templates=_SLASHES,
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
_JSX_MARKERS = _SLASHES + ("{/* ... existing code ... */}",)  # inside JSX, a comment is an expression
_TS = _JS | dict(
    def_kinds=_JS["def_kinds"] | {"abstract_class_declaration": "type", "interface_declaration": "type",
                                  "enum_declaration": "type", "type_alias_declaration": "type",
                                  "function_signature": "fn"},
    containers=_JS["containers"] + ("enum_body", "interface_body", "module"),
    body_defs=_JS["body_defs"] + ("interface_declaration", "enum_declaration"),
    body_types=_JS["body_types"] + ("interface_body", "enum_body"),
)
_C = dict(
    marker_templates=_SLASHES,
    def_kinds={"function_definition": "fn", "struct_specifier": "type"},
    containers=("translation_unit", "declaration_list", "field_declaration_list", "expression_statement",
                "call_expression"),
    attached=("comment",),
    body_defs=("function_definition",),
    body_types=("compound_statement", "field_declaration_list", "declaration_list"),
)
_CSS = dict(marker_templates=("/* ... existing code ... */",), attached=("comment",))

LANGUAGES: tuple[LanguageInfo, ...] = (
    LanguageInfo(
        "python", (".py", ".pyi"), ("py", "python3"), ("tree_sitter_python", "language"),
        interpreters=("python", "pypy"), marker_templates=_HASH,
        def_kinds={"function_definition": "fn", "class_definition": "type"},
        containers=("block", "module", "decorated_definition", "expression_statement"),
        wrappers=("decorated_definition",), attached=("comment", "decorator"),
        body_defs=("function_definition", "class_definition"), body_types=("block",)),
    LanguageInfo("javascript", (".js", ".mjs", ".cjs"), ("js", "node", "mjs", "cjs"),
                 interpreters=("node", "nodejs"), **_JS),
    LanguageInfo("jsx", (".jsx",), ("javascriptreact",), **_JS | {"marker_templates": _JSX_MARKERS}),
    LanguageInfo("typescript", (".ts", ".mts", ".cts"), ("ts",), interpreters=("deno", "ts-node", "tsx", "bun"),
                 **_TS | {"grammar": ("tree_sitter_typescript", "language_typescript")}),
    LanguageInfo("tsx", (".tsx",), ("typescriptreact", "typescript.tsx"),
                 **_TS | {"grammar": ("tree_sitter_typescript", "language_tsx"), "marker_templates": _JSX_MARKERS}),
    LanguageInfo(
        "go", (".go",), ("golang",), ("tree_sitter_go", "language"), marker_templates=_SLASHES,
        def_kinds={"function_declaration": "fn", "method_declaration": "fn", "type_spec": "type"},
        containers=("block", "source_file", "type_declaration", "field_declaration_list", "expression_statement",
                    "call_expression"),
        attached=("comment",),
        body_defs=("function_declaration", "method_declaration", "func_literal"),
        body_types=("block", "field_declaration_list")),
    LanguageInfo(
        "rust", (".rs",), ("rs",), ("tree_sitter_rust", "language"), marker_templates=_SLASHES,
        def_kinds={"function_item": "fn", "impl_item": "impl", "struct_item": "type", "enum_item": "type",
                   "trait_item": "type", "mod_item": "type", "union_item": "type", "macro_definition": "fn"},
        containers=("block", "source_file", "declaration_list", "field_declaration_list", "expression_statement",
                    "call_expression", "arguments"),
        attached=("line_comment", "block_comment", "attribute_item"),
        member_wrap=("impl __Wrap__ {", "}"),
        body_defs=("function_item", "impl_item", "trait_item", "struct_item", "enum_item"),
        body_types=("block", "declaration_list", "field_declaration_list", "enum_variant_list")),
    LanguageInfo(
        "java", (".java",), (), ("tree_sitter_java", "language"), marker_templates=_SLASHES,
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
    # -- the languages of issue 37: whole ecosystems, with definitions the merge reads --------------------
    LanguageInfo(
        # `language_php_only`: PHP without the surrounding HTML, so that a snippet without `<?php` parses
        # (a template's HTML parts are errors to it: such a file is placed by lines, its brackets checked)
        "php", (".php", ".phtml", ".php3", ".php4", ".php5", ".php7", ".phps"), (),
        ("tree_sitter_php", "language_php_only"), interpreters=("php",),
        marker_templates=_SLASHES + _HASH,
        def_kinds={"function_definition": "fn", "method_declaration": "fn", "class_declaration": "type",
                   "interface_declaration": "type", "trait_declaration": "type", "enum_declaration": "type"},
        containers=("program", "declaration_list"),
        attached=("comment",),  # PHP 8 attributes are inside the definition node, as Java's annotations
        member_wrap=("class __Wrap__ {", "}"),
        body_defs=("function_definition", "method_declaration", "class_declaration", "interface_declaration",
                   "trait_declaration"),
        body_types=("compound_statement", "declaration_list")),
    LanguageInfo(
        "ruby", (".rb", ".rake", ".gemspec", ".ru", ".podspec", ".jbuilder", ".builder", ".thor"), ("rb",),
        ("tree_sitter_ruby", "language"),
        filenames=("Gemfile", "Rakefile", "Guardfile", "Podfile", "Vagrantfile", "Brewfile", "Fastfile", "Appfile",
                   "Capfile", "Berksfile", "Dangerfile", "Thorfile", ".irbrc", ".pryrc"),
        interpreters=("ruby", "jruby", "rake"), marker_templates=_HASH,
        def_kinds={"method": "fn", "singleton_method": "fn", "class": "type", "module": "type"},
        containers=("program", "singleton_class"),  # `class << self`: its methods are the class's
        attached=("comment",),
        body_defs=("method", "singleton_method", "class", "module"), body_types=("body_statement",)),
    LanguageInfo(
        "csharp", (".cs", ".csx"), ("cs", "c#", "c_sharp", "c-sharp"), ("tree_sitter_c_sharp", "language"),
        marker_templates=_SLASHES,
        def_kinds={"class_declaration": "type", "struct_declaration": "type", "interface_declaration": "type",
                   "enum_declaration": "type", "record_declaration": "type", "method_declaration": "fn",
                   "constructor_declaration": "fn", "local_function_statement": "fn"},
        # a bare method parses as a top-level statement (`global_statement`): C# 9 top-level programs
        containers=("compilation_unit", "namespace_declaration", "file_scoped_namespace_declaration",
                    "declaration_list", "global_statement", "expression_statement"),
        attached=("comment",),  # attributes (`[Obsolete]`) are inside the definition node
        member_wrap=("class __Wrap__ {", "}"),
        body_defs=("method_declaration", "constructor_declaration", "class_declaration", "struct_declaration",
                   "interface_declaration", "local_function_statement"),
        body_types=("block", "declaration_list")),
    LanguageInfo(
        "kotlin", (".kt", ".kts"), ("kt", "kts"), ("tree_sitter_kotlin", "language"), interpreters=("kotlin",),
        marker_templates=_SLASHES,
        def_kinds={"class_declaration": "type", "object_declaration": "type", "function_declaration": "fn"},
        containers=("source_file", "class_body", "companion_object"),
        attached=("line_comment", "block_comment"),  # annotations are inside the definition's modifiers
        member_wrap=("class __Wrap__ {", "}")),  # (no `body` fields: the empty-body check has nothing to read)
    LanguageInfo(
        "swift", (".swift",), (), ("tree_sitter_swift", "language"), interpreters=("swift",),
        marker_templates=_SLASHES,
        # `class_declaration` is also struct, enum, actor and extension (an extension's name is its type's)
        def_kinds={"class_declaration": "type", "protocol_declaration": "type", "function_declaration": "fn",
                   "protocol_function_declaration": "fn"},
        containers=("source_file", "class_body"),
        attached=("comment", "multiline_comment"),
        member_wrap=("class __Wrap__ {", "}"),
        body_defs=("function_declaration", "class_declaration", "protocol_declaration"),
        body_types=("function_body", "class_body", "protocol_body")),
    LanguageInfo(
        "scala", (".scala", ".sc", ".sbt"), ("sbt",), ("tree_sitter_scala", "language"), interpreters=("scala",),
        marker_templates=_SLASHES,
        def_kinds={"class_definition": "type", "object_definition": "type", "trait_definition": "type",
                   "enum_definition": "type", "function_definition": "fn", "function_declaration": "fn"},
        containers=("compilation_unit",),
        attached=("comment", "block_comment"),  # annotations are inside the definition node
        member_wrap=("class __Wrap__ {", "}"),
        body_defs=("function_definition", "class_definition", "object_definition", "trait_definition"),
        body_types=("block", "template_body")),
    LanguageInfo(
        "lua", (".lua", ".rockspec"), (), ("tree_sitter_lua", "language"), filenames=(".luacheckrc",),
        interpreters=("lua", "luajit"), marker_templates=_DASHES,
        def_kinds={"function_declaration": "fn"}, containers=("chunk",), attached=("comment",),
        body_defs=("function_declaration",), body_types=("block",)),
    # Elixir's definitions are calls (`def f(x) do ... end`, `defmodule`): the merge's tables name
    # definitions by node type, so Elixir gets its grammar's checks and the line merge.
    LanguageInfo("elixir", (".ex", ".exs"), ("ex", "exs"), ("tree_sitter_elixir", "language"),
                 filenames=("mix.lock",), interpreters=("elixir",), marker_templates=_HASH),
    LanguageInfo(
        "bash", (".sh", ".bash", ".zsh"), ("sh", "shell", "zsh", "shellscript"), ("tree_sitter_bash", "language"),
        filenames=(".bashrc", ".bash_profile", ".bash_aliases", ".bash_logout", ".zshrc", ".zshenv", ".zprofile",
                   ".zlogin", ".profile", "PKGBUILD", "APKBUILD"),
        interpreters=("sh", "bash", "zsh", "dash"), marker_templates=_HASH,
        def_kinds={"function_definition": "fn"}, containers=("program",), attached=("comment",),
        body_defs=("function_definition",), body_types=("compound_statement",)),
    LanguageInfo(
        "scss", (".scss",), (), ("tree_sitter_scss", "language"), marker_templates=_SLASHES,
        def_kinds={"mixin_statement": "fn", "function_statement": "fn"}, containers=("stylesheet",),
        attached=("comment", "js_comment")),
    # -- configuration and markup: their grammars' checks (and the format's own parser); no definitions:
    # a TOML table, a YAML key, a CSS rule or a Makefile rule has no `name` field to match it by --------
    LanguageInfo("json", (".json", ".webmanifest", ".geojson"), (), ("tree_sitter_json", "language"),
                 filenames=("composer.lock", "flake.lock", ".watchmanconfig"), config_parser="json",
                 marker_templates=("// ... existing code ...",)),
    LanguageInfo("jsonc", (".jsonc", ".json5", ".code-workspace"), ("json5",), ("tree_sitter_json", "language"),
                 filenames=("tsconfig.json", "tsconfig.*.json", "jsconfig.json", "jsconfig.*.json", ".eslintrc",
                            ".eslintrc.json", ".babelrc", ".babelrc.json", ".swcrc", ".jshintrc", "tslint.json",
                            "devcontainer.json", ".devcontainer.json", ".vscode/*.json"),
                 config_parser="jsonc", marker_templates=("// ... existing code ...",)),
    LanguageInfo("yaml", (".yaml", ".yml"), ("yml", "dockercompose"), ("tree_sitter_yaml", "language"),
                 filenames=(".clang-format", ".clang-tidy", ".yamllint"), config_parser="yaml",
                 marker_templates=_HASH),
    LanguageInfo("toml", (".toml",), (), ("tree_sitter_toml", "language"),
                 filenames=("Cargo.lock", "Pipfile", "poetry.lock", "uv.lock", "pdm.lock", "Gopkg.lock"),
                 config_parser="toml", marker_templates=_HASH),
    LanguageInfo("markdown", (".md", ".markdown", ".mdown", ".mkd"), ("md",), ("tree_sitter_markdown", "language"),
                 marker_templates=_TAGS),
    LanguageInfo("html", (".html", ".htm", ".xhtml"), ("htm", "xhtml", "vue-html"), ("tree_sitter_html", "language"),
                 marker_templates=_TAGS),
    LanguageInfo("css", (".css",), (), ("tree_sitter_css", "language"), **_CSS),
    LanguageInfo("sql", (".sql",), ("mysql",), ("tree_sitter_sql", "language"), marker_templates=_DASHES,
                 attached=("comment",)),
    LanguageInfo("dockerfile", (".dockerfile", ".containerfile"), ("docker", "containerfile"),
                 ("tree_sitter_dockerfile", "language"),
                 filenames=("Dockerfile", "Containerfile", "dockerfile", "Dockerfile.*", "Containerfile.*"),
                 marker_templates=_HASH),
    LanguageInfo("make", (".mk", ".mak", ".make"), ("makefile",), ("tree_sitter_make", "language"),
                 filenames=("Makefile", "GNUmakefile", "makefile", "BSDmakefile"), interpreters=("make",),
                 marker_templates=_HASH, attached=("comment",)),
    LanguageInfo("hcl", (".tf", ".tfvars", ".hcl", ".nomad"), ("terraform", "tf", "terraform-vars", "tfvars"),
                 ("tree_sitter_hcl", "language"), filenames=(".terraformrc", "terraform.rc"),
                 marker_templates=_HASH + ("// ... existing code ...",)),
    # Without a grammar here, merged by lines: listed for their names and the comment syntax their
    # markers are written in (`REM ... existing code ...` in a batch file).
    LanguageInfo("bat", (".bat", ".cmd"), ("batch", "cmd"), marker_templates=("REM ... existing code ...",)),
    LanguageInfo("powershell", (".ps1", ".psm1", ".psd1"), ("ps1", "pwsh"), marker_templates=_HASH),
    LanguageInfo("ini", (".ini", ".cfg"), ("dosini", "properties"), filenames=(".editorconfig", ".gitconfig"),
                 marker_templates=("; ... existing code ...",)),
    LanguageInfo("vb", (".vb", ".vbs", ".bas"), ("vbnet", "vbscript"), marker_templates=("' ... existing code ...",)),
    # Single-file components: no grammar of their own; merged by lines, each block checked by its own.
    LanguageInfo("vue", (".vue",), (), component_blocks=True, marker_templates=_TAGS + _SLASHES),
    LanguageInfo("svelte", (".svelte",), (), component_blocks=True, marker_templates=_TAGS + _SLASHES),
)

BY_NAME: dict[str, LanguageInfo] = {info.name: info for info in LANGUAGES}
_ALIASES = {alias: info.name for info in LANGUAGES for alias in info.aliases}
_EXTENSIONS = {ext: info.name for info in LANGUAGES for ext in info.extensions}
_FILENAMES = {f: info.name for info in LANGUAGES for f in info.filenames if not any(c in f for c in "*?[/")}
_FILE_PATTERNS = [(f, info.name) for info in LANGUAGES for f in info.filenames if any(c in f for c in "*?[/")]
_SHEBANG = {interpreter: info.name for info in LANGUAGES for interpreter in info.interpreters}

# Every canonical name (an unknown one is refused, not quietly read as text). "text" asks for the
# grammar-free line-anchor merge.
KNOWN_LANGUAGES = frozenset(BY_NAME) | {"text", "plaintext"}


def union(table: str) -> frozenset[str]:
    """One per-language table over every language, by node type alone."""
    return frozenset(x for info in LANGUAGES for x in getattr(info, table))


# -- node roles for the merge: keyed by (grammar symbol id, node type), since one node type may play
# different roles in two grammars (Ruby's `class` is a definition, JavaScript's a class expression;
# Ruby's `module` one too, TypeScript's a container). A node's `kind_id` tells its grammar's symbol.

def _symbols(name: str, node_type: str) -> list[tuple[int, str]]:
    """(symbol id, node type) for every symbol of the language's grammar with that type (aliases included)."""
    lang = get_language(name)
    if lang is None:
        return []
    return [(k, node_type) for k in range(lang.node_kind_count) if lang.node_kind_for_id(k) == node_type]


def node_roles(table: str) -> frozenset[tuple[int, str]]:
    """A per-language table (`containers`, `attached`, ...) as (kind_id, type) keys over every grammar
    that loads: `(node.kind_id, node.type) in node_roles("attached")`."""
    return frozenset(key for info in LANGUAGES for t in getattr(info, table) for key in _symbols(info.name, t))


def node_def_kinds() -> dict[tuple[int, str], str]:
    """Definition (kind_id, type) -> kind group, over every grammar that loads."""
    return {key: kind for info in LANGUAGES for t, kind in info.def_kinds.items() for key in _symbols(info.name, t)}


# -- names -----------------------------------------------------------------------------------------------

def normalize_language(language: str | None) -> str | None:
    if not language:
        return None
    name = language.strip().lower()
    return _ALIASES.get(name, name) or None


@lru_cache(maxsize=1)
def accepted_names() -> frozenset[str]:
    """Every name `language` may take: ours, their aliases, and every editor's ids."""
    return KNOWN_LANGUAGES | frozenset(_ALIASES) | EDITOR_LANGUAGE_IDS


def unknown_language(language: str | None) -> str | None:
    """A message when an explicit language name is one no editor uses (a typo such as `pyhton` would
    otherwise lose the syntax checks without a word); None when it is known or absent."""
    if not language or not language.strip():
        return None
    name = language.strip().lower()
    if name in accepted_names():
        return None
    ours = sorted(KNOWN_LANGUAGES | frozenset(_ALIASES))  # our own names first: `pyhton` is python
    near = difflib.get_close_matches(name, ours, n=1, cutoff=0.6) or \
        difflib.get_close_matches(name, sorted(EDITOR_LANGUAGE_IDS), n=1, cutoff=0.75)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return (f"unknown language {language!r}: {hint}Send a language id your editor uses (VS Code's or Neovim's, "
            f"such as {', '.join(sorted(n for n in BY_NAME if get_language(n) is not None)[:12])}, ...), "
            "'text' to merge by lines only, or leave it out to detect it from the path")


def detect_language(language: str | None = None, path: str | None = None, text: str = "") -> str | None:
    """Explicit name first, then the path (whole file name, pattern, extension), then, for a path
    that says nothing (`bin/deploy`), the text's shebang; None when none says. Without a path the
    text is not read (a wrong guess would pick the wrong grammar, and the line-anchor fallback needs
    no language): `guess_language` is for callers that have no path at all, and tries text after."""
    name = normalize_language(language)
    if name in ("text", "plaintext"):
        return None
    if name or not path:
        return name
    by_path = _language_of_path(path)
    if by_path:
        return by_path
    shebang = _shebang_language(text) if text else None
    return shebang.language if shebang is not None else None


def _language_of_path(path: str) -> str | None:
    posix = path.replace("\\", "/")
    base = posix.rsplit("/", 1)[-1]
    if base in _FILENAMES:
        return _FILENAMES[base]
    for pattern, name in _FILE_PATTERNS:
        depth = pattern.count("/") + 1  # a pattern matches the path's last `depth` parts
        if fnmatch.fnmatchcase("/".join(posix.split("/")[-depth:]), pattern):
            return name
    return _EXTENSIONS.get(os.path.splitext(base)[1].lower())


# -- grammars ----------------------------------------------------------------------------------------------

_LOAD_ERRORS: dict[str, str] = {}  # canonical name -> why its grammar wheel did not load


def _load_language(name: str):
    """The tree_sitter.Language for a canonical name, or None when its grammar wheel is missing or
    fails to load (the reason is kept for `grammar_problem`: the language is merged by lines)."""
    info = BY_NAME.get(name)
    if info is None or info.grammar is None:
        return None
    module, function = info.grammar
    try:
        with warnings.catch_warnings():
            # tree-sitter-scss 1.0.0 and -dockerfile 0.2.0 hand over a pointer as an int, which
            # tree-sitter 0.26 still takes with a DeprecationWarning
            warnings.simplefilter("ignore", DeprecationWarning)
            return tree_sitter.Language(getattr(importlib.import_module(module), function)())
    except Exception as e:  # a missing wheel, another ABI, a broken build: never a crash
        _LOAD_ERRORS[name] = f"{type(e).__name__}: {e}"
        return None


@lru_cache(maxsize=None)
def get_language(language: str | None):
    name = normalize_language(language)
    return _load_language(name) if name else None


def grammar_problem(language: str | None) -> str | None:
    """Why the named language gets no tree-sitter grammar, so that it is merged by lines (a `language`
    finding of the answer); None when its grammar loads, or no language was named or detected."""
    name = normalize_language(language)
    if not name or name in ("text", "plaintext") or get_language(name) is not None:
        return None
    info = BY_NAME.get(name)
    if info is not None and info.grammar is not None:
        wheel = info.grammar[0].replace("_", "-")
        return (f"the {name} grammar failed to load ({_LOAD_ERRORS.get(name, 'unknown reason')}): merged by lines, "
                f"without its syntax checks; reinstall it (`pip install {wheel}`)")
    if info is not None and info.component_blocks:
        return (f"{name} has no grammar of its own: merged by lines; its <script>, <style> and <template> blocks are "
                "checked with the JavaScript/TypeScript, CSS/SCSS and HTML grammars")
    return f"no grammar is installed for {name}: merged by lines only, without syntax checks"


# Trees a thread keeps (`parse`): the original, the snippet and a few readings of one merge.
TREES_KEPT = 16


def get_parser(language: str | None) -> tree_sitter.Parser | None:
    """A fresh parser for the language (parsers are cheap and not thread-safe; Language objects are
    cached). None for languages without an installed grammar."""
    lang = get_language(language)
    return tree_sitter.Parser(lang) if lang is not None else None


@per_thread_lru(TREES_KEPT)
def parse(language: str | None, text: str):
    """The tree for text, or None when the language has no grammar. The last trees of a thread are
    kept (`memo.py`): the merge asks for the same original's many times. Trees are never edited."""
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
# The newer grammars are not scored: a YAML, TOML or Markdown grammar parses almost any text, so
# they are guessed only from what is certain (`_certain_format`).
GUESS_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("python",), ("javascript", "typescript", "tsx"), ("go",), ("rust",), ("java",), ("c", "cpp"))
_TOP_LEVEL_START = re.compile(r"\n\n(?=\S)")  # a blank line, then a line at column 0: where a sample is cut
# Dockerfile instructions (docs.docker.com/reference/dockerfile): a file whose every instruction line
# starts with one of them, the first being FROM (or ARG before it), is a Dockerfile
_DOCKER_INSTRUCTIONS = frozenset({"FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY",
                                  "ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL",
                                  "HEALTHCHECK", "SHELL"})


@dataclass(frozen=True)
class LanguageGuess:
    """`guess_language`'s answer: the language (None: no confident guess) and why."""

    language: str | None
    reason: str


def guess_language(text: str) -> LanguageGuess:
    """The language of a file from its content alone: its shebang, a format that is certain (a JSON
    document, `<?php`, an HTML doctype, Dockerfile instructions), else tree-sitter parse scores over
    the installed grammars of the families (the share of bytes in ERROR/MISSING nodes). A guess is
    made only when one family of grammars fits the text clearly better than every other;
    `detect_language` never sniffs a file's body, this is for callers that have no file name at all
    (Morph's message format)."""
    certain = _shebang_language(text) or _certain_format(text)
    if certain is not None:
        return certain
    sample = _guess_sample(text)
    if not sample.strip():
        return LanguageGuess(None, "the file is empty")
    likely = _likely_alone(sample)
    if likely is not None:
        return likely
    best = _family_scores(sample)
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


def _certain_format(text: str) -> LanguageGuess | None:
    """Formats that say what they are: a JSON object or array (`json.loads` takes it whole), a file
    opening with `<?php` or an HTML doctype / `<html>`, a Dockerfile's instruction lines."""
    head = text.lstrip()[:200]
    if head[:1] in "{[" and head:
        try:
            json.loads(text)
            return LanguageGuess("json", "a JSON document (json.loads reads it whole)")
        except ValueError:
            pass
    if head.startswith("<?php"):
        return LanguageGuess("php", "it opens with `<?php`")
    if re.match(r"(?i)<!doctype html\b|<html[\s>]", head):
        return LanguageGuess("html", "it opens with an HTML doctype or <html>")
    if _is_dockerfile(text):
        return LanguageGuess("dockerfile", "every instruction line is a Dockerfile instruction, the first FROM")
    return None


def _is_dockerfile(text: str) -> bool:
    words, continued = [], False
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and not continued:
            words.append(s.split(None, 1)[0])
        continued = s.endswith("\\") or (continued and not s)
    first = next((w for w in words if w != "ARG"), None)
    return first == "FROM" and all(w in _DOCKER_INSTRUCTIONS for w in words)


# A family's telltale lines (`_likely_alone`): what to parse first. Within a family (JavaScript,
# TypeScript, TSX; C, C++) the guess weighs the family's grammars against each other, as the full one does.
_TELLTALES: tuple[tuple[tuple[str, ...], re.Pattern], ...] = (
    (("go",), re.compile(r"^package \w+\s*$|^func |:= ", re.M)),
    (("rust",), re.compile(r"^\s*(pub |fn |use |impl |mod |let mut )", re.M)),
    (("python",), re.compile(r"^\s*(def |class \w+.*:\s*$|import \w|from \S+ import )", re.M)),
    (("java",), re.compile(r"^\s*(package [\w.]+;|import [\w.]+;|public (final |abstract )?class )", re.M)),
    (("javascript", "typescript", "tsx"),
     re.compile(r"^\s*(import .+ from ['\"]|export (default |const |function |class |interface |type )|"
                r"(const|let|var) \w+ = require\(|module\.exports\b)", re.M)),
    (("c", "cpp"), re.compile(r"^#include [<\"]", re.M)),
)


def _likely_alone(sample: str) -> LanguageGuess | None:
    """The family whose telltale lines the sample has most, when one of its grammars parses the
    sample without a single error (the family's best, as the full guess weighs them): the other
    families are not parsed (their error recovery is what a guess costs: 4-12 ms each on 16 KB, the
    right one 1 ms). Another family that parsed it as cleanly would make the full guess ambiguous:
    on the 2,100 originals and expected files of evals/cases the answers are the full guess's, file
    by file (tests/test_languages.py); on 1,736 other files (npm packages, site-packages) 30 differ,
    each a file of the family taken (24 lodash-sized JavaScript modules, two C headers) that the
    full guess called ambiguous with another family, so the shortcut guesses a language where the
    full guess guessed none, and never another one."""
    counts = sorted(((len(rx.findall(sample)), family) for family, rx in _TELLTALES), reverse=True)
    (n, family), (runner, _) = counts[0], counts[1]
    if n < 2 or runner == n:  # one telltale line is no telltale (a two-line `export const X = {`)
        return None
    shares = [(share, i, name) for i, name in enumerate(family) if (share := _error_share(name, sample)) is not None]
    if not shares or min(shares)[0] != 0.0:
        return None
    name = min(shares)[2]
    return LanguageGuess(name, f"parses as {name} without an error, and reads as {name} most")


def _family_scores(text: str) -> list[tuple[float, int, str]]:
    """Per family of `GUESS_FAMILIES`, its best grammar's (error share, index in the family, name),
    best family first."""
    shares = {name: _error_share(name, text) for family in GUESS_FAMILIES for name in family}
    return sorted(min((shares[n], family.index(n), n) for n in family if shares[n] is not None)
                  for family in GUESS_FAMILIES if any(shares[n] is not None for n in family))


def _guess_sample(text: str) -> str:
    """The head of a long file, cut where a top-level line starts after a blank line (between two
    definitions, seldom inside a comment or a string, whose cut would leave errors in every
    grammar), else at a line end."""
    limit = GUESS_MAX_CHARS
    if len(text) <= limit:
        return text
    cut = max((m.start() + 1 for m in _TOP_LEVEL_START.finditer(text, 0, limit)), default=0)
    cut = cut or text.rfind("\n", 0, limit) + 1
    return text[:cut] if cut > 0 else text[:limit]


def _error_share(language: str, text: str) -> float | None:
    """Share of the text's bytes inside ERROR/MISSING nodes; None without the grammar."""
    tree = parse(language, text)
    if tree is None:
        return None
    root = tree.root_node
    return _error_bytes(root) / max(1, len(text.encode("utf-8"))) if root.has_error else 0.0


# -- every language id an editor sends ----------------------------------------------------------------
# VS Code's known language identifiers (code.visualstudio.com/docs/languages/identifiers, the current
# table and the ids it listed before) and Neovim's filetypes (the values of runtime/lua/vim/filetype.lua
# and filetype/detect.lua, plus the runtime's own: help, man, qf, ...). A name here without a record
# above is merged by lines (`grammar_problem`).
_VSCODE_IDS = """
abap bat bibtex c chatagent clojure code-text-binary coffeescript cpp csharp css cuda-cpp d dart diff
dockercompose dockerfile dotenv erlang fsharp git-commit git-rebase go groovy haml handlebars haskell hlsl html
ignore ini instructions jade java javascript javascriptreact json jsonc jsonl julia juliamarkdown latex less log
lua makefile markdown objective-c objective-cpp ocaml pascal perl perl6 php plaintext powershell prompt
properties pug python r raku razor restructuredtext ruby rust sass scss search-result shaderlab shellscript
skill slim snippets sql stylus svelte swift tex typescript typescriptreact vb vue vue-html wat xml xsl yaml"""
_NEOVIM_FILETYPES = """
8th a2ps a65 aap abap abaqus abc abel abnf acedb ada ahdl aidl algol68 alsaconf amiga aml ampl ant antlr4 apache
apkbuild applescript aptconf arch arduino art asciidoc asm asn aspperl aspvbs astro asy atlas authzed autohotkey
autoit automake autopkgtest ave awk b baan bash basic bass bat bc bdf beancount bib bicep bicep-params bindzone
bitbake blade blank blueprint bp bpftrace brighterscript brightscript bsdl bst bzl bzr c c3 cabal cabalconfig
cabalproject cairo calendar cangjie capnp catalog cdc cdl cdrdaoconf cedar cel cf cfengine cfg cgdbrc ch
chaiscript change changelog chaskell chatito checkhealth chill chordpro chuck cl clean clipper clojure cmake
cmakecache cmod cmusrc cobol coco codeowners conaryrecipe concerto conf config confini context cook coq corn
cpon cpp cqlang crm crontab crystal cs csc csdl csh csp css csv cterm cucumber cuda cue cupl cuplsim cvs cvsrc
cweb cynpp cypher d dafny dart datascript dax dcd deb822sources debchangelog debcontrol debcopyright debsources
def denyhosts dep3patch desc desktop dhall dictconf dictdconf diff dircolors diva django djot dnsmasq docbk
dockerfile dosbatch dosini dot doxygen dracula dtd dtrace dts dune dylan dylanintr dylanlid earthfile ecd ed
edif editorconfig eelixir eiffel elf elinks elixir elm elmfilt elsa elvish env epuppet erlang eruby esdl esmtprc
esqlc esterel eterm euphoria3 execline exim expect exports factor falcon fan faust fdcc fennel fetchmail fga fgl
firrtl fish flix fluent foam focexec form forth fortran fpcmake framescript freebasic fsh fsharp fstab func
fusion fvwm fvwm2m4 gdb gdmo gdresource gdscript gdshader gedcom gel gemtext ghostty gift git gitattributes
gitcommit gitconfig gitignore gitolite gitrebase gitrevlist gitsendemail gkrellmrc gleam glsl gn gnash gnuplot
go goaccess gomod gosum gowork gp gpg gprof grads graphql gretl groff groovy group grub gsp gtkrc gyp hack haml
hamster handlebars hare haredoc haskell haskellpersistent haste hastepreproc haxe hb hcl heex help hercules hex
hgcommit hip hjson hlsplaylist hog hollywood hoon hostconf hostsaccess html htmlangular htmldjango htmlm4 httest
http hurl hy hylo hyprlang i3config ibasic icemenu icon idl idris2 indent inform initng inittab inko ipfilter
ipkg ishd iss ist j jal jam janet java javacc javascript javascript.glimmer javascriptreact jess jgraph jinja
jjdescription jovial jproperties jq json json5 jsonc jsonl jsonld jsonnet jsp julia just karel kawasaki_as
kconfig kdl kerml kitty kivy kix koka kos kotlin krl kscript ksh kwt lace lalrpop larch latte ld ldapconf ldif
lean ledger leex leo less lex lf lftp lhaskell libao lidris2 lifelines lilo lilypond limits liquid liquidsoap
lisp lite litestep livebook llvm lnk log loginaccess logindefs logtalk lotos lout lpc lprolog lsl lss lua luau
lynx lyrics m17ndb m3build m3quake m4 mail mailaliases mailcap make mallard man manconf maple markdown marko
masm mason master matlab maxima mbsync mediawiki mel mermaid meson messages mf mgl mgp mib mix mlir mma mmix mmp
modconf modsim3 modula2 modula3 mojo monk moo moonscript move mp mplayerconf mrxvtrc msidl msmessages msmtp msql
mss mupad murphi mush mustache muttrc mysql n1ql named nanorc nasm natural ncf neomuttlog neomuttrc neon netlinx
netrc nginx nickel nim ninja nix norg nq nqc nroff nsis ntriples nu numbat obj objc objcpp objdump objectscript
objectscript_routine obse ocaml occam octave odin omnimark ondir opam opencl openroad openscad openvpn opl ora
org pamconf pamenv pandoc papp pascal passwd pbtxt pccts pcmk pdf pem perl pf pfmain php pike pilrc pine pinfo
pkl plaintex pli plm plp plsql po pod poefilter poke pony postscr pov povini ppd ppwiz pq prisma privoxy proc
procmail progress prolog promela proto protocols prql ps1 ps1xml psf psl ptcap ptx pug puppet purescript
pymanifest pyret pyrex python qb64 qf ql qml qmldir quake quarto query quickbms r racc racket radiance raku raml
rapid rasi ratpoison razor rbs rcs readline rebol redif registry rego remind requirements rescript resolv reva
rexx rhelp rib rmd rnc rng rnoweb robot robots roc ron routeros rpcgen rpgle rpl rrst rst rtf ruby rust sage
salt samba sas sass sather sbt scala scdoc scheme scilab screen scss sd sdc sdl sed sensors services setserial
sexplib sgf sgml sgmldecl sgmllnx sh shaderslang sieve sil sile simula sinda sisu skhd skill slang slice slint
slpconf slpreg slpspi slrnrc slrnsc sm smali smarty smcl smil smith smithy sml snakemake snobol4 solidity
solution soy spajson sparql spec specman spice spup spyce sql sqlj sqr squid squirrel srec srt ssa
sshallowedsigners sshauthorizedkeys sshconfig sshdconfig sshknownhosts sshpublickey st starlark stata stp strace
stylus sudoers supercollider superhtml surface svelte svg svn sway swayconfig swift swiftgyb swig sysctl sysml
systemd systemverilog tablegen tags tak tal taskdata taskedit tcl tcsh teal templ template tera teraterm
terminfo terraform terraform-vars tex texinfo texmf text tf thrift tiasm tidy tiger tilde tiltfile tla tli tmux
tolk toml tpp trace32 trasys treetop trig trustees tsalt tsscl tssgm tssop tsv turtle tutor twig typescript
typescript.glimmer typescriptreact typespec typst uc uci udevconf udevperm udevrules uil ungrammar unison
updatedb upstart upstreamdat upstreaminstalllog upstreamlog urlshortcut usd usserverlog usw2kagtlog v vala vb
vdf vdmpp vdmrt vdmsl vento vera verilog verilogams vgrindefs vhdl vhs vim viminfo virata vmasm voscm vrml vroom
vue wat wdl web webmacro wget wget2 wgsl winbatch wit wks wml wsh wsml wvdial xbl xcompose xdefaults xf86conf
xhtml xinetd xmath xml xmodmap xpm xpm2 xquery xs xsd xslt xxd yacc yaml yang yara yuck z8a zathurarc zig ziggy
ziggy_schema zimbu zimbutempl zserio zsh"""
EDITOR_LANGUAGE_IDS = frozenset(_VSCODE_IDS.split()) | frozenset(_NEOVIM_FILETYPES.split())
