"""The language table: grammars that load, detection by editor id, path, file name and shebang, names
that no editor uses, content guesses, a grammar that fails to load, and input no merge can edit."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import fastapply.languages as languages
from fastapply.api import Applier, ApplyError, ApplyRequest
from fastapply.languages import (
    BY_NAME,
    EDITOR_LANGUAGE_IDS,
    LANGUAGES,
    detect_language,
    get_language,
    grammar_problem,
    guess_language,
    unknown_language,
)
from fastapply.markers import looks_like_marker
from fastapply.merge import structural_merge

# language -> (a path, a whole file name or pattern, the ids VS Code and Neovim send for it)
DETECTED = {
    "php": ("app/Http/Kernel.php", None, ("php",)),
    "ruby": ("lib/app.rb", "Gemfile", ("ruby",)),
    "csharp": ("src/App.cs", None, ("csharp", "cs")),
    "kotlin": ("src/App.kt", "build.gradle.kts", ("kotlin",)),
    "swift": ("Sources/App.swift", None, ("swift",)),
    "scala": ("src/App.scala", "build.sbt", ("scala", "sbt")),
    "lua": ("lua/init.lua", ".luacheckrc", ("lua",)),
    "elixir": ("lib/app.ex", "mix.exs", ("elixir",)),
    "bash": ("bin/run.sh", ".bashrc", ("shellscript", "sh", "zsh", "bash")),
    "yaml": ("ci.yml", "docker-compose.yml", ("yaml", "dockercompose")),
    "json": ("package.json", "composer.lock", ("json",)),
    "jsonc": ("x.jsonc", "tsconfig.json", ("jsonc", "json5")),
    "toml": ("pyproject.toml", "Cargo.lock", ("toml",)),
    "markdown": ("README.md", None, ("markdown",)),
    "html": ("index.html", None, ("html",)),
    "css": ("app.css", None, ("css",)),
    "scss": ("app.scss", None, ("scss",)),
    "sql": ("schema.sql", None, ("sql", "mysql")),
    "dockerfile": ("build/app.dockerfile", "Dockerfile", ("dockerfile",)),
    "make": ("rules.mk", "Makefile", ("makefile", "make")),
    "hcl": ("main.tf", "terraform.tfvars", ("terraform", "hcl", "tf")),
    "vue": ("App.vue", None, ("vue",)),
    "svelte": ("App.svelte", None, ("svelte",)),
    "jsx": ("App.jsx", None, ("javascriptreact",)),
    "tsx": ("App.tsx", None, ("typescriptreact",)),
}


@pytest.mark.parametrize("name", sorted(DETECTED))
def test_each_language_is_detected_by_path_file_name_and_editor_id(name):
    path, file_name, editor_ids = DETECTED[name]
    assert detect_language(None, path) == name
    if file_name:
        assert detect_language(None, "some/dir/" + file_name) == name
    for editor_id in editor_ids:
        assert detect_language(editor_id) == name and unknown_language(editor_id) is None


def test_whole_file_names_win_over_the_extension():
    assert detect_language(None, "web/tsconfig.json") == "jsonc"
    assert detect_language(None, "web/tsconfig.base.json") == "jsonc"
    assert detect_language(None, ".vscode/settings.json") == "jsonc"
    assert detect_language(None, "settings.json") == "json"
    assert detect_language(None, "docker/Dockerfile.prod") == "dockerfile"
    assert detect_language(None, "GNUmakefile") == "make" and detect_language(None, "makefile") == "make"
    assert detect_language(None, "x/.zshrc") == "bash" and detect_language(None, "x/.profile") == "bash"
    assert detect_language(None, "app.gemspec") == "ruby" and detect_language(None, "Rakefile") == "ruby"


@pytest.mark.parametrize("shebang,name", [
    ("#!/usr/bin/env ruby", "ruby"), ("#!/usr/bin/php", "php"), ("#!/usr/bin/env lua5.4", "lua"),
    ("#!/usr/bin/env elixir", "elixir"), ("#!/bin/bash", "bash"), ("#!/usr/bin/env zsh", "bash"),
    ("#!/usr/bin/make -f", "make"), ("#!/usr/bin/env python3", "python")])
def test_a_file_without_a_known_extension_is_detected_by_its_shebang(shebang, name):
    assert detect_language(None, "bin/deploy", shebang + "\nbody\n") == name
    assert guess_language(shebang + "\nbody\n").language == name
    assert detect_language("text", "bin/deploy", shebang + "\n") is None  # `text` asks for lines only
    # without a path the text is not read (the HTTP front-end guesses, then falls back to text itself)
    assert detect_language(None, None, shebang + "\nbody\n") is None


def test_editor_ids_from_both_lists_are_accepted():
    vscode = ("shellscript", "makefile", "dockerfile", "jsonc", "dockercompose", "javascriptreact", "typescriptreact",
              "csharp", "objective-c", "plaintext", "vue", "svelte", "ignore", "properties", "ini", "xml", "dotenv")
    neovim = ("sh", "zsh", "make", "dockerfile", "yaml", "jsonc", "json5", "cs", "kotlin", "ruby", "eruby",
              "typescriptreact", "javascriptreact", "text", "help", "gitcommit", "conf", "hcl", "terraform",
              "elixir", "eelixir", "heex", "lua", "vim", "graphql")
    for name in vscode + neovim:
        assert unknown_language(name) is None, name
        assert unknown_language(name.upper()) is None, name  # editors send them lower-case; a user may not
    assert len(EDITOR_LANGUAGE_IDS) > 800


def test_a_name_no_editor_uses_is_refused_with_the_nearest_known_name():
    for typo, near in (("pyhton", "python"), ("javscript", "javascript"), ("dokerfile", "dockerfile"),
                       ("shellscrpt", "shellscript"), ("rubby", "ruby")):
        message = unknown_language(typo)
        assert message.startswith(f"unknown language {typo!r}: did you mean {near!r}?"), message
    assert "did you mean" not in unknown_language("xyzzy")
    with pytest.raises(ApplyError) as e:
        Applier().apply(ApplyRequest("x = 1\n", "x = 2\n", language="pyhton", engine="structural"))
    assert e.value.code == "invalid_argument" and "'python'" in e.value.message


def test_a_known_name_without_a_grammar_is_merged_by_lines_and_says_so():
    orig = "use strict;\nmy $x = 1;\nprint $x;\n"
    res = Applier().apply(ApplyRequest(orig, "use strict;\nmy $x = 2;\nprint $x;\n", language="perl",
                                       engine="structural"))
    assert res.merged == orig.replace("= 1", "= 2") and res.language == "perl"
    notes = [f for f in res.findings if f.kind == "language"]
    assert notes and notes[0].severity == "info" and "no grammar is installed for perl" in notes[0].message
    # a name with a grammar carries no such note
    res = Applier().apply(ApplyRequest("a: 1\nb: 2\n", "a: 1\nb: 3\n", language="yaml", engine="structural"))
    assert res.merged == "a: 1\nb: 3\n" and not [f for f in res.findings if f.kind == "language"]


@pytest.mark.parametrize("info", [i for i in LANGUAGES if i.grammar], ids=lambda i: i.name)
def test_every_grammar_in_the_table_loads(info):
    assert get_language(info.name) is not None, grammar_problem(info.name)
    assert grammar_problem(info.name) is None


def test_every_language_has_marker_lines_the_merge_recognises():
    for info in LANGUAGES:
        assert info.marker_templates, info.name
        for template in info.marker_templates:
            assert looks_like_marker(template) and looks_like_marker("    " + template), (info.name, template)
    assert BY_NAME["python"].marker_templates[0] == "# ... existing code ..."
    assert BY_NAME["sql"].marker_templates[0] == "-- ... existing code ..."
    assert BY_NAME["vue"].marker_templates[0] == "<!-- ... existing code ... -->"


def test_node_roles_never_differ_between_grammars_that_share_a_symbol():
    """The merge reads each node's role by (grammar symbol id, type) over every grammar at once: two
    grammars that have the same symbol must agree on its role, or one would change the other's merge."""
    grammars = {info.name: get_language(info.name) for info in LANGUAGES if info.grammar}
    for table in ("def_kinds", "containers", "wrappers", "attached", "func_values"):
        for info in LANGUAGES:
            for node_type in getattr(info, table):
                for kid, _ in languages._symbols(info.name, node_type):
                    for other, grammar in grammars.items():
                        if kid < grammar.node_kind_count and grammar.node_kind_for_id(kid) == node_type:
                            theirs = getattr(BY_NAME[other], table)
                            assert node_type in theirs, (table, node_type, info.name, other)
                            if table == "def_kinds":
                                assert theirs[node_type] == info.def_kinds[node_type], (node_type, info.name, other)


def test_a_grammar_that_fails_to_load_falls_back_to_the_line_merge(monkeypatch):
    real_import = importlib.import_module

    def broken(name, *args):
        if name == "tree_sitter_php":
            raise ImportError("No module named 'tree_sitter_php'")
        return real_import(name, *args)

    monkeypatch.setattr(languages.importlib, "import_module", broken)
    languages.get_language.cache_clear()
    try:
        assert get_language("php") is None
        orig = "<?php\n\nfunction a() {\n    return 1;\n}\n"
        res = Applier().apply(ApplyRequest(orig, "function a() {\n    return 2;\n}\n", path="a.php", engine="structural"))
        assert res.merged == orig.replace("return 1", "return 2")
        notes = [f.message for f in res.findings if f.kind == "language"]
        assert notes and "php grammar failed to load (ImportError" in notes[0] and "pip install tree-sitter-php" in notes[0]
    finally:
        monkeypatch.undo()
        languages.get_language.cache_clear()
    assert get_language("php") is not None and grammar_problem("php") is None


def test_a_grammar_that_raises_another_error_is_no_crash(monkeypatch):
    class Broken:
        @staticmethod
        def language():
            raise ValueError("Incompatible Language version 99")

    real_import = importlib.import_module
    monkeypatch.setattr(languages.importlib, "import_module",
                        lambda name, *a: Broken if name == "tree_sitter_lua" else real_import(name, *a))
    languages.get_language.cache_clear()
    try:
        res = structural_merge("local a = 1\nlocal b = 2\n", "local a = 1\nlocal b = 3\n", "lua")
        assert res.ok and res.text == "local a = 1\nlocal b = 3\n"
        assert "Incompatible Language version 99" in grammar_problem("lua")
    finally:
        languages.get_language.cache_clear()


# -- content guesses (no file name): only where certain -------------------------------------------------------

def test_certain_formats_are_guessed_from_content():
    assert guess_language(json.dumps({"name": "x", "list": [1, 2]}, indent=2)).language == "json"
    assert guess_language("<?php\n\necho 'hi';\n").language == "php"
    assert guess_language("<!DOCTYPE html>\n<html><body></body></html>\n").language == "html"
    docker = "# build\nARG V=3.12\nFROM python:${V}\nRUN pip install x \\\n    && rm -rf /tmp/x\nCMD [\"x\"]\n"
    assert guess_language(docker).language == "dockerfile"


def test_uncertain_formats_are_not_guessed():
    assert guess_language("name = \"x\"\n[tool]\nkey = 1\n").language != "toml"  # Python reads it too
    assert guess_language("a: 1\nb: 2\n").language is None  # plain text is YAML as well
    assert guess_language("FROM the start of the story\nthere was prose\n").language != "dockerfile"
    assert guess_language("[1, 2\n").language != "json"
    assert guess_language("# Title\n\nSome prose.\n").language is None


# -- input no merge can edit ---------------------------------------------------------------------------------

MINIFIED = {
    "javascript": ";".join(f"function f{i}(a,b){{return a+b*{i}}}" for i in range(1600)),
    "json": json.dumps({f"key{i}": [i, i + 1] for i in range(4000)}),
    "css": "".join(f".c{i}{{color:#{i % 999:03d};margin:{i}px}}" for i in range(1800)),
}
MINIFIED_EDIT = {
    "javascript": "// ... existing code ...\nfunction f3(a,b){return a-b}\n// ... existing code ...\n",
    "json": '{\n  "key3": [3, 5],\n  // ... existing code ...\n}\n',
    "css": "/* ... existing code ... */\n.c3 { color: red; }\n/* ... existing code ... */\n",
}


@pytest.mark.parametrize("lang", sorted(MINIFIED))
def test_a_minified_file_is_refused_with_its_reason(lang):
    orig = MINIFIED[lang] + "\n"
    assert len(orig) > 50_000 and orig.count("\n") == 1
    res = structural_merge(orig, MINIFIED_EDIT[lang], lang)
    assert not res.ok and "minified or generated" in res.reasons[0] and "line 1 has" in res.reasons[0]
    with pytest.raises(ApplyError) as e:
        Applier().apply(ApplyRequest(orig, MINIFIED_EDIT[lang], language=lang, engine="structural"))
    assert e.value.code == "refused" and "minified" in e.value.message
    # the first line says what to do instead (no context line could help), not "resend with more lines"
    assert e.value.message.split("\n", 1)[0] == e.value.hint
    assert e.value.hint.startswith("Edit the source this file is built from: it looks minified") and not e.value.hints


def test_binary_content_is_refused_and_one_long_line_among_many_is_not():
    res = structural_merge("a = 1\n\x00\x01\x02\n", "a = 2\n", "python")
    assert not res.ok and "NUL bytes" in res.reasons[0]
    blob = "DATA = '" + "x" * 20_000 + "'\n"
    orig = blob + "".join(f"def f{i}():\n    return {i}\n\n" for i in range(150))
    res = structural_merge(orig, "def f3():\n    return 33\n", "python")
    assert res.ok and res.text == orig.replace("return 3\n", "return 33\n")


def test_the_telltale_shortcut_guesses_as_the_full_guess_does():
    """`_likely_alone` parses one grammar where a file reads plainly as one language: on dev-set
    originals its answers are the full guess's (every family parsed), file by file."""
    cases = Path(__file__).resolve().parents[1] / "evals" / "cases"
    originals = sorted({json.loads(x)["original"] for x in (cases / "commits_dev.jsonl").read_text(
        encoding="utf-8").splitlines() if x.strip()})[::3]
    taken, families = 0, set()
    for text in originals:
        sample = languages._guess_sample(text)
        short = languages._likely_alone(sample)
        if short is None:
            continue
        taken += 1
        families.add(short.language)
        best = languages._family_scores(sample)
        share, _, name = best[0]
        runner = best[1] if len(best) > 1 else None
        assert name == short.language and share == 0.0, text[:80]
        assert runner is None or runner[0] >= max(languages.GUESS_MIN_MARGIN, share), text[:80]
    assert taken >= 20  # taken on most (Go, Rust, Python, Java, JavaScript and TypeScript files)
    assert families & {"javascript", "typescript", "tsx"}, families  # a family of three grammars too
