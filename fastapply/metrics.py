"""Prometheus text-format metrics for the gRPC server, served on an optional HTTP port (stdlib only).

    fastapply serve --metrics-port 9464   ->   curl http://127.0.0.1:9464/metrics
"""

from __future__ import annotations

import socket
import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from fastapply.types import ApplyResult

# Request latency histogram buckets, seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

_TYPES = {
    "fastapply_requests_total": ("counter", "ApplyEdit calls received, by method and engine."),
    "fastapply_responses_total": ("counter", "ApplyEdit calls finished, by gRPC status code."),
    "fastapply_errors_total": ("counter", "ApplyEdit calls that failed, by gRPC status code."),
    "fastapply_invalid_results_total": ("counter", "Results returned with an error-level validation finding."),
    "fastapply_output_tokens_total": ("counter", "Output tokens decoded by the model engines."),
    "fastapply_forward_passes_total": ("counter", "Model forward passes (prefill included)."),
    "fastapply_drafted_tokens_total": ("counter", "Draft tokens proposed to the model."),
    "fastapply_accepted_tokens_total": ("counter", "Draft tokens the model accepted."),
    "fastapply_decode_seconds_total": ("counter", "Seconds spent decoding (prefill excluded)."),
    "fastapply_prefill_seconds_total": ("counter", "Seconds spent in prefill."),
    "fastapply_tokens_per_second": ("gauge", "Output tokens per decode second over all model requests so far."),
    "fastapply_acceptance_ratio": ("gauge", "Accepted / drafted tokens over all model requests so far."),
    "fastapply_last_tokens_per_second": ("gauge", "Output tokens per decode second of the last model request."),
    "fastapply_inflight_requests": ("gauge", "ApplyEdit calls being served now."),
    "fastapply_queue_depth": ("gauge", "Model requests waiting for the model."),
    "fastapply_model_loaded": ("gauge", "1 once the model is loaded."),
    "fastapply_request_duration_seconds": ("histogram", "ApplyEdit call latency, by engine."),
}


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    if not labels:
        return ""
    esc = (v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") for _, v in labels)
    return "{" + ",".join(f'{k}="{v}"' for (k, _), v in zip(labels, esc)) + "}"


def _num(x: float) -> str:
    return repr(float(x)) if isinstance(x, float) else str(x)


class Metrics:
    """Thread-safe counters/gauges/histograms; `render()` gives the Prometheus text exposition."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[tuple, float]] = defaultdict(lambda: defaultdict(float))
        self._gauges: dict[str, float] = {"fastapply_inflight_requests": 0, "fastapply_queue_depth": 0,
                                          "fastapply_model_loaded": 0}
        self._hist: dict[tuple, list[float]] = {}  # labels -> bucket counts + [sum, count]
        self.gauge_fns: dict[str, callable] = {}  # name -> callable read at render time

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        with self._lock:
            self._counters[name][tuple(sorted(labels.items()))] += value

    def set(self, name: str, value: float) -> None:
        with self._lock:
            self._gauges[name] = value

    def add(self, name: str, delta: float) -> None:
        with self._lock:
            self._gauges[name] = self._gauges.get(name, 0) + delta

    def observe(self, seconds: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            h = self._hist.setdefault(key, [0.0] * (len(LATENCY_BUCKETS) + 2))
            for i, b in enumerate(LATENCY_BUCKETS):
                if seconds <= b:
                    h[i] += 1
            h[-2] += seconds
            h[-1] += 1

    def counter(self, name: str, **labels: str) -> float:
        with self._lock:
            return self._counters[name].get(tuple(sorted(labels.items())), 0.0)

    # -- what the server records -------------------------------------------------------------
    def request(self, method: str, engine: str) -> None:
        self.inc("fastapply_requests_total", method=method, engine=engine)

    def finished(self, code: str, engine: str, seconds: float) -> None:
        """`code` is the gRPC status name (OK, INVALID_ARGUMENT, ...)."""
        self.inc("fastapply_responses_total", code=code)
        if code != "OK":
            self.inc("fastapply_errors_total", code=code)
        self.observe(seconds, engine=engine)

    def result(self, result: ApplyResult) -> None:
        if not result.ok:
            self.inc("fastapply_invalid_results_total")
        s = result.stats
        if s.forward_passes == 0:
            return
        self.inc("fastapply_output_tokens_total", s.output_tokens)
        self.inc("fastapply_forward_passes_total", s.forward_passes)
        self.inc("fastapply_drafted_tokens_total", s.drafted_tokens)
        self.inc("fastapply_accepted_tokens_total", s.accepted_tokens)
        self.inc("fastapply_decode_seconds_total", s.decode_s)
        self.inc("fastapply_prefill_seconds_total", s.prefill_s)
        self.set("fastapply_last_tokens_per_second", s.tokens_per_s)

    def render(self) -> str:
        with self._lock:
            counters = {k: dict(v) for k, v in self._counters.items()}
            gauges = dict(self._gauges)
            hist = {k: list(v) for k, v in self._hist.items()}
        for name, fn in self.gauge_fns.items():
            gauges[name] = fn()
        out_tok = sum(counters.get("fastapply_output_tokens_total", {}).values())
        dec_s = sum(counters.get("fastapply_decode_seconds_total", {}).values())
        drafted = sum(counters.get("fastapply_drafted_tokens_total", {}).values())
        accepted = sum(counters.get("fastapply_accepted_tokens_total", {}).values())
        gauges["fastapply_tokens_per_second"] = out_tok / dec_s if dec_s > 0 else 0.0
        gauges["fastapply_acceptance_ratio"] = accepted / drafted if drafted else 0.0

        lines: list[str] = []

        def header(name: str) -> None:
            kind, help_ = _TYPES.get(name, ("untyped", name))
            lines.append(f"# HELP {name} {help_}")
            lines.append(f"# TYPE {name} {kind}")

        for name in sorted(set(counters) | {"fastapply_requests_total", "fastapply_errors_total"}):
            header(name)
            series = counters.get(name) or {}
            if not series and name not in ("fastapply_requests_total", "fastapply_errors_total"):
                series = {(): 0.0}
            for labels, v in sorted(series.items()):
                lines.append(f"{name}{_labels(labels)} {_num(v)}")
        for name in sorted(gauges):
            header(name)
            lines.append(f"{name} {_num(gauges[name])}")
        name = "fastapply_request_duration_seconds"
        header(name)
        for labels, h in sorted(hist.items()):
            for i, b in enumerate(LATENCY_BUCKETS):
                lines.append(f"{name}_bucket{_labels(labels + (('le', repr(b)),))} {_num(h[i])}")
            lines.append(f"{name}_bucket{_labels(labels + (('le', '+Inf'),))} {_num(h[-1])}")
            lines.append(f"{name}_sum{_labels(labels)} {_num(h[-2])}")
            lines.append(f"{name}_count{_labels(labels)} {_num(h[-1])}")
        return "\n".join(lines) + "\n"


class _HTTPServer6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class MetricsHTTPServer:
    """GET /metrics on host:port in a daemon thread. `port=0` picks a free port (see `.port`)."""

    def __init__(self, metrics: Metrics, host: str = "127.0.0.1", port: int = 0):
        m = metrics

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server naming)
                if self.path.split("?")[0] not in ("/metrics", "/"):
                    self.send_error(404, "try /metrics")
                    return
                body = m.render().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):  # keep the server's stderr for real problems
                pass

        server_cls = _HTTPServer6 if ":" in host else ThreadingHTTPServer
        self.httpd = server_cls((host.strip("[]"), port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="fastapply-metrics", daemon=True)

    def start(self) -> MetricsHTTPServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
