"""What the HTTP answers look like: OpenAI `chat.completion` / `chat.completion.chunk` objects and
Relace's `{"mergedCode", "usage"}`, as plain dicts (pure; no HTTP here).

Both carry one extension key, `fastapply`: the engine that ran, the language, and the validation
findings, which neither format has a place for.

Streams are server-sent events, one JSON object per `data:` line:
- chat: a first chunk with the assistant role, one chunk per verified piece of text, a last chunk
  with `finish_reason` (and, with `stream_options.include_usage`, a usage chunk with no choices),
  then `data: [DONE]`, as OpenAI ends its streams;
- Relace (whose stream format is not published): `{"chunk": TEXT}` events, then one
  `{"usage": ..., "fastapply": ...}` event, and no `[DONE]`: Relace's SDK JSON-parses every
  `data:` line, and a `[DONE]` line makes it throw after the whole file arrived.
An error after the stream began comes as one `data: {"error": {...}}` event (OpenAI's SDKs raise it).

Every 200 answer carries `usage` (Continue's Relace adapter reads `usage.prompt_tokens` unchecked):
where the tokens could not be counted they are 0, and `fastapply.usage_counted` is false.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

from fastapply.api import ApplyResult
from fastapply.httpapi.parse import HTTPCall
from fastapply.httpapi.usage import Usage

DONE = b"data: [DONE]\n\n"


def sse(obj: dict) -> bytes:
    # ASCII JSON: one line per event whatever the file holds (newlines are escaped).
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode("ascii") + b"\n\n"


@dataclass(frozen=True)
class Done:
    """The last event of a request: its result and its token usage (None when it could not be counted)."""

    result: ApplyResult
    usage: Usage | None

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
    if done.usage is None:
        info["usage_counted"] = False
    return info


def finish_reason(result: ApplyResult) -> str:
    return "length" if any(f.kind == "truncated" for f in result.findings) else "stop"


class ChatShapes:
    """OpenAI chat completion objects for one call (one id and creation time)."""

    def __init__(self, call: HTTPCall):
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model = call.model
        self.include_usage = call.include_usage

    def unary(self, done: Done) -> dict:
        out = {"id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
               "choices": [{"index": 0, "message": {"role": "assistant", "content": done.result.merged,
                                                    "refusal": None},
                            "logprobs": None, "finish_reason": finish_reason(done.result)}],
               "usage": done.usage_dict(), "fastapply": fastapply_info(done)}
        return out

    def chunk(self, delta: dict, finish: str | None = None) -> dict:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    def start(self) -> list[dict]:
        return [self.chunk({"role": "assistant", "content": ""})]

    def text(self, text: str) -> dict:
        return self.chunk({"content": text})

    def finish(self, done: Done) -> list[dict]:
        last = self.chunk({}, finish_reason(done.result)) | {"fastapply": fastapply_info(done)}
        if not self.include_usage:
            return [last]
        usage = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                 "choices": [], "usage": done.usage_dict()}
        return [last, usage]

    def end(self) -> list[bytes]:
        return [DONE]

    @staticmethod
    def error(body: dict) -> dict:
        return body


class RelaceShapes:
    """Relace's apply answer: `{"mergedCode": ..., "usage": {...}}`."""

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
