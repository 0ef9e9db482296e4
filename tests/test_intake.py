"""Snippets as agents really send them (issue 44): the request read once in front of the merge
(`merge/intake.py`, `merge/form.py`, `merge/indent.py`), and the merge rules it added. Every shape
is exact or refused, never a wrong file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastapply.markers import looks_like_marker, reads_like_elision
from fastapply.merge import TOO_COSTLY, structural_merge
from fastapply.merge import deadline
from fastapply.merge.form import FileForm

DATA = Path(__file__).resolve().parent / "data"


def merged(original: str, update: str, language: str | None = None, path: str | None = None) -> str | None:
    return structural_merge(original, update, language, path).text


def refusal(original: str, update: str, language: str | None = None, path: str | None = None) -> str:
    res = structural_merge(original, update, language, path)
    assert not res.ok, res.text
    return res.reasons[0]


PY = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
PY_G3 = PY.replace("return 2", "return 3")

# -- markers in every comment syntax and wording -------------------------------------------------------

WORDINGS = ["# rest of file unchanged", "// rest of the code remains the same", "# ... (unchanged) ...", "# ...",
            "// …", "// existing code...", "// ...existing code...", "# keep the rest", "-- ... existing code ...",
            "REM ... existing code ...", "rem ... existing code ...", ":: ...", "; ...", "% ...",
            "' ... existing code ...", "(* ... *)", "{/* ... existing JSX ... */}", "<!-- rest of the page unchanged -->",
            "/* rest of code unchanged */", "// [lines 50-100 remain unchanged]", "# unchanged", "// existing code"]
NOT_MARKERS = ["// other tests", "# more helpers", "// Rest of the setup", "# Existing tests", "# Return the value unchanged",
               "'a'", "rem = 5", "remove(x)", "...", "x = 1  # ..."]


@pytest.mark.parametrize("line", WORDINGS)
def test_elision_notes_in_any_comment_syntax_are_markers(line):
    assert looks_like_marker(line) and looks_like_marker("    " + line)


@pytest.mark.parametrize("line", NOT_MARKERS)
def test_comments_that_are_not_elision_notes(line):
    assert not looks_like_marker(line)


@pytest.mark.parametrize("marker", ["# rest of file unchanged", "// ... existing code ...", "# keep the rest",
                                    "REM ... existing code ...", "-- ... existing code ..."])
def test_a_foreign_or_dotless_marker_is_read_and_never_written(marker):
    res = structural_merge(PY, f"{marker}\ndef g():\n    return 3\n", "python")
    assert res.text == PY_G3
    assert any("as a marker" in n for n in res.notes) or marker.startswith("# ...")


def test_ruby_rest_of_file_unchanged_is_a_marker():
    rb = "class User < ApplicationRecord\n  has_many :posts\n\n  def name\n    first\n  end\nend\n"
    upd = "class User < ApplicationRecord\n  has_many :posts\n  has_many :comments\n\n  # rest of file unchanged\n"
    assert merged(rb, upd, "ruby") == rb.replace("has_many :posts\n", "has_many :posts\n  has_many :comments\n")


def test_a_note_that_reads_like_elision_is_refused_with_the_line_quoted():
    why = refusal(PY, "# ... existing code ...\ndef g():\n    # TODO: rest of the implementation here\n    return 3\n",
                  "python")
    assert why.startswith("Write `# TODO: rest of the implementation here` (snippet line 3) as a marker")
    assert reads_like_elision("// keep existing logic for other branches")


def test_a_comment_the_original_has_is_content():
    original = "def f():\n    # rest of file unchanged\n    return 1\n"
    assert merged(original, "def f():\n    # rest of file unchanged\n    return 2\n", "python") == \
        original.replace("return 1", "return 2")


def test_the_validation_refuses_an_elision_note_in_any_result():
    from fastapply.validate import validate

    found = validate(PY, "x", PY.replace("return 2", "# rest of the code unchanged\n    return 2"), "python")
    assert any(f.kind == "marker_leak" and f.severity == "error" for f in found)


# -- fences and prose ------------------------------------------------------------------------------------

@pytest.mark.parametrize("update", [
    "```python\ndef g():\n    return 3\n```\n",
    "```\n# ... existing code ...\ndef g():\n    return 3\n```",
    "Here is the updated function:\n```py\ndef g():\n    return 3\n```\n",
    "Here is the updated function:\n\n~~~python\ndef g():\n    return 3\n~~~\n",
])
def test_a_fenced_snippet_is_unwrapped_with_a_note(update):
    res = structural_merge(PY, update, "python")
    assert res.text == PY_G3 and any(n.startswith("unwrapped the snippet") for n in res.notes)


def test_a_fence_in_markdown_that_may_be_the_files_is_refused_naming_it():
    md = "# Title\n\nSome text.\n\nMore text.\n"
    why = refusal(md, "```markdown\n# Title\n\nSome new text.\n```\n", "markdown")
    assert why.startswith("Send the code without the markdown fence (```markdown")


def test_a_markdown_code_block_shown_as_context_is_content():
    md = "# Use\n\n```bash\nmake demo\n```\n\nThen test.\n"
    assert merged(md, "```bash\nmake demo\nmake test\n```\n", "markdown") == md.replace("make demo\n", "make demo\nmake test\n")


@pytest.mark.parametrize("update, start", [
    ("```python\n```\n", "Send the code itself: the snippet is only a markdown fence"),
    ("I changed the function to return three.\n", "Send the code itself: the snippet is only prose"),
    ("# ... existing code ...\n", "Send the changed code with markers around it: the snippet is only markers"),
    ("```python\ndef g():\n    return 3\n", "Send the code without the markdown fence: the snippet opens with a fence"),
])
def test_only_a_fence_prose_or_markers_is_a_clear_refusal(update, start):
    assert refusal(PY, update, "python").startswith(start)


# -- indentation re-based to the file -----------------------------------------------------------------

GO = ("package main\n\nimport \"fmt\"\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc main() {\n"
      "\tx := add(1, 2)\n\tif x > 2 {\n\t\tfmt.Println(\"big\")\n\t}\n\tfmt.Println(x)\n}\n")
GO_EXPECTED = GO.replace('\t\tfmt.Println("big")\n', '\t\tfmt.Println("big")\n\t\tfmt.Println("really")\n')


@pytest.mark.parametrize("update", [
    "func main() {\n    x := add(1, 2)\n    if x > 2 {\n        fmt.Println(\"big\")\n        fmt.Println(\"really\")\n"
    "    }\n    fmt.Println(x)\n}\n",
    "// ... existing code ...\n    if x > 2 {\n        fmt.Println(\"big\")\n        fmt.Println(\"really\")\n    }\n"
    "// ... existing code ...\n",
])
def test_tabs_written_as_spaces_keep_the_files_tabs(update):
    res = structural_merge(GO, update, "go")
    assert res.text == GO_EXPECTED and "re-based" in " ".join(res.notes)


PHP = ("<?php\n\nclass A\n{\n    public function f($x)\n    {\n        if ($x) {\n            return 1;\n        }\n"
       "        return 2;\n    }\n\n    public function g()\n    {\n        return 3;\n    }\n}\n")


def test_two_spaces_for_four_are_re_based():
    upd = ("  // ... existing code ...\n  public function f($x)\n  {\n    if ($x) {\n      return 10;\n    }\n"
           "    return 2;\n  }\n  // ... existing code ...\n")
    assert merged(PHP, upd, "php") == PHP.replace("return 1;", "return 10;")


def test_spaces_snippet_for_a_tab_file_whose_levels_are_not_clear_is_refused():
    # the snippet shows nothing from the file at any depth, and steps by 3 and by 5
    why = refusal(GO, "// ... existing code ...\n   if y {\n        z()\n   }\n// ... existing code ...\n", "go")
    assert "send the snippet indented as the file is" in why or "region" in why


def test_trailing_whitespace_the_file_has_is_kept():
    md = "# Title\n\nLine one  \nLine two  \n\nMore text.\n"
    res = structural_merge(md, "<!-- ... existing code ... -->\nLine one\nLine two\n\nMore text, changed.\n", "markdown")
    assert res.text == md.replace("More text.", "More text, changed.")


def test_whitespace_only_blank_lines_of_the_file_are_kept():
    java = "class A {\n    int a;\n    \n    int b;\n    \n    void f() {}\n}\n"
    assert merged(java, "// ... existing code ...\n    int b;\n\n    void f() { g(); }\n}\n", "java") == \
        java.replace("void f() {}", "void f() { g(); }")


# -- line endings and the BOM --------------------------------------------------------------------------

@pytest.mark.parametrize("name, original, update, expected", [
    ("crlf", PY.replace("\n", "\r\n"), "# ... existing code ...\ndef g():\n    return 3\n    # more\n",
     PY.replace("return 2", "return 3\n    # more").replace("\n", "\r\n")),
    ("crlf snippet too", PY.replace("\n", "\r\n"), "# ... existing code ...\r\ndef g():\r\n    return 3\r\n",
     PY_G3.replace("\n", "\r\n")),
    ("bom", "\ufeff" + PY, "# ... existing code ...\ndef g():\n    return 3\n", "\ufeff" + PY_G3),
    ("no final newline", PY.rstrip("\n"), "# ... existing code ...\ndef g():\n    return 3\n", PY_G3.rstrip("\n")),
    ("mixed", "a = 1\r\nb = 2\n\n\ndef g():\r\n    return 2\n",
     "# ... existing code ...\ndef g():\n    x = 1\n    return 2\n",
     "a = 1\r\nb = 2\n\n\ndef g():\r\n    x = 1\r\n    return 2\n"),
])
def test_the_files_form_is_kept(name, original, update, expected):
    res = structural_merge(original, update, "python")
    assert res.text == expected, name


def test_readings_come_back_in_the_files_form():
    original = ("def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    return x\n").replace("\n", "\r\n")
    res = structural_merge(original, "# ... existing code ...\n    x = 1\n    y = 2\n    return x\n# ... existing code ...\n",
                           "python")
    assert not res.ok and res.readings and all("\r\n" in r.text and "\n" not in r.text.replace("\r\n", "")
                                               for r in res.readings)


def test_file_form_round_trip():
    for text in ["a\r\nb\r\n", "\ufeffa\nb", "a\r\nb\nc\r\n", "a\rb\n", ""]:
        form, lf = FileForm.of(text)
        assert "\r\n" not in lf and not lf.startswith("\ufeff")
        assert form.restore(lf, lf) == text


# -- a statement replaced next to a marker; blank lines a marker stands for ----------------------------

RS = """use std::path::Path;

fn walk(opts: &Opts, path: &Path) -> Result<()> {
    let max = opts.max_filesize;
    let size = path.metadata()?.len();
    let should_skip_filesize = if let Some(m) = max {
        size > m
    } else {
        false
    };
    if should_skip_filesize {
        return Ok(());
    }
    Ok(())
}
"""
RS_NEW = "    let should_skip_filesize = max.map_or(false, |m| size > m);"


def test_a_statement_rebound_after_a_marker_is_a_doubt_with_the_edit_among_its_readings():
    old = RS[RS.index("    let should_skip_filesize"):RS.index("    if should_skip_filesize")]
    expected = RS.replace(old, RS_NEW + "\n")
    res = structural_merge(RS, "// ... existing code ...\n" + RS_NEW + "\n    if should_skip_filesize {\n"
                           "// ... existing code ...\n", "rust")
    assert not res.ok and "sets `let should_skip_filesize`" in res.reasons[0]
    assert expected in [r.text for r in res.readings]


@pytest.mark.parametrize("lang, original, new_block, after", [
    ("typescript", "export function f(items: Item[]): Item[] {\n  const result: Item[] = [];\n"
                   "  for (const item of items) {\n    result.push(item);\n  }\n\n  return result;\n}\n",
     "  if (result.length === 0) {\n    throw new Error(\"empty\");\n  }\n", "  for (const item of items) {\n"
                                                                        "    result.push(item);\n  }\n"),
    ("python", "def f(items):\n    result = []\n    for item in items:\n        result.append(item)\n\n    return result\n",
     "    if not result:\n        raise ValueError(\"empty\")\n", "    for item in items:\n        result.append(item)\n"),
    ("go", "func f(items []int) []int {\n\tresult := []int{}\n\tfor _, it := range items {\n\t\tresult = append(result, it)\n"
           "\t}\n\n\treturn result\n}\n",
     "\tif len(result) == 0 {\n\t\tpanic(\"empty\")\n\t}\n", "\tfor _, it := range items {\n\t\tresult = append(result, it)\n\t}\n"),
])
def test_the_blank_line_a_marker_stands_for_stays(lang, original, new_block, after):
    marker = "// ... existing code ..." if lang != "python" else "# ... existing code ..."
    update = f"{marker}\n{after}\n{new_block}{marker}\n"
    expected = original.replace(after + "\n", after + "\n" + new_block + "\n")
    assert merged(original, update, lang) == expected


# -- the classes written by someone else, and the deadline ---------------------------------------------

def _cases(name: str) -> list[dict]:
    return [json.loads(x) for x in (DATA / name).read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.mark.parametrize("case", _cases("messy_classes.jsonl"), ids=lambda c: c["id"])
def test_the_five_wrong_file_classes_are_exact_or_refused(case):
    res = structural_merge(case["original"], case["update"], None, case["path"])
    assert not res.ok or res.text == case["expected"], case["id"]


def test_a_merge_past_its_deadline_refuses(monkeypatch):
    monkeypatch.setattr(deadline, "MERGE_SECONDS", -1.0)
    res = structural_merge(RS, "// ... existing code ...\n" + RS_NEW + "\n    if should_skip_filesize {\n"
                           "// ... existing code ...\n", "rust")
    assert not res.ok and res.reasons == [TOO_COSTLY]
