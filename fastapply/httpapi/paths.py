"""Forgiving request paths: the base-URL slips clients make answer like the route they meant.

Morph's SDK appends `/v1/chat/completions` to `morphApiUrl`, so an origin written with a trailing
slash asks for `//v1/chat/completions`, and one written with `/v1` asks for `/v1/v1/...`. Both are
routed as `/v1/...` (`canonical_path`). Relace documents its OpenAI-compatible apply endpoint as the
base URL `https://instantapply.endpoint.relace.run/v1/apply` (docs.relace.ai, "Apply Code"): a
client that swaps only the host asks for `/v1/apply/chat/completions` (and `/v1/apply/models`),
routed as `/v1/chat/completions` (`/v1/models`). Any other miss near a route is a 404 whose message
names the route and the base URL each kind of client wants (`route_hint`).
"""

from __future__ import annotations

import re
from urllib.parse import quote

ROUTES = ("/v1/chat/completions", "/v1/completions", "/v1/code/apply", "/v1/models", "/api/chat", "/api/generate",
          "/api/tags", "/api/show", "/api/version")
_SLASHES = re.compile(r"/{2,}")
_DOUBLED_V1 = re.compile(r"^(?:/v1)+(?=/)")
# Relace's OpenAI-compatible base, `.../v1/apply`: its routes are the OpenAI ones.
_RELACE_OPENAI_BASE = re.compile(r"^/v1/apply(?=/(?:chat/completions|models)/?$)")


def canonical_path(path: str) -> str:
    """`//v1/x` and `/v1/v1/x` -> `/v1/x`; `/v1/apply/chat/completions` (Relace's OpenAI-compatible
    base) -> `/v1/chat/completions`, `/v1/apply/models` -> `/v1/models`; other paths unchanged but
    for doubled slashes."""
    return _RELACE_OPENAI_BASE.sub("/v1", _DOUBLED_V1.sub("/v1", _SLASHES.sub("/", path)))


def route_hint(path: str) -> str:
    """For a 404: the route the client probably meant, and how to write its base URL ("" if none)."""
    for route in ROUTES:
        tail = route[route.index("/", 1):]
        if path.rstrip("/").endswith(tail):
            return (f"; this server answers {route}: OpenAI clients take the base URL http://HOST:PORT/v1 "
                    "(or Relace's http://HOST:PORT/v1/apply), Relace's SDK (RELACE_BASE_URL) http://HOST:PORT/v1, "
                    "Morph's SDK (morphApiUrl) and MCP server (MORPH_API_URL) and Ollama clients (OLLAMA_HOST) the bare "
                    "origin http://HOST:PORT")
    return ""


class ForgivingPaths:
    """ASGI middleware: routes each HTTP request by its `canonical_path`."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            path = canonical_path(scope["path"])
            if path != scope["path"]:
                scope = dict(scope, path=path, raw_path=quote(path).encode("ascii"))
        await self.app(scope, receive, send)
