"""The Python clients of open apply models, unmodified, against a live `fastapply serve --http-port` on
127.0.0.1 (structural engine, no model), each on its own copy of the file on disk:

- fastapply-mcp 1.1.1 (PyPI), its MCP tool `call_tool("fast_apply_edit", ...)`: the Kortix FastApply
  prompt with both blocks XML-escaped, through the OpenAI SDK, `FAST_APPLY_MODEL` left at its default
  `fastapply-1.5b` (a name the server does not know: the default engine answers). It requires the
  answer inside <updated-code> (it raises without), unescapes and strips it, and splices it over the
  `original_code` section it was given in the file. The package says Requires-Python >=3.13; it is
  installed here with --ignore-requires-python and runs on the project's 3.11.
- Osmosis-Apply-1.7B's MCP server, as it calls the Ollama Python library 0.6.3: `/api/chat`, not
  streamed, the assistant prefilled with `<code>`, to which it prepends `<code>` itself before it cuts
  the file out up to `</code>` and replaces the stripped original in the file by the stripped answer.

They run in tests/py_clients (its own environment, `make py-clients-deps`: the MCP SDK 1.x that
fastapply-mcp needs, beside the 2.x of the project's) under tests/py_clients/no_egress.py, which refuses
and records every connection but to loopback. Cases: the ten of the other client tests
(`evals.http_clients.pick_cases`, eight answered, two refused); a file on disk is compared byte for byte
with what the client makes of the expected file (`evals.http_clients.reference`: on these cases, the
expected file itself), and a refused case must leave the file untouched.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from test_relace_client import TOKEN, structural_server

from evals.http_clients import PY_CLIENT_PYTHON, PY_CLIENTS, PY_HARNESS, py_harness_ready, py_job, reference, \
    run_py_harness
from evals.morph_clients import egress_attempts


def ensure_py_harness() -> None:
    why = py_harness_ready()
    if why is not None:
        pytest.skip(why)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    ensure_py_harness()
    root = tmp_path_factory.mktemp("py-clients")
    with structural_server(root) as (server, cases):
        jobs = [py_job(client, case, f"{client}:{i}") for i, case in enumerate(cases) for client in PY_CLIENTS]
        jobs.append({"id": "discovery", "client": "ollama-discovery", "model": "Osmosis/Osmosis-Apply-1.7B"})
        out = run_py_harness(server.url, TOKEN, jobs, root / "egress.jsonl")
        yield {"cases": cases, "results": {r["id"]: r for r in out["results"]},
               "egress": egress_attempts(root / "egress.jsonl")}


@pytest.mark.parametrize("client", PY_CLIENTS)
def test_every_answered_case_is_exact_on_disk(run, client):
    answered = [(i, c) for i, c in enumerate(run["cases"]) if c.expected is not None]
    assert len(answered) == 8
    for i, case in answered:
        res = run["results"][f"{client}:{i}"]
        assert res["ok"], (case.id, res.get("error"), res.get("reply"))
        assert res["disk"] == reference(case, client) == case.expected, case.id  # byte for byte


@pytest.mark.parametrize("client", PY_CLIENTS)
def test_a_refused_case_fails_in_the_client_and_leaves_the_file_untouched(run, client):
    refused = [(i, c) for i, c in enumerate(run["cases"]) if c.expected is None]
    assert len(refused) == 2
    for i, case in refused:
        res = run["results"][f"{client}:{i}"]
        assert not res["ok"] and res["disk"] == case.original, case.id
        shown = res["reply"] if client == "fastapply-mcp" else res["error"]["message"]
        assert "Resend" in shown and "structural merge refused" in shown, shown  # what to resend reaches the agent


def test_ollamas_library_discovers_the_models(run):
    """ollama.list() and ollama.show() parse the server's answers into the library's own types; a name
    the server does not know shows the default engine's model (Continue's `ollama` provider asks first)."""
    res = run["results"]["discovery"]
    assert res["ok"], res.get("error")
    assert {"fastapply-structural", "fastapply-auto"} <= set(res["models"])
    assert res["family"] == "fastapply" and res["template"] == "{{ .Prompt }}"
    assert res["capabilities"] == ["completion"] and res["model_info"] == {"general.architecture": "fastapply"}


def test_the_clients_reach_no_host_but_loopback(run):
    assert run["egress"] == []


def test_the_guard_stops_these_client_libraries_before_they_connect():
    ensure_py_harness()
    env = {**os.environ, "NO_EGRESS_STRICT": "1"}  # loopback refused too: every library goes through the gate
    proc = subprocess.run([str(PY_CLIENT_PYTHON), "no_egress.py", "guard_selftest.py"], cwd=PY_HARNESS, env=env,
                          capture_output=True, text=True, timeout=120)
    got = json.loads(proc.stdout)
    libraries = ("openai", "ollama", "httpx", "asyncio", "socket", "urllib")
    assert got == {"errors": dict.fromkeys(("other-host", *libraries), "ECONNREFUSED"), "served": 0}, proc.stderr[-2000:]
    # the guard as the clients run under it: loopback goes through, another host does not
    proc = subprocess.run([str(PY_CLIENT_PYTHON), "no_egress.py", "guard_selftest.py"], cwd=PY_HARNESS,
                          capture_output=True, text=True, timeout=120)
    got = json.loads(proc.stdout)
    assert got["errors"]["other-host"] == "ECONNREFUSED" and got["served"] >= 3, got
    assert "no_egress: refused a connection to egress-check.invalid:443" in proc.stderr
