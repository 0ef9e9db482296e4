"""Request bodies -> `ApplyRequest`: OpenAI chat completions in Morph's message format, and Relace's
apply body. Pure functions over bytes and decoded JSON; each failure is an
`ApplyError("invalid_argument")` that says what to send instead.

Morph's format is one user message:

    <instruction>what the edit does</instruction>      (optional; avante.nvim writes <instructions>)
    <code>THE ORIGINAL FILE</code>
    <update>THE UPDATE SNIPPET</update>

The text between the tags is taken exactly as sent: a file that starts or ends with a newline keeps it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from fastapply.api import DEFAULT_ENGINE, ENGINES, ApplyError, ApplyRequest, Sampling, decode_utf8

# Model names that clients of hosted fast-apply services already send: they get the default engine.
CLIENT_ALIASES = ("morph-v3-fast", "morph-v3-large", "auto", "relace-apply-3")


def model_names() -> dict[str, str]:
    """Every `model` value this server accepts -> the engine it selects."""
    names = {f"fastapply-{e}": e for e in ENGINES}
    names.setdefault("fastapply-auto", DEFAULT_ENGINE)
    names.update({alias: DEFAULT_ENGINE for alias in CLIENT_ALIASES})
    return names


@dataclass(frozen=True)
class HTTPCall:
    """One parsed HTTP request: what to apply and how to answer."""

    request: ApplyRequest
    model: str  # the name the answer reports: fastapply-<engine that ran>
    stream: bool = False
    include_usage: bool = False  # OpenAI's stream_options.include_usage: a last chunk with usage


def parse_json(body: bytes) -> dict:
    text = decode_utf8(body, "the request body")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad(f"the request body is not valid JSON: {e.msg} (line {e.lineno} column {e.colno})") from None
    if not isinstance(data, dict):
        raise _bad(f"the request body must be a JSON object, not {_kind(data)}")
    return data


def chat_call(data: dict) -> HTTPCall:
    """`POST /v1/chat/completions` body -> HTTPCall (Morph's message format)."""
    instruction, original, update = parse_morph_message(_user_message(data.get("messages")))
    engine, model = engine_of(data.get("model"))
    n = data.get("n")
    if n is not None and (n != 1 or isinstance(n, bool)):
        raise _bad("`n` must be 1: a merge has one answer")
    options = data.get("stream_options") or {}
    if not isinstance(options, dict):
        raise _bad(f"`stream_options` must be an object, not {_kind(options)}")
    max_tokens = data.get("max_completion_tokens", data.get("max_tokens"))
    req = ApplyRequest(original, update, instruction=instruction, engine=engine, sampling=_sampling(data),
                       max_output_tokens=_int(max_tokens, "max_tokens"), prediction=_prediction(data.get("prediction")))
    return HTTPCall(req, model, _flag(data, "stream"), _flag(options, "include_usage"))


def relace_call(data: dict) -> HTTPCall:
    """`POST /v1/code/apply` body (Relace) -> HTTPCall. Both key spellings are accepted."""
    original = _either(data, "initial_code", "initialCode")
    update = _either(data, "edit_snippet", "editSnippet")
    instruction = _string(data.get("instruction"), "instruction")
    engine, model = engine_of(data.get("model"))
    return HTTPCall(ApplyRequest(original, update, instruction=instruction or None, engine=engine), model,
                    _flag(data, "stream"))


def engine_of(model: object) -> tuple[str, str]:
    """`model` -> (engine, the name answers report). No model: the default engine."""
    if model is None:
        return DEFAULT_ENGINE, f"fastapply-{DEFAULT_ENGINE}"
    names = model_names()
    if not isinstance(model, str) or model not in names:
        raise _bad(f"unknown model {model!r}; use one of {', '.join(names)}")
    return names[model], f"fastapply-{names[model]}"


_CODE_THEN_UPDATE = re.compile(r"<code>(.*?)</code>\s*<update>(.*)</update>", re.S)
_INSTRUCTION = re.compile(r"<(instructions?)>(.*?)</\1>", re.S)


def parse_morph_message(content: str) -> tuple[str | None, str, str]:
    """(instruction or None, original, update) from a Morph-format user message."""
    m = _CODE_THEN_UPDATE.search(content)
    if m is None:
        form = "<code>ORIGINAL FILE</code> then <update>UPDATE SNIPPET</update>"
        if "<code>" not in content:
            raise _bad(f"the user message has no <code> block; send {form}")
        if "<update>" not in content:
            raise _bad(f"the user message has no <update> block; send {form}")
        raise _bad(f"the user message's <code> and <update> blocks are not closed or out of order; send {form}")
    # Only text before <code> can be the instruction: the file itself may contain the tag.
    i = _INSTRUCTION.search(content, 0, m.start())
    return (i.group(2) if i else None), m.group(1), m.group(2)


def _user_message(messages: object) -> str:
    """The text of the last user message."""
    if messages is None:
        raise _bad("missing `messages`: send one user message holding <code>…</code> and <update>…</update>")
    if not isinstance(messages, list) or not messages:
        raise _bad("`messages` must be a non-empty array of {role, content} objects")
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise _bad(f"messages[{i}] must be an object with a string `role`")
    users = [i for i, msg in enumerate(messages) if msg["role"] == "user"]
    if not users:
        raise _bad("`messages` has no user message; the user message holds <code>…</code> and <update>…</update>")
    return _text_content(messages[users[-1]].get("content"), f"messages[{users[-1]}].content")


def _text_content(content: object, where: str) -> str:
    """OpenAI content: a string, or an array of {"type": "text", "text": ...} parts (joined)."""
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         and isinstance(p.get("text"), str) for p in content):
        content = "".join(p["text"] for p in content)
    if not isinstance(content, str):
        raise _bad(f"{where} must be a string (or an array of text parts), not {_kind(content)}")
    return _utf8(content, where)


def _prediction(prediction: object) -> str | None:
    if prediction is None:
        return None
    if not isinstance(prediction, dict) or prediction.get("type") != "content":
        raise _bad('`prediction` must be {"type": "content", "content": "<the predicted file>"}')
    return _text_content(prediction.get("content"), "prediction.content") or None


def _sampling(data: dict) -> Sampling:
    temperature = _number(data.get("temperature"), "temperature")
    top_p = _number(data.get("top_p"), "top_p")
    return Sampling(temperature=0.0 if temperature is None else temperature,
                    top_p=1.0 if top_p is None else top_p, seed=_int(data.get("seed"), "seed"))


def _either(data: dict, key: str, other: str) -> str:
    for k in (key, other):
        if data.get(k) is not None:
            return _string(data[k], k)
    raise _bad(f"missing `{key}` (or `{other}`)")


def _string(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _bad(f"`{name}` must be a string, not {_kind(value)}")
    return _utf8(value, f"`{name}`")


def _utf8(text: str, where: str) -> str:
    # JSON escapes can spell lone surrogates ("\ud800"): text that no UTF-8 file can hold.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _bad(f"{where} is not valid UTF-8 (a lone surrogate at character {e.start})") from None
    return text


def _number(value: object, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(f"`{name}` must be a number, not {_kind(value)}")
    return float(value)


def _int(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"`{name}` must be an integer, not {_kind(value)}")
    return value


def _flag(data: dict, name: str) -> bool:
    value = data.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _bad(f"`{name}` must be true or false, not {_kind(value)}")
    return value


def _kind(value: object) -> str:
    for t, name in ((bool, "a boolean"), (str, "a string"), (int, "a number"), (float, "a number"),
                    (list, "an array"), (dict, "an object")):
        if isinstance(value, t):
            return name
    return "null"


def _bad(message: str) -> ApplyError:
    return ApplyError("invalid_argument", message)
