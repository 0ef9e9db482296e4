"""Morph's formats on the HTTP front-end: the message read by its structure, the SDK's large-file
protocol (anchor compaction), the language guessed from content, forgiving paths.

Pure functions first, then the live server on 127.0.0.1 (httpx; `tests/test_morph_clients.py` runs
Morph's own packages). `sdk_compact` / `sdk_expand` below are line-for-line ports of the SDK's
`createAnchorCompactionPlan` and its `expand` (@morphllm/morphsdk 0.2.196, tools/fastapply/anchors.ts),
so that requests are built and answers read exactly as the SDK does.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import httpx
import pytest
from test_http import serving

from fastapply.api import Applier, ApplyError, ApplyRequest
from fastapply.httpapi import compaction
from fastapply.httpapi.language import attempts
from fastapply.httpapi.message import parse_morph_message
from fastapply.httpapi.paths import canonical_path
from fastapply.languages import guess_language

SHARED = Path(__file__).resolve().parents[1] / "evals" / "cases"
ORIG = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
UPDATE = "def add(a, b):\n    # the sum\n    return a + b\n\n# ... existing code ...\n"
MERGED = "def add(a, b):\n    # the sum\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
CODE_INSTRUCTION = "I add a comment inside the <code> block."
# Lines of 24 characters or more: the SDK anchors them.
LONG = "".join(f"def function_number_{i}(first, second):\n    return first * {i} + second  # unchanged\n\n\n"
               for i in range(5))
LONG_UPDATE = "def function_number_0(first, second):\n    return first * 100 + second  # unchanged\n# ... existing code ...\n"


def msg(original: str, update: str, instruction: str | None = None, tag: str = "instruction") -> str:
    """Morph's message, as the SDK writes it (apply.ts)."""
    head = f"<{tag}>{instruction}</{tag}>\n" if instruction is not None else ""
    return f"{head}<code>{original}</code>\n<update>{update}</update>"


# -- the message, read by its structure ---------------------------------------------------------------------

def test_code_tag_inside_the_instruction_is_part_of_the_instruction():
    assert parse_morph_message(msg(ORIG, UPDATE, CODE_INSTRUCTION)) == (CODE_INSTRUCTION, ORIG, UPDATE)
    sdk_suffix = "The <code> block starts with an exact anchor definition table, then the skeleton."
    assert parse_morph_message(msg(ORIG, UPDATE, sdk_suffix, "instructions")) == (sdk_suffix, ORIG, UPDATE)


def test_files_and_snippets_that_hold_the_tags_themselves():
    html = "<p>Use <code>x</code> or <code>y</code>.</p>\n<pre><update>not a block</update></pre>\n"
    assert parse_morph_message(msg(html, "<p>Use <code>z</code>.</p>\n")) == (None, html, "<p>Use <code>z</code>.</p>\n")
    # a test file that quotes Morph's format, in the original and in the snippet: the split that
    # leaves both blocks' tags balanced is the message's structure
    quoting = 'def morph(o, u):\n    return f"<code>{o}</code>\\n<update>{u}</update>"\n'
    snippet = 'def morph(o, u):\n    return f"<code>{o}</code>\\n\\n<update>{u}</update>"\n'
    assert parse_morph_message(msg(quoting, snippet, "fix <code> spacing")) == ("fix <code> spacing", quoting, snippet)
    quoted_in_file_only = quoting + "# ... and a stray </update> in a comment\n"
    assert parse_morph_message(msg(quoted_in_file_only, "x = 1\n"))[1:] == (quoted_in_file_only, "x = 1\n")
    # one split only: stray tags in the file are its text
    stray = 'END = "</code>"\nSTART = "<update>"\n'
    assert parse_morph_message(msg(stray, "y = 2\n"))[1:] == (stray, "y = 2\n")
    # the last </update> closes the update; whitespace around the blocks is not part of them
    assert parse_morph_message("\n <code>a</code>  <update>x</update> and </update>\n") == (None, "a", "x</update> and ")


@pytest.mark.parametrize("content, words", [
    (f"<code>{ORIG}</code>\n<update>{UPDATE}</update>\n<update>y = 1\n</update>", "<update> block holds `</update>\n<update>`"),
    (f"<code>{ORIG}</code>\n<code>{ORIG}</code>\n<update>{UPDATE}</update>", "<code> block holds `</code>\n<code>`"),
    (f"<instruction>a</instruction>\n<instruction>b</instruction>\n<code>{ORIG}</code>\n<update>{UPDATE}</update>",
     "<instruction> block holds `</instruction>\n<instruction>`"),
    (f"<code><code>{ORIG}</code></code>\n<update>{UPDATE}</update>", "nested <code>"),
    (f"<code>{ORIG}</code>\n<update><update>{UPDATE}</update></update>", "nested <update>"),
    (f"<code>{ORIG}\n<update>{UPDATE}</update>", "<code> block is not closed"),
    (f"<code>{ORIG}</code>\n<update>{UPDATE}", "<update> block is not closed"),
    (f"<instruction>do it\n<code>{ORIG}</code>\n<update>{UPDATE}</update>", "<instruction> block is not closed"),
    (f"<update>{UPDATE}</update>\n<code>{ORIG}</code>", "<update> comes before <code>"),
    (f"<code>{ORIG}</code>\n<instruction>x</instruction>\n<update>{UPDATE}</update>", "no </code> is followed by <update>"),
    (f"<instruction>x</instruction>\n<update>{UPDATE}</update>\n<code>{ORIG}</code>", "<update> comes before <code>"),
    (f"Apply this:\n<code>{ORIG}</code>\n<update>{UPDATE}</update>", "text before <code>"),
    (f"<code>{ORIG}</code>\n<update>{UPDATE}</update>\nthanks", "text after the last </update>"),
    (f"<code>{ORIG}</code>\n<update>{UPDATE}</update>\n<code>{ORIG}</code>\n<update>{UPDATE}</update>", "ambiguous message: it reads 2 ways"),
    (f"<update>{UPDATE}</update>", "no <code> block"),
    (f"<code>{ORIG}</code>", "no <update> block"),
])
def test_malformed_or_ambiguous_messages_name_the_tag(content, words):
    with pytest.raises(ApplyError) as ei:
        parse_morph_message(content)
    assert ei.value.code == "invalid_argument" and words in ei.value.message, ei.value.message


# -- anchor compaction: the SDK's side, ported ----------------------------------------------------------------

def sdk_compact(original: str, update: str, instruction: str, min_len: int = 24):
    """createAnchorCompactionPlan(original, [update, instruction]) -> (message code, instruction, plan) or None."""
    ns = next(n for n in range(1 << 20) if all(f"⟪M{n}:" not in v for v in (original, update, instruction)))
    prefix, ids, values, markers, skeleton = f"⟪M{ns}:", {}, [], [], []
    for value, label, anchorable in _sdk_units(original, [update, instruction], min_len):
        if not anchorable:
            skeleton.append(value)
            continue
        if value not in ids:
            ids[value] = len(values)
            values.append(value)
            markers.append(f"{prefix}{ids[value]}:{label}⟫")
        skeleton.append(markers[ids[value]])
    skeleton = "".join(skeleton)
    if not values or len(skeleton) >= len(original):
        return None
    table = "\n".join(f"{m}={json.dumps(v, ensure_ascii=False)}" for m, v in zip(markers, values, strict=True))
    code = "\n".join([f"⟪MORPH_DEFINITIONS_BEGIN_{ns}⟫", table, f"⟪MORPH_DEFINITIONS_END_{ns}⟫",
                      f"⟪MORPH_CODE_BEGIN_{ns}⟫", skeleton])
    suffix = (f"\n\nLARGE-FILE ANCHOR PROTOCOL:\nThe <code> block starts with an exact anchor definition table, then "
              f"⟪MORPH_CODE_BEGIN_{ns}⟫, then the source skeleton.\nDo not invent or alter placeholder IDs.")
    return code, instruction + suffix, (ns, markers, values)


def _sdk_units(original: str, context: list[str], min_len: int):
    trimmed = original.lstrip().lower()
    if (trimmed.startswith("<!doctype") or trimmed.startswith("<html")) and re.search(r"</html\s*>", original, re.I):
        visible = set(re.findall(r"[a-z][\w:-]*", " ".join(context).lower(), re.A))
        for token in re.findall(r"<[^>]*>|[^<]+", original) or [original]:
            label = compaction._html_label(token)
            yield token, label, len(token) >= min_len and label.lstrip("/") not in visible
        return
    parts = re.split(r"(\r\n|\n|\r)", original)
    for i in range(0, len(parts), 2):
        yield parts[i], "line", len(parts[i]) >= min_len
        if i + 1 < len(parts) and parts[i + 1]:
            yield parts[i + 1], None, False


def sdk_expand(content: str, plan) -> str:
    """The SDK's `expand`: after the last code delimiter, placeholders replaced; AssertionError where it throws."""
    ns, markers, values = plan
    begin = f"⟪MORPH_CODE_BEGIN_{ns}⟫"
    at = content.rfind(begin)
    skeleton = re.sub(r"^\r?\n", "", content[at + len(begin):]) if at >= 0 else content

    def one(m):
        i = int(m.group(1))
        return values[i] if i < len(values) and markers[i] == m.group(0) else m.group(0)

    expanded = re.sub(rf"⟪M{ns}:(\d+):[^⟫]+⟫", one, skeleton)
    assert f"⟪M{ns}:" not in expanded, "FastApplyAnchorIntegrityError"
    return expanded


def _shared(name: str, limit: int) -> list[dict]:
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    return [json.loads(line) for line in path.read_text().splitlines()[:limit]]


def test_rebuilds_every_original_exactly():
    html = ("<!DOCTYPE html>\n<html><head><title>A page title long enough</title></head>\n<body>\n"
            + "".join(f'<div class="row row-{i}">a text run that is long enough {i}</div>\r\n' for i in range(40))
            + "</body></html>\n")
    originals = [c["original"] for c in _shared("commits_dev.jsonl", 60)] + [
        html, "line one that is long enough\r\nshort\rthe third line, long enough too\n\n", "x" * 30]
    for original in originals:
        compacted = sdk_compact(original, UPDATE, "edit it")
        if compacted is None:
            continue
        code, instruction, _ = compacted
        assert compaction.requested({}, instruction, code)
        got = compaction.expand_request(instruction, code)
        assert got.original == original and got.instruction == "edit it"


@pytest.mark.parametrize("mutate, words", [
    (lambda code: _in_skeleton(code, "⟪M0:0:line⟫", "⟪M0:77:line⟫"), "⟪M0:77:line⟫ does not resolve"),
    (lambda code: _in_skeleton(code, "⟪M0:0:line⟫", "⟪M0:0:div⟫"), "the anchor table defines ⟪M0:0:line⟫"),
    (lambda code: _in_skeleton(code, "⟪M0:0:line⟫", "x = 1\n"), "never used"),
    (lambda code: _in_skeleton(code, "⟪M0:0:line⟫", "  ⟪M0:0:line⟫"), "shares its line"),
    (lambda code: _in_skeleton(code, "⟪M0:0:line⟫", "⟪M0:zz⟫\n⟪M0:0:line⟫"), "not a placeholder"),
    (lambda code: code.replace('⟪M0:0:line⟫="', '⟪M0:0:line⟫="a\\n', 1), "holds a line break"),
    (lambda code: code.replace('⟪M0:0:line⟫="', '⟪M0:0:text⟫="<', 1), "says 'text'"),
    (lambda code: code.replace("⟪M0:1:line⟫=", "⟪M0:5:line⟫=", 1), "defines id 5"),
    (lambda code: code.replace('⟪M0:0:line⟫="', '⟪M0:0:line⟫=', 1), "not a JSON string"),
    (lambda code: code.replace("⟪MORPH_DEFINITIONS_END_0⟫\n", "", 1), "not closed"),
    (lambda code: code.replace("⟪MORPH_CODE_BEGIN_0⟫\n", "", 1), "not followed by ⟪MORPH_CODE_BEGIN_0⟫"),
    (lambda code: code.replace("⟪MORPH_DEFINITIONS_BEGIN_0⟫\n", "", 1), "does not start with the table"),
])
def test_a_table_that_does_not_rebuild_one_file_is_refused_with_the_reason(mutate, words):
    code, instruction, _ = sdk_compact(LONG, LONG_UPDATE, "edit it")
    bad = mutate(code)
    assert bad is not None and bad != code
    with pytest.raises(ApplyError) as ei:
        compaction.expand_request(instruction, bad)
    assert ei.value.code == "invalid_argument" and words in ei.value.message, ei.value.message


def _in_skeleton(code: str, old: str, new: str) -> str:
    head, skeleton = code.split("⟪MORPH_CODE_BEGIN_0⟫\n", 1)
    return head + "⟪MORPH_CODE_BEGIN_0⟫\n" + skeleton.replace(old, new, 1)


def test_a_rebuilt_file_that_holds_its_own_namespace_is_refused():
    code, instruction, _ = sdk_compact(LONG, LONG_UPDATE, "edit it")
    with pytest.raises(ApplyError, match="the rebuilt file holds ⟪M0:"):
        compaction.expand_request(instruction, code.replace('⟪M0:0:line⟫="', '⟪M0:0:line⟫="⟪M0: ', 1))


def test_an_answer_the_sdk_would_change_is_refused():
    compaction.check_answer(MERGED, 0)
    for merged in (MERGED + "⟪M0:3:line⟫\n", "⟪MORPH_CODE_BEGIN_0⟫\n" + MERGED):
        with pytest.raises(ApplyError) as ei:
            compaction.check_answer(merged, 0)
        assert ei.value.code == "refused"
    compaction.check_answer(MERGED + "⟪M1:3:line⟫\n", 0)  # another namespace: the SDK leaves it alone


# -- language from content ------------------------------------------------------------------------------------

def test_guess_language_from_shebang_and_parse_scores():
    assert guess_language("#!/usr/bin/env python3\nprint(1)\n").language == "python"
    assert guess_language("#!/usr/bin/env -S deno run\nconsole.log(1)\n").language == "typescript"
    assert guess_language(ORIG).language == "python"
    assert guess_language("package main\n\nfunc main() {\n\tprintln(1)\n}\n").language == "go"
    assert guess_language("fn main() {\n    let v: Vec<u8> = Vec::new();\n    println!(\"{}\", v.len());\n}\n").language == "rust"
    assert guess_language("# Title\n\nSome prose, and more prose.\n").language is None  # no grammar fits
    assert guess_language("x = 1\n").language is None  # too little to tell
    assert guess_language("").language is None


def test_guess_language_on_the_shared_cases_never_names_another_family():
    family = {"typescript": "js", "tsx": "js", "javascript": "js", "jsx": "js"}
    cases = _shared("commits_dev.jsonl", 180)[::6]
    guesses = [(c["language"], guess_language(c["original"]).language) for c in cases]
    assert all(g is None or family.get(g, g) == family.get(lang, lang) for lang, g in guesses), guesses
    assert sum(g is not None for _, g in guesses) == len(cases)


def test_attempts_fall_back_to_the_text_merge():
    plain = ApplyRequest(ORIG, UPDATE, engine="structural")
    tries = attempts(plain)
    assert [(t.request.language, t.request.engine) for t in tries] == [("python", "structural"), (None, "structural")]
    auto = attempts(ApplyRequest(ORIG, UPDATE, engine="auto"))
    assert [(t.request.language, t.request.engine) for t in auto] == [
        ("python", "structural"), (None, "structural"), ("python", "auto")]
    assert [t.request.language for t in attempts(ApplyRequest(ORIG, UPDATE, engine="plain"))] == ["python"]
    named = ApplyRequest(ORIG, UPDATE, path="x.py")
    assert attempts(named) == [attempts(named)[0]] and attempts(named)[0].request is named


# -- the live server ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def url():
    with serving(Applier()) as (_, http):
        yield http.url


def _chat(url: str, content: str, headers: dict | None = None, path: str = "/v1/chat/completions", **kw):
    return httpx.post(url + path, json={"model": "fastapply-structural", "messages": [{"role": "user", "content": content}],
                                        **kw}, headers=headers, timeout=60)


def test_code_in_instruction_merges_right_over_http(url):
    for case in _shared("commits_dev.jsonl", 30)[::3]:
        want = Applier().apply(ApplyRequest(case["original"], case["update"], engine="structural"))
        r = _chat(url, msg(case["original"], case["update"], f"Apply the edit inside the <code> block: {case['id']}."))
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == want.merged, case["id"]


def test_anchor_compacted_requests_answer_what_expands_to_the_merged_file(url):
    cases = [c for c in _shared("commits_dev.jsonl", 40) if c["language"] in ("python", "go", "rust")][:6]
    assert cases
    for case in cases:
        plain = _chat(url, msg(case["original"], case["update"], "edit"))
        code, instruction, plan = sdk_compact(case["original"], case["update"], "edit")
        for stream in (False, True):
            r = _chat(url, msg(code, case["update"], instruction), {"X-Morph-Apply-Context": "extralong"}, stream=stream)
            assert r.status_code == plain.status_code, (case["id"], r.text[:300])
            if plain.status_code != 200:
                continue
            text = r.json()["choices"][0]["message"]["content"] if not stream else "".join(
                json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
                for line in r.text.splitlines() if line.startswith("data: {") and '"choices":[{' in line)
            assert sdk_expand(text, plan) == plain.json()["choices"][0]["message"]["content"], case["id"]
            if not stream:
                kinds = [f["kind"] for f in r.json()["fastapply"]["findings"]]
                assert "anchors" in kinds and r.json()["fastapply"]["language"] == case["language"]


def test_compaction_errors_over_http_are_400_with_the_reason(url):
    code, instruction, _ = sdk_compact(LONG, LONG_UPDATE, "edit it")
    bad = _in_skeleton(code, "⟪M0:0:line⟫", "⟪M0:41:line⟫")
    r = _chat(url, msg(bad, LONG_UPDATE, instruction), {"X-Morph-Apply-Context": "extralong"})
    assert r.status_code == 400 and "⟪M0:41:line⟫ does not resolve" in r.json()["error"]["message"]
    r = _chat(url, msg(ORIG, UPDATE, "edit"), {"X-Morph-Apply-Context": "extralong"})
    assert r.status_code == 400 and "does not start with the table" in r.json()["error"]["message"]
    holds = LONG + "# ⟪MORPH_CODE_BEGIN_0⟫ is quoted in this file and long enough\n"
    code, instruction, _ = sdk_compact(holds, LONG_UPDATE, "edit it")
    r = _chat(url, msg(code, LONG_UPDATE, instruction), {"X-Morph-Apply-Context": "extralong"})
    assert r.status_code == 422 and "would expand or cut" in r.json()["error"]["message"]


def test_language_is_guessed_and_a_refused_guess_falls_back_to_the_text_merge(url):
    r = _chat(url, msg(ORIG, UPDATE))
    info = r.json()["fastapply"]
    assert info["language"] == "python" and info["findings"][0]["kind"] == "language"
    assert "guessed" in info["findings"][0]["message"]
    r = httpx.post(url + "/v1/code/apply", json={"initial_code": ORIG, "edit_snippet": UPDATE,
                                                 "model": "fastapply-structural"}, timeout=60)
    assert r.json()["fastapply"]["language"] == "python" and r.json()["mergedCode"] == MERGED


class LanguageShyApplier(Applier):
    """Refuses every merge under a language: the text merge (language None) alone answers."""

    def apply_stream(self, req, should_stop=None):
        if req.language is not None:
            raise ApplyError("refused", f"structural merge refused under {req.language}", [])
        yield from super().apply_stream(req, should_stop)


def test_a_guess_the_merge_refuses_under_falls_back_to_the_text_merge():
    with serving(LanguageShyApplier()) as (_, http):
        for body in ({"stream": False}, {"stream": True}):
            r = _chat(http.url, msg(ORIG, UPDATE), **body)
            assert r.status_code == 200 and MERGED.split("\n")[1] in r.text
        info = _chat(http.url, msg(ORIG, UPDATE)).json()["fastapply"]
        assert info["language"] is None
        assert "python guessed" in info["findings"][0]["message"] and "merged as text" in info["findings"][0]["message"]


def test_forgiving_paths(url):
    assert canonical_path("//v1/chat/completions") == "/v1/chat/completions"
    assert canonical_path("/v1/v1/v1/models") == "/v1/models"
    assert canonical_path("/v1x/models") == "/v1x/models"
    for path in ("//v1/chat/completions", "/v1/v1/chat/completions", "/v1//chat/completions"):
        r = _chat(url, msg(ORIG, UPDATE), path=path)
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == MERGED, path
    assert httpx.get(url + "/v1/v1/models").status_code == 200
    r = _chat(url, msg(ORIG, UPDATE), path="/chat/completions")
    assert r.status_code == 404 and "this server answers /v1/chat/completions" in r.json()["error"]["message"]
    assert "bare origin" in r.json()["error"]["message"]


def test_the_default_engine_answers_client_model_names():
    from test_grpc import SlowApplier

    from fastapply.httpapi.server import attach_http
    from fastapply.server import FastApplyServer

    applier = SlowApplier(pieces=2, delay=0.001)
    srv = FastApplyServer(applier, host="127.0.0.1", port=0, preload=False)
    http = attach_http(srv, 0, default_engine="structural")
    srv.start()
    try:
        for name in ("morph-v3-large", "morph-v3-fast", None):
            body = {"messages": [{"role": "user", "content": msg(ORIG, UPDATE)}]} | ({"model": name} if name else {})
            r = httpx.post(http.url + "/v1/chat/completions", json=body, timeout=30)
            assert r.status_code == 200 and r.json()["model"] == "fastapply-structural"
        assert applier.model_order == []
    finally:
        srv.stop(grace=0).wait(10)
