"""Request bodies -> `ApplyRequest`: OpenAI chat completions and completions, Ollama's chat and
generate, Relace's apply body. Pure functions over bytes, decoded JSON and headers; each failure
is an `ApplyError("invalid_argument")` that says what to send instead.

The prompt inside a chat or completion is any family of `formats.FAMILIES`, read by its structure
(`prompt.py`, `message.py`): Morph's blocks, Kortix's, Osmosis', aiXapply's, Continue's default apply
prompt. Its answer shape (`prompt.Answer`) travels with the call. A large file from Morph's SDK comes
anchor-compacted (`compaction.py`): the original is rebuilt from its table before anything is merged.

`model`: fastapply's own names (`fastapply-structural`, ...) pick the engine; any other name (the one
a client was configured with for its open model: `fastapply-1.5b`, `Osmosis/Osmosis-Apply-1.7B`,
`codellama:7b`) gets the server's default engine and a finding that names it, unless the server
runs with `--strict-model-names`. `max_tokens` never cuts the file: a merged file cut short is of no
use to any client, so the answer is always the whole file (the model engines budget by its length).

`section` (every route; an extension: `extra_body` in OpenAI's SDKs): the original is a section of
the file, which the client splices the answer back into (`ApplyRequest.section`). Its default is
the prompt's (`prompt.Prompt.section`: fastapply-mcp's, Osmosis' MCP server's); a body that names it
decides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from fastapply.api import DEFAULT_ENGINE, ENGINES, ApplyError, ApplyRequest, Finding, Sampling, decode_utf8
from fastapply.httpapi import compaction
from fastapply.httpapi.formats import MORPH, Tags
from fastapply.httpapi.message import parse_morph_message
from fastapply.httpapi.prompt import Answer, Prompt, read_prompt
from fastapply.languages import unknown_language
from fastapply.pipeline import empty_original_error

__all__ = ["HTTPCall", "Naming", "chat_call", "completion_call", "ollama_chat_call", "ollama_generate_call",
           "relace_call", "engine_of", "model_names", "parse_json", "parse_morph_message"]

# Model names that clients of hosted fast-apply services already send: they get the default engine.
CLIENT_ALIASES = ("morph-v3-fast", "morph-v3-large", "auto", "relace-apply-3")


def model_names(default_engine: str = DEFAULT_ENGINE) -> dict[str, str]:
    """Every `model` value this server names -> the engine it selects (client aliases: the
    server's default engine). Other names select the default engine too, unless strict."""
    names = {f"fastapply-{e}": e for e in ENGINES}
    names.setdefault("fastapply-auto", DEFAULT_ENGINE)
    names.update({alias: default_engine for alias in CLIENT_ALIASES})
    return names


@dataclass(frozen=True)
class Naming:
    """How the server takes a request's `model`: its default engine, and whether unknown names are refused."""

    default_engine: str = DEFAULT_ENGINE
    strict: bool = False  # fastapply serve --strict-model-names


@dataclass(frozen=True)
class HTTPCall:
    """One parsed HTTP request: what to apply and how to answer."""

    request: ApplyRequest
    model: str  # the name the answer reports: fastapply-<engine that ran>
    stream: bool = False
    include_usage: bool = False  # OpenAI's stream_options.include_usage: a last chunk with usage
    anchors: compaction.Compacted | None = None  # Morph's large-file protocol: the answer must expand to itself
    answer: Answer = Answer()  # how the file is wrapped and escaped
    notes: tuple[Finding, ...] = ()  # findings the answer carries (the model name, the escaping, ...)


def parse_json(body: bytes) -> dict:
    text = decode_utf8(body, "the request body")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad(f"the request body is not valid JSON: {e.msg} (line {e.lineno} column {e.colno})") from None
    if not isinstance(data, dict):
        raise _bad(f"the request body must be a JSON object, not {_kind(data)}")
    return data


def chat_call(data: dict, headers: Mapping[str, str] | None = None, naming: Naming = Naming()) -> HTTPCall:
    """`POST /v1/chat/completions` body and headers (lower-case names) -> HTTPCall."""
    prompt = read_prompt(*_chat_prompt(data.get("messages")))
    n = data.get("n")
    if n is not None and (n != 1 or isinstance(n, bool)):
        raise _bad("`n` must be 1: a merge has one answer")
    options = data.get("stream_options") or {}
    if not isinstance(options, dict):
        raise _bad(f"`stream_options` must be an object, not {_kind(options)}")
    _max_tokens(data.get("max_completion_tokens", data.get("max_tokens")), "max_tokens")
    return _call(prompt, data, headers or {}, naming, _sampling(data), _flag(data, "stream"),
                 _flag(options, "include_usage"), _prediction(data.get("prediction")))


def completion_call(data: dict, headers: Mapping[str, str] | None = None, naming: Naming = Naming()) -> HTTPCall:
    """`POST /v1/completions` body -> HTTPCall: the `prompt` string is the whole prompt (Continue sends
    its apply template rendered, with providers `openai` and `lmstudio`)."""
    prompt = data.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise _bad("`prompt` must be one string holding the apply prompt (a merge answers one prompt)")
    if data.get("echo"):
        raise _bad("`echo` must be false: the answer is the merged file alone")
    for key in ("n", "best_of"):
        if data.get(key) not in (None, 1) or isinstance(data.get(key), bool):
            raise _bad(f"`{key}` must be 1: a merge has one answer")
    options = data.get("stream_options") or {}
    if not isinstance(options, dict):
        raise _bad(f"`stream_options` must be an object, not {_kind(options)}")
    _max_tokens(data.get("max_tokens"), "max_tokens")
    return _call(read_prompt(_utf8(prompt, "`prompt`")), data, headers or {}, naming, _sampling(data),
                 _flag(data, "stream"), _flag(options, "include_usage"))


def ollama_chat_call(data: dict, headers: Mapping[str, str] | None = None, naming: Naming = Naming()) -> HTTPCall:
    """Ollama's `POST /api/chat` body -> HTTPCall; Ollama streams unless `stream` is false."""
    options = _ollama_options(data)
    return _call(read_prompt(*_chat_prompt(data.get("messages"))), data, headers or {}, naming,
                 _sampling(options), _flag(data, "stream", True))


def ollama_generate_call(data: dict, headers: Mapping[str, str] | None = None,
                         naming: Naming = Naming()) -> HTTPCall:
    """Ollama's `POST /api/generate` body -> HTTPCall: `prompt` (with `raw`, the whole prompt; without,
    the user's turn) and `system` (read for the answer tag it names)."""
    options = _ollama_options(data)
    prompt = _string(data.get("prompt"), "prompt")
    if prompt is None:
        raise _bad("missing `prompt`: send the apply prompt as the `prompt` string")
    return _call(read_prompt(prompt, _string(data.get("system"), "system") or ""), data, headers or {}, naming,
                 _sampling(options), _flag(data, "stream", True))


def relace_call(data: dict, headers: Mapping[str, str] | None = None, naming: Naming = Naming()) -> HTTPCall:
    """`POST /v1/code/apply` body (Relace) -> HTTPCall. Both key spellings are accepted."""
    original, original_key = _either_named(data, "initial_code", "initialCode")
    update = _either(data, "edit_snippet", "editSnippet")
    _check_not_empty(original, update, f"`{original_key}`")
    instruction = _string(data.get("instruction"), "instruction")
    engine, model, note = engine_of(data.get("model"), naming)
    return HTTPCall(ApplyRequest(original, update, instruction=instruction or None, engine=engine,
                                 model_budget_s=_model_budget(data), section=_flag(data, "section")), model,
                    _flag(data, "stream"), notes=(note,) if note else ())


def engine_of(model: object, naming: Naming = Naming()) -> tuple[str, str, Finding | None]:
    """`model` -> (engine, the name answers report, a finding when the name is not one of ours).
    No model: the default engine."""
    default = naming.default_engine
    if model is None:
        return default, f"fastapply-{default}", None
    names = model_names(default)
    if not isinstance(model, str):
        raise _bad(f"`model` must be a string, not {_kind(model)}")
    if model in names:
        return names[model], f"fastapply-{names[model]}", None
    if naming.strict:
        raise _bad(f"unknown model {model!r}; use one of {', '.join(names)} (this server runs with "
                   f"--strict-model-names)")
    return default, f"fastapply-{default}", Finding(
        "model", f"model {model!r} is not one of fastapply's names: the server's default engine ({default}) "
                 f"answered; name fastapply-structural, fastapply-auto, ... to choose", "info")


def _call(prompt: Prompt, data: dict, headers: Mapping[str, str], naming: Naming, sampling: Sampling,
          stream: bool, include_usage: bool = False, prediction: str | None = None) -> HTTPCall:
    b = prompt.blocks
    original, instruction, anchors = b.original, b.instruction, None
    if prompt.family is MORPH and compaction.requested(headers, instruction, original):
        anchors = compaction.expand_request(instruction, original)
        original, instruction = anchors.original, anchors.instruction or None
    blocks = prompt.family.blocks
    _check_not_empty(original, b.update, f"the <{blocks.original}> block" if isinstance(blocks, Tags)
                     else f"the `{blocks.original}` block")
    engine, model, note = engine_of(data.get("model"), naming)
    notes = prompt.notes + ((note,) if note else ())
    language = b.language.strip() if b.language and b.language.strip() else None
    if language is not None and unknown_language(language):
        notes += (Finding("language", f"the prompt's <language> {language!r} is not a language fastapply knows; "
                                      "guessed from the content", "info"),)
        language = None
    req = ApplyRequest(original, b.update, instruction=instruction, language=language, engine=engine,
                       sampling=sampling, prediction=prediction, model_budget_s=_model_budget(data),
                       section=_flag(data, "section", prompt.section))
    return HTTPCall(req, model, stream, include_usage, anchors, prompt.answer, notes)


def _chat_prompt(messages: object) -> tuple[str, str, str | None]:
    """(the last user message, the system messages, the prefill: a trailing assistant message)."""
    if messages is None:
        raise _bad("missing `messages`: send one user message holding the apply prompt (<code>…</code> and "
                   "<update>…</update>, or another format fastapply reads)")
    if not isinstance(messages, list) or not messages:
        raise _bad("`messages` must be a non-empty array of {role, content} objects")
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise _bad(f"messages[{i}] must be an object with a string `role`")
    users = [i for i, msg in enumerate(messages) if msg["role"] == "user"]
    if not users:
        raise _bad("`messages` has no user message; the user message holds the apply prompt")
    last = users[-1]
    system = "\n".join(_text_content(m.get("content"), f"messages[{i}].content") for i, m in enumerate(messages)
                       if m["role"] in ("system", "developer"))
    after = messages[last + 1:]
    prefill = None
    if after and after[-1]["role"] == "assistant":
        prefill = _text_content(after[-1].get("content"), f"messages[{len(messages) - 1}].content")
    return _text_content(messages[last].get("content"), f"messages[{last}].content"), system, prefill


def _check_not_empty(original: str, update: str, what: str) -> None:
    """An empty original with a snippet that holds markers, named as this route's client sent it
    (the same rule runs in the pipeline for every front-end)."""
    error = empty_original_error(original, update, what)
    if error is not None:
        raise error


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


def _flag(data: dict, name: str, default: bool = False) -> bool:
    value = data.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _bad(f"`{name}` must be true or false, not {_kind(value)}")
    return value


def _max_tokens(value: object, name: str) -> None:
    """Checked, and never a limit on the file (the module docstring)."""
    n = _int(value, name)
    if n is not None and n <= 0:
        raise _bad(f"`{name}` must be positive (the answer is always the whole merged file)")


def _ollama_options(data: dict) -> dict:
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise _bad(f"`options` must be an object, not {_kind(options)}")
    _max_tokens(options.get("num_predict") if options.get("num_predict") != -1 else None, "options.num_predict")
    return options


def _kind(value: object) -> str:
    for t, name in ((bool, "a boolean"), (str, "a string"), (int, "a number"), (float, "a number"),
                    (list, "an array"), (dict, "an object")):
        if isinstance(value, t):
            return name
    return "null"


def _bad(message: str) -> ApplyError:
    return ApplyError("invalid_argument", message)
