"""`fastapply serve` and `fastapply client ...`: the gRPC front-end's subcommands (see cli.FRONTENDS)."""

from __future__ import annotations

import argparse
import logging
import sys

from fastapply.api import DEFAULT_ENGINE, DEFAULT_MODEL_BUDGET_S, ENGINES, ApplyError
from fastapply.cli_common import (
    EXIT_FAIL,
    add_apply_output_args,
    add_backend_args,
    add_model_args,
    add_model_budget_arg,
    applier_from_args,
    add_request_args,
    finish_apply,
    print_readings,
    read_apply_inputs,
    wants_stream,
)
from fastapply.fsutil import read_token_file


def register(sub) -> None:
    p = sub.add_parser("serve", help="serve ApplyEdit over gRPC (health, reflection, optional token/TLS)")
    add_model_args(p)
    add_backend_args(p)
    p.add_argument("--host", default="127.0.0.1", help="listen address (default loopback: 127.0.0.1)")
    p.add_argument("--port", type=int, default=50051, help="0 picks a free port (printed at start)")
    p.add_argument("--token-file", default=None, help="require `authorization: Bearer <token in file>` on every call")
    p.add_argument("--tls-cert", default=None, help="PEM certificate chain (with --tls-key)")
    p.add_argument("--tls-key", default=None, help="PEM private key (with --tls-cert)")
    p.add_argument("--no-preload", action="store_true",
                   help="load the model on the first model request, not at start (health is SERVING at once)")
    p.add_argument("--metrics-port", type=int, default=None, help="serve Prometheus metrics on http://HOST:PORT/metrics")
    p.add_argument("--http-port", type=int, default=None,
                   help="also serve the HTTP API (OpenAI chat completions, Relace /v1/code/apply) on HOST:PORT")
    p.add_argument("--http-default-engine", default=DEFAULT_ENGINE, choices=ENGINES,
                   help="the engine HTTP requests get for the model names clients send (morph-v3-large, "
                        f"fastapply-1.5b, codellama:7b, any name that is not fastapply-ENGINE) or no model "
                        f"(default {DEFAULT_ENGINE}); `structural` never loads a model")
    p.add_argument("--strict-model-names", action="store_true",
                   help="refuse (400) an HTTP request whose model is not one of fastapply's names or the "
                        "hosted services' (morph-v3-large, ...) instead of answering it with the default engine")
    add_model_budget_arg(p, f"a request's own model_budget_s wins; default {DEFAULT_MODEL_BUDGET_S:g}")
    p.add_argument("--max-queue", type=int, default=32,
                   help="model requests allowed to wait for the model; more get RESOURCE_EXHAUSTED (default 32)")
    p.add_argument("--workers", type=int, default=64, help="threads = most concurrent calls (default 64)")
    p.add_argument("--max-request-mb", type=float, default=16.0, help="largest request message in MiB (default 16)")
    p.add_argument("--grace", type=float, default=30.0, help="seconds to drain in-flight calls on SIGTERM (default 30)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every call")
    p.set_defaults(func=cmd_serve)

    c = sub.add_parser("client", help="call a fastapply gRPC server")
    csub = c.add_subparsers(dest="client_command", required=True)
    a = csub.add_parser("apply", help="apply an update snippet to FILE on a server; print the merged file")
    add_apply_output_args(a)
    _add_conn_args(a)
    add_request_args(a)
    a.set_defaults(func=cmd_client_apply)
    h = csub.add_parser("health", help="print the server's health status (exit 1 unless SERVING)")
    _add_conn_args(h)
    h.add_argument("--service", default="", help="service name (default: the whole server)")
    h.set_defaults(func=cmd_client_health)


def _add_conn_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--server", default="127.0.0.1:50051", help="HOST:PORT (default 127.0.0.1:50051)")
    p.add_argument("--token-file", default=None, help="file holding the server's bearer token")
    p.add_argument("--tls-ca", default=None, help="CA certificate (PEM) to verify the server; enables TLS")
    p.add_argument("--timeout", type=float, default=None, help="deadline in seconds")


def _read_file(path: str | None, what: str) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ApplyError("invalid_argument", f"cannot read {what} {path!r}: {e.strerror}") from None


def cmd_serve(args) -> int:
    from fastapply.server import FastApplyServer, is_loopback, serve_until_signal

    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    if (args.tls_cert is None) != (args.tls_key is None):
        raise ApplyError("usage", "--tls-cert and --tls-key go together")
    token = read_token_file(args.token_file) if args.token_file else None
    applier = applier_from_args(args)
    if args.backend != "hf" and not args.no_preload:
        # vLLM loads in the foreground: a model it cannot load stops the server before it listens.
        applier.model  # noqa: B018 (loads it)
    if not is_loopback(args.host) and not token:
        logging.getLogger("fastapply.server").warning(
            "listening on %s without --token-file: anyone who can reach it can use the model", args.host)
    server = FastApplyServer(
        host=args.host, port=args.port, token=token,
        tls_cert=_read_file(args.tls_cert, "TLS certificate"), tls_key=_read_file(args.tls_key, "TLS key"),
        max_queue=args.max_queue, workers=args.workers, max_request_bytes=int(args.max_request_mb * 1024 * 1024),
        preload=not args.no_preload, metrics_port=args.metrics_port, applier=applier)
    http = _attach_http(server, args, token) if args.http_port is not None else None

    def started(s):
        extra = f", HTTP on {http.url}" if http is not None else ""
        extra += f", metrics on http://{s.host}:{s.metrics_port}/metrics" if s.metrics_port is not None else ""
        print(f"fastapply: serving on {s.address} ({'TLS' if s.tls else 'plaintext'}"
              f"{', token required' if token else ''}){extra}", file=sys.stderr, flush=True)

    try:
        return serve_until_signal(server, grace=args.grace, on_started=started)
    finally:
        applier.close()


def _attach_http(server, args, token):
    from fastapply.httpapi.server import attach_http
    from fastapply.httpapi.usage import TokenCounter

    counter = TokenCounter(args.model)
    counter.warm()  # the tokenizer that counts model-free answers' usage loads meanwhile
    return attach_http(server, args.http_port, token=token, max_body_bytes=int(args.max_request_mb * 1024 * 1024),
                       counter=counter, tls_cert_file=args.tls_cert, tls_key_file=args.tls_key,
                       default_engine=args.http_default_engine, strict_model_names=args.strict_model_names)


def _remote(args):
    from fastapply.remote import RemoteApplier

    token = read_token_file(args.token_file) if args.token_file else None
    # No queue-full retries: a command-line call reports the refusal at once.
    return RemoteApplier(args.server, token=token, tls_ca=args.tls_ca, timeout=args.timeout, queue_full_retries=0)


def cmd_client_health(args) -> int:
    with _remote(args) as remote:
        status = remote.client.health(args.service, timeout=args.timeout or 5.0)
    print(status)
    return 0 if status == "SERVING" else EXIT_FAIL


def cmd_client_apply(args) -> int:
    src, req = read_apply_inputs(args)
    with _remote(args) as remote:
        try:
            events = remote.apply_stream(req) if wants_stream(args) else [remote.apply(req)]
            return finish_apply(args, src, events)
        except ApplyError as e:  # the server's readings (rebuilt from their diffs where it left the files out)
            if args.show_readings and e.readings:
                print_readings(src.text, args.file, e.readings)
            raise
