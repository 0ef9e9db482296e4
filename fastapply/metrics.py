"""Prometheus metrics for the gRPC and HTTP front-ends (prometheus_client), served on an optional port.

    fastapply serve --metrics-port 9464   ->   curl http://127.0.0.1:9464/metrics

Each `Metrics` has its own `CollectorRegistry`, not the process-wide one, so that several servers in
one process (the tests) and vLLM's own metrics never share a series. The registry also carries the
client's process, platform and garbage-collector collectors (`process_*`, `python_*`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
    start_http_server,
)

from fastapply.types import ApplyResult

# Request latency histogram buckets, seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

# name -> (type, help, label names). Label names in sorted order: the exposition keeps this order, and
# scrapers and tests written against the hand-made format before prometheus_client expect it.
_TYPES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "fastapply_requests_total": ("counter", "ApplyEdit calls received, by method and engine.", ("engine", "method")),
    "fastapply_responses_total": ("counter", "ApplyEdit calls finished, by gRPC status code.", ("code",)),
    "fastapply_errors_total": ("counter", "ApplyEdit calls that failed, by gRPC status code.", ("code",)),
    "fastapply_invalid_results_total": ("counter", "Results returned with an error-level validation finding.", ()),
    "fastapply_output_tokens_total": ("counter", "Output tokens decoded by the model engines.", ()),
    "fastapply_forward_passes_total": ("counter", "Model forward passes (prefill included).", ()),
    "fastapply_drafted_tokens_total": ("counter", "Draft tokens proposed to the model.", ()),
    "fastapply_accepted_tokens_total": ("counter", "Draft tokens the model accepted.", ()),
    "fastapply_decode_seconds_total": ("counter", "Seconds spent decoding (prefill excluded).", ()),
    "fastapply_prefill_seconds_total": ("counter", "Seconds spent in prefill.", ()),
    "fastapply_tokens_per_second": ("gauge", "Output tokens per decode second over all model requests so far.", ()),
    "fastapply_acceptance_ratio": ("gauge", "Accepted / drafted tokens over all model requests so far.", ()),
    "fastapply_last_tokens_per_second": ("gauge", "Output tokens per decode second of the last model request.", ()),
    "fastapply_inflight_requests": ("gauge", "ApplyEdit calls being served now.", ()),
    "fastapply_queue_depth": ("gauge", "Model requests waiting for the model.", ()),
    "fastapply_model_loaded": ("gauge", "1 once the model is loaded.", ()),
    "fastapply_request_duration_seconds": ("histogram", "ApplyEdit call latency, by engine.", ("engine",)),
}


def _new_metric(name: str, registry: CollectorRegistry) -> Counter | Gauge | Histogram:
    kind, help_, labels = _TYPES[name]
    if kind == "histogram":
        return Histogram(name, help_, labels, registry=registry, buckets=LATENCY_BUCKETS)
    return (Counter if kind == "counter" else Gauge)(name, help_, labels, registry=registry)


@dataclass
class _ModelTotals:
    """Sums behind the two ratio gauges (a Counter's value has no public reader)."""

    output_tokens: int = 0
    decode_s: float = 0.0
    drafted: int = 0
    accepted: int = 0


class _GaugeFunctions(dict):
    """`metrics.gauge_fns[name] = fn`: the gauge reads fn() at each scrape."""

    def __init__(self, metrics: Metrics):
        super().__init__()
        self._metrics = metrics

    def __setitem__(self, name: str, fn: Callable[[], float]) -> None:
        super().__setitem__(name, fn)
        self._metrics.metric(name).set_function(fn)


class Metrics:
    """The servers' counters, gauges and latency histogram, by the names in `_TYPES`."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        self._metrics = {name: _new_metric(name, self.registry) for name in _TYPES}
        self._lock = threading.Lock()  # guards _totals and the ratio gauges computed from them
        self._totals = _ModelTotals()
        self.gauge_fns: dict[str, Callable[[], float]] = _GaugeFunctions(self)

    def metric(self, name: str) -> Counter | Gauge | Histogram:
        try:
            return self._metrics[name]
        except KeyError:
            raise KeyError(f"add {name!r} to fastapply.metrics._TYPES first (name, type, help, labels)") from None

    def _series(self, name: str, labels: dict[str, str]):
        m = self.metric(name)
        return m.labels(**labels) if labels else m

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        self._series(name, labels).inc(value)

    def set(self, name: str, value: float) -> None:
        self.metric(name).set(value)

    def add(self, name: str, delta: float) -> None:
        self.metric(name).inc(delta)

    def observe(self, seconds: float, **labels: str) -> None:
        self._series("fastapply_request_duration_seconds", labels).observe(seconds)

    def counter(self, name: str, **labels: str) -> float:
        """A counter's value now (0 for a series never counted)."""
        return self.registry.get_sample_value(name, labels) or 0.0

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
        with self._lock:  # the ratios of the sums, set under one lock so concurrent results cannot interleave
            t = self._totals
            t.output_tokens += s.output_tokens
            t.decode_s += s.decode_s
            t.drafted += s.drafted_tokens
            t.accepted += s.accepted_tokens
            self.set("fastapply_tokens_per_second", t.output_tokens / t.decode_s if t.decode_s > 0 else 0.0)
            self.set("fastapply_acceptance_ratio", t.accepted / t.drafted if t.drafted else 0.0)

    def render(self) -> str:
        """The Prometheus text exposition (what the metrics port serves)."""
        return generate_latest(self.registry).decode()


class MetricsHTTPServer:
    """GET /metrics (any path) on host:port, from prometheus_client's server in a daemon thread.
    `port=0` picks a free port (see `.port`). It listens from construction: the port is known then."""

    def __init__(self, metrics: Metrics, host: str = "127.0.0.1", port: int = 0):
        self.httpd, self._thread = start_http_server(port, host.strip("[]"), registry=metrics.registry)
        self.port = self.httpd.server_port

    def start(self) -> MetricsHTTPServer:
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
