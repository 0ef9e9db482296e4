"""Marker detection: every style seen in the data, and real comments that only look like markers."""

import pytest

from fastapply.markers import has_markers, looks_like_marker, marker_flags, split_inline

MARKERS = [
    "# ... existing code ...",
    "    # ... existing code ...",
    "// ... existing code ...",
    "// ... rest of code ...",
    "// ... same ...",
    "# ... same ...",
    "# ... same as before ...",
    "// ... existing imports ...",
    "// ... existing tests ...",
    "        // ... rest of the existing code ...",
    "{/* ... existing code ... */}",
    "<!-- ... existing sections ... -->",
    "/* ... */",
    "# ...",
    "// ...",
    "-- ...",
    "// ... keep existing",
]

NOT_MARKERS = [
    "// ... however, ...",  # prose: punctuation inside
    "// ... implies",  # no closing dots, no 'code' word
    "x = 1  # ...",  # trailing comment on code
    "...",  # Python Ellipsis
    "print('...')",
    "// Placeholder pattern: use // ... existing code ... to skip unchanged lines.",
    "const DOCS_EXAMPLE = '// ... existing code ...';",
    "",
    "return x",
]


@pytest.mark.parametrize("line", MARKERS)
def test_marker_styles(line):
    assert looks_like_marker(line)


@pytest.mark.parametrize("line", NOT_MARKERS)
def test_not_markers(line):
    assert not looks_like_marker(line)


def test_marker_line_present_in_original_next_to_same_context_is_content():
    original = ["def f():", "    # ...", "    return 1"]
    update = ["def f():", "    # ...", "    return 2"]
    assert marker_flags(update, original) == [False, False, False]


def test_marker_line_present_in_original_elsewhere_is_still_a_marker():
    original = ["def f():", "    # ...", "    return 1", "", "def g():", "    return 3"]
    update = ["# ...", "def g():", "    return 4"]
    assert marker_flags(update, original)[0] is True


def test_inline_markers_split():
    line = "  createUser: { path: // ... existing ..., method: // ... existing ..., cache: // ... existing ... },"
    assert split_inline(line) == ["  createUser: { path: ", ", method: ", ", cache: ", " },"]
    assert split_inline("const cfg = { a: /* ... */, b: 2 };") == ["const cfg = { a: ", ", b: 2 };"]


def test_inline_split_ignores_whole_line_markers_and_plain_code():
    assert split_inline("// ... existing code ...") is None
    assert split_inline("const x = 1; // a comment") is None


def test_has_markers():
    assert has_markers("a\n// ... existing code ...\nb\n")
    assert has_markers("x = { a: // ... existing ..., b: 1 }\n")
    assert not has_markers("def f():\n    return 1\n")
