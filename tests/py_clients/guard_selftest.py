"""The guard's own test for this harness, run as `NO_EGRESS_STRICT=1 python no_egress.py guard_selftest.py`
(loopback refused too): each client library here (the OpenAI SDK fastapply-mcp calls, the Ollama library,
httpx, urllib, a raw socket, asyncio) must be stopped at the gate before it connects to the loopback
server started here, which must see no request. Without NO_EGRESS_STRICT the same libraries reach it,
and a name that is not loopback is still refused before it is looked up. Prints {errors, served} as JSON."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import socket

served = 0


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        global served
        served += 1
        self.send_response(200)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # binding is not connecting: the gate lets it be
threading.Thread(target=server.serve_forever, daemon=True).start()
port = server.server_address[1]
url = f"http://127.0.0.1:{port}"


def openai_sdk():
    import openai

    openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}])


def ollama_lib():
    import ollama

    ollama.Client(host=url).chat(model="m", messages=[{"role": "user", "content": "x"}])


def httpx_client():
    import httpx

    httpx.get(url)


async def asyncio_open():
    await asyncio.open_connection("127.0.0.1", port)


def raw_socket():
    socket.create_connection(("127.0.0.1", port), timeout=5)


def urllib_open():
    urllib.request.urlopen(url, timeout=5)


def other_host():
    socket.getaddrinfo("egress-check.invalid", 443)  # refused before any DNS query leaves


tries = {"other-host": other_host, "openai": openai_sdk, "ollama": ollama_lib, "httpx": httpx_client, "asyncio": lambda: asyncio.run(asyncio_open()),
         "socket": raw_socket, "urllib": urllib_open}
errors = {}
for name, fn in tries.items():
    try:
        fn()
        errors[name] = "CONNECTED"
    except Exception as e:  # the library's own wrapping of the refusal
        cause, seen = e, set()
        while cause is not None and not isinstance(cause, ConnectionRefusedError) and id(cause) not in seen:
            seen.add(id(cause))
            cause = cause.__cause__ or cause.__context__ or (cause.args[0] if cause.args and
                                                            isinstance(cause.args[0], BaseException) else None)
        errors[name] = "ECONNREFUSED" if isinstance(cause, ConnectionRefusedError) or "no_egress" in str(e) else repr(e)
server.shutdown()
print(json.dumps({"errors": errors, "served": served}))
