"""Every HTTP client of an apply model fastapply has, unmodified, against a live `fastapply serve
--http-port` (structural engine): one table of exact / refused / wrong / failed per client and format.

    .venv/bin/python -m evals.http_clients --json out/http_clients.json

Ten shared cases (`pick_cases`): eight the HTTP API answers with the case's expected file, of as many
languages as the set has, and two it refuses. Each goes through every client (tests/http_clients/run.mjs
for the Node clients, `make http-clients-deps`; tests/py_clients/run.py for the Python ones, `make
py-clients-deps`):

    relace            @relace-ai/relace 0.6.0: client.post("/code/apply", {body}), RELACE_BASE_URL = the server
    relace-stream     the same with {stream: true}: the text of its {"chunk"} events
    continue-openai   @continuedev/openai-adapters 1.37.0, provider `openai`, as Continue's apply step calls
                      it (stream, stream_options.include_usage, max_tokens 4096), Morph's apply prompt
    continue-relace   its provider `relace` as Continue's core calls it today: `prediction` undefined, so
                      `initialCode: ""` and the snippet alone
    continue-default  Continue's default apply prompt (ORIGINAL CODE / SUGGESTED EDIT fences, the assistant
                      prefilled with a fence), chatCompletionStream, an Ollama-style model name
    continue-completions-morph, continue-completions-aixapply
                      a string apply template rendered by Handlebars, the adapter's completionStream
                      (`/v1/completions`): Morph's template, and aiXapply's blocks with the file asked bare
    ollama-generate   the Ollama JavaScript library 0.6.4, generate({raw: true, stream: true}) with Morph's
                      template: the body Continue's `ollama` provider sends to `/api/generate`
    fastapply-mcp     PyPI fastapply-mcp 1.1.1, its MCP tool call_tool("fast_apply_edit"): the Kortix prompt,
                      XML-escaped blocks, model `fastapply-1.5b`; the file on disk after it
    osmosis           Osmosis-Apply's MCP server's call through the Ollama Python library 0.6.3
                      (`/api/chat`, the assistant prefilled with <code>); the file on disk after it
    avante            avante.nvim's fast-apply request (`avante_request`): its body, sent by curl with its flags

An answer is compared byte for byte with the case's expected file, or, where the client changes the
file itself, with what it makes of the expected file (`reference`): avante sends the original without
its final newline; fastapply-mcp is given that same text as its `original_code` section and strips the
merged section before it splices it in; Osmosis' server replaces the stripped original by the stripped
answer. Verdicts: `exact`, `wrong` (an answer that is not that, or any answer to a case the server
refuses, or a file touched), `refused` (the client reports an error for a case the server refuses, the
file untouched), `failed` (an error for a case the server answers). The Node clients run under
tests/morph_clients/no_egress.cjs and the Python ones under tests/py_clients/no_egress.py, which refuse
and count every connection but to loopback; curl's own trace (`--verbose`) names every host it tried.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import httpx

from evals.common import write_json
from evals.morph_clients import egress_attempts, node_harness_ready, serve_structural

REPO = Path(__file__).resolve().parent.parent
HARNESS = REPO / "tests" / "http_clients"
GUARD = REPO / "tests" / "morph_clients" / "no_egress.cjs"
PY_HARNESS = REPO / "tests" / "py_clients"
PY_CLIENT_PYTHON = PY_HARNESS / ".venv" / "bin" / "python"
SHARED = REPO / "evals" / "cases"
CASE_FILES = ("commits_dev.jsonl", "hard_dev.jsonl")
ANSWERED, REFUSED = 8, 2
MAX_CASE_CHARS = 20_000  # small files: every client sends the whole file each time
HARNESS_TIMEOUT_S = 600.0
NODE_CLIENTS = ("relace", "relace-stream", "continue-openai", "continue-relace", "continue-default",
                "continue-completions-morph", "continue-completions-aixapply", "ollama-generate")
PY_CLIENTS = ("fastapply-mcp", "osmosis")
CLIENTS = (*NODE_CLIENTS, *PY_CLIENTS, "avante")
EVAL_TOKEN = "sk-fastapply-eval"
STRUCTURAL = "fastapply-structural"  # the model name the OpenAI-style clients are configured with here
AVANTE_INSTRUCTIONS = "I apply the update snippet."


# -- the cases ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    id: str
    language: str
    original: str
    update: str
    expected: str | None  # None: the server refuses it


def relace_apply(url: str, original: str, update: str, token: str) -> httpx.Response:
    return httpx.post(url + "/v1/code/apply", json={"initialCode": original, "editSnippet": update},
                      headers={"Authorization": f"Bearer {token}"}, timeout=300)


def pick_cases(url: str, token: str, files: Iterable[Path] | None = None) -> list[Case]:
    """Eight cases the server answers exactly (each language once before any twice; the original sent
    without its final newline, as avante sends it, answered exactly too) and two it refuses, in file
    order. Asked of the server itself, which guesses the language as every client here makes it."""
    answered: list[Case] = []
    refused: list[Case] = []
    for case in _candidates(files):
        want_answer, want_refusal = len(answered) < ANSWERED, len(refused) < REFUSED
        if not (want_answer or want_refusal):
            break
        r = relace_apply(url, case["original"], case["update"], token)
        if r.status_code == 422 and want_refusal:
            refused.append(Case(case["id"], case["language"], case["original"], case["update"], None))
        elif r.status_code == 200 and want_answer and _answers_exactly(url, case, r, token):
            answered.append(Case(case["id"], case["language"], case["original"], case["update"], case["expected"]))
    return answered + refused


def _candidates(files: Iterable[Path] | None) -> list[dict]:
    out = []
    for path in files or [SHARED / name for name in CASE_FILES]:
        if path.exists():
            out += [c for c in map(json.loads, path.read_text(encoding="utf-8").splitlines())
                    if len(c["original"]) <= MAX_CASE_CHARS]
    # one case per language first: a language's second case waits until every language had one
    seen: dict[str, int] = {}
    ranked = []
    for i, c in enumerate(out):
        seen[c["language"]] = seen.get(c["language"], 0) + 1
        ranked.append((seen[c["language"]], i, c))
    return [c for _, _, c in sorted(ranked, key=lambda t: t[:2])]


def _answers_exactly(url: str, case: dict, r: httpx.Response, token: str) -> bool:
    if r.json()["mergedCode"] != case["expected"]:
        return False
    sent = avante_original(case["original"])
    return relace_apply(url, sent, case["update"], token).json().get("mergedCode") == avante_original(case["expected"])


def reference(case: Case, client: str) -> str | None:
    """The text a client must return (or leave on disk) for `case` (None: it must fail, the file untouched)."""
    if case.expected is None:
        return None
    if client == "avante":
        return avante_original(case.expected)
    if client == "fastapply-mcp":  # given the file less its final newline, it strips what comes back
        section = py_section(case.original)
        return avante_original(case.expected).strip() + case.original[len(section):]
    if client == "osmosis":  # file.replace(original.strip(), answer.strip())
        o = case.original
        return o[:len(o) - len(o.lstrip())] + case.expected.strip() + o[len(o.rstrip()):]
    return case.expected


def py_section(original: str) -> str:
    """The `original_code` fastapply-mcp is given: the whole file but its final newline (as an agent
    that read the file copies it; the tool looks the section up in the file)."""
    return avante_original(original)


# -- the Node clients --------------------------------------------------------------------------------

def harness_ready() -> str | None:
    """Why the Node harness cannot run, or None."""
    return node_harness_ready(HARNESS, ("@relace-ai/relace", "@continuedev/openai-adapters", "handlebars", "ollama"),
                              "http-clients-deps")


def py_harness_ready() -> str | None:
    """Why the Python harness cannot run, or None."""
    if not PY_CLIENT_PYTHON.exists():
        return f"{PY_HARNESS}/.venv is missing (make py-clients-deps)"
    probe = subprocess.run([str(PY_CLIENT_PYTHON), "-c", "import fastapply_mcp.main, ollama"], capture_output=True,
                           text=True, cwd=PY_HARNESS)
    return None if probe.returncode == 0 else f"{PY_HARNESS}/.venv lacks a client: {probe.stderr.strip()[-300:]}"


def run_py_harness(url: str, key: str, jobs: list[dict], egress_log: Path) -> dict:
    """Run the jobs through tests/py_clients/run.py under the loopback-only guard (its no_egress.py):
    {results: [{id, client, ok, disk?, reply?, error?}]}. The clients read their settings from the
    environment, as a user sets them: fastapply-mcp FAST_APPLY_URL and FAST_APPLY_API_KEY (its model name
    left at its default), the Ollama library OLLAMA_HOST and OLLAMA_API_KEY."""
    with tempfile.TemporaryDirectory(prefix="fastapply-py-jobs-") as tmp:
        jobs_file, results_file = Path(tmp) / "jobs.json", Path(tmp) / "results.json"
        jobs_file.write_text(json.dumps({"jobs": jobs}))
        env = {**os.environ, "NO_EGRESS_LOG": str(egress_log), "FAST_APPLY_URL": url + "/v1",
               "FAST_APPLY_API_KEY": key, "OLLAMA_HOST": url, "OLLAMA_API_KEY": key}
        env.pop("FAST_APPLY_MODEL", None)
        proc = subprocess.run([str(PY_CLIENT_PYTHON), str(PY_HARNESS / "no_egress.py"), str(PY_HARNESS / "run.py"),
                               str(jobs_file), str(results_file)], cwd=PY_HARNESS, env=env, capture_output=True,
                              text=True, timeout=HARNESS_TIMEOUT_S)
        if proc.returncode != 0 or not results_file.exists():
            raise RuntimeError(f"run.py failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        return json.loads(results_file.read_text())


def py_job(client: str, case: Case, job_id: str) -> dict:
    job = {"id": job_id, "client": client, "original": case.original, "update": case.update}
    if client == "fastapply-mcp":
        job["section"] = py_section(case.original)
    return job


def run_harness(url: str, key: str, jobs: list[dict], egress_log: Path, metrics_url: str | None = None,
                relace_key: str | None = None) -> dict:
    """Run the jobs through tests/http_clients/run.mjs under the loopback-only guard:
    {results: [{id, client, ok, merged?, usage?, chunks, aborted?, error?}], harnessPid}.
    Relace's SDK reads its base URL and key from the environment, as a user sets them."""
    with tempfile.TemporaryDirectory(prefix="fastapply-http-jobs-") as tmp:
        jobs_file, results_file = Path(tmp) / "jobs.json", Path(tmp) / "results.json"
        jobs_file.write_text(json.dumps({"url": url, "key": key, "metricsUrl": metrics_url, "jobs": jobs}))
        env = {**os.environ, "NO_EGRESS_LOG": str(egress_log), "RELACE_BASE_URL": url + "/v1",
               "RELACE_API_KEY": relace_key or key}
        proc = subprocess.run(["node", "--require", str(GUARD), str(HARNESS / "run.mjs"), str(jobs_file),
                               str(results_file)], cwd=HARNESS, env=env, capture_output=True, text=True,
                              timeout=HARNESS_TIMEOUT_S)
        if proc.returncode != 0 or not results_file.exists():
            raise RuntimeError(f"run.mjs failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        out = json.loads(results_file.read_text())
        out["stdout"] = proc.stdout
        return out


def node_job(client: str, case: Case, job_id: str, **extra) -> dict:
    """One harness job of `client` for `case` (see run.mjs)."""
    if client in ("relace", "relace-stream"):
        return {"id": job_id, "client": "relace", "original": case.original, "update": case.update,
                "stream": client == "relace-stream", **extra}
    if client == "continue-openai":
        return {"id": job_id, "client": client, "original": case.original, "update": case.update,
                "model": STRUCTURAL, **extra}
    if client == "continue-relace":
        return {"id": job_id, "client": client, "update": case.update, **extra}
    if client == "continue-default":
        return {"id": job_id, "client": client, "original": case.original, "update": case.update, **extra}
    if client.startswith("continue-completions-"):
        return {"id": job_id, "client": "continue-template", "template": client.rsplit("-", 1)[1],
                "original": case.original, "update": case.update, **extra}
    if client == "ollama-generate":
        return {"id": job_id, "client": client, "template": "morph", "original": case.original, "update": case.update,
                **extra}
    raise ValueError(f"not a Node client: {client}")


# -- avante.nvim's request ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AvanteRun:
    """One request as avante.nvim's `edit_file` tool makes it, and what curl gave back."""

    command: list[str]
    returncode: int
    stdout: str
    stderr: str

    def content(self) -> str | None:
        """The answer's text, as avante takes it (`choices[1].message.content`); None on failure."""
        if self.returncode != 0 or not self.stdout:
            return None
        body = json.loads(self.stdout)
        return None if "error" in body else body["choices"][0]["message"]["content"]

    def hosts_tried(self) -> list[str]:
        """Every host curl tried to connect to (its --verbose trace)."""
        # `*   Trying 127.0.0.1:8000...` (the progress meter may share the line: no `^`)
        return [h.strip("[]") for h in re.findall(r"\*\s+Trying (\[[^\]]+\]|[^\s:]+)(?::\d+)?\.\.\.", self.stderr)]


def avante_original(text: str) -> str:
    """The original as avante sends it: read from disk, CRLF made LF, split on newlines, the last
    (empty) piece dropped, joined again: the file without its final newline."""
    text = text.replace("\r\n", "\n")
    return text[:-1] if text.endswith("\n") else text


def avante_body(model: str, instructions: str, original_code: str, code_edit: str) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": (
        f"<instructions>{instructions}</instructions>\n<code>{original_code}</code>\n<update>{code_edit}</update>")}]}


def avante_command(endpoint: str, api_key: str | None, body_file: Path) -> list[str]:
    """curl's arguments in avante's order (the Authorization header goes in after `-X POST`)."""
    cmd = ["curl", "-X", "POST", "-H", "Content-Type: application/json", "-d", f"@{body_file}",
           "--fail", "--show-error", "--verbose", "--connect-timeout", "30", "--max-time", "120",
           endpoint.rstrip("/") + "/chat/completions"]
    if api_key is not None:
        cmd[3:3] = ["-H", f"Authorization: Bearer {api_key}"]
    return cmd


def avante_command_for(endpoint: str, api_key: str | None, file_text: str, code_edit: str, model: str,
                       body_dir: Path, instructions: str = AVANTE_INSTRUCTIONS) -> list[str]:
    """avante.nvim's fast-apply request (lua/avante/llm_tools/edit_file.lua; the pinned version is
    named in tests/test_avante_request.py) for a file holding `file_text`: its JSON body written to
    `body_dir` on one line with a newline (as `vim.fn.writefile` writes it), and curl's arguments."""
    body_file = body_dir / "request-body.json"
    body = avante_body(model, instructions, avante_original(file_text), code_edit)
    body_file.write_text(json.dumps(body, ensure_ascii=False) + "\n", encoding="utf-8")
    return avante_command(endpoint, api_key, body_file)


def avante_request(endpoint: str, api_key: str | None, file_text: str, code_edit: str, model: str,
                   instructions: str = AVANTE_INSTRUCTIONS) -> AvanteRun:
    """Run avante's request with curl (`avante_command_for`)."""
    with tempfile.TemporaryDirectory(prefix="fastapply-avante-") as tmp:
        cmd = avante_command_for(endpoint, api_key, file_text, code_edit, model, Path(tmp), instructions)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        return AvanteRun(cmd, proc.returncode, proc.stdout, proc.stderr)


# -- the eval ----------------------------------------------------------------------------------------

def verdict(expect: str | None, ok: bool, got: str | None) -> str:
    if expect is None:
        return "refused" if not ok else "wrong"
    if not ok:
        return "failed"
    return "exact" if got == expect else "wrong"


def evaluate(cases: list[Case] | None = None, token: str = EVAL_TOKEN) -> dict:
    with tempfile.TemporaryDirectory(prefix="fastapply-http-clients-") as tmp:
        root = Path(tmp)
        (root / "token").write_text(token + "\n")
        with serve_structural("--token-file", str(root / "token")) as server:
            cases = cases or pick_cases(server.url, token)
            jobs = [node_job(client, case, f"{client}:{i}") for i, case in enumerate(cases) for client in NODE_CLIENTS]
            out = run_harness(server.url, token, jobs, root / "egress.jsonl")
            by_id = {r["id"]: r for r in out["results"]}
            py = run_py_harness(server.url, token, [py_job(c, case, f"{c}:{i}") for i, case in enumerate(cases)
                                                    for c in PY_CLIENTS], root / "egress-py.jsonl")
            by_id.update({r["id"]: r for r in py["results"]})
            rows = []
            for i, case in enumerate(cases):
                row = {"id": case.id, "language": case.language, "server": "refused" if case.expected is None else
                       "answered", "clients": {}}
                for client in NODE_CLIENTS:
                    res = by_id[f"{client}:{i}"]
                    row["clients"][client] = _judged(reference(case, client), res["ok"], res.get("merged"),
                                                     res.get("error"))
                for client in PY_CLIENTS:  # judged on disk: a refused case must leave the file untouched
                    res = by_id[f"{client}:{i}"]
                    ok = res["ok"] or res.get("disk") not in (None, case.original)
                    row["clients"][client] = _judged(reference(case, client), ok, res.get("disk"),
                                                     res.get("error") or ({"message": res.get("reply", "")}
                                                                          if not res["ok"] else None))
                    row["clients"][client]["strip_changed"] = reference(case, client) != case.expected
                run = avante_request(server.url + "/v1", token, case.original, case.update, STRUCTURAL)
                row["clients"]["avante"] = _judged(reference(case, "avante"), run.returncode == 0, run.content(),
                                                   {"message": run.stderr[-300:]} if run.returncode else None)
                row["clients"]["avante"]["hosts_tried"] = sorted(set(run.hosts_tried()))
                rows.append(row)
        egress = egress_attempts(root / "egress.jsonl") + egress_attempts(root / "egress-py.jsonl")
    return {"cases": len(cases), "clients": list(CLIENTS), "egress_attempts": egress,
            "summary": _summary(rows), "rows": rows}


def _judged(expect: str | None, ok: bool, got: str | None, error: dict | None) -> dict:
    return {"verdict": verdict(expect, ok, got),
            "error": None if error is None else f"{error.get('name', '')} {error.get('message', '')}".strip()[:300]}


def _summary(rows: list[dict]) -> dict:
    out = {}
    for client in CLIENTS:
        verdicts = [r["clients"][client]["verdict"] for r in rows]
        out[client] = {v: verdicts.count(v) for v in ("exact", "refused", "wrong", "failed")}
    avante_hosts = {h for r in rows for h in r["clients"]["avante"]["hosts_tried"]}
    out["avante"]["non_loopback_hosts"] = sorted(h for h in avante_hosts if not _loopback(h))
    return out


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def render(report: dict) -> str:
    rows = report["rows"]
    answered = sum(r["server"] == "answered" for r in rows)
    lines = [f"{report['cases']} cases: the server answers {answered} exactly, refuses {len(rows) - answered}",
             f"{'client':<30} {'exact':>6} {'refused':>8} {'wrong':>6} {'failed':>7}  first error"]
    for client in report["clients"]:
        s = report["summary"][client]
        first = next((r["clients"][client]["error"] for r in rows if r["clients"][client]["verdict"] == "failed"), "")
        lines.append(f"{client:<30} {s['exact']:>6} {s['refused']:>8} {s['wrong']:>6} {s['failed']:>7}  {first or '-'}")
    node_hosts = sorted({f"{a['host']}:{a['port']}" for a in report["egress_attempts"]})
    lines.append(f"non-loopback connections tried by the Node and Python clients (refused by their no_egress guard): "
                 f"{len(report['egress_attempts'])}" + (f" ({', '.join(node_hosts)})" if node_hosts else ""))
    lines.append(f"non-loopback hosts curl tried for avante: {len(report['summary']['avante']['non_loopback_hosts'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", default=None, help="write the report here")
    args = ap.parse_args(argv)
    why = harness_ready() or py_harness_ready()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    report = evaluate()
    print(render(report))
    if args.json:
        write_json(args.json, report)
    return 1 if any(report["summary"][c]["wrong"] for c in CLIENTS) else 0


if __name__ == "__main__":
    sys.exit(main())
