"""Model-output checks: the edit is in the result and no untouched code is gone."""

from fastapply.edit_checks import check_edit_applied
from tests.conftest import load_shared

ORIGINAL = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
UPDATE = "# ... existing code ...\ndef sub(a, b):\n    return b - a  # flipped\n# ... existing code ...\n"
GOOD = ORIGINAL.replace("    return a - b\n", "    return b - a  # flipped\n")


def kinds(merged):
    return [f.kind for f in check_edit_applied(ORIGINAL, UPDATE, merged)]


def test_right_merge_passes():
    assert kinds(GOOD) == []


def test_copy_of_original_is_caught():
    assert "edit_missing" in kinds(ORIGINAL)


def test_the_snippets_lines_out_of_order_are_caught():
    """Held-out agent set 6, `A_rust`, through `auto`: the merge refused with no reading, and the
    0.5B model wrote the new `else` branch's lines into the `if` and the old body into the `else`.
    The file parsed and held every line; only their order was wrong."""
    original = "fn f(x: u8) -> u8 {\n    let y = x + 1;\n    y\n}\n"
    update = "fn f(x: u8) -> u8 {\n    if x > 0 {\n        // ... existing code ...\n    } else {\n        0\n    }\n}\n"
    right = "fn f(x: u8) -> u8 {\n    if x > 0 {\n        let y = x + 1;\n        y\n    } else {\n        0\n    }\n}\n"
    swapped = "fn f(x: u8) -> u8 {\n    if x > 0 {\n        0\n    } else {\n        let y = x + 1;\n        y\n    }\n}\n"
    assert check_edit_applied(original, update, right) == []
    assert [f.kind for f in check_edit_applied(original, update, swapped)] == ["snippet_order"]


def test_small_file_truncated_after_the_edit_is_caught():
    assert kinds(GOOD.split("\n\n\ndef mul")[0] + "\n") == ["lost_code"]


def test_deletion_between_shown_lines_is_allowed():
    update = "def add(a, b):\n    return a + b\n# ... existing code ...\n"
    original = "def add(a, b):\n    x = 1\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    merged = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    assert check_edit_applied(original, update, merged) == []


def test_expected_files_of_real_cases_pass_and_copies_fail():
    """Measured on the commit cases: almost no false alarms, and a copied original is caught."""
    cases = load_shared("commits_dev.jsonl")
    false_alarms = [c["id"] for c in cases if check_edit_applied(c["original"], c["update"], c["expected"])]
    caught = sum(bool(check_edit_applied(c["original"], c["update"], c["original"])) for c in cases)
    assert len(false_alarms) <= 2, false_alarms  # 1 of 180 when written (a changed first line)
    assert caught >= 0.85 * len(cases)  # 162 of 180 when written; the rest are pure deletions
