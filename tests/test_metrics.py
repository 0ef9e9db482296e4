"""The metrics port of a real gRPC server (structural engine, no model), read back with
prometheus_client's own parser: the families, their types and labels, and counters that move."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fastapply.api import Applier, ApplyError
from fastapply.client import FastApplyClient
from fastapply.metrics import LATENCY_BUCKETS, Metrics
from fastapply.server import FastApplyServer
from fastapply.types import ApplyResult, Stats

ORIGINAL = "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"
UPDATE = "def f(x):\n    return x + 2\n\n\n# ... existing code ...\n"
EXPECTED = "def f(x):\n    return x + 2\n\n\ndef g(y):\n    return y * 2\n"

# family (the parser drops a counter's `_total`) -> (type, label names of its main samples)
FAMILIES = {
    "fastapply_requests": ("counter", {"engine", "method"}),
    "fastapply_responses": ("counter", {"code"}),
    "fastapply_errors": ("counter", {"code"}),
    "fastapply_invalid_results": ("counter", set()),
    "fastapply_output_tokens": ("counter", set()),
    "fastapply_forward_passes": ("counter", set()),
    "fastapply_drafted_tokens": ("counter", set()),
    "fastapply_accepted_tokens": ("counter", set()),
    "fastapply_decode_seconds": ("counter", set()),
    "fastapply_prefill_seconds": ("counter", set()),
    "fastapply_tokens_per_second": ("gauge", set()),
    "fastapply_acceptance_ratio": ("gauge", set()),
    "fastapply_last_tokens_per_second": ("gauge", set()),
    "fastapply_inflight_requests": ("gauge", set()),
    "fastapply_queue_depth": ("gauge", set()),
    "fastapply_model_loaded": ("gauge", set()),
    "fastapply_request_duration_seconds": ("histogram", {"engine"}),
}


@pytest.fixture(scope="module")
def server():
    srv = FastApplyServer(Applier(), host="127.0.0.1", port=0, preload=False, metrics_port=0).start()
    try:
        yield srv
    finally:
        srv.stop(grace=0).wait(10)


def scrape(srv: FastApplyServer) -> dict:
    """family name -> parsed family, from the server's metrics port."""
    body = urllib.request.urlopen(f"http://127.0.0.1:{srv.metrics_port}/metrics", timeout=5).read().decode()
    return {f.name: f for f in text_string_to_metric_families(body)}


def value(families: dict, sample: str, **labels: str) -> float:
    """A sample's value (0 for a series not there yet: a counter never counted)."""
    family = families[sample.removesuffix("_total").removesuffix("_count").removesuffix("_sum")]
    return next((s.value for s in family.samples if s.name == sample and s.labels == labels), 0.0)


def test_every_family_with_its_type_help_and_labels(server):
    with FastApplyClient(server.address) as cl:
        assert cl.apply(ORIGINAL, UPDATE, language="python", engine="structural").merged == EXPECTED
    families = scrape(server)
    for name, (kind, labels) in FAMILIES.items():
        assert name in families, f"{name} missing from the scrape"
        fam = families[name]
        assert fam.type == kind, (name, fam.type)
        assert fam.documentation, name
        main = [s for s in fam.samples if not s.name.endswith("_created")]
        assert all(set(s.labels) - {"le"} == labels for s in main), (name, main)
    buckets = [s.labels["le"] for s in families["fastapply_request_duration_seconds"].samples
               if s.name.endswith("_bucket") and s.labels["engine"] == "structural"]
    assert buckets == [repr(b) for b in LATENCY_BUCKETS] + ["+Inf"]
    # the process metrics come with prometheus_client's collectors
    assert families["process_cpu_seconds"].type == "counter"
    assert "python_info" in families


def test_a_request_moves_the_counters(server):
    before = scrape(server)
    with FastApplyClient(server.address) as cl:
        cl.apply(ORIGINAL, UPDATE, language="python", engine="structural")
        with pytest.raises(ApplyError):
            cl.apply("x = 1\n", " ", engine="structural")  # an empty snippet: INVALID_ARGUMENT
    after = scrape(server)

    def moved(sample: str, **labels: str) -> float:
        return value(after, sample, **labels) - value(before, sample, **labels)

    assert moved("fastapply_requests_total", engine="structural", method="ApplyEdit") == 2
    assert moved("fastapply_responses_total", code="OK") == 1
    assert moved("fastapply_responses_total", code="INVALID_ARGUMENT") == 1
    assert moved("fastapply_errors_total", code="INVALID_ARGUMENT") == 1
    assert moved("fastapply_errors_total", code="OK") == 0  # a success is no error
    assert moved("fastapply_request_duration_seconds_count", engine="structural") == 2
    assert moved("fastapply_request_duration_seconds_sum", engine="structural") > 0
    assert value(after, "fastapply_inflight_requests") == 0
    assert value(after, "fastapply_queue_depth") == 0
    assert value(after, "fastapply_model_loaded") == 0  # preload=False, structural only: never loaded
    assert moved("fastapply_output_tokens_total") == 0  # no model ran
    assert server.metrics.counter("fastapply_errors_total", code="INVALID_ARGUMENT") == value(
        after, "fastapply_errors_total", code="INVALID_ARGUMENT")


def test_model_results_feed_the_totals_and_their_ratios():
    m = Metrics()
    first = Stats(output_tokens=30, forward_passes=5, drafted_tokens=40, accepted_tokens=25, decode_s=2.0)
    last = Stats(output_tokens=10, forward_passes=2, drafted_tokens=10, accepted_tokens=5, decode_s=2.0)
    m.result(ApplyResult("x", "speculative", "python", first))
    m.result(ApplyResult("x", "speculative", "python", last))
    m.result(ApplyResult("x", "structural", "python"))  # no forward pass: not a model request
    fams = {f.name: f for f in text_string_to_metric_families(m.render())}
    assert value(fams, "fastapply_output_tokens_total") == 40
    assert value(fams, "fastapply_forward_passes_total") == 7
    assert value(fams, "fastapply_tokens_per_second") == 10.0  # 40 tokens / 4 s
    assert value(fams, "fastapply_acceptance_ratio") == 0.6  # 30 / 50
    assert value(fams, "fastapply_last_tokens_per_second") == 5.0  # the last model request's 10 / 2 s


def test_two_servers_in_one_process_keep_their_own_series():
    """Each Metrics has its own registry: a second one neither collides nor sees the first's counts."""
    a, b = Metrics(), Metrics()
    a.request("ApplyEdit", "structural")
    assert a.counter("fastapply_requests_total", engine="structural", method="ApplyEdit") == 1
    assert b.counter("fastapply_requests_total", engine="structural", method="ApplyEdit") == 0
    b.gauge_fns["fastapply_queue_depth"] = lambda: 7
    assert b.registry.get_sample_value("fastapply_queue_depth") == 7
    assert a.registry.get_sample_value("fastapply_queue_depth") == 0
