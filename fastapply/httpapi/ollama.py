"""Ollama's answers for `POST /api/chat` and `POST /api/generate`, its model list and `POST /api/show` (pure).

Ollama clients (its Python and JavaScript libraries, Osmosis-Apply's MCP server, Continue's `ollama`
provider) stream by default: one JSON object per line (`application/x-ndjson`), each with a piece of
the text and `"done": false`, then one with `"done": true`, `done_reason` and the token counts. With
`"stream": false` the answer is one such object holding the whole text. An error is
`{"error": MESSAGE}` (Ollama's own shape, which its clients raise), with a refusal's fields beside it;
after the stream began, it is the stream's last line.
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import datetime, timezone

from fastapply.httpapi.parse import HTTPCall
from fastapply.httpapi.shapes import Done, fastapply_info, finish_reason


def ndjson(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode("ascii") + b"\n"


class _Ollama:
    media_type = "application/x-ndjson"
    frame = staticmethod(ndjson)
    key = "message"  # where the text goes: chat's message.content, generate's response

    def __init__(self, call: HTTPCall):
        self.call = call
        self.t0 = time.perf_counter_ns()

    def piece(self, text: str) -> dict:
        return {"model": self.call.model, "created_at": _now(), self.key: self._text(text), "done": False}

    def _text(self, text: str):
        return {"role": "assistant", "content": text} if self.key == "message" else text

    def _last(self, done: Done, text: str) -> dict:
        usage = done.usage_dict()
        return {"model": self.call.model, "created_at": _now(), self.key: self._text(text), "done": True,
                "done_reason": finish_reason(done.result), "total_duration": time.perf_counter_ns() - self.t0,
                "load_duration": 0, "prompt_eval_count": usage["prompt_tokens"], "prompt_eval_duration": 0,
                "eval_count": usage["completion_tokens"], "eval_duration": 0, "fastapply": fastapply_info(done)}

    def unary(self, done: Done) -> dict:
        return self._last(done, self.call.answer.whole(done.result.merged))

    def start(self) -> list[dict]:
        return [self.piece(self.call.answer.open)] if self.call.answer.open else []

    def text(self, text: str) -> dict:
        return self.piece(self.call.answer.text(text))

    def finish(self, done: Done) -> list[dict]:
        return [self._last(done, self.call.answer.close)]

    def end(self) -> list[bytes]:
        return []

    @staticmethod
    def error(body: dict) -> dict:
        return {"error": body["error"]["message"], **{k: v for k, v in body.items() if k != "error"},
                "code": body["error"]["code"]}


class ChatShapes(_Ollama):
    key = "message"


class GenerateShapes(_Ollama):
    key = "response"


def _details(engine: str) -> dict:
    return {"parent_model": "", "format": "fastapply", "family": "fastapply", "families": ["fastapply"],
            "parameter_size": "", "quantization_level": "", "engine": engine}


def tags(names: dict[str, str]) -> dict:
    """`GET /api/tags`: the model names, as Ollama lists its models (the sizes of nothing to download)."""
    return {"models": [{"name": name, "model": name, "modified_at": "1970-01-01T00:00:00Z", "size": 0,
                        "digest": hashlib.sha256(name.encode()).hexdigest(), "details": _details(engine)}
                       for name, engine in names.items()]}


def show(engine: str) -> dict:
    """`POST /api/show`: what Ollama tells of a model, for the engine its name selects. Continue's
    `ollama` provider asks before its first request; it reads a context length from `model_info` and
    stop words from `parameters` when they are there. There is none to give: the merge has no context
    window and the answer stops at the file's end, so both are left out and the client keeps its defaults.
    The template is the prompt as sent (`raw` needs none)."""
    return {"modelfile": f"# fastapply: the {engine} engine; nothing to pull\n", "parameters": "",
            "template": "{{ .Prompt }}", "details": _details(engine),
            "model_info": {"general.architecture": "fastapply"}, "capabilities": ["completion"],
            "modified_at": "1970-01-01T00:00:00Z"}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
