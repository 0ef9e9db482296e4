"""evals.messy: each transform does what it says on small literal cases (and skips where the
expected file would not stay exact), and the runner runs end to end. No merge accuracy is asserted
here: the merge is being changed to handle these shapes, and this eval measures it."""

from __future__ import annotations

import json
import random

import pytest

from evals import messy
from evals.messy_transforms import COMMENTS, OWN, TRANSFORMS, WORDINGS, Skip, Variant, markers

GO_ORIG = "package main\n\nfunc f() int {\n\tx := 1\n\tif x > 0 {\n\t\tx = 2\n\t}\n\treturn x\n}\n\nfunc g() {}\n"
GO_EXP = GO_ORIG.replace("\t\tx = 2\n", "\t\tx = 3 // a\tb\n")
GO_UPD = ("// ... existing code ...\nfunc f() int {\n\tx := 1\n\tif x > 0 {\n\t\tx = 3 // a\tb\n\t}\n"
          "\t// ... existing code ...\n}\n// ... existing code ...\n")
GO = Variant("go", GO_ORIG, GO_UPD, GO_EXP)

PY_ORIG = ("class A:\n    def f(self):\n        a = 1\n        return a\n\n    def g(self):\n        return 2\n\n\n"
           "def h():\n    return 3\n")
PY_EXP = PY_ORIG.replace("        a = 1\n", "        a = 1\n        b = a  # x\n")
PY_UPD = ("class A:\n    def f(self):\n        a = 1\n        b = a  # x\n        return a\n"
          "    # ... existing code ...\n")
PY = Variant("python", PY_ORIG, PY_UPD, PY_EXP)
PY_MEMBER = Variant("python", PY_ORIG, "    def f(self):\n        a = 1\n        b = a  # x\n"
                    "        # ... existing code ...\n", PY_EXP)

JS_ORIG = "function f() {\n  const a = 1;\n  if (a) {\n    go(a);\n  }\n  return a;\n}\n\nmodule.exports = f;\n"
JS_EXP = JS_ORIG.replace("    go(a);\n", "    go(a, 2);\n")
JS = Variant("javascript", JS_ORIG, "function f() {\n  // ... existing code ...\n  if (a) {\n    go(a, 2);\n"
             "  }\n  // ... existing code ...\n}\n// ... existing code ...\n", JS_EXP)


def apply(name: str, v: Variant, seed: int = 1) -> Variant:
    return TRANSFORMS[name](v, random.Random(f"{seed}:case:{name}"))


def _rest(line: str) -> str:
    return line.lstrip(" \t")


def test_tabs_to_spaces_rewrites_only_the_indentation():
    out = apply("tabs_to_spaces", GO)
    assert (out.original, out.expected) == (GO.original, GO.expected)
    old, new = GO.update.split("\n"), out.update.split("\n")
    assert [_rest(x) for x in old] == [_rest(x) for x in new]  # the tab inside `a\tb` stays
    assert "\t\tx = 3 // a\tb" in old and "        x = 3 // a\tb" in new
    assert not any(x.startswith("\t") for x in new)


def test_spaces_to_tabs_and_indent_widths_follow_the_files_unit():
    assert apply("spaces_to_tabs", PY).update.split("\n")[3] == "\t\tb = a  # x"
    assert apply("indent_4_to_2", PY).update.split("\n")[3] == "    b = a  # x"
    assert apply("indent_2_to_4", JS).update.split("\n")[3] == "        go(a, 2);"
    for name, v in (("indent_2_to_4", PY), ("indent_4_to_2", JS), ("spaces_to_tabs", GO), ("tabs_to_spaces", PY)):
        with pytest.raises(Skip):
            apply(name, v)


def test_dedent_member_puts_the_least_indented_line_at_column_0():
    out = apply("dedent_member", PY_MEMBER)
    lines = [x for x in out.update.split("\n") if x.strip()]
    assert lines[0] == "def f(self):" and lines[1] == "    a = 1"
    assert [_rest(x) for x in lines] == [_rest(x) for x in PY_MEMBER.update.split("\n") if x.strip()]
    with pytest.raises(Skip):
        apply("dedent_member", PY)  # already at column 0


def test_strip_trailing_ws_only_where_the_original_has_it_and_the_edit_keeps_it():
    with pytest.raises(Skip):
        apply("strip_trailing_ws", PY)  # no trailing whitespace in the file
    orig = PY_ORIG.replace("        a = 1\n", "        a = 1  \n")
    v = Variant("python", orig, PY_UPD.replace("        a = 1\n", "        a = 1  \n"),
                PY_EXP.replace("        a = 1\n", "        a = 1  \n"))
    out = apply("strip_trailing_ws", v)
    assert "        a = 1\n" in out.update and out.expected == v.expected and out.original == v.original
    added = Variant("python", orig, v.update.replace("b = a  # x", "b = a  "),
                    v.expected.replace("b = a  # x", "b = a  "))
    with pytest.raises(Skip):
        apply("strip_trailing_ws", added)  # a new line's trailing whitespace is part of the edit


def test_crlf_expected_is_the_clean_expected_in_crlf():
    out = apply("crlf", PY)
    assert out.expected == PY.expected.replace("\n", "\r\n") and out.update == PY.update.replace("\n", "\r\n")
    lf = apply("crlf_file_lf_snippet", PY)
    assert lf.update == PY.update and lf.original == PY.original.replace("\n", "\r\n")
    with pytest.raises(Skip):
        apply("crlf", out)


def test_bom_and_no_final_newline_change_the_file_not_the_snippet():
    out = apply("bom", PY)
    assert out.original == "\ufeff" + PY.original and out.expected == "\ufeff" + PY.expected and out.update == PY.update
    nf = apply("no_final_newline", PY)
    assert nf.original == PY.original[:-1] and nf.expected == PY.expected[:-1] and nf.update == PY.update
    last = Variant("python", PY.original, PY.update, PY.expected.replace("return 3", "return 4"))
    with pytest.raises(Skip):
        apply("no_final_newline", last)  # the edit touches the last line


def test_fences_wrap_the_snippet_and_skip_markdown():
    assert apply("fence", PY).update == "```\n" + PY.update + "```\n"
    assert apply("fence_lang", PY).update.split("\n")[0] in ("```python", "```py")
    prose = apply("fence_prose", PY).update.split("\n")
    assert prose[0].endswith(":") and prose[-2] == "```"
    md = Variant("markdown", "# T\n\ntext\n", "# T\n\nnew\n", "# T\n\nnew\n")
    fenced = Variant("python", 'DOC = """\n```py\nx\n```\n"""\n', "x = 1\n", "x = 1\n")
    for name in ("fence", "fence_lang", "fence_prose"):
        for v in (md, fenced):
            with pytest.raises(Skip):
                apply(name, v)


def test_markers_are_found_as_the_sets_write_them():
    upd = ("# ... existing code ...\n    // ...\n<!-- ... rest of content ... -->\n{/* ... existing code ... */}\n"
           "-- ... unchanged ...\n/* ... */\n# Default case...\nx = '...'\n")
    found = markers(Variant("python", "x = 1\n", upd, "x = 1\n"))
    assert found == {0: "#", 1: "//", 2: "<!-- -->", 3: "{/* */}", 4: "--", 5: "/* */"}
    assert markers(Variant("python", "# ...\n", "# ...\nx\n", "# ...\nx\n")) == {}  # a line of the file


def test_a_marker_wording_never_equals_a_line_of_the_original():
    taken = [f"# {w}" for w in WORDINGS[1:]]  # every wording but the first collides in `#`
    orig = "\n".join(taken) + "\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
    v = Variant("python", orig, "def f():\n    return 5\n# ... existing code ...\n",
                orig.replace("return 1", "return 5"))
    for seed in range(20):
        out = apply("marker_wording", v, seed)
        assert out.update.split("\n")[2] == f"# {WORDINGS[0]}"
        foreign = apply("marker_foreign_syntax", v, seed).update.split("\n")[2]
        assert foreign not in orig.split("\n") and not foreign.startswith("#")
    for seed in range(20):  # the language's own syntax is never the "foreign" one
        line = apply("marker_foreign_syntax", JS, seed).update.split("\n")[1].strip()
        assert not any(line.startswith(COMMENTS[s][0]) for s in OWN["javascript"])
    with pytest.raises(Skip):
        apply("marker_wording", Variant("python", "a\n", "b\n", "b\n"))  # no marker


def test_variants_are_deterministic_for_a_seed():
    case = {"id": "py", "language": "python", "original": PY.original, "update": PY.update, "expected": PY.expected}
    a, skipped = messy.make_variants([case], list(TRANSFORMS), 3)
    b, _ = messy.make_variants([case], list(TRANSFORMS), 3)
    assert a == b and a and skipped


def test_runner_runs_end_to_end_on_three_cases(tmp_path, capsys):
    rows = [{"id": n, "language": v.language, "original": v.original, "update": v.update, "expected": v.expected}
            for n, v in (("go", GO), ("py", PY), ("js", JS))]
    (tmp_path / "tiny.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out" / "messy.json"
    assert messy.main(["--data", str(tmp_path), "--sets", "tiny", "--jobs", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    summary, variants = data["summary"], data["variants"]
    assert summary["clean"]["tiny"]["cases"] == 3 and set(summary["by_transform"]) == set(TRANSFORMS)
    assert summary["total"]["variants"] == len(variants)
    assert all(v["verdict"] in messy.VERDICTS and v["clean_exact"] for v in variants)
    for name, b in summary["by_transform"].items():
        assert b["exact"] + b["refused"] + b["wrong"] + b["timeout"] + b["crash"] == b["variants"], name
    assert "messy variants per transform" in capsys.readouterr().out
