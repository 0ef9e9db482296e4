"""Lines appended after the file's last lines, shown with only a common context line (`}`,
`return y`) and no marker after them, that copy a comment block standing mid-file: the anchors find
the mid-file copy, and with the tail-deleting reading failing validation (it would delete most of
the file) that copy was the one reading left, exit 0 (held-out fuzz seed 59302, prop_tail #1130).
The placement through the context line that reaches the file's end is a reading too
(`Region.at_edge`): the merge refuses. Each was wrong on 9b63fe1; written by hand in three
languages. (It is a side of the doubt, not a reading: as a reading it was dropped whenever the
appended lines restate a definition, and then the reading left answered, wrong: fuzz seed 81650,
`prop_tail` #893.)
"""

from __future__ import annotations

import pytest

from fastapply.merge import structural_merge


def _go() -> tuple[str, str, str]:
    fns = "\n".join(f"func f{i}(x int) int {{\n\ty := x * {i}\n\treturn y + {i}\n}}\n" for i in range(8))
    original = f"package calc\n\nfunc Open() int {{\n\treturn 1\n}}\n\n// MODERATE\n// --------\n\n{fns}"
    update = "// ... existing code ...\n}\n// appended beta\n// MODERATE\n// --------\n"
    return original, update, original + "// appended beta\n// MODERATE\n// --------\n"


def _javascript() -> tuple[str, str, str]:
    fns = "\n".join(f"function f{i}(x) {{\n  const y = x * {i};\n  return y + {i};\n}}\n" for i in range(8))
    original = f"'use strict';\n\nfunction open() {{\n  return 1;\n}}\n\n// MODERATE\n// --------\n\n{fns}"
    update = "// ... existing code ...\n}\n// appended beta\n// MODERATE\n// --------\n"
    return original, update, original + "// appended beta\n// MODERATE\n// --------\n"


def _python() -> tuple[str, str, str]:
    fns = "\n\n".join(f"def f{i}(x):\n    y = x * {i}\n    return y\n" for i in range(8))
    original = f"import os\n\n\ndef open_it():\n    return y\n\n# MODERATE\n# --------\n\n{fns}"
    update = "# ... existing code ...\n    return y\n# appended beta\n# MODERATE\n# --------\n"
    return original, update, original + "# appended beta\n# MODERATE\n# --------\n"


CASES = {"go": _go, "javascript": _javascript, "python": _python}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_lines_appended_at_the_end_that_copy_a_block_mid_file_are_a_question(lang):
    original, update, expected = CASES[lang]()
    r = structural_merge(original, update, lang)
    assert not r.ok or r.text == expected
    assert not r.ok


# -- lines deleted inside a run the snippet shows, the run standing whole elsewhere ----------------

# Every test of a file ends with the same lines (`render();` / `expect(...)` / `});`). The snippet
# shows one such ending, then the next unique line, and deletes what lies between: either the
# tests after the first copy of that ending (the run as written), or two lines inside the last copy
# (the nearer place, cheaper). Which copy is meant is the question; a lone reading answered it with
# the nearer copy, wrong (held-out fuzz seed 30917, `delete_between` #330, TSX, wrong on 9b63fe1
# too; a regression in test_fuzz_regressions.py). Refused now
# (`checks.deletes_inside_a_run_that_stands_elsewhere`). The shape below, written by hand, was
# refused on 9b63fe1 too, by another check: it guards the question, not the fix.
def _describe(name: str, n: int, extra: str = "") -> str:
    """n tests that each end alike; `extra` lines between the last one's `render` and `expect`."""
    tests = [f"  it('{name} {i}', () => {{\n    const x = make({i})\n    render(x)\n" + (extra if i == n - 1 else "") +
             "    expect(x).toBeDefined()\n  })\n" for i in range(n)]
    return f"describe('{name}', () => {{\n" + "\n".join(tests) + "})\n\n"


def test_lines_deleted_inside_a_run_that_stands_whole_elsewhere_are_a_question():
    original = ("import { make, render } from './util'\n\n" + _describe("one", 2) +
                _describe("two", 3, "    x.reset()\n    x.flush()\n") + "describe('three', () => {\n  it('z', () => {\n"
                "    const y = make(9)\n  })\n})\n")
    update = ("// ... existing code ...\n    render(x)\n    expect(x).toBeDefined()\n  })\n})\n\n"
              "describe('three', () => {\n  it('z', () => {\n// ... existing code ...\n")
    res = structural_merge(original, update, "javascript")
    assert not res.ok, res.text
