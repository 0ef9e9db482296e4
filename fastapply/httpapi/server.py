"""Serve the HTTP app with uvicorn in a thread of the gRPC server's process, started and stopped with it.

    server = FastApplyServer(...)                    # the gRPC server: applier, queue, metrics, health
    http = attach_http(server, port=8000, token=t)   # same applier, queue, metrics, token, health
    server.start()                                   # starts both; server.stop(grace) drains both
"""

from __future__ import annotations

import socket
import threading
import time

import uvicorn

from fastapply.api import DEFAULT_ENGINE, ApplyError
from fastapply.httpapi.app import DEFAULT_MAX_BODY_BYTES, HTTPState, create_app
from fastapply.httpapi.usage import TokenCounter

STARTUP_TIMEOUT_S = 30.0


class HTTPServer:
    """uvicorn on a socket bound at construction (so a busy port fails at once); `port=0` picks one."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0, *, tls_cert_file: str | None = None,
                 tls_key_file: str | None = None):
        self.host = host
        self._sock = _bind(host, port)
        self.port = self._sock.getsockname()[1]
        self.tls = tls_cert_file is not None
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                ssl_certfile=tls_cert_file, ssl_keyfile=tls_key_file)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]},
                                        name="fastapply-http", daemon=True)
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def start(self) -> HTTPServer:
        self._thread.start()
        end = time.monotonic() + STARTUP_TIMEOUT_S
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > end:
                raise ApplyError("unavailable", f"the HTTP server on {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self, grace: float | None = 30.0) -> threading.Event:
        """Stop taking requests; give in-flight ones `grace` seconds, then cancel them (their merge stops)."""
        self.server.config.timeout_graceful_shutdown = grace
        self.server.should_exit = True

        def finish():
            if self._thread.is_alive():
                self._thread.join()
            self._sock.close()
            self._stopped.set()

        threading.Thread(target=finish, name="fastapply-http-stop", daemon=True).start()
        return self._stopped

    def wait(self, timeout: float | None = None) -> bool:
        return self._stopped.wait(timeout)


def _bind(host: str, port: int) -> socket.socket:
    bare = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in bare else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bare, port))
    except OSError as e:
        sock.close()
        raise ApplyError("unavailable", f"cannot listen for HTTP on {host}:{port}: {e.strerror}") from None
    return sock


def attach_http(grpc_server, port: int = 0, *, token: str | None = None,
                max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, counter: TokenCounter | None = None,
                tls_cert_file: str | None = None, tls_key_file: str | None = None,
                default_engine: str = DEFAULT_ENGINE, strict_model_names: bool = False) -> HTTPServer:
    """An HTTP front-end on `grpc_server`'s host, over its applier, model queue, metrics and health;
    it starts and stops with the gRPC server (its `companions`). `counter` counts the usage of
    model-free (structural) answers; without one they carry no `usage`. `default_engine` is what
    the model names clients already send (morph-v3-large, ...), any name that is not ours and a missing
    `model` select; `strict_model_names` refuses a name that is not ours instead."""
    state = HTTPState(grpc_server.applier, grpc_server.queue, grpc_server.metrics, token=token,
                      serving=lambda: grpc_server.serving, counter=counter, max_body_bytes=max_body_bytes,
                      default_engine=default_engine, strict_model_names=strict_model_names)
    http = HTTPServer(create_app(state), grpc_server.host, port, tls_cert_file=tls_cert_file,
                      tls_key_file=tls_key_file)
    grpc_server.companions.append(http)
    return http
