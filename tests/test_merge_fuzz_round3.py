"""The third round of `evals.fuzz` classes (issue 15), from seeds 3 and 4: small synthetic edits in
the shapes that came back silently wrong. Each was returned wrong, with exit 0, before its rule
(checks.tied_alternative, copy_of_kept_neighbour, marker_deeper_than_code,
edge_run_longer_elsewhere; markers.comment_read_as_marker) and must now merge exactly or be refused
by that rule."""

from __future__ import annotations

import pytest

from fastapply.merge import structural_merge

CASES: dict[str, tuple[str, str, str, str]] = {}  # name -> (language, original, snippet, expected)

# A. a rename through a whole function whose last line (`assert content == ...`) ends two blocks
# B. an unwrapped `if` placed, re-indented, on a similar function that has the line already
# C. a new `try:` around code that starts right above the original `try:` it matches
# D. a comment written like a marker (`# Other ...`) that the original has as a comment
# E. a marker inside a new block, placed so that it stands for no line
# F. a wrapped block's deeper line that stands, as written, in a similar function (now exact)
CASES["rename_whole_function_py"] = ("python",
"import x\n\n\n@x.mark\nasync def test_a():\n    request = make(1)\n    assert not isinstance(request.stream, Iterable)\n    assert isinstance(request.stream, AsyncIterable)\n    assert content == b\"Hi\"\n\n    with raises(Consumed):\n        [part async for part in request.stream]\n\n    # Support 'data' too.\n    request = make(2)\n    assert not isinstance(request.stream, Iterable)\n    assert isinstance(request.stream, AsyncIterable)\n    assert content == b\"Hi\"\n\n\ndef other():\n    pass\n",
"# ... existing code ...\n@x.mark\nasync def test_a():\n    result = make(1)\n    assert not isinstance(result.stream, Iterable)\n    assert isinstance(result.stream, AsyncIterable)\n    assert content == b\"Hi\"\n\n    with raises(Consumed):\n        [part async for part in result.stream]\n\n    # Support 'data' too.\n    result = make(2)\n    assert not isinstance(result.stream, Iterable)\n    assert isinstance(result.stream, AsyncIterable)\n    assert content == b\"Hi\"\n# ... existing code ...\n",
"import x\n\n\n@x.mark\nasync def test_a():\n    result = make(1)\n    assert not isinstance(result.stream, Iterable)\n    assert isinstance(result.stream, AsyncIterable)\n    assert content == b\"Hi\"\n\n    with raises(Consumed):\n        [part async for part in result.stream]\n\n    # Support 'data' too.\n    result = make(2)\n    assert not isinstance(result.stream, Iterable)\n    assert isinstance(result.stream, AsyncIterable)\n    assert content == b\"Hi\"\n\n\ndef other():\n    pass\n")
CASES["unwrap_on_similar_function_go"] = ("go",
"package x\n\nfunc (c *Command) PersistentFlags() *FlagSet {\n\tif c.pflags == nil {\n\t\tc.pflags = NewFlagSet(c.Name())\n\t\tif c.buf == nil {\n\t\t\tc.buf = new(Buffer)\n\t\t}\n\t\tc.pflags.SetOutput(c.buf)\n\t}\n\treturn c.pflags\n}\n\nfunc (c *Command) ResetFlags() {\n\tc.buf = new(Buffer)\n\tc.buf.Reset()\n\tc.flags = NewFlagSet(c.Name())\n\tc.flags.SetOutput(c.buf)\n\tc.pflags = NewFlagSet(c.Name())\n\tc.pflags.SetOutput(c.buf)\n}\n",
"// ... existing code ...\n\t\tc.pflags = NewFlagSet(c.Name())\n\t\tc.buf = new(Buffer)\n\t\tc.pflags.SetOutput(c.buf)\n\t// ... existing code ...\n",
"package x\n\nfunc (c *Command) PersistentFlags() *FlagSet {\n\tif c.pflags == nil {\n\t\tc.pflags = NewFlagSet(c.Name())\n\t\tc.buf = new(Buffer)\n\t\tc.pflags.SetOutput(c.buf)\n\t}\n\treturn c.pflags\n}\n\nfunc (c *Command) ResetFlags() {\n\tc.buf = new(Buffer)\n\tc.buf.Reset()\n\tc.flags = NewFlagSet(c.Name())\n\tc.flags.SetOutput(c.buf)\n\tc.pflags = NewFlagSet(c.Name())\n\tc.pflags.SetOutput(c.buf)\n}\n")
CASES["new_try_on_original_try_py"] = ("python",
"import contextlib\n\n\n@contextlib.contextmanager\ndef mapped():\n    global MAP\n    if len(MAP) == 0:\n        MAP = load()\n    try:\n        yield\n    except Exception as exc:\n        mapped_exc = None\n        for a, b in MAP.items():\n            if isinstance(exc, a):\n                mapped_exc = b\n        raise mapped_exc(str(exc)) from exc\n",
"# ... existing code ...\n    try:\n        if len(MAP) == 0:\n            MAP = load()\n        try:\n            yield\n        except Exception as exc:\n            mapped_exc = None\n            for a, b in MAP.items():\n                if isinstance(exc, a):\n                    mapped_exc = b\n            raise mapped_exc(str(exc)) from exc\n    except Exception:\n        raise\n# ... existing code ...\n",
"import contextlib\n\n\n@contextlib.contextmanager\ndef mapped():\n    global MAP\n    try:\n        if len(MAP) == 0:\n            MAP = load()\n        try:\n            yield\n        except Exception as exc:\n            mapped_exc = None\n            for a, b in MAP.items():\n                if isinstance(exc, a):\n                    mapped_exc = b\n            raise mapped_exc(str(exc)) from exc\n    except Exception:\n        raise\n")
CASES["comment_shaped_like_marker_py"] = ("python",
"class A(Exception):\n    pass\n\n\n# Other request exceptions...\nclass B(A):\n    pass\n\n\ndef wrap(request):\n    try:\n        yield\n    except A as exc:\n        exc.request = request\n        raise exc\n",
"# ... existing code ...\n    except A as exc:\n        exc.request = request\n        raise exc\n# appended\n# Other request exceptions...\n",
"class A(Exception):\n    pass\n\n\n# Other request exceptions...\nclass B(A):\n    pass\n\n\ndef wrap(request):\n    try:\n        yield\n    except A as exc:\n        exc.request = request\n        raise exc\n# appended\n# Other request exceptions...\n")
CASES["wrap_marker_stands_for_nothing_ts"] = ("typescript",
"export const a = 1\n\nconst parseThen = <T>(s: string, fn: (p: T) => void) => {\n  let parsed: T | undefined\n  try {\n    parsed = JSON.parse(s)\n  } catch (e) {\n    console.error(\n      'could not parse',\n      e,\n    )\n  }\n  if (parsed !== undefined) fn(parsed as T)\n}\n",
"// ... existing code ...\nconst parseThen = <T>(s: string, fn: (p: T) => void) => {\n  let parsed: T | undefined\n  try {\n    try {\n      parsed = JSON.parse(s)\n    } catch (e) {\n      console.error(\n        'could not parse',\n        e,\n      )\n    }\n    // ... existing code ...\n  } catch (e) {\n    throw e;\n  }\n}\n",
"export const a = 1\n\nconst parseThen = <T>(s: string, fn: (p: T) => void) => {\n  let parsed: T | undefined\n  try {\n    try {\n      parsed = JSON.parse(s)\n    } catch (e) {\n      console.error(\n        'could not parse',\n        e,\n      )\n    }\n    if (parsed !== undefined) fn(parsed as T)\n  } catch (e) {\n    throw e;\n  }\n}\n")
CASES["wrapped_line_as_written_in_similar_function_py"] = ("python",
"class A:\n    def flow(\n        self, request\n    ) -> Gen:\n        nonces = []\n\n        for index in range(self.repeat):\n            request.headers[\"A\"] = f\"R {index}\"\n            response = yield request\n            nonces.append(response.headers[\"w\"])\n\n        yield request\n\n\nclass B:\n    def flow(\n        self, request\n    ) -> Gen:\n        request.headers[\"A\"] = self.token\n        response = yield request\n        data = response.text\n        request.headers[\"A\"] = data\n        yield request\n",
"# ... existing code ...\n    ) -> Gen:\n        request.headers[\"A\"] = self.token\n        if enabled:\n            response = yield request\n            # ... existing code ...\n        request.headers[\"A\"] = data\n        yield request\n# ... existing code ...\n",
"class A:\n    def flow(\n        self, request\n    ) -> Gen:\n        nonces = []\n\n        for index in range(self.repeat):\n            request.headers[\"A\"] = f\"R {index}\"\n            response = yield request\n            nonces.append(response.headers[\"w\"])\n\n        yield request\n\n\nclass B:\n    def flow(\n        self, request\n    ) -> Gen:\n        request.headers[\"A\"] = self.token\n        if enabled:\n            response = yield request\n            data = response.text\n        request.headers[\"A\"] = data\n        yield request\n")


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_or_refused(name):
    lang, orig, update, expected = CASES[name]
    res = structural_merge(orig, update, lang)
    assert not res.ok or res.text == expected, f"silent wrong merge ({name})"
    assert res.ok or res.reasons, "a refusal says why"


def test_wrap_read_in_the_function_its_edge_lines_name():
    """Case F: the first reading (the deeper `response = yield request` fits only in class A's loop,
    as written) is refused by edge_run_longer_elsewhere; the wrap reading then places it in B."""
    lang, orig, update, expected = CASES["wrapped_line_as_written_in_similar_function_py"]
    assert structural_merge(orig, update, lang).text == expected


REASONS = {
    "rename_whole_function_py": "which the region adds again",
    "unwrap_on_similar_function_go": "stands just as written at line 15",
    "new_try_on_original_try_py": "wraps original code in a new block",
    "comment_shaped_like_marker_py": "the original has that very line as a comment",
    "wrap_marker_stands_for_nothing_ts": "stands for no original line",
}


@pytest.mark.parametrize("name", sorted(REASONS))
def test_refused_by_its_rule(name):
    lang, orig, update, expected = CASES[name]
    res = structural_merge(orig, update, lang)
    assert not res.ok, f"silent wrong merge ({name})" if res.text != expected else "now exact: update REASONS"
    assert any(REASONS[name] in r for r in res.reasons), res.reasons


def test_lowered_reading_of_the_new_try_is_refused_too():
    """Case C's first reading is refused as a shifted wrap; the wrap reading (the snippet's lines put
    back one level) anchors the new `try:` on the original one and must be refused by its own rule."""
    from fastapply.merge.anchor import Region
    from fastapply.merge.lineplace import _place_check_splice
    from fastapply.merge.wrap import wrap_reading
    lang, orig, update, _ = CASES["new_try_on_original_try_py"]
    lines = update.splitlines()[1:-1]
    regions = [Region(lines, marker_before=True, marker_after=True, after_indent="", before_indent="")]
    reading = wrap_reading(regions, orig.splitlines(), lang)
    assert reading is not None
    placed = _place_check_splice(reading[0], orig.splitlines(), False, lang, (regions, reading[1]))
    assert not placed.ok and "stands just as written" in placed.reasons[0], placed.reasons


def test_a_comment_shown_with_its_neighbours_is_still_content():
    """The marker-shaped comment is content when the snippet shows it beside its own neighbours."""
    orig = "a = 1\n# Other request exceptions...\nb = 2\nc = 3\n"
    update = "# ... existing code ...\n# Other request exceptions...\nb = 2\nc = 4\n"
    res = structural_merge(orig, update, "python")
    assert res.ok and res.text == "a = 1\n# Other request exceptions...\nb = 2\nc = 4\n"


def test_a_region_written_as_it_stands_may_repeat_a_nearby_line():
    """copy_of_kept_neighbour needs a region moved to fit: one written at its place may call a
    function again."""
    orig = "def f():\n    a()\n    b()\n    c()\n    d()\n"
    update = "# ... existing code ...\n    c()\n    a()\n    d()\n"
    res = structural_merge(orig, update, "python")
    assert res.ok and res.text == "def f():\n    a()\n    b()\n    c()\n    a()\n    d()\n"
