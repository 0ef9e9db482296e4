"""What the HTTP answers look like: OpenAI `chat.completion` / `chat.completion.chunk` and
`text_completion` objects, Relace's `{"mergedCode", "usage"}` (Ollama's are in ollama.py), as plain
dicts (pure; no HTTP here).

The file goes out in the shape its prompt asked for (`prompt.Answer`: `<updated-code>…</updated-code>`,
`<code>…</code>` without the opening tag a client prefilled, escaped as the client escaped, or bare);
a stream sends the opening tag first and the closing tag with the finish. Relace's answer is the file.

Every answer carries one extension key, `fastapply`: the engine that ran, the language, and the
findings, which none of these formats has a place for.

Streams are server-sent events, one JSON object per `data:` line:
- chat and completions: a first chunk (chat: the assistant role), one chunk per verified piece of
  text, a last chunk with `finish_reason` (and, with `stream_options.include_usage`, a usage chunk
  with no choices), then `data: [DONE]`, as OpenAI ends its streams;
- Relace (whose stream format is not published): `{"chunk": TEXT}` events, then one
  `{"usage": ..., "fastapply": ...}` event, and no `[DONE]`: Relace's SDK JSON-parses every
  `data:` line, and a `[DONE]` line makes it throw after the whole file arrived.
An error after the stream began comes as one `data: {"error": {...}}` event (OpenAI's SDKs raise it).

Usage is counted when an answer carries it (`Done.usage`, lazily): on every 200 but a chat stream
that did not ask for it. Where the tokens could not be counted they are 0 and
`fastapply.usage_counted` is false (Continue's Relace adapter reads `usage.prompt_tokens` unchecked).
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from fastapply.api import ApplyResult
from fastapply.httpapi.parse import HTTPCall
from fastapply.httpapi.usage import Usage

DONE = b"data: [DONE]\n\n"


def sse(obj: dict) -> bytes:
    # ASCII JSON: one line per event whatever the file holds (newlines are escaped).
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode("ascii") + b"\n\n"


@dataclass
class Done:
    """The last event of a request: its result, its token usage (counted on first use; None when it
    could not be counted) and, for an answer that stands for a refusal (aiXapply's empty tags), the
    refusal's fields."""

    result: ApplyResult
    count: Callable[[], Usage | None] = lambda: None
    refusal: dict | None = None

    @functools.cached_property
    def usage(self) -> Usage | None:
        return self.count()

    def usage_dict(self) -> dict:
        """OpenAI's usage object; zeros where the tokens were not counted (`fastapply.usage_counted`)."""
        return (self.usage or NOT_COUNTED).as_dict()


NOT_COUNTED = Usage(0, 0)


def fastapply_info(done: Done) -> dict:
    result = done.result
    info = {"engine": result.engine, "language": result.language, "ok": result.ok,
            "findings": [{"kind": f.kind, "message": f.message, "severity": f.severity} for f in result.findings]}
    if result.margin is not None:  # engine "judge": by how much (nats) its pick beat the next reading
        info["margin"] = result.margin
    if "usage" in done.__dict__ and done.usage is None:  # asked for and not counted
        info["usage_counted"] = False
    if done.refusal is not None:
        info["refusal"] = done.refusal
    return info


def finish_reason(result: ApplyResult) -> str:
    return "length" if any(f.kind == "truncated" for f in result.findings) else "stop"


@dataclass
class _OpenAI:
    """What OpenAI's chat and completion objects share: one id and creation time per call."""

    call: HTTPCall
    prefix: str = "chatcmpl"
    id: str = field(init=False)
    created: int = field(init=False)

    media_type = "text/event-stream"
    frame = staticmethod(sse)

    def __post_init__(self):
        self.id = f"{self.prefix}-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def head(self, obj: str) -> dict:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.call.model}

    def end(self) -> list[bytes]:
        return [DONE]

    @staticmethod
    def error(body: dict) -> dict:
        return body


class ChatShapes(_OpenAI):
    def unary(self, done: Done) -> dict:
        message = {"role": "assistant", "content": self.call.answer.whole(done.result.merged), "refusal": None}
        return self.head("chat.completion") | {
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason(done.result)}],
            "usage": done.usage_dict(), "fastapply": fastapply_info(done)}

    def chunk(self, delta: dict, finish: str | None = None) -> dict:
        return self.head("chat.completion.chunk") | {
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    def start(self) -> list[dict]:
        return [self.chunk({"role": "assistant", "content": self.call.answer.open})]

    def text(self, text: str) -> dict:
        return self.chunk({"content": self.call.answer.text(text)})

    def finish(self, done: Done) -> list[dict]:
        close = [self.chunk({"content": self.call.answer.close})] if self.call.answer.close else []
        last = self.chunk({}, finish_reason(done.result)) | {"fastapply": fastapply_info(done)}
        if not self.call.include_usage:
            return [*close, last]
        return [*close, last, self.head("chat.completion.chunk") | {"choices": [], "usage": done.usage_dict()}]


class CompletionShapes(_OpenAI):
    """OpenAI's legacy completions (`/v1/completions`): `choices[].text`."""

    def __init__(self, call: HTTPCall):
        super().__init__(call, "cmpl")

    def choice(self, text: str, finish: str | None) -> dict:
        return self.head("text_completion") | {
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}]}

    def unary(self, done: Done) -> dict:
        return self.choice(self.call.answer.whole(done.result.merged), finish_reason(done.result)) | {
            "usage": done.usage_dict(), "fastapply": fastapply_info(done)}

    def start(self) -> list[dict]:
        return [self.choice(self.call.answer.open, None)] if self.call.answer.open else []

    def text(self, text: str) -> dict:
        return self.choice(self.call.answer.text(text), None)

    def finish(self, done: Done) -> list[dict]:
        last = self.choice(self.call.answer.close, finish_reason(done.result)) | {"fastapply": fastapply_info(done)}
        if not self.call.include_usage:
            return [last]
        return [last, self.head("text_completion") | {"choices": [], "usage": done.usage_dict()}]


class RelaceShapes:
    """Relace's apply answer: `{"mergedCode": ..., "usage": {...}}`."""

    media_type = "text/event-stream"
    frame = staticmethod(sse)

    def __init__(self, call: HTTPCall):
        self.model = call.model

    def unary(self, done: Done) -> dict:
        return {"mergedCode": done.result.merged, "usage": done.usage_dict(), "fastapply": fastapply_info(done)}

    def start(self) -> list[dict]:
        return []

    def text(self, text: str) -> dict:
        return {"chunk": text}

    def finish(self, done: Done) -> list[dict]:
        return [{"usage": done.usage_dict(), "fastapply": fastapply_info(done)}]

    def end(self) -> list[bytes]:
        return []  # no `data: [DONE]`: Relace's SDK would fail to parse it as JSON

    @staticmethod
    def error(body: dict) -> dict:
        """Relace's SDK words its error from the body's top-level `message` (else it prints the
        whole body as JSON): the same text as OpenAI's `error.message`."""
        return {"message": body["error"]["message"], **body}
