"""Minimal TextEdits (lsp/edits.py): exact round trips, small ranges, LSP position rules."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from lsp.edits import apply_edits, changed_lines, minimal_edits, split_lines, unified_diff, units

EVALS = Path(__file__).resolve().parents[1] / "evals" / "cases"


def roundtrip(old: str, new: str, enc: str = "utf-16"):
    edits = minimal_edits(old, new, enc)
    assert apply_edits(old, edits, enc) == new
    assert apply_edits(old, [e.to_lsp() for e in edits], enc) == new
    return edits


def test_identical_gives_no_edit():
    assert minimal_edits("a\nb\n", "a\nb\n") == []
    assert minimal_edits("", "") == []


def test_one_word_change_is_one_small_edit():
    old = "def f(x):\n    return x + 1\n\n\ndef g():\n    pass\n"
    new = old.replace("x + 1", "x + 2")
    (e,) = roundtrip(old, new)
    assert (e.start.line, e.start.character, e.end.line, e.end.character, e.new_text) == (1, 15, 1, 16, "2")


def test_insert_lines_touches_no_existing_text():
    old = "a\nb\nc\n"
    new = "a\nb\nx\ny\nc\n"
    (e,) = roundtrip(old, new)
    assert e.start == e.end  # a pure insertion
    assert e.new_text in ("x\ny\n", "\nx\ny")


def test_delete_and_two_hunks():
    old = "".join(f"line {i}\n" for i in range(30))
    lines = old.splitlines(keepends=True)
    new = "".join(lines[:3] + lines[4:20] + ["inserted\n"] + lines[20:])
    edits = roundtrip(old, new)
    assert len(edits) == 2
    assert edits[0].start.line == 3 and edits[0].new_text == ""


def test_edges_empty_and_no_trailing_newline():
    for old, new in [("", "abc"), ("abc", ""), ("abc", "abd"), ("a\nb", "a\nb\n"), ("a\nb\n", "a\nb"),
                     ("a\nb", "a\nc"), ("x", "x\ny\nz"), ("\n\n", "\n"), ("\n", "\n\n\n")]:
        roundtrip(old, new)


def test_crlf_and_lone_cr_are_line_ends():
    old = "a\r\nb\r\nc\r\n"
    new = "a\r\nB\r\nc\r\n"
    (e,) = roundtrip(old, new)
    assert (e.start.line, e.start.character, e.end.line, e.end.character) == (1, 0, 1, 1)
    # never a position between \r and \n
    for old, new in [("a\r\nb", "a\rb"), ("a\rb", "a\r\nb"), ("a\r\n", "a\n"), ("a\n", "a\r\n"), ("x\r", "x\r\n")]:
        for ed in roundtrip(old, new):
            for pos in (ed.start, ed.end):
                line = (split_lines(old) + [""])[pos.line]
                assert pos.character <= len(line.rstrip("\r\n"))
    # \x0c and \u2028 are not line breaks in LSP (str.splitlines would split there)
    assert split_lines("a\x0cb\u2028c\n") == ["a\x0cb\u2028c\n"]


@pytest.mark.parametrize("enc", ["utf-8", "utf-16", "utf-32"])
def test_position_encodings(enc):
    old = "s = '😀é'  # x\nnext\n"
    new = old.replace("# x", "# y")
    (e,) = roundtrip(old, new, enc)
    want = units("s = '😀é'  # ", enc)
    assert e.start.character == want and e.start.line == 0
    assert {"utf-8": 16, "utf-16": 13, "utf-32": 12}[enc] == want


@pytest.mark.parametrize("enc", ["utf-8", "utf-16", "utf-32"])
def test_random_round_trips(enc):
    rng = random.Random(4)
    alphabet = ["a", "b", " ", "\n", "\r\n", "\r", "é", "😀", "x = 1\n", "\t"]
    for _ in range(400):
        old = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
        chars = list(old)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randint(0, len(chars))
            if op < 0.4:
                chars[pos:pos] = list(rng.choice(alphabet))
            elif op < 0.8 and chars:
                del chars[pos:pos + rng.randint(1, 3)]
            elif chars:
                chars[min(pos, len(chars) - 1)] = rng.choice(alphabet)
        roundtrip(old, "".join(chars), enc)


def test_changed_lines_and_diff():
    old, new = "a\nb\nc\n", "a\nB\nc\nd\n"
    assert changed_lines(old, new) == (1, 2)
    diff = unified_diff(old, new, "f.py")
    assert diff.startswith("--- a/f.py\n+++ b/f.py\n") and "-b\n" in diff and "+B\n" in diff
    assert "No newline" in unified_diff("a", "b")


def test_real_cases_edits_are_small():
    path = EVALS / "commits_dev.jsonl"
    if not path.exists():
        pytest.skip("shared evals absent")
    with path.open() as f:
        cases = [json.loads(line) for _, line in zip(range(40), f)]
    for case in cases:
        old, new = case["original"], case["expected"]
        edits = roundtrip(old, new)
        removed, added = changed_lines(old, new)
        # every edit lies within a changed block, and edits never outnumber the changed lines
        assert 0 < len(edits) <= max(removed, added)
        import difflib

        a, b = split_lines(old), split_lines(new)
        added_chars = sum(len("".join(b[j1:j2])) for tag, _, _, j1, j2 in
                          difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal")
        assert sum(len(e.new_text) for e in edits) <= added_chars
