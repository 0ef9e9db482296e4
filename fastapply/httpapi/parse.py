"""Request bodies -> `ApplyRequest`: OpenAI chat completions in Morph's message format, and Relace's
apply body. Pure functions over bytes, decoded JSON and headers; each failure is an
`ApplyError("invalid_argument")` that says what to send instead.

Morph's format is one user message of three blocks, read by its structure (`message.py`):

    <instruction>what the edit does</instruction>      (optional; avante.nvim writes <instructions>)
    <code>THE ORIGINAL FILE</code>
    <update>THE UPDATE SNIPPET</update>

A large file from Morph's SDK comes anchor-compacted (`compaction.py`): the original is rebuilt
from its table before anything is merged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from fastapply.api import DEFAULT_ENGINE, ENGINES, ApplyError, ApplyRequest, Sampling, decode_utf8
from fastapply.httpapi import compaction
from fastapply.httpapi.message import parse_morph_message
from fastapply.pipeline import empty_original_error

__all__ = ["HTTPCall", "chat_call", "relace_call", "engine_of", "model_names", "parse_json", "parse_morph_message"]

# Model names that clients of hosted fast-apply services already send: they get the default engine.
CLIENT_ALIASES = ("morph-v3-fast", "morph-v3-large", "auto", "relace-apply-3")


def model_names(default_engine: str = DEFAULT_ENGINE) -> dict[str, str]:
    """Every `model` value this server accepts -> the engine it selects (client aliases: the
    server's default engine)."""
    names = {f"fastapply-{e}": e for e in ENGINES}
    names.setdefault("fastapply-auto", DEFAULT_ENGINE)
    names.update({alias: default_engine for alias in CLIENT_ALIASES})
    return names


@dataclass(frozen=True)
class HTTPCall:
    """One parsed HTTP request: what to apply and how to answer."""

    request: ApplyRequest
    model: str  # the name the answer reports: fastapply-<engine that ran>
    stream: bool = False
    include_usage: bool = False  # OpenAI's stream_options.include_usage: a last chunk with usage
    anchors: compaction.Compacted | None = None  # Morph's large-file protocol: the answer must expand to itself


def parse_json(body: bytes) -> dict:
    text = decode_utf8(body, "the request body")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad(f"the request body is not valid JSON: {e.msg} (line {e.lineno} column {e.colno})") from None
    if not isinstance(data, dict):
        raise _bad(f"the request body must be a JSON object, not {_kind(data)}")
    return data


def chat_call(data: dict, headers: Mapping[str, str] | None = None, *,
              default_engine: str = DEFAULT_ENGINE) -> HTTPCall:
    """`POST /v1/chat/completions` body (Morph's message format) and headers (lower-case names) -> HTTPCall."""
    instruction, original, update = parse_morph_message(_user_message(data.get("messages")))
    anchors = None
    if compaction.requested(headers or {}, instruction, original):
        anchors = compaction.expand_request(instruction, original)
        original, instruction = anchors.original, anchors.instruction or None
    _check_not_empty(original, update, "the <code> block")
    engine, model = engine_of(data.get("model"), default_engine)
    n = data.get("n")
    if n is not None and (n != 1 or isinstance(n, bool)):
        raise _bad("`n` must be 1: a merge has one answer")
    options = data.get("stream_options") or {}
    if not isinstance(options, dict):
        raise _bad(f"`stream_options` must be an object, not {_kind(options)}")
    max_tokens = data.get("max_completion_tokens", data.get("max_tokens"))
    req = ApplyRequest(original, update, instruction=instruction, engine=engine, sampling=_sampling(data),
                       max_output_tokens=_int(max_tokens, "max_tokens"), prediction=_prediction(data.get("prediction")),
                       model_budget_s=_model_budget(data))
    return HTTPCall(req, model, _flag(data, "stream"), _flag(options, "include_usage"), anchors)


def relace_call(data: dict, headers: Mapping[str, str] | None = None, *,
                default_engine: str = DEFAULT_ENGINE) -> HTTPCall:
    """`POST /v1/code/apply` body (Relace) -> HTTPCall. Both key spellings are accepted."""
    original, original_key = _either_named(data, "initial_code", "initialCode")
    update = _either(data, "edit_snippet", "editSnippet")
    _check_not_empty(original, update, f"`{original_key}`")
    instruction = _string(data.get("instruction"), "instruction")
    engine, model = engine_of(data.get("model"), default_engine)
    return HTTPCall(ApplyRequest(original, update, instruction=instruction or None, engine=engine,
                                 model_budget_s=_model_budget(data)), model, _flag(data, "stream"))


def engine_of(model: object, default_engine: str = DEFAULT_ENGINE) -> tuple[str, str]:
    """`model` -> (engine, the name answers report). No model: the default engine."""
    if model is None:
        return default_engine, f"fastapply-{default_engine}"
    names = model_names(default_engine)
    if not isinstance(model, str) or model not in names:
        raise _bad(f"unknown model {model!r}; use one of {', '.join(names)}")
    return names[model], f"fastapply-{names[model]}"


def _check_not_empty(original: str, update: str, what: str) -> None:
    """An empty original with a snippet that holds markers, named as this route's client sent it
    (the same rule runs in the pipeline for every front-end)."""
    error = empty_original_error(original, update, what)
    if error is not None:
        raise error


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


def _model_budget(data: dict) -> float | None:
    """`model_budget_s` (either route; an extension: `extra_body` in OpenAI's SDKs): engine auto's
    model seconds on a refused merge; absent, the server's `--model-budget`."""
    return _number(data.get("model_budget_s"), "model_budget_s")


def _sampling(data: dict) -> Sampling:
    temperature = _number(data.get("temperature"), "temperature")
    top_p = _number(data.get("top_p"), "top_p")
    return Sampling(temperature=0.0 if temperature is None else temperature,
                    top_p=1.0 if top_p is None else top_p, seed=_int(data.get("seed"), "seed"))


def _either(data: dict, key: str, other: str) -> str:
    return _either_named(data, key, other)[0]


def _either_named(data: dict, key: str, other: str) -> tuple[str, str]:
    """The value of `key` or else `other`, and which of the two the client sent."""
    for k in (key, other):
        if data.get(k) is not None:
            return _string(data[k], k), k
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
