"""Morph's own clients, unmodified, against a live `fastapply serve --http-port` on 127.0.0.1.

`@morphllm/morphsdk` 0.2.196 (`applyEdit`; `FastApplyClient.execute`, i.e. `executeEditFile`, which
reads and writes the file) and `@morphllm/morphmcp` 0.8.213's `edit_file` tool over stdio, called
by `@modelcontextprotocol/sdk` 1.32.2's client, all driven by tests/morph_clients/run.mjs in one
node process (installed by `npm ci` from the committed lockfile: `make morph-clients-deps`). The
server is the structural engine alone (`--http-default-engine structural`): no model loads.

Files on disk are compared byte for byte. No connection leaves loopback: node runs under
tests/morph_clients/no_egress.cjs, which refuses and records every other connection (the MCP server
posts each failed edit to https://morphllm.com/api/error-report); the test asserts which were tried.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import node_harness
import pytest

from evals.morph_clients import (
    HARNESS,
    egress_attempts,
    harness_ready,
    http_apply,
    pad_large,
    read_exact,
    run_clients,
    serve_structural,
    write_exact,
)
from fastapply.api import Applier, ApplyRequest

SHARED = Path(__file__).resolve().parents[1] / "evals" / "cases"
TOKEN = "sk-fastapply-test-token"  # the MCP server takes keys that start with sk- or morph-
CODE_INSTRUCTION = "I apply the snippet inside the <code> block."
MAX_REQUEST_MB = 0.5  # the large (compacted) file fits; the oversized one does not
EXT = {"python": ".py", "go": ".go", "rust": ".rs", "java": ".java", "javascript": ".js", "typescript": ".ts",
       "tsx": ".tsx"}


def _ensure_harness() -> None:
    node_harness.ensure(HARNESS, harness_ready)


def _cases() -> list[dict]:
    """Shared cases of several languages, the first of each language in file order."""
    path = SHARED / "commits_dev.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not found")
    seen, out = set(), []
    for line in path.read_text().splitlines():
        case = json.loads(line)
        if case["language"] in EXT and case["language"] not in seen and len(case["original"]) < 20_000:
            seen.add(case["language"])
            out.append(case)
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Every client job of this module, in one node process against one server; the outcome."""
    _ensure_harness()
    root = tmp_path_factory.mktemp("morph")
    (root / "token").write_text(TOKEN + "\n")
    with serve_structural("--token-file", str(root / "token"), "--max-request-mb", str(MAX_REQUEST_MB)) as server:
        jobs, want = _jobs(server.url, root)
        out = run_clients(server.url, TOKEN, root, jobs, root / "egress.jsonl")
        yield {"root": root, "want": want, "results": {r["id"]: r for r in out["results"]}, "out": out,
               "egress": egress_attempts(root / "egress.jsonl"), "log": server.log}


def _jobs(url: str, root: Path) -> tuple[list[dict], dict]:
    """The jobs, and what each must leave: {"id": (merged or None for a refusal, path or None, original)}."""
    jobs, want = [], {}

    def add(name: str, case: dict, client: str, instruction: str, expect: str | None, **extra) -> None:
        job = {"id": f"{name}:{client}", "client": client, "update": case["update"], "instruction": instruction, **extra}
        path = None
        if client == "sdk-apply":
            job["original"] = case["original"]
        else:
            path = root / client / f"{name}{EXT.get(case['language'], '.txt')}"
            write_exact(path, case["original"])
            job["path"] = str(path)
        jobs.append(job)
        want[job["id"]] = (expect, path, case["original"])

    for i, case in enumerate(_cases()):
        instruction = CODE_INSTRUCTION if i % 2 else "I apply the update snippet."
        for client in ("sdk-apply", "sdk-execute", "mcp"):
            add(f"case{i}", case, client, instruction, _reference(case))
    large = pad_large(_cases()[0])
    assert len(large["original"]) >= 128 * 1024
    r = http_apply(url, large["original"], large["update"], CODE_INSTRUCTION, TOKEN)
    assert r.status_code == 200
    for client in ("sdk-apply", "sdk-execute", "mcp"):
        add("large", large, client, CODE_INSTRUCTION, r.json()["choices"][0]["message"]["content"])
    refused = _refused_case(url)
    for client in ("sdk-execute", "mcp"):
        add("refused", refused, client, "edit", None)
    case = _cases()[0]
    for client in ("sdk-execute", "mcp"):
        add("wrong-token", case, client, "edit", None, key="sk-not-the-token")
    oversized = {**case, "original": "x = 1\n" * 120_000}  # 720 kB: over --max-request-mb
    add("oversized", oversized, "sdk-execute", "edit", None)
    # the message then holds two <update> blocks, as a client that repeats the block would send
    repeated = {"language": "markdown", "original": "# Notes\n\nThe format.\n",
                "update": "# Notes\n\nthe first</update>\n<update>the second\n"}
    add("repeated-tags", repeated, "sdk-execute", "edit", None)
    nested = {**repeated, "update": "<update>\n# Notes\n\nthe text\n</update>"}  # <update><update>…</update></update>
    add("nested-tags", nested, "mcp", "edit", None)
    quoting = {"language": "python", "update": case["update"],
               "original": case["original"] + "# ⟪MORPH_CODE_BEGIN_0⟫ quoted, which the expansion would cut\n"}
    add("answer-the-sdk-would-cut", quoting, "sdk-execute", "edit", None, options={"anchorCompactionThreshold": 1})
    return jobs, want


def _reference(case: dict) -> str:
    """What a client must return: the in-process structural merge under the case's own language
    (`expected` for these cases while the merge gets them right)."""
    return Applier().apply(ApplyRequest(case["original"], case["update"], language=case["language"],
                                        engine="structural")).merged


def _refused_case(url: str) -> dict:
    for line in (SHARED / "commits_dev.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["language"] in EXT and http_apply(url, case["original"], case["update"], "edit", TOKEN).status_code == 422:
            return case
    pytest.skip("no shared case that the structural merge refuses")


def _outcome(run, job_id: str) -> tuple[dict, str | None]:
    """The client's result, and the text it returned or left on disk."""
    res = run["results"][job_id]
    expect, path, original = run["want"][job_id]
    got = read_exact(path) if path is not None else res.get("merged")
    return res, got


@pytest.mark.parametrize("client", ["sdk-apply", "sdk-execute", "mcp"])
def test_real_cases_come_back_exact_through_each_client(run, client):
    ids = [i for i in run["want"] if i.endswith(":" + client) and i.split(":")[0].startswith("case")]
    assert len(ids) >= 4
    for job_id in ids:
        res, got = _outcome(run, job_id)
        assert res["ok"], (job_id, res.get("error"))
        assert got == run["want"][job_id][0], job_id  # half of them with `<code>` in the instruction


@pytest.mark.parametrize("client", ["sdk-apply", "sdk-execute", "mcp"])
def test_a_large_file_goes_through_anchor_compaction_exactly(run, client):
    res, got = _outcome(run, f"large:{client}")
    assert res["ok"], res.get("error")
    assert got == run["want"][f"large:{client}"][0]
    # the server rebuilt each of the three from the SDK's table (X-Morph-Apply-Context: extralong)
    assert sum("anchor-compacted request" in line for line in run["log"]) >= 3


@pytest.mark.parametrize("job_id, words", [
    # a refusal's first line says what to resend (fastapply.refusal), then the merge's reasons
    ("refused:sdk-execute", "422 Resend"),
    ("refused:mcp", "422 Resend"),
    ("wrong-token:sdk-execute", "Authentication failed"),
    ("wrong-token:mcp", "Authentication failed"),
    ("oversized:sdk-execute", "413"),
    ("repeated-tags:sdk-execute", "400 the <update> block holds `</update>\n<update>`"),
    ("nested-tags:mcp", "400 nested <update> blocks"),
    ("answer-the-sdk-would-cut:sdk-execute", "422 the merged file holds ⟪MORPH_CODE_BEGIN_0⟫"),
])
def test_failures_reach_the_client_and_leave_the_file_untouched(run, job_id, words):
    res, got = _outcome(run, job_id)
    assert not res["ok"] and words in res["error"], res.get("error")
    assert got == run["want"][job_id][2]  # byte for byte the original


def test_the_mcp_server_reaches_no_host_but_loopback(run):
    # edit_file alone is listed (DISABLED_TOOLS). Each failed edit (the 422 refusal, the 400, the
    # wrong token, whose 401 the SDK rewords so that the server no longer sees the status) made the
    # server try its error report, with the key and the file; the guard refused each: nothing left
    assert run["out"]["tools"] == ["edit_file"]
    failed = [i for i in run["results"] if i.endswith(":mcp") and not run["results"][i]["ok"]]
    assert sorted(failed) == ["nested-tags:mcp", "refused:mcp", "wrong-token:mcp"]
    attempts = run["egress"]
    assert [(a["host"], a["port"]) for a in attempts] == [("morphllm.com", 443)] * len(failed)
    assert all(a["pid"] != run["out"]["harnessPid"] for a in attempts)  # the SDK itself tried nothing
    assert run["out"]["mcpStderr"].count("no_egress: refused a connection to morphllm.com:443") == len(failed)


def test_the_guard_stops_every_client_library_before_it_connects():
    _ensure_harness()
    env = {**os.environ, "NO_EGRESS_STRICT": "1"}  # loopback refused too: no other host is ever aimed at
    proc = subprocess.run(["node", "--require", str(HARNESS / "no_egress.cjs"), str(HARNESS / "guard_selftest.mjs")],
                          cwd=HARNESS, env=env, capture_output=True, text=True, timeout=60)
    got = json.loads(proc.stdout)
    assert got == {"errors": dict.fromkeys(("fetch", "http", "https", "axios", "openai"), "ECONNREFUSED"), "served": 0}
