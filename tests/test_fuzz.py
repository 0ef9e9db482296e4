"""evals.fuzz: its generators draw real edits whose snippet shows the edited file, its runs are
deterministic for a seed, and its JSON carries the summary fields the issue names."""

from __future__ import annotations

import json

import pytest

from evals import fuzz
from evals.fuzz_common import RandomPick, Source, keeps_syntax, render
from fastapply.markers import looks_like_marker

PY = ("import os\n\n\nclass A:\n    def f(self, x):\n        y = x + 1\n        if x:\n            y = 2\n"
      "            z = 3\n            w = 4\n        items = [\n            'a',\n            'b',\n        ]\n"
      "        return y\n\n    def g(self):\n        a = os.getcwd()\n        b = a + '/x'\n        return b\n\n\n"
      "def main():\n    a = A()\n    print(a.f(1))\n    print(a.g())\n\n\nif __name__ == '__main__':\n    main()\n")
GO = ("package main\n\nimport \"fmt\"\n\nfunc show(a int, b string) string {\n\tx := a + 1\n\tif x > 2 {\n"
      "\t\tx = 2\n\t\tfmt.Println(x)\n\t\tfmt.Println(b)\n\t}\n\tlist := []int{\n\t\t1,\n\t\t2,\n\t}\n"
      "\treturn fmt.Sprintf(\"%d %s %v\", x, b, list)\n}\n\nfunc main() {\n\tfmt.Println(show(1, \"x\"))\n"
      "\tfmt.Println(show(2, \"y\"))\n}\n")
TESTS_PY = ("from app import make\n\n\ndef test_a():\n    c = make()\n    r = c.get('/a')\n    assert r.ok\n    assert r.json() == {}\n"
            "\n\ndef test_b():\n    c = make()\n    r = c.get('/b')\n    assert r.ok\n    assert r.json() == {}\n\n\n"
            "def test_c():\n    c = make()\n    assert c.post('/c').ok\n")
POOL = {"python": [Source("python", PY, "builtin.py"), Source("python", TESTS_PY, "builtin_test.py")],
        "go": [Source("go", GO, "builtin.go")]}


def _subsequence(shown: list[str], lines: list[str]) -> bool:
    """Shown lines in order in the file (indentation aside: a bare function may be pasted at column 0)."""
    shown, it = [x.strip() for x in shown], iter(x.strip() for x in lines)
    return all(any(x == y for y in it) for x in shown)


# `messy` rewrites a drawn snippet as agents send it (a fence, prose, markers in another comment syntax,
# tabs for spaces, a BOM): its lines are not the file's by design (tests/test_messy_eval.py covers it).
@pytest.mark.parametrize("pattern", [p for p in fuzz.PATTERNS if p != "messy"])
def test_each_pattern_draws_edits_whose_snippet_shows_the_edited_file(pattern):
    drawn = [fuzz.draw_case(pattern, 7, i, POOL) for i in range(12)]
    drawn = [d for d in drawn if d is not None]
    assert drawn, f"{pattern} drew nothing from the built-in files"
    for src, edit in drawn:
        assert edit.expected != src.text and keeps_syntax(src, edit.expected)
        code = [x for x in edit.update.splitlines() if not looks_like_marker(x)]
        assert code and _subsequence(code, edit.expected.splitlines()), (pattern, edit.update)


def test_render_careful_and_loose_markers():
    lines = ["def f():", "    a = 1", "    b = 2", "    return a"]
    shown = [True, False, True, True]
    assert render(lines, shown, "python", loose=False) == "def f():\n    # ... existing code ...\n    b = 2\n    return a\n"
    assert render(lines, shown, "python", loose=True) == "def f():\n# ... existing code ...\n    b = 2\n    return a\n"
    assert render(lines, [False, True, True, False], "go", loose=True, drop="lead") == "    a = 1\n    b = 2\n// ... existing code ...\n"


def test_random_pick_is_deterministic():
    a, b = RandomPick("1:reorder:3:0"), RandomPick("1:reorder:3:0")
    assert [a.int(0, 99) for _ in range(5)] == [b.int(0, 99) for _ in range(5)]


def test_run_is_deterministic_and_reports_the_summary(tmp_path, capsys):
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    argv = ["--per-pattern", "4", "--seed", "3", "--patterns", "reorder,wrap_marker,prop_tail"]
    assert fuzz.main(argv + ["--json", str(out1)]) == 0
    assert fuzz.main(argv + ["--json", str(out2), "--jobs", "2"]) == 0
    s1, s2 = json.loads(out1.read_text())["summary"], json.loads(out2.read_text())["summary"]
    assert s1 == s2
    assert {"cases", "patterns", "exact", "refused", "silent_wrong", "per_pattern"} <= set(s1)
    assert s1["patterns"] == 3 and set(s1["per_pattern"]) == {"reorder", "wrap_marker", "prop_tail"}
    per = s1["per_pattern"]["reorder"]
    assert per["exact"] + per["refused"] + per["silent_wrong"] + per["crash"] + per["timeout"] == per["cases"]
    assert "silent_wrong" in capsys.readouterr().out  # the table


def test_unknown_pattern_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as ei:
        fuzz.main(["--patterns", "nosuch"])
    assert ei.value.code == 2 and "nosuch" in capsys.readouterr().err


def test_broken_original_breaks_the_original_and_the_expected_file_alike():
    """`--broken-original`: an unclosed opener above both files, so that tree-sitter fails on most
    of the original (the merge's line-anchor-only path); a language without one is not drawn."""
    from fastapply.languages import parse, unparsable
    from evals.fuzz_common import Edit

    js = "function f() {\n  return 1;\n}\n\nfunction g() {\n  return 2;\n}\n"
    edit = Edit("javascript", js, js.replace("return 2", "return 3"), "// ... existing code ...\n")
    out = fuzz.broken(edit)
    assert out is not None and out.original == fuzz.BROKEN_OPENER["javascript"] + js
    assert out.expected == fuzz.BROKEN_OPENER["javascript"] + edit.expected and out.update == edit.update
    assert unparsable(parse("javascript", out.original), out.original)
    assert fuzz.broken(Edit("python", PY, PY, "x\n")) is None
