"""Issue 15's classes of silent wrong merges, one small case per language where the class applies:
each merges exactly or is refused with the named check's reason (fastapply/merge/checks/)."""

from __future__ import annotations

import pytest

from fastapply.merge import structural_merge
from fastapply.validate import _compile_error, validate


def merged(orig: str, update: str, lang: str) -> str | None:
    return structural_merge(orig, update, lang).text


def refused_with(orig: str, update: str, lang: str, words: str) -> bool:
    res = structural_merge(orig, update, lang)
    return not res.ok and any(words in r for r in res.reasons)


# -- 1. a marker indented deeper than the code it stands for: that code, re-indented (wrap) -----------------

WRAP = {
    "python": ("def f(url):\n    a = 1\n    b = 2\n    c = 3\n    return a\n",
               "def f(url):\n    a = 1\n    if enabled:\n        # ... existing code ...\n        c = 3\n    return a\n",
               "def f(url):\n    a = 1\n    if enabled:\n        b = 2\n        c = 3\n    return a\n"),
    "java": ("class A {\n    int f() {\n        a();\n        b();\n        c();\n        return 1;\n    }\n}\n",
             "class A {\n    int f() {\n        a();\n        if (enabled) {\n            // ... existing code ...\n"
             "            c();\n        }\n        return 1;\n    }\n}\n",
             "class A {\n    int f() {\n        a();\n        if (enabled) {\n            b();\n            c();\n"
             "        }\n        return 1;\n    }\n}\n"),
    "go": ("package x\n\nfunc f() int {\n\ta()\n\tb()\n\tc()\n\treturn 1\n}\n",
           "// ... existing code ...\nfunc f() int {\n\ta()\n\tif enabled {\n\t\t// ... existing code ...\n\t\tc()\n\t}\n"
           "\treturn 1\n}\n",
           "package x\n\nfunc f() int {\n\ta()\n\tif enabled {\n\t\tb()\n\t\tc()\n\t}\n\treturn 1\n}\n"),
    "rust": ("fn f() -> i32 {\n    a();\n    b();\n    c();\n    1\n}\n",
             "fn f() -> i32 {\n    a();\n    if enabled {\n        // ... existing code ...\n        c();\n    }\n    1\n}\n",
             "fn f() -> i32 {\n    a();\n    if enabled {\n        b();\n        c();\n    }\n    1\n}\n"),
    "typescript": ("function f(): number {\n  a();\n  b();\n  c();\n  return 1;\n}\n",
                   "function f(): number {\n  a();\n  if (enabled) {\n    // ... existing code ...\n    c();\n  }\n"
                   "  return 1;\n}\n",
                   "function f(): number {\n  a();\n  if (enabled) {\n    b();\n    c();\n  }\n  return 1;\n}\n"),
}


@pytest.mark.parametrize("lang", sorted(WRAP))
def test_deeper_marker_reads_as_wrapped_code(lang):
    orig, update, expected = WRAP[lang]
    assert merged(orig, update, lang) == expected


def test_wrapped_block_shown_without_context_keeps_its_indentation():
    py = "class A:\n    def f(self):\n        x = 1\n        y = 2\n        return x\n"
    snippet = "# ... existing code ...\n        if enabled:\n            x = 1\n            y = 2\n# ... existing code ...\n"
    assert merged(py, snippet, "python") == \
        "class A:\n    def f(self):\n        if enabled:\n            x = 1\n            y = 2\n        return x\n"
    js = "function f() {\n  a();\n  b();\n  return 1;\n}\n"
    snippet = "// ... existing code ...\n  try {\n    a();\n    b();\n  } catch (e) {\n    throw e;\n  }\n// ... existing code ...\n"
    assert merged(js, snippet, "javascript") == \
        "function f() {\n  try {\n    a();\n    b();\n  } catch (e) {\n    throw e;\n  }\n  return 1;\n}\n"


def test_deeper_marker_whose_code_leaves_the_block_is_refused():
    # the elided code runs past the end of `f` (into `g`): it cannot all go into the new block
    py = "class A:\n    def f(self):\n        a = 1\n        b = 2\n\n    def g(self):\n        c = 3\n"
    snippet = ("class A:\n    def f(self):\n        a = 1\n        if enabled:\n            # ... existing code ...\n"
               "            c = 3\n")
    assert refused_with(py, snippet, "python", "indented deeper than the code it stands for")  # marker_deeper_than_code


# -- the seams: a new opener followed by code outside it, code deeper than a statement end --------------------

@pytest.mark.parametrize("lang,orig,update", [
    ("rust", "fn f() {\n    a();\n    b();\n}\n", "fn f() {\n    if x {\n    // ... existing code ...\n}\n"),
    ("go", "package x\n\nfunc f() {\n\ta()\n\tb()\n}\n",
     "// ... existing code ...\nfunc f() {\n\tif x {\n\t// ... existing code ...\n}\n"),
])
def test_new_opener_with_code_outside_it_is_refused(lang, orig, update):
    assert refused_with(orig, update, lang, "opens a block")


def test_code_deeper_than_a_statement_end_is_refused():
    java = "class A {\n  void f() {\n    a();\n    if (x) {\n      b();\n      c();\n    }\n  }\n}\n"
    snippet = "class A {\n  void f() {\n    a();\n    b();\n    // ... existing code ...\n  }\n}\n"
    assert refused_with(java, snippet, "java", "at another indentation")  # reindented_copy_kept


# -- 2. code deleted: a swap shown without context must not anchor far away -----------------------------------

def test_swapped_lines_without_context_are_refused_not_deleting():
    py = ("def test_a():\n    r = get()\n    assert r.ok\n    assert r.code == 200\n\n\n"
          "def test_b():\n    r = get()\n    r.close()\n    x = 1\n    y = 2\n    z = 3\n    assert r.ok\n")
    snippet = "# ... existing code ...\n    assert r.code == 200\n    assert r.ok\n# ... existing code ...\n"
    assert refused_with(py, snippet, "python", "in another order")  # reordered_run


@pytest.mark.parametrize("lang,orig,update", [
    ("go", "package x\n\nfunc T() {\n\tcheck(a)\n\tcheck(b)\n\tcheck(b)\n\tcheck(c)\n}\n",
     "// ... existing code ...\n\tcheck(b)\n\tcheck(a)\n\tcheck(b)\n// ... existing code ...\n"),
    ("javascript", "f(\n  app,\n  'x',\n  'x',\n  'y'\n);\n",
     "// ... existing code ...\n  'x',\n  app,\n  'x',\n// ... existing code ...\n"),
])
def test_reorder_next_to_a_repeated_line_is_a_tie(lang, orig, update):
    # (5) the reordered pair sits next to a copy of one of its lines: refuse rather than duplicate
    assert refused_with(orig, update, lang, "in another order")  # reordered_run


# -- 3. a header whose name exists anchors to that definition, or the merge refuses ----------------------------

JAVA_PRIMITIVE = (
    "class P {\n  @Override\n  public int getAsInt() {\n    return 1;\n  }\n\n"
    "  @Deprecated\n  @Override\n  public char getAsCharacter() {\n    return 'c';\n  }\n}\n")


def test_annotations_do_not_move_a_method_onto_another():
    snippet = "  // ... existing code ...\n  @Deprecated\n  @Override\n  public int getAsInt() {\n    // ... existing code ...\n  }\n  // ... existing code ...\n"
    assert refused_with(JAVA_PRIMITIVE, snippet, "java", "would turn `public char getAsCharacter() {`")
    # (edge_header_renamed; header_names_other_definition would refuse it too, placed otherwise)


@pytest.mark.parametrize("lang,orig,update", [
    ("typescript", "class A {\n  f() {\n    return 1;\n  }\n\n  h() {\n    return 3;\n  }\n}\n",
     "// ... existing code ...\n  f() {\n    return 1;\n  }\n\n  g() {\n    return 2;\n  }\n  // ... existing code ...\n"),
    ("java", "class A {\n  void f() {\n    a();\n  }\n\n  void h() {\n    c();\n  }\n}\n",
     "  // ... existing code ...\n  void f() {\n    a();\n  }\n\n  void g() {\n    b();\n  }\n  // ... existing code ...\n"),
])
def test_new_definition_is_not_a_rename_of_its_neighbour(lang, orig, update):
    assert refused_with(orig, update, lang, "a rename the snippet does not show")  # edge_header_renamed


# -- 4. unwrapping: short repeated lines are no anchors without checking what they imply ----------------------

UNWRAP_PY = ("class P:\n    def matches(self, other):\n        if self.scheme != other.scheme:\n            return False\n"
             "        if (\n            self.host\n            and not self.host_regex.match(other.host)\n        ):\n"
             "            return False\n        if self.port != other.port:\n            return False\n        return True\n")


def test_unwrap_next_to_a_repeated_line_is_refused_or_exact():
    snippet = ("# ... existing code ...\n            return False\n        return False\n"
               "        if self.port != other.port:\n# ... existing code ...\n")
    expected = UNWRAP_PY.replace("        if (\n            self.host\n            and not self.host_regex.match(other.host)\n"
                                 "        ):\n            return False\n", "        return False\n")
    res = structural_merge(UNWRAP_PY, snippet, "python")
    assert not res.ok or res.text == expected
    assert refused_with(UNWRAP_PY, snippet, "python", "at another indentation")  # reindented_copy_kept


def test_unwrap_at_the_wrong_copy_of_a_repeated_header_is_refused():
    rust = ("impl A for X {\n    fn get(&self, v: &mut V) -> &mut V {\n        match v {\n            _ => v,\n        }\n    }\n}\n\n"
            "impl A for Y {\n    fn get(&self, v: &mut V) -> &mut V {\n        if let V::Null = v {\n"
            "            *v = V::Object(Map::new());\n        }\n        match v {\n            _ => v,\n        }\n    }\n}\n")
    snippet = ("// ... existing code ...\n    fn get(&self, v: &mut V) -> &mut V {\n        *v = V::Object(Map::new());\n"
               "        match v {\n            // ... existing code ...\n")
    assert refused_with(rust, snippet, "rust", "which place is meant")  # added_line_at_other_anchor


def test_unwrap_keeping_the_block_is_refused_in_java():
    java = ("class E {\n  boolean f(int m) {\n    if (m != 0) {\n      log(m);\n      return true;\n    }\n"
            "    return false;\n  }\n}\n")
    snippet = "  // ... existing code ...\n  boolean f(int m) {\n    log(m);\n    // ... existing code ...\n"
    assert refused_with(java, snippet, "java", "at another indentation")  # reindented_copy_kept


# -- 6. a new definition ending at a marker keeps the blank line before the next one ---------------------------

@pytest.mark.parametrize("lang,orig,update,expected", [
    ("typescript", "class A {\n  f() {\n    return 1;\n  }\n\n  static helperWithLongName(x) {\n    return x * 3;\n  }\n}\n",
     "// ... existing code ...\n  f() {\n    return 1;\n  }\n\n  g() {\n    return 2;\n  }\n  // ... existing code ...\n",
     "class A {\n  f() {\n    return 1;\n  }\n\n  g() {\n    return 2;\n  }\n\n  static helperWithLongName(x) {\n"
     "    return x * 3;\n  }\n}\n"),
    ("java", "class A {\n  void f() {\n    a();\n  }\n\n  static void helperWithLongName(int x) {\n    c(x);\n  }\n}\n",
     "  // ... existing code ...\n  void f() {\n    a();\n  }\n\n  void g() {\n    b();\n  }\n  // ... existing code ...\n",
     "class A {\n  void f() {\n    a();\n  }\n\n  void g() {\n    b();\n  }\n\n  static void helperWithLongName(int x) {\n"
     "    c(x);\n  }\n}\n"),
    ("python", "def f():\n    return 1\n\n\ndef helper_with_long_name(x):\n    return x * 3\n",
     "# ... existing code ...\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n# ... existing code ...\n",
     "def f():\n    return 1\n\n\ndef g():\n    return 2\n\n\ndef helper_with_long_name(x):\n    return x * 3\n"),
])
def test_new_definition_at_a_marker_keeps_the_separator(lang, orig, update, expected):
    assert merged(orig, update, lang) == expected


# -- other checks named in issue 15 ---------------------------------------------------------------------------

def test_snippet_that_changes_nothing_is_refused_where_it_also_fits_elsewhere():
    py = "def f():\n    a = 1\n    b = 2\n    return a\n\n\ndef g():\n    a = 1\n    b = 2\n    return b\n"
    snippet = "# ... existing code ...\n    a = 1\n    b = 2\n    return b\n"
    res = structural_merge(py, "# ... existing code ...\n    a = 1\n    b = 2\n# ... existing code ...\n", "python")
    assert not res.ok
    assert structural_merge(py, snippet, "python").text == py  # unique: shown as it is, nothing to do


@pytest.mark.parametrize("lang,orig,snippet", [
    ("python", "def f():\n    a = 1\n    b = 2\n    return a\n",
     "# ... existing code ...\n    a = 1\n    b = 2\n# ... existing code ...\n"),
    ("go", "package p\n\nfunc f() int {\n\ta := 1\n\tb := 2\n\treturn a + b\n}\n",
     "// ... existing code ...\n\ta := 1\n\tb := 2\n// ... existing code ...\n"),
])
def test_an_edit_already_applied_returns_the_file_unchanged(lang, orig, snippet):
    # Agents retry and codemods re-run: a snippet found once, verbatim, has nowhere else to go.
    res = structural_merge(orig, snippet, lang)
    assert res.ok and res.text == orig


def test_changed_attribute_or_added_one_is_refused():
    rust = "fn a() {}\n\n#[test]\nfn test() {\n    run();\n}\n"
    snippet = "// ... existing code ...\n#[cfg(test)]\nfn test() {\n    // ... existing code ...\n}\n"
    assert refused_with(rust, snippet, "rust", "a changed attribute, or one added")  # edited_attribute


# -- the exact syntax oracle for Python ------------------------------------------------------------------------

def test_oracle_refuses_a_merge_python_cannot_compile():
    orig = "def f():\n    a = 1\n    return a\n"
    bad = "def f():\n    a = 1\n    if a:\n    return a\n"
    findings = validate(orig, "", bad, "python")
    assert any(f.kind == "compile" and f.severity == "error" for f in findings)


@pytest.mark.parametrize("orig", [
    "return 1\nx = 2\n",  # compiles nowhere ('return' outside a function), parses for tree-sitter
    "type X = int\ny = 1\n",  # newer syntax than some Pythons
])
def test_oracle_compares_with_an_original_that_does_not_compile(orig):
    assert _compile_error(orig) is not None or "type" in orig  # (`type X` compiles from Python 3.12 on)
    res = structural_merge(orig, orig.replace("1", "2"), "python")
    assert res.ok and res.text == orig.replace("1", "2")


def test_oracle_reports_deep_nesting_as_a_reason_not_a_traceback():
    deep = "x = " + "-" * 100000 + "1\n"
    assert "nested" in (_compile_error(deep) or "")
    orig = "def f():\n    a = 1\n    return a\n"
    res = structural_merge(orig, "def f():\n    a = " + "-" * 50000 + "1\n    return a\n", "python")
    assert not res.ok and any("nested" in r for r in res.reasons)
