"""Readings: the whole files a refused snippet may mean (merge/readings.py, lineplace.line_readings).

Each reading is a splice of the snippet into the original: every line the snippet shows is there in
order, and every other line is the original's. They are deterministic, validated, capped, and the
refusal says how many there are and where they differ.
"""

import json
from pathlib import Path

import pytest

from fastapply.merge import structural_merge
from fastapply.merge.readings import MAX_READINGS, describe, first_difference, read_all, splices_snippet
from fastapply.merge.result import Reading
from fastapply.validate import validate
from tests.test_wrap_body import CASES as WRAP_CASES

SHARED = Path(__file__).resolve().parents[1] / "evals" / "cases"


def _refusals():
    """Refused cases of the shared dev sets and the agent-style wrap cases: (id, language, original, update)."""
    out = [(c["name"], c["language"], c["original"], c["snippet"]) for c in WRAP_CASES]
    for name in ("hard_dev.jsonl", "commits_dev.jsonl"):
        path = SHARED / name
        if path.exists():
            out += [(c["id"], c.get("language"), c["original"], c["update"])
                    for c in map(json.loads, path.open(encoding="utf-8"))]
    return out


REFUSED = [case for case in _refusals() if not structural_merge(case[2], case[3], case[1]).ok]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_readings_are_deterministic_validated_splices_of_the_snippet(case):
    _, lang, original, update = case
    first, second = structural_merge(original, update, lang), structural_merge(original, update, lang)
    assert first.readings == second.readings
    assert len(first.readings) <= MAX_READINGS
    assert len({r.text for r in first.readings}) == len(first.readings)
    for r in first.readings:
        assert r.text != original and r.how
        assert not [f for f in validate(original, update, r.text, lang) if f.severity == "error"]
        assert splices_snippet(original, update, r.text), r.how


def test_there_are_refusals_to_check():
    assert len(REFUSED) >= 10  # the wrap cases alone refuse this many (the shared sets add more)


def test_the_issue_example_has_the_three_readings_of_the_wrap():
    """`try:` around the body with one deeper marker and a handler that ends like the body: `return
    rows` replaced by the handler's `return []`, kept inside the try, or left after the handler."""
    original = ("def read_rows(path):\n    conn = open_db(path)\n    rows = conn.fetch_all()\n"
                "    conn.close()\n    return rows\n")
    update = ("def read_rows(path):\n    try:\n        # ... existing code ...\n    except DatabaseError as exc:\n"
              "        log.warning(\"read failed: %s\", exc)\n        return []\n")
    res = structural_merge(original, update, "python")
    assert not res.ok
    texts = [r.text for r in res.readings]
    head, handler = "def read_rows(path):\n    try:\n", ("    except DatabaseError as exc:\n"
                                                      "        log.warning(\"read failed: %s\", exc)\n        return []\n")
    body = "        conn = open_db(path)\n        rows = conn.fetch_all()\n        conn.close()\n"
    assert head + body + "        return rows\n" + handler in texts  # kept inside the try (the expected file)
    assert head + body + handler + "    return rows\n" in texts  # left after the handler
    assert head + body + handler in texts  # the handler's line read as an edit of it


RUST_IF_LET = ("use std::io;\n\nfn write_all(out: &mut Vec<u8>, items: &[Item]) -> io::Result<()> {\n    out.clear();\n"
               "    for item in items {\n        out.extend_from_slice(item.bytes());\n    }\n    out.push(b'\\n');\n"
               "    Ok(())\n}\n")
RUST_IF_LET_SNIPPET = ("// ... existing code ...\nfn write_all(out: &mut Vec<u8>, items: &[Item]) -> io::Result<()> {\n"
                       "    out.clear();\n    if let Some(first) = items.first() {\n        // ... existing code ...\n"
                       "    } else {\n        Ok(())\n    }\n}\n")


def _code(text):
    return tuple(x.strip() for x in text.splitlines() if x.strip())


def test_a_reading_that_ignores_the_deeper_markers_depth_is_dropped():
    """Read as placed, the wrap keeps the loop where it stood inside the new `if let` block: it
    parses, and differs from the wrap reading only in indentation, which the snippet's deeper
    marker states. Only the wrap readings are left (`readings._marker_depth_kept`). (The merge
    answers this snippet now: the `else` branch's `Ok(())` is its own, `opens_new_branch`.)"""
    found = read_all(RUST_IF_LET, RUST_IF_LET_SNIPPET, "rust").kept
    assert len(found) == 2
    assert all(r.how.startswith("the deeper marker read as wrapped code") for r in found)
    assert len({_code(r.text) for r in found}) == 2
    expected = RUST_IF_LET.replace(
        "    for item in items {\n        out.extend_from_slice(item.bytes());\n    }\n    out.push(b'\\n');\n"
        "    Ok(())\n",
        "    if let Some(first) = items.first() {\n        for item in items {\n"
        "            out.extend_from_slice(item.bytes());\n        }\n        out.push(b'\\n');\n        Ok(())\n"
        "    } else {\n        Ok(())\n    }\n")
    assert expected in [r.text for r in found]
    res = structural_merge(RUST_IF_LET, RUST_IF_LET_SNIPPET, "rust")
    assert res.ok and res.text == expected


def test_where_indentation_is_syntax_readings_alike_but_for_it_both_stay():
    from fastapply.merge.readings import _marker_depth_kept
    wrap = Reading("if a:\n    f()\n", "the deeper marker read as wrapped code")
    placed = Reading("if a:\nf()\n", "as placed")
    assert _marker_depth_kept([placed, wrap], "python") == [placed, wrap]
    assert _marker_depth_kept([placed, wrap], "go") == [wrap]
    other = Reading("if a:\n    g()\n", "as placed")
    assert _marker_depth_kept([other, wrap], "go") == [other, wrap]


def test_a_splice_keeps_every_snippet_line_in_order_and_adds_only_original_lines():
    original, update = "a = 1\nb = 2\nc = 3\n", "# ... existing code ...\nb = 20\n# ... existing code ...\n"
    assert splices_snippet(original, update, "a = 1\nb = 20\nc = 3\n")
    assert not splices_snippet(original, update, "a = 1\nb = 2\nc = 3\n")  # the snippet's line is missing
    assert not splices_snippet(original, update, "a = 1\nb = 20\nd = 4\n")  # a line from nowhere


def test_describe_names_the_count_and_the_first_differing_line():
    a, b = Reading("x = 1\ny = 2\n", "cheapest placement"), Reading("x = 1\ny = 3\n", "placement 2")
    assert first_difference(a.text, b.text) == 1
    line = describe([a, b])
    assert line.startswith("2 readings") and "line 2: `y = 3` where reading 1 has `y = 2`" in line
    assert describe([a]).startswith("1 reading") and describe([]).startswith("no reading")
