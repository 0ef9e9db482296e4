"""Every apply prompt family fastapply reads (httpapi/formats.py), on every route that carries it:
read by its structure, answered in the shape its prompt asks for, its malformed messages refused with
the family and the fix named. The real clients of these formats run in test_open_apply_clients.py and
test_continue_client.py."""

from __future__ import annotations

import json

import httpx
import pytest
from test_http import MERGED, ORIG, UPDATE, counter, serving, server, url  # noqa: F401 (fixtures)

from fastapply.api import ApplyError
from fastapply.httpapi.formats import FAMILIES
from fastapply.httpapi.prompt import read_prompt

KORTIX_SYSTEM = "You are a coding assistant that helps merge code updates, ensuring every modification is fully integrated."


def kortix(original: str, update: str, instruction: str | None = None, tag: str = "updated-code") -> str:
    """The Kortix FastApply user prompt (model card; fastapply-mcp adds RULES:, opencode an Instruction: line)."""
    line = f"Instruction: {instruction}\n" if instruction else ""
    return (f"Merge all changes from the <update> snippet into the <code> below.\n{line}"
            f"- Preserve the code's structure, order, comments, and indentation exactly.\n"
            f"- Output only the updated code, enclosed within <{tag}> and </{tag}> tags.\n"
            f"- Do not include any additional text, explanations, placeholders, ellipses, or code fences.\n\n"
            f"<code>{original}</code>\n\n<update>{update}</update>\n\nProvide the complete updated code.")


def osmosis(original: str, update: str) -> str:
    return f"<code>\n{original}\n</code>\n\n\n<edit>\n{update}\n</edit>"


def aixapply(original: str, update: str, language: str | None = "python") -> str:
    lang = f"<language>{language}</language>\n\n" if language else ""
    return (f"{lang}<source_file>{original}</source_file>\n\n<update_snippet>{update}</update_snippet>\n\n"
            "Please generate the full updated code strictly following the instructions.")


AIX_SYSTEM = "You are a deterministic Code Patching Engine. ...\n### Output Format\n<update_file>[Your final code here]</update_file>"


def continue_default(original: str, update: str) -> str:
    return (f"ORIGINAL CODE:\n```\n{original}\n```\n\nSUGGESTED EDIT:\n```\n{update}\n```\n\n"
            "Apply the SUGGESTED EDIT to the ORIGINAL CODE. Output the complete modified file.\n"
            "- Output ONLY code. Do NOT explain, summarize, or describe changes.")


def xml_escape(text: str) -> str:  # fastapply-mcp's escape_xml_tags
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&apos;"))


def handlebars_escape(text: str) -> str:  # Handlebars' {{x}}
    table = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;", "`": "&#x60;", "=": "&#x3D;"}
    return "".join(table.get(c, c) for c in text)


# (name, messages or prompt, family, what the answer is)
CHAT_FORMS = [
    ("morph", [{"role": "user", "content": f"<code>{ORIG}</code>\n<update>{UPDATE}</update>"}], "morph", MERGED),
    ("kortix", [{"role": "system", "content": KORTIX_SYSTEM}, {"role": "user", "content": kortix(ORIG, UPDATE)}],
     "kortix", f"<updated-code>{MERGED}</updated-code>"),
    ("kortix, FastEdit's ` /no_think` system", [{"role": "system", "content": KORTIX_SYSTEM + " /no_think"},
                                                {"role": "user", "content": kortix(ORIG, UPDATE)}],
     "kortix", f"<updated-code>{MERGED}</updated-code>"),
    ("kortix, no system turn, <updated_code> named", [{"role": "user", "content": kortix(ORIG, UPDATE, tag="updated_code")}],
     "kortix", f"<updated_code>{MERGED}</updated_code>"),
    ("kortix prefilled", [{"role": "user", "content": kortix(ORIG, UPDATE)}, {"role": "assistant", "content": "<updated-code>"}],
     "kortix", f"{MERGED}</updated-code>"),
    ("osmosis prefilled (its MCP server)", [{"role": "system", "content": "Output the code wrapped in <code> tags."},
                                            {"role": "user", "content": osmosis(ORIG, UPDATE)},
                                            {"role": "assistant", "content": "<code>"}], "osmosis", f"{MERGED}</code>"),
    ("osmosis (call_snippet.py)", [{"role": "user", "content": f"<code>\n{ORIG}\n</code>\n\n<edit>\n{UPDATE}\n</edit>"}],
     "osmosis", f"<code>{MERGED}</code>"),
    ("aixapply", [{"role": "system", "content": AIX_SYSTEM}, {"role": "user", "content": aixapply(ORIG, UPDATE)}],
     "aixapply", f"<update_file>{MERGED}</update_file>"),
    ("aixapply, file asked bare (its Continue template)", [{"role": "user", "content": aixapply(ORIG, UPDATE, None)}],
     "aixapply", MERGED),
    ("continue default, prefilled fence", [{"role": "user", "content": continue_default(ORIG, UPDATE)},
                                           {"role": "assistant", "content": "```\n"}], "continue", MERGED),
]


# -- reading ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, messages, family, answer", CHAT_FORMS, ids=[f[0] for f in CHAT_FORMS])
def test_each_family_is_read_by_its_structure(name, messages, family, answer):
    user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    system = "\n".join(m["content"] for m in messages if m["role"] == "system")
    prefill = messages[-1]["content"] if messages[-1]["role"] == "assistant" else None
    p = read_prompt(user, system, prefill)
    assert (p.family.name, p.blocks.original, p.blocks.update) == (family, ORIG, UPDATE)
    assert p.answer.whole(MERGED) == answer


def test_instruction_lines_and_lead_blocks():
    p = read_prompt(kortix(ORIG, UPDATE, "add a comment"))  # opencode-fast-apply's Instruction: line
    assert p.blocks.instruction == "add a comment" and p.blocks.original == ORIG
    assert read_prompt(aixapply(ORIG, UPDATE, "Python")).blocks.language == "Python"
    p = read_prompt(f"<instructions>do it</instructions>\n<code>{ORIG}</code>\n<update>{UPDATE}</update>")
    assert (p.family.name, p.blocks.instruction) == ("morph", "do it")


def test_the_prose_names_tags_but_blocks_hold_them_too():
    """Kortix's prose names <code> and <update> as words; a file that holds the tags stays text."""
    html = "<p>Use <code>x</code> here</p>\n<pre><update>not a block</update></pre>\n"
    p = read_prompt(kortix(html, "<p>Use <code>y</code> here</p>\n"))
    assert (p.blocks.original, p.blocks.update) == (html, "<p>Use <code>y</code> here</p>\n")


def test_a_completion_prompt_that_ends_with_the_answer_tag_is_prefilled():
    raw = f"<|im_start|>user\n{kortix(ORIG, UPDATE)}<|im_end|>\n<|im_start|>assistant\n<updated-code>"
    assert read_prompt(raw).answer.whole(MERGED) == f"{MERGED}</updated-code>"


@pytest.mark.parametrize("escape", [xml_escape, handlebars_escape], ids=["fastapply-mcp", "handlebars"])
def test_escaped_blocks_are_read_unescaped_and_answered_escaped_the_same_way(escape):
    original = ORIG + 'TAGS = {"a": "<b>", \'c\': `d`}\nx = a < b and b > c or d == "&"\n'
    p = read_prompt(kortix(escape(original), escape(UPDATE)))
    assert p.blocks.original == original and p.blocks.update == UPDATE
    merged = MERGED + 'TAGS = {"a": "<b>", \'c\': `d`}\n'
    assert p.answer.whole(merged) == f"<updated-code>{escape(merged)}</updated-code>"
    assert [n.kind for n in p.notes] == ["escaping"]


def test_text_that_only_looks_escaped_goes_back_as_it_came():
    for original in ("a = 'x &amp; y'\nb = \"&amp;\"\n",  # escaped or raw: the same bytes come back
                     "x = 1  # &nbsp; is not what an escaping client writes\n",  # raw
                     "q = '&quot;' + '\"'\n"):  # a character raw beside its entity: raw
        p = read_prompt(kortix(original, "x = 2\n"))
        assert p.answer.text(p.blocks.original) == original
    assert read_prompt(kortix("x = 1  # &nbsp;\n", "x = 2\n")).answer.escaping is None


# -- malformed messages: the family and the fix named -------------------------------------------------------------

MALFORMED = [
    ("morph", f"<code>{ORIG}</code>", "Morph", "no <update> block"),
    ("morph", f"<update>{UPDATE}</update>\n<code>{ORIG}</code>", "Morph", "<update> comes before <code>"),
    ("morph", f"<code>{ORIG}</code>\n<update>{UPDATE}</update>\n<code>{ORIG}</code>\n<update>{UPDATE}</update>",
     "Morph", "ambiguous message: it reads"),
    ("kortix", kortix(ORIG, UPDATE).replace(f"<update>{UPDATE}</update>", ""), "Kortix FastApply", "no <update> block"),
    ("kortix", kortix(ORIG, UPDATE).replace(f"<code>{ORIG}</code>\n\n<update>{UPDATE}</update>",
                                            f"<update>{UPDATE}</update>\n\n<code>{ORIG}</code>"),
     "Kortix FastApply", "<update> comes before <code>"),
    ("kortix", kortix(ORIG, UPDATE).replace(f"<update>{UPDATE}</update>",
                                            f"<update>{UPDATE}</update>\n<code>{ORIG}</code>\n<update>{UPDATE}</update>"),
     "Kortix FastApply", "ambiguous message: it reads"),
    ("osmosis", osmosis(ORIG, UPDATE).replace("</edit>", ""), "Osmosis-Apply", "<edit> block is not closed"),
    ("osmosis", f"<edit>\n{UPDATE}\n</edit>\n\n<code>\n{ORIG}\n</code>", "Osmosis-Apply", "<edit> comes before <code>"),
    ("osmosis", osmosis(ORIG, UPDATE) + "\n" + osmosis(ORIG, UPDATE), "Osmosis-Apply", "ambiguous message: it reads"),
    ("aixapply", aixapply(ORIG, UPDATE).replace(f"<update_snippet>{UPDATE}</update_snippet>", ""), "aiXapply",
     "no <update_snippet> block"),
    ("aixapply", f"<update_snippet>{UPDATE}</update_snippet>\n\n<source_file>{ORIG}</source_file>", "aiXapply",
     "<update_snippet> comes before <source_file>"),
    ("aixapply", aixapply(ORIG, UPDATE) + "\n" + aixapply(ORIG, UPDATE, None), "aiXapply", "ambiguous message: it reads"),
    ("continue", continue_default(ORIG, UPDATE).split("SUGGESTED")[0], "Continue default apply",
     "no `SUGGESTED EDIT:` block"),
    ("continue", f"SUGGESTED EDIT:\n```\n{UPDATE}\n```\n\nORIGINAL CODE:\n```\n{ORIG}\n```\n",
     "Continue default apply", "no `SUGGESTED EDIT:` fence after the `ORIGINAL CODE:` block"),
    ("continue", continue_default(ORIG + "```\n\nSUGGESTED EDIT:\n```\nx\n", UPDATE), "Continue default apply",
     "ambiguous message"),
]


@pytest.mark.parametrize("family, text, title, words", MALFORMED)
def test_a_malformed_message_names_its_family_and_the_fix(family, text, title, words):
    with pytest.raises(ApplyError) as ei:
        read_prompt(text)
    message = ei.value.message
    assert ei.value.code == "invalid_argument" and words in message, message
    assert f"send the {title} format: " in message, message  # the fix: the family's own one-line example


def test_a_message_of_no_family_lists_them_with_the_nearest():
    with pytest.raises(ApplyError) as ei:
        read_prompt(f"<original_file>{ORIG}</original_file>\n<source_edit>{UPDATE}</source_edit>")
    message = ei.value.message
    assert message.startswith("send an apply prompt fastapply reads")
    assert all(f.title in message for f in FAMILIES)
    assert "the nearest, aiXapply: <language>python</language>" in message, message


def test_two_families_reading_different_blocks_is_refused_naming_both():
    text = aixapply("a = 1\n", "a = 2\n", None) + "\n\n" + f"<code>{ORIG}</code>\n<update>{UPDATE}</update>"
    with pytest.raises(ApplyError) as ei:
        read_prompt(text)
    message = ei.value.message
    assert message.startswith("send one prompt format: the message reads as the Kortix FastApply format (a file of 7 "
                              "lines) and as the aiXapply format (a file of 2 lines)"), message


@pytest.mark.parametrize("prefill", ["```\n", "<updated-code>", "Sure! Here"])
def test_a_prefill_that_contradicts_the_answer_is_refused(prefill):
    with pytest.raises(ApplyError) as ei:
        read_prompt(osmosis(ORIG, UPDATE), prefill=prefill)
    assert ei.value.message.startswith("send no assistant message, or one that opens the answer")
    assert "answer begins with `<code>`" in ei.value.message


def test_entities_that_do_not_decode_are_refused():
    with pytest.raises(ApplyError) as ei:
        read_prompt(kortix("x = &quot;&#xD800;&quot;\n", "x = &quot;a&quot;\n"))
    assert ei.value.message.startswith("send the blocks unescaped") and "`&#xD800;` (the file, line 1)" in ei.value.message


# -- the routes ------------------------------------------------------------------------------------------------

def _post(base: str, path: str, body: dict) -> httpx.Response:
    return httpx.post(base + path, json=body, timeout=120)


def _lines(r: httpx.Response) -> list[dict]:
    return [json.loads(line) for line in r.text.splitlines() if line.strip()]


def _sse(r: httpx.Response) -> list:
    return [line[6:] if line == "data: [DONE]" else json.loads(line[6:]) for line in r.text.splitlines()
            if line.startswith("data: ")]


@pytest.mark.parametrize("name, messages, family, answer", CHAT_FORMS, ids=[f[0] for f in CHAT_FORMS])
def test_every_family_on_the_chat_routes_unary_and_streamed(url, name, messages, family, answer):  # noqa: F811
    body = {"model": "fastapply-1.5b", "messages": messages}
    r = _post(url, "/v1/chat/completions", body)
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == answer
    events = _sse(_post(url, "/v1/chat/completions", {**body, "stream": True}))
    assert events[-1] == "[DONE]"
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-1] if e["choices"]) == answer
    ollama = _post(url, "/api/chat", {**body, "stream": False}).json()
    assert ollama["message"] == {"role": "assistant", "content": answer} and ollama["done"] is True
    lines = _lines(_post(url, "/api/chat", body))  # Ollama streams by default
    assert "".join(x["message"]["content"] for x in lines) == answer
    assert [x["done"] for x in lines][-1] is True and lines[-1]["done_reason"] == "stop"
    assert lines[-1]["eval_count"] > 0 and not any(x["done"] for x in lines[:-1])


def test_completions_and_ollama_generate_take_the_prompt_string(url):  # noqa: F811
    prompt = f"<|im_start|>system\n{KORTIX_SYSTEM}<|im_end|>\n<|im_start|>user\n{kortix(ORIG, UPDATE)}<|im_end|>\n" \
             "<|im_start|>assistant\n"
    want = f"<updated-code>{MERGED}</updated-code>"
    r = _post(url, "/v1/completions", {"model": "fastapply-1.5b", "prompt": prompt, "max_tokens": 8000})
    assert r.status_code == 200 and r.json()["object"] == "text_completion"
    assert r.json()["choices"][0]["text"] == want and r.json()["usage"]["completion_tokens"] > 0
    events = _sse(_post(url, "/v1/completions", {"model": "x", "prompt": [prompt], "stream": True,
                                                 "stream_options": {"include_usage": True}}))
    assert "".join(c["text"] for e in events[:-1] for c in e["choices"]) == want
    assert events[-2]["usage"]["total_tokens"] > 0 and events[-1] == "[DONE]"
    g = _post(url, "/api/generate", {"model": "codellama:7b", "prompt": prompt, "raw": True, "stream": False}).json()
    assert g["response"] == want and g["done"] and g["model"] == "fastapply-auto"
    lines = _lines(_post(url, "/api/generate", {"model": "codellama:7b", "prompt": kortix(ORIG, UPDATE),
                                                "system": KORTIX_SYSTEM}))
    assert "".join(x["response"] for x in lines) == want and lines[-1]["done"]


def test_max_tokens_never_cuts_the_file(url):  # noqa: F811
    """opencode-fast-apply sends max_tokens 8000; a smaller one still gets the whole file."""
    r = _post(url, "/v1/chat/completions", {"model": "fastapply-structural", "max_tokens": 1,
                                            "messages": [{"role": "user", "content": kortix(ORIG, UPDATE)}]})
    assert r.json()["choices"][0]["message"]["content"] == f"<updated-code>{MERGED}</updated-code>"
    assert r.json()["choices"][0]["finish_reason"] == "stop"


def test_an_escaped_request_over_http_and_its_finding(url):  # noqa: F811
    original = ORIG + 'S = "<p>"\n'
    r = _post(url, "/v1/chat/completions", {"model": "fastapply-1.5b", "messages": [
        {"role": "user", "content": kortix(xml_escape(original), xml_escape(UPDATE))}]}).json()
    merged = MERGED + 'S = "<p>"\n'
    assert r["choices"][0]["message"]["content"] == f"<updated-code>{xml_escape(merged)}</updated-code>"
    kinds = [f["kind"] for f in r["fastapply"]["findings"]]
    assert "escaping" in kinds and "model" in kinds


def test_an_aixapply_refusal_is_its_empty_tags_with_the_reasons(url):  # noqa: F811
    original = "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    return x\n"
    update = "# ... existing code ...\n    x = 2\n    return x\n# ... existing code ...\n"
    # the structural engine named: the default engine here is `auto`, whose model would judge the readings
    body = {"model": "fastapply-structural", "messages": [{"role": "system", "content": AIX_SYSTEM},
                                                    {"role": "user", "content": aixapply(original, update)}]}
    r = _post(url, "/v1/chat/completions", body)
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == "<update_file></update_file>"
    refusal = r.json()["fastapply"]["refusal"]
    assert refusal["reasons"] and refusal["hint"].startswith("Resend") and len(refusal["readings"]) >= 2
    events = _sse(_post(url, "/v1/chat/completions", {**body, "stream": True}))
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-1] if e["choices"]) == \
        "<update_file></update_file>"
    # asked for the file bare (no tag named), the refusal is the 422 every other client gets
    r = _post(url, "/v1/chat/completions", {"model": "fastapply-structural", "messages": [
        {"role": "user", "content": aixapply(original, update, None)}]})
    assert r.status_code == 422 and r.json()["error"]["code"] == "refused"


def test_ollama_errors_are_ollamas_shape(url):  # noqa: F811
    r = _post(url, "/api/chat", {"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    assert r.status_code == 400 and r.json()["error"].startswith("send an apply prompt fastapply reads")
    r = _post(url, "/api/generate", {"model": "m"})
    assert r.status_code == 400 and "missing `prompt`" in r.json()["error"]


def test_ollama_discovery_routes(url):  # noqa: F811
    tags = httpx.get(url + "/api/tags").json()["models"]
    assert {"fastapply-structural", "fastapply-auto", "morph-v3-large"} <= {m["name"] for m in tags}
    assert httpx.get(url + "/api/version").json()["version"]


def test_ollama_show_answers_for_any_name_and_404s_an_unknown_one_when_strict(counter):  # noqa: F811
    with serving(counter=counter, default_engine="structural") as (_, http):
        shown = httpx.post(http.url + "/api/show", json={"model": "codellama:7b"}).json()
        assert shown["details"]["engine"] == "structural" and shown["template"] == "{{ .Prompt }}"
        plain = httpx.post(http.url + "/api/show", json={"name": "fastapply-plain"}).json()
        assert plain["details"]["engine"] == "plain"
        r = httpx.post(http.url + "/api/show", json={})
        assert r.status_code == 400 and r.json()["error"].startswith("missing `model`")
    with serving(counter=counter, strict_model_names=True) as (_, http):
        r = httpx.post(http.url + "/api/show", json={"model": "codellama:7b"})
        assert r.status_code == 404 and r.json()["error"].startswith("model 'codellama:7b' not found"), r.text
        assert httpx.post(http.url + "/api/show", json={"model": "fastapply-auto"}).status_code == 200


def test_the_new_routes_need_the_token(counter):  # noqa: F811
    with serving(token="t0k", counter=counter) as (_, http):
        for path, body in (("/v1/completions", {"prompt": kortix(ORIG, UPDATE)}),
                           ("/api/chat", {"messages": [{"role": "user", "content": osmosis(ORIG, UPDATE)}]}),
                           ("/api/generate", {"prompt": osmosis(ORIG, UPDATE)})):
            assert httpx.post(http.url + path, json=body).status_code == 401
            ok = httpx.post(http.url + path, json={**body, "stream": False}, headers={"Authorization": "Bearer t0k"})
            assert ok.status_code == 200, ok.text
        assert httpx.get(http.url + "/api/tags").status_code == 401
        assert httpx.post(http.url + "/api/show", json={"model": "m"}).status_code == 401


def test_a_file_its_client_would_cut_short_is_refused_not_answered(url):  # noqa: F811
    """Osmosis' MCP server ends the file at the first `</code>`: a Javadoc that holds one would be
    written cut there. Refused, the file untouched; an escaping client (fastapply-mcp) never meets it."""
    original = "/** Use <code>x</code> here. */\nclass A {\n    int x = 1;\n}\n"
    update = "class A {\n    int x = 2;\n}\n"
    r = _post(url, "/api/chat", {"model": "Osmosis/Osmosis-Apply-1.7B", "stream": False, "messages": [
        {"role": "user", "content": osmosis(original, update)}, {"role": "assistant", "content": "<code>"}]})
    assert r.status_code == 422 and r.json()["error"].startswith("send this file in another format"), r.text
    merged = "/** Use <code>x</code> here. */\nclass A {\n    int x = 2;\n}\n"
    r = _post(url, "/v1/chat/completions", {"model": "fastapply-structural", "messages": [
        {"role": "user", "content": f"<code>{original}</code>\n<update>{update}</update>"}]})
    assert r.json()["choices"][0]["message"]["content"] == merged  # Morph's answer is bare: nothing to cut
    r = _post(url, "/v1/chat/completions", {"model": "fastapply-1.5b", "messages": [
        {"role": "user", "content": kortix(xml_escape(original), xml_escape(update))}]})
    assert r.json()["choices"][0]["message"]["content"] == f"<updated-code>{xml_escape(merged)}</updated-code>"
