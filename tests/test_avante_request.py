"""avante.nvim's fast-apply request, sent with real curl, against a live `fastapply serve --http-port`.

avante.nvim's Lua cannot run here (it is neither committed nor fetched at test time), so its request is
reproduced from its pinned source: yetone/avante.nvim at a9334315e05ac750985c7d0b391e360e36e0278e
(`git describe`: release-v0.2-4-ga9334315; `lua/avante/llm_tools/edit_file.lua` last changed in
657b418c, 2025-08-02). Its `edit_file` tool (agentic mode, `behaviour.enable_fastapply`) reads the file
(CRLF made LF, the final newline dropped), JSON-encodes `{model, messages: [{role: "user", content:
"<instructions>…</instructions>\\n<code>…</code>\\n<update>…</update>"}]}` into a temporary file with
`vim.fn.writefile` (one line, then a newline), and runs

    curl -X POST -H "Authorization: Bearer KEY" -H "Content-Type: application/json" -d @BODYFILE
         --fail --show-error --verbose --connect-timeout 30 --max-time 120 ENDPOINT/chat/completions

then hands `choices[1].message.content` to its str_replace tool. `evals.http_clients.avante_request`
builds the same body and arguments; the answer is compared byte for byte with the case's expected file
without its final newline (what avante sent had none). The server is the structural engine alone.
"""

from __future__ import annotations

import subprocess

import pytest
from test_grpc import wait_until
from test_relace_client import ORIG, TOKEN, UPDATE, inflight, slow_server, structural_server

from evals.http_clients import STRUCTURAL, avante_command_for, avante_request, reference


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if subprocess.run(["curl", "--version"], capture_output=True).returncode != 0:
        pytest.skip("curl is not installed")
    root = tmp_path_factory.mktemp("avante")
    with structural_server(root) as (server, cases):
        runs = [avante_request(server.url + "/v1", TOKEN, case.original, case.update, STRUCTURAL) for case in cases]
        yield {"cases": cases, "runs": runs}


def test_every_answered_case_comes_back_exact(run):
    answered = [(c, r) for c, r in zip(run["cases"], run["runs"], strict=True) if c.expected is not None]
    assert len(answered) == 8
    for case, r in answered:
        assert r.returncode == 0, (case.id, r.stderr[-500:])
        assert r.content() == reference(case, "avante"), case.id  # byte for byte


def test_a_refusal_reaches_avante_without_its_reasons_and_its_error_text_holds_the_token(run):
    """The traps of avante's curl flags: `--fail` drops the 422 body (the agent never sees what to
    resend), and `--verbose` puts the request headers, the token included, into the text avante hands
    its chat model on any failure (with the command line, which holds the token too)."""
    refused = [(c, r) for c, r in zip(run["cases"], run["runs"], strict=True) if c.expected is None]
    assert len(refused) == 2
    for case, r in refused:
        assert r.returncode == 22 and r.stdout == "", case.id  # curl's exit code for an HTTP error under --fail
        assert "The requested URL returned error: 422" in r.stderr
        assert "Resend" not in r.stderr and "structural merge refused" not in r.stderr
        assert f"Authorization: Bearer {TOKEN}" in r.stderr and f"Authorization: Bearer {TOKEN}" in r.command


def test_curl_tries_no_host_but_loopback(run):
    hosts = {h for r in run["runs"] for h in r.hosts_tried()}
    assert hosts == {"127.0.0.1"}


def test_a_curl_that_goes_away_ends_its_request_on_the_server(tmp_path):
    """avante's curl stopped while the server serves its request (Neovim closed, or `--max-time`):
    the request's merge saw should_stop(), and the in-flight gauge is back to 0."""
    with slow_server() as (srv, http, applier):
        cmd = avante_command_for(http.url + "/v1", TOKEN, ORIG, UPDATE, "morph-v3-large", tmp_path)
        curl = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_until(lambda: inflight(srv) >= 1, 30.0), "the request never reached the server"
        finally:
            curl.kill()
            curl.wait(10)
        assert wait_until(lambda: len(applier.stops) >= 1, 10.0), "the merge went on after curl went away"
        assert wait_until(lambda: inflight(srv) == 0, 10.0)
        assert wait_until(lambda: srv.metrics.counter("fastapply_responses_total", code="CANCELLED") == 1, 10.0)
