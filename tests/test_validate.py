"""validate(): the safety checks shared by the structural merge and the model engines."""

from fastapply.api import Finding
from fastapply.validate import validate

ORIG = '''def f():
    return 1


class A:
    def g(self):
        x = 1
        return x
'''


def kinds(findings, severity="error"):
    return {f.kind for f in findings if f.severity == severity}


def test_clean_edit_has_no_errors():
    merged = ORIG.replace("return 1", "return 2")
    findings = validate(ORIG, "def f():\n    return 2\n", merged, "python")
    assert all(isinstance(f, Finding) for f in findings)
    assert not kinds(findings)


def test_parse_error_is_reported():
    merged = ORIG.replace("def f():", "def f(:")
    assert "parse" in kinds(validate(ORIG, "x", merged, "python"))


def test_no_worse_than_an_original_that_already_has_errors():
    orig = "function f( {\n  return 1;\n}\n"
    assert "parse" not in kinds(validate(orig, "x", orig.replace("1", "2"), "javascript"))


def test_empty_body_is_reported_unless_the_update_asks_for_it():
    merged = "function f() {\n}\n\nfunction g() {\n  return 2;\n}\n"
    orig = "function f() {\n  return 1;\n}\n\nfunction g() {\n  return 2;\n}\n"
    assert "empty_body" in kinds(validate(orig, "function g() {\n  return 2;\n}\n", merged, "javascript"))
    assert "empty_body" not in kinds(validate(orig, "function f() {\n}\n", merged, "javascript"))


def test_marker_leak_whole_line_and_inline():
    merged = ORIG + "# ... existing code ...\n"
    assert "marker_leak" in kinds(validate(ORIG, "# ... existing code ...\nx\n", merged, "python"))
    orig = "const a = { x: 1, y: 2 };\n"
    leaked = "const a = { x: // ... existing ..., y: 3 };\n"
    assert "marker_leak" in kinds(validate(orig, leaked, leaked, "javascript"))


def test_marker_text_already_in_the_original_is_not_a_leak():
    orig = "// use // ... existing code ... to elide\nconst a = 1;\n"
    merged = orig.replace("1", "2")
    assert "marker_leak" not in kinds(validate(orig, "const a = 2;\n", merged, "javascript"))


def test_large_deletion():
    orig = "".join(f"line_{i} = {i}\n" for i in range(60))
    merged = "".join(f"line_{i} = {i}\n" for i in range(10))
    update = "# ... existing code ...\nline_5 = 5\n"
    findings = validate(orig, update, merged, "python")
    assert "large_deletion" in kinds(findings)
    # a whole-file rewrite without markers is only a warning
    findings = validate(orig, merged, merged, "python")
    assert "large_deletion" in kinds(findings, "warning") and "large_deletion" not in kinds(findings)


def test_unknown_language_skips_parse_checks():
    assert not kinds(validate("a\nb\n", "a\nc\n", "a\nc\n", "markdown"))


def test_an_attribute_left_with_nothing_to_apply_to_is_reported():
    # tree-sitter-rust takes `#[test]` at the end of a file without an error node (issue 15, seed 19)
    orig = "fn a() {}\n\n#[test]\nfn t() {}\n"
    assert "parse" not in kinds(validate(orig, "x", orig + "\n#[test]\n", "rust"))
    assert "dangling_attribute" in kinds(validate(orig, "x", orig + "\n#[test]\n", "rust"))
    java = "class A {\n  int x;\n}\n"
    assert "dangling_attribute" in kinds(validate(java, "x", "class A {\n  int x;\n  @Override\n}\n", "java"))
    # an attribute on an item, an inner attribute, and one the original already leaves dangling are fine
    assert "dangling_attribute" not in kinds(validate(orig, "x", orig.replace("fn a", "#[inline]\nfn a"), "rust"))
    assert "dangling_attribute" not in kinds(validate(orig, "x", "#![allow(dead_code)]\n" + orig, "rust"))
    tail = orig + "#[cfg(test)]\n"
    assert "dangling_attribute" not in kinds(validate(tail, "x", tail.replace("fn a", "fn b"), "rust"))
