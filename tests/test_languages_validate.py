"""Syntax checks in every language with a grammar: a merge whose snippet breaks the file's syntax is
refused, one test per language (the same edit without the break is exact); the format's own parser
for JSON, JSONC, TOML and YAML; the blocks of Vue and Svelte components under their own grammars."""

from __future__ import annotations

import pytest

import fastapply.merge  # noqa: F401  (fastapply.validate imports the merge package; load it first)
from fastapply.api import Applier, ApplyError, ApplyRequest
from fastapply.languages import BY_NAME, detect_language
from fastapply.merge import structural_merge
from fastapply.validate import config_parses, validate

# (language, path, original, the line the snippet edits, a good edit of it, an edit that breaks the syntax)
FIXTURES = [
    ('php', 'src/User.php',
     '<?php\n\nnamespace App;\n\nclass User\n{\n    public function name(): string\n    {\n'
     '        return $this->name;\n    }\n\n    public function age(): int\n    {\n'
     '        return $this->age;\n    }\n}\n',
     '        return $this->name;', '        return ucfirst($this->name);', '        return ucfirst($this->name;'),
    ('ruby', 'lib/user.rb',
     'class User\n  def name\n    @name\n  end\n\n  def age\n    @age\n  end\nend\n',
     '    @name', '    @name.capitalize', '    @name.capitalize(('),
    ('csharp', 'User.cs',
     'namespace App\n{\n    public class User\n    {\n        public string Name()\n        {\n'
     '            return name;\n        }\n\n        public int Age()\n        {\n'
     '            return age;\n        }\n    }\n}\n',
     '            return name;', '            return name.Trim();', '            return name.Trim(;'),
    ('kotlin', 'User.kt',
     'class User(val name: String, val age: Int) {\n    fun title(): String {\n        return name\n'
     '    }\n\n    fun years(): Int {\n        return age\n    }\n}\n',
     '        return name', '        return name.uppercase()', '        return name.uppercase(('),
    ('swift', 'User.swift',
     'struct User {\n    var name: String\n    var age: Int\n\n    func title() -> String {\n'
     '        return name\n    }\n\n    func years() -> Int {\n        return age\n    }\n}\n',
     '        return name', '        return name.capitalized', '        return name.capitalized(('),
    ('scala', 'User.scala',
     'case class User(name: String, age: Int) {\n  def title: String = {\n    name\n  }\n\n'
     '  def years: Int = {\n    age\n  }\n}\n',
     '    name', '    name.capitalize', '    name.capitalize)'),
    ('lua', 'user.lua',
     'local M = {}\n\nfunction M.title(user)\n  return user.name\nend\n\nfunction M.years(user)\n'
     '  return user.age\nend\n\nreturn M\n',
     '  return user.name', '  return string.upper(user.name)', '  return string.upper(user.name'),
    ('elixir', 'lib/user.ex',
     'defmodule User do\n  def title(user) do\n    user.name\n  end\n\n  def years(user) do\n'
     '    user.age\n  end\nend\n',
     '    user.name', '    String.capitalize(user.name)', '    String.capitalize(user.name'),
    ('bash', 'deploy.sh',
     '#!/usr/bin/env bash\nset -euo pipefail\n\nbuild() {\n  make build\n}\n\nship() {\n'
     '  rsync -a dist/ host:/srv\n}\n\nbuild\nship\n',
     '  make build', '  make build VERBOSE=1', '  if make build; then'),
    ('yaml', '.github/workflows/ci.yml',
     'name: ci\non:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n'
     '    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n',
     '    runs-on: ubuntu-latest', '    runs-on: ubuntu-24.04', '    runs-on: [ubuntu-24.04'),
    ('json', 'package.json',
     '{\n  "name": "app",\n  "version": "1.0.0",\n  "scripts": {\n    "build": "tsc",\n'
     '    "test": "jest"\n  },\n  "license": "MIT"\n}\n',
     '    "build": "tsc",', '    "build": "tsc -p .",', '    "build": "tsc -p ." ,,'),
    ('jsonc', 'tsconfig.json',
     '{\n  // strict everywhere\n  "compilerOptions": {\n    "strict": true,\n    "target": "es2022",\n'
     '  },\n  "include": ["src"]\n}\n',
     '    "target": "es2022",', '    "target": "es2023",', '    "target": "es2023" "module": "esnext",'),
    ('toml', 'pyproject.toml',
     '[project]\nname = "app"\nversion = "1.0.0"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
     'testpaths = ["tests"]\n',
     'addopts = "-q"', 'addopts = "-q -x"', 'addopts = "-q -x'),
    ('html', 'index.html',
     '<!DOCTYPE html>\n<html>\n<head>\n  <title>App</title>\n</head>\n<body>\n  <main>\n'
     '    <p class="lead">Hello</p>\n  </main>\n</body>\n</html>\n',
     '    <p class="lead">Hello</p>', '    <p class="lead">Hello, world</p>', '    <p class="lead>Hello, world</p>'),
    ('css', 'app.css',
     '.card {\n  padding: 8px;\n  color: #333;\n}\n\n.title {\n  font-size: 2rem;\n}\n',
     '  color: #333;', '  color: #222;', '  color: #222; }}'),
    ('scss', 'app.scss',
     '$pad: 8px;\n\n.card {\n  padding: $pad;\n  &:hover {\n    color: red;\n  }\n}\n',
     '    color: red;', '    color: darkred;', '    color: darkred; }}'),
    ('sql', 'migrations/001.sql',
     'CREATE TABLE users (\n  id INT PRIMARY KEY,\n  name TEXT NOT NULL\n);\n\nSELECT id, name\n'
     'FROM users\nWHERE id = 1;\n',
     'SELECT id, name', 'SELECT id, name, created_at', 'SELECT id, name,, created_at'),
    ('dockerfile', 'Dockerfile',
     'FROM python:3.12-slim\nWORKDIR /app\nCOPY requirements.txt .\n'
     'RUN pip install -r requirements.txt\nCOPY . .\nCMD ["python", "app.py"]\n',
     'RUN pip install -r requirements.txt', 'RUN pip install --no-cache-dir -r requirements.txt', 'ENV =1'),
    ('make', 'Makefile',
     '.PHONY: build test\n\nbuild:\n\tgo build ./...\n\ntest: build\n\tgo test ./...\n',
     '\tgo build ./...', '\tgo build -v ./...', '\tgo build $(FLAGS ./...'),
    ('hcl', 'main.tf',
     'variable "region" {\n  type    = string\n  default = "us-east-1"\n}\n\n'
     'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n',
     '  bucket = "x"', '  bucket = "y"', '  bucket = '),
]


def _snippet(lines: list[str], i: int, new: str, marker: str) -> str:
    """Lines i-2..i+1 of the original with line i replaced, a marker (indented like the code it
    stands for) on each side where code is left out."""
    def indent(s: str) -> str:
        return s[: len(s) - len(s.lstrip())]

    out = [indent(lines[i - 3]) + marker] if i >= 3 else []
    out += lines[max(0, i - 2):i] + [new, lines[i + 1]]
    if i + 2 < len(lines):
        out.append(indent(lines[i + 2]) + marker)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("case", FIXTURES, ids=[c[0] for c in FIXTURES])
def test_a_snippet_that_breaks_the_syntax_is_refused(case):
    lang, path, orig, line, good, bad = case
    assert detect_language(None, path) == lang
    lines = orig.splitlines()
    i = lines.index(line)
    marker = BY_NAME[lang].marker_templates[0]
    res = structural_merge(orig, _snippet(lines, i, good, marker), None, path)
    assert res.ok and res.text == orig.replace(line + "\n", good + "\n", 1), res.reasons
    res = structural_merge(orig, _snippet(lines, i, bad, marker), None, path)
    assert not res.ok and any("syntax error node" in r or "syntax: " in r for r in res.reasons), res.reasons
    with pytest.raises(ApplyError) as e:  # and so through the API, named as an editor names it
        Applier().apply(ApplyRequest(orig, _snippet(lines, i, bad, marker), language=lang, engine="structural"))
    assert e.value.code == "refused"


def test_markdown_has_no_syntax_errors_to_refuse():
    # CommonMark gives every text a meaning: the grammar's check runs and finds nothing
    orig = "# App\n\n## Install\n\n```bash\npip install app\n```\n"
    merged = orig.replace("```bash\npip install app\n```\n", "```bash\npip install app\n")
    assert not [f for f in validate(orig, merged, merged, "markdown") if f.severity == "error"]


# -- the format's own parser ----------------------------------------------------------------------------------

def _syntax(original: str, merged: str, lang: str) -> list[str]:
    return [f.message for f in validate(original, merged, merged, lang) if f.kind == "syntax"]


def test_json_must_stay_json_and_says_where_it_broke():
    orig = '{\n  "name": "app",\n  "version": "1.0.0"\n}\n'
    # tree-sitter-json takes comments; npm does not
    merged = '{\n  "name": "app",\n  // bumped\n  "version": "1.0.1"\n}\n'
    found = _syntax(orig, merged, "json")
    assert found and "not valid JSON" in found[0] and "(line 3, column 3)" in found[0]
    assert not _syntax(orig, orig.replace("1.0.0", "1.0.1"), "json")


def test_json_with_comments_where_the_file_has_them_already():
    orig = '{\n  // the app\n  "name": "app",\n  "deps": ["a",],\n}\n'
    assert not _syntax(orig, orig.replace('"app"', '"app2"'), "json")  # comments and trailing commas stay fine
    found = _syntax(orig, orig.replace('"name": "app",', '"name": "app"'), "json")
    assert found and "not valid JSON with comments" in found[0] and "line 4" in found[0]
    # a JSONC file (tsconfig.json) may gain comments
    strict = '{\n  "compilerOptions": {\n    "strict": true\n  }\n}\n'
    assert not _syntax(strict, strict.replace('    "strict"', '    // everywhere\n    "strict"'), "jsonc")
    assert detect_language(None, "tsconfig.json") == "jsonc"


def test_toml_and_yaml_must_stay_parseable():
    toml = '[project]\nname = "app"\nversion = "1"\n'
    found = _syntax(toml, toml + 'name = "again"\n', "toml")  # tree-sitter takes a duplicate key; tomllib does not
    assert found and "not valid TOML" in found[0] and "line 4" in found[0]
    yml = "defaults: &d\n  retries: 3\njob:\n  <<: *d\n"
    found = _syntax(yml, yml.replace("*d", "*missing"), "yaml")
    assert found and "not valid YAML" in found[0] and "undefined alias" in found[0] and "line 4" in found[0]
    assert not _syntax("x: !Ref a\n", "x: !Ref b\n", "yaml")  # custom tags are the file's business


def test_a_config_that_did_not_parse_gives_no_verdict():
    assert config_parses('{"a": 1,, }\n', '{"a": 2,, }\n', "json") == []
    assert config_parses("a = = 1\n", "a = = 2\n", "toml") == []


def test_a_merge_that_breaks_a_config_only_its_parser_sees_is_refused():
    orig = '[tool.app]\nlevel = 1\nname = "x"\n'
    update = '[tool.app]\nlevel = 1\nlevel = 2\n# ... existing code ...\n'
    res = structural_merge(orig, update, "toml")
    assert not res.ok and any("not valid TOML" in r for r in res.reasons), res.reasons


# -- single-file components ----------------------------------------------------------------------------------

VUE = """<template>
  <div class="card">
    <p class="title">{{ title }}</p>
  </div>
</template>

<script setup lang="ts">
import { ref } from "vue";

const title = ref<string>("hi");
const count = ref(0);
</script>

<style scoped lang="scss">
.card {
  padding: 8px;
}
</style>
"""
SVELTE = """<script>
  export let name = "world";
  let count = 0;
</script>

<main>
  <h1>Hello {name}!</h1>
  <button on:click={() => count++}>{count}</button>
</main>

<style>
  h1 {
    color: red;
  }
</style>
"""


@pytest.mark.parametrize("path,orig,line,good,bad,block", [
    ("App.vue", VUE, "const count = ref(0);", "const count = ref<number>(1);", "const count = ref<number>(1;", "script"),
    ("App.vue", VUE, "  padding: 8px;", "  padding: 12px;", "  padding: 12px; }}", "style"),
    ("App.vue", VUE, '    <p class="title">{{ title }}</p>', '    <p class="title big">{{ title }}</p>',
     '    <p class="title big>{{ title }}</p>', "template"),
    ("App.svelte", SVELTE, "  let count = 0;", "  let count = 1;", "  let count = 1 +;", "script"),
    ("App.svelte", SVELTE, "    color: red;", "    color: blue;", "    color: blue; }}", "style"),
])
def test_component_blocks_are_checked_by_their_own_grammars(path, orig, line, good, bad, block):
    lines = orig.splitlines()
    i = lines.index(line)
    marker = "<!-- ... existing code ... -->"
    lang = detect_language(None, path)
    res = structural_merge(orig, _snippet(lines, i, good, marker), None, path)
    assert res.ok and res.text == orig.replace(line + "\n", good + "\n", 1), res.reasons
    res = structural_merge(orig, _snippet(lines, i, bad, marker), None, path)
    assert not res.ok and any(f"<{block}> block" in r for r in res.reasons), res.reasons
    assert lang in ("vue", "svelte")


def test_a_ruby_method_that_returns_an_instance_variable_is_no_dangling_attribute():
    # `@b` before `end` is the method's value, not an attribute left with nothing to apply to
    orig = "class A\n  def a\n    1\n  end\nend\n"
    res = structural_merge(orig, "class A\n  # ... existing code ...\n  end\n\n  def b\n    @b\n  end\nend\n", None, "a.rb")
    assert res.ok and res.text == "class A\n  def a\n    1\n  end\n\n  def b\n    @b\n  end\nend\n", res.reasons


def test_a_grammar_without_definitions_places_a_new_item_as_the_line_merge_does():
    # a Makefile rule is no definition the merge can name: a new rule set off by blank lines goes
    # where the snippet shows it, as without a grammar (not read as statements that may run into
    # the next rule)
    orig = (".PHONY: build test vet\n\nbuild:\n\tgo build ./...\n\nvet:\n\tgo vet ./...\n\n"
            "test-examples:\n\tgo test ./examples/...\n")
    update = ".PHONY: build test vet lint\n# ... existing code ...\nvet:\n\tgo vet ./...\n\nlint:\n\tgolangci-lint run ./...\n" \
             "# ... existing code ...\n"
    expected = orig.replace("vet\n\n", "vet lint\n\n", 1).replace("test-examples:", "lint:\n\tgolangci-lint run ./...\n\n"
                                                                  "test-examples:")
    for lang in ("make", "text"):
        res = structural_merge(orig, update, lang)
        assert res.ok and res.text == expected, (lang, res.reasons)
