"""Morph's own clients, unmodified, against a live `fastapply serve --http-port` (structural engine).

    .venv/bin/python -m evals.morph_clients --cases evals/cases/commits_dev.jsonl --json out/morph_clients.json
    .venv/bin/python -m evals.morph_clients --cases evals/cases/commits_dev.jsonl --instruction \
        "I apply the snippet inside the <code> block." --large 10

Each case goes to the HTTP API first (`model: fastapply-structural`, Morph's message, no language:
the server guesses it), then through each client on its own copy of the original on disk
(tests/morph_clients/run.mjs; `npm ci` there first):

    sdk-apply     @morphllm/morphsdk applyEdit (returns the merged text)
    sdk-anchored  the same with anchorCompactionThreshold: 1, so every file goes through the SDK's
                  large-file protocol (anchor compaction)
    sdk-execute   FastApplyClient.execute -> executeEditFile (reads, calls, writes the file)
    mcp           @morphllm/morphmcp's edit_file over stdio, called by the MCP SDK's client

A case the HTTP API answers must come back through each client equal to that answer (on disk for
sdk-execute and mcp), and a case it refuses must fail in the client with the file untouched.
`--large N` also pads the first N originals past 128 KiB with a block of distinct lines, so that the
SDK and the MCP server send them anchor-compacted at their default threshold; the padded file's
reference is the HTTP API's answer to it sent plainly. The MCP server runs under
tests/morph_clients/no_egress.cjs: every connection it tries to a host but loopback (its error
report to morphllm.com on a failed edit) is refused and counted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from evals.common import load_cases, write_json

REPO = Path(__file__).resolve().parent.parent
HARNESS = REPO / "tests" / "morph_clients"
CLIENTS = ("sdk-apply", "sdk-anchored", "sdk-execute", "mcp")
ON_DISK = ("sdk-execute", "mcp")
DEFAULT_INSTRUCTION = "I apply the update snippet."
LARGE_CHARS = 128 * 1024 + 2048  # past the SDK's DEFAULT_ANCHOR_COMPACTION_THRESHOLD (128 KiB)
SERVER_START_S = 60.0
HARNESS_TIMEOUT_S = 1800.0
_EXT = {"python": ".py", "javascript": ".js", "jsx": ".jsx", "typescript": ".ts", "tsx": ".tsx", "go": ".go",
        "rust": ".rs", "java": ".java", "markdown": ".md", "sql": ".sql"}


# -- the server and the clients -------------------------------------------------------------------------

@dataclass
class Served:
    """A running `fastapply serve`: its HTTP URL and the lines it has logged so far."""

    url: str
    log: list[str] = field(default_factory=list)
    healthy_s: float | None = None  # a model engine: seconds from the command to /health 200


def serve_structural(*extra: str) -> contextlib.AbstractContextManager[Served]:
    """`fastapply serve --http-port 0 --http-default-engine structural` on loopback."""
    return serve_engine("structural", *extra)


@contextlib.contextmanager
def serve_engine(engine: str, *extra: str) -> Iterator[Served]:
    """The server the clients talk to, on loopback: structural alone (no model loaded), or (`auto`,
    ...) the default model loaded at start, waiting until /health is 200 and recording how long that
    took (`Served.healthy_s`)."""
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "fastapply.cli", "serve", "--port", "0", "--http-port", "0",
           "--http-default-engine", engine, *extra] + (["--no-preload"] if engine == "structural" else [])
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        served = _started(proc)
        if engine != "structural":
            served.healthy_s = _healthy_after(served, t0)
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


MODEL_HEALTH_S = 900  # a fresh machine converts the default model's GGUF once (about a minute)


def _healthy_after(served: Served, t0: float) -> float:
    """Seconds from `t0` until the server's /health is 200 (a model engine loads first)."""
    while time.monotonic() - t0 < MODEL_HEALTH_S:
        try:
            if httpx.get(served.url + "/health", timeout=5).status_code == 200:
                return round(time.monotonic() - t0, 1)
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the server was not healthy within {MODEL_HEALTH_S} s:\n" + "".join(served.log))


def _started(proc: subprocess.Popen) -> Served:
    lines, end = [], time.monotonic() + SERVER_START_S
    while time.monotonic() < end:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"HTTP on (http://[^\s,]+)", line)
        if m:
            served = Served(m.group(1), lines)
            threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()  # drains the pipe
            return served
    proc.kill()
    raise RuntimeError("fastapply serve did not start:\n" + "".join(lines))


def harness_ready() -> str | None:
    """Why the Node harness cannot run, or None."""
    return node_harness_ready(HARNESS, ("@morphllm/morphmcp",), "morph-clients-deps")


def node_harness_ready(harness: Path, packages: tuple[str, ...], make_target: str) -> str | None:
    """Why a Node harness (a folder with its package-lock.json) cannot run, or None."""
    if subprocess.run(["node", "--version"], capture_output=True).returncode != 0:
        return "node is not installed"
    for package in packages:
        if not (harness / "node_modules" / package).exists():
            return f"{harness}/node_modules lacks {package} (make {make_target}, or npm ci there)"
    return None


def run_clients(url: str, key: str, mcp_root: Path, jobs: list[dict], egress_log: Path) -> dict:
    """Run the jobs through tests/morph_clients/run.mjs: {tools, results: [{id, client, ok, ...}], mcpStderr}."""
    with tempfile.TemporaryDirectory(prefix="fastapply-morph-jobs-") as tmp:
        jobs_file, results_file = Path(tmp) / "jobs.json", Path(tmp) / "results.json"
        jobs_file.write_text(json.dumps({"url": url, "key": key, "mcpRoot": str(mcp_root), "jobs": jobs}))
        env = {**os.environ, "NO_EGRESS_LOG": str(egress_log)}
        proc = subprocess.run(["node", "--require", str(HARNESS / "no_egress.cjs"), str(HARNESS / "run.mjs"),
                               str(jobs_file), str(results_file)], cwd=HARNESS, env=env, capture_output=True,
                              text=True, timeout=HARNESS_TIMEOUT_S)
        if proc.returncode != 0 or not results_file.exists():
            raise RuntimeError(f"run.mjs failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        return json.loads(results_file.read_text())


def egress_attempts(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def morph_message(original: str, update: str, instruction: str) -> str:
    """The user message Morph's SDK sends (apply.ts) for a file under the compaction threshold."""
    return f"<instruction>{instruction}</instruction>\n<code>{original}</code>\n<update>{update}</update>"


def http_apply(url: str, original: str, update: str, instruction: str, token: str = "unused",
               engine: str = "structural") -> httpx.Response:
    body = {"model": f"fastapply-{engine}",
            "messages": [{"role": "user", "content": morph_message(original, update, instruction)}]}
    return httpx.post(url + "/v1/chat/completions", json=body, timeout=300,
                      headers={"Authorization": f"Bearer {token}"})


def write_exact(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def read_exact(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


# -- the eval ---------------------------------------------------------------------------------------------------

def pad_large(case: dict) -> dict:
    """The case with its original (and expected) followed by one block of distinct lines past 128 KiB:
    a block comment (a string in Python), one node to every grammar, whose lines the SDK anchors."""
    original = case["original"] if case["original"].endswith("\n") else case["original"] + "\n"
    head, tail = ('_PADDING = """\n', '"""\n') if case["language"] == "python" else ("/*\n", " */\n")
    lines, i = [], 0
    while len(original) + sum(map(len, lines)) < LARGE_CHARS:
        lines.append(f" * padding line {i:06d}: unchanged text that the SDK turns into an anchor\n")
        i += 1
    block = "\n" + head + "".join(lines) + tail
    expected = case["expected"] if case["expected"].endswith("\n") else case["expected"] + "\n"
    return {**case, "id": case["id"] + "+large", "original": original + block, "expected": expected + block}


def evaluate(cases: list[dict], clients: tuple[str, ...], instruction: str, engine: str = "structural") -> dict:
    with serve_engine(engine) as server, tempfile.TemporaryDirectory(prefix="fastapply-morph-") as tmp:
        root, url = Path(tmp), server.url
        rows, jobs = [], []
        for i, case in enumerate(cases):
            r = http_apply(url, case["original"], case["update"], instruction, engine=engine)
            info = r.json().get("fastapply", {}) if r.status_code == 200 else {}
            row = {"id": case["id"], "language": case["language"], "chars": len(case["original"]),
                   "http_status": r.status_code,
                   "http_merged": r.json()["choices"][0]["message"]["content"] if r.status_code == 200 else None,
                   "http_error": r.json().get("error", {}).get("message") if r.status_code != 200 else None,
                   "guessed_language": info.get("language"), "clients": {}}
            row["http_exact"] = row["http_merged"] == case["expected"]
            rows.append(row)
            for client in clients:
                job = {"id": f"{client}:{i}", "client": "sdk-apply" if client == "sdk-anchored" else client,
                       "update": case["update"], "instruction": instruction}
                if client == "sdk-anchored":
                    job["options"] = {"anchorCompactionThreshold": 1}
                if client in ON_DISK:
                    path = root / client / f"case{i:04d}{_EXT.get(case['language'], '.txt')}"
                    write_exact(path, case["original"])
                    job["path"] = str(path)
                else:
                    job["original"] = case["original"]
                jobs.append(job)
        egress_log = root / "egress.jsonl"
        out = run_clients(url, "sk-fastapply-eval", root, jobs, egress_log)
        by_id = {r["id"]: r for r in out["results"]}
        for i, (case, row) in enumerate(zip(cases, rows, strict=True)):
            for client in clients:
                row["clients"][client] = _judge(case, row, by_id[f"{client}:{i}"], client, root, i)
        compacted = sum("anchor-compacted request" in line for line in server.log)
        return {"instruction": instruction, "engine": engine, "healthy_s": server.healthy_s,
                "cases": len(cases), "clients": list(clients), "mcp_tools": out["tools"],
                "anchor_compacted_requests": compacted, "egress_attempts": egress_attempts(egress_log),
                "summary": _summary(rows, clients), "rows": rows}


def _judge(case: dict, row: dict, res: dict, client: str, root: Path, i: int) -> dict:
    """One client's outcome: what it returned or wrote, next to what the HTTP API answered."""
    if client in ON_DISK:
        got = read_exact(root / client / f"case{i:04d}{_EXT.get(case['language'], '.txt')}")
    else:
        got = res.get("merged") if res["ok"] else None
    answered = row["http_status"] == 200
    if answered:
        verdict = "same" if res["ok"] and got == row["http_merged"] else "DIFFERENT" if res["ok"] else "FAILED"
    else:
        untouched = client not in ON_DISK or got == case["original"]
        verdict = "refused, untouched" if not res["ok"] and untouched else "WRITTEN" if not untouched else "ANSWERED"
    return {"verdict": verdict, "ok": res["ok"], "exact": got == case["expected"],
            "error": None if res["ok"] else (res.get("error") or "")[:300]}


def _summary(rows: list[dict], clients: tuple[str, ...]) -> dict:
    answered = [r for r in rows if r["http_status"] == 200]
    out = {"http": {"answered": len(answered), "exact": sum(r["http_exact"] for r in answered),
                    "refused": len(rows) - len(answered)}}
    for client in clients:
        verdicts = [r["clients"][client]["verdict"] for r in rows]
        out[client] = {"same_as_http": verdicts.count("same"),
                       "exact": sum(r["clients"][client]["exact"] for r in answered),
                       "refused_untouched": verdicts.count("refused, untouched"),
                       "bad": sorted({v for v in verdicts if v not in ("same", "refused, untouched")}),
                       "bad_cases": [r["id"] for r in rows if r["clients"][client]["verdict"]
                                     not in ("same", "refused, untouched")]}
    return out


def render(report: dict) -> str:
    s = report["summary"]
    http = s["http"]
    lines = [f"instruction: {report['instruction']!r}; {report['cases']} cases; HTTP answered {http['answered']} "
             f"({http['exact']} exact), refused {http['refused']}",
             f"{'client':<14} {'answered: = HTTP on disk':>25} {'exact':>7} {'refused: untouched':>20}  problems"]
    for client in report["clients"]:
        c = s[client]
        lines.append(f"{client:<14} {c['same_as_http']:>18} of {http['answered']:<4} {c['exact']:>7} "
                     f"{c['refused_untouched']:>13} of {http['refused']:<4}  {', '.join(c['bad']) or '-'}")
    lines.append(f"requests the server rebuilt from Morph's anchor compaction: {report['anchor_compacted_requests']}")
    if report.get("healthy_s") is not None:
        lines.append(f"server engine {report['engine']}: /health 200 after {report['healthy_s']} s")
    hosts = sorted({f"{a['host']}:{a['port']}" for a in report["egress_attempts"]})
    lines.append(f"non-loopback connections tried (all refused by no_egress.cjs): {len(report['egress_attempts'])}"
                 + (f" ({', '.join(hosts)})" if hosts else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", required=True, help="shared JSONL case files")
    ap.add_argument("--clients", default=",".join(CLIENTS), help=f"comma-separated, of {', '.join(CLIENTS)}")
    ap.add_argument("--instruction", default=DEFAULT_INSTRUCTION, help="the instruction every client sends")
    ap.add_argument("--limit", type=int, default=None, help="first N cases of each file")
    ap.add_argument("--large", type=int, default=0, help="also pad the first N cases past 128 KiB")
    ap.add_argument("--json", default=None, help="write the report here")
    ap.add_argument("--engine", default="structural",
                    help="the server's --http-default-engine (what the clients' model names select); a model "
                         "engine (auto) loads the default model at start and waits for /health 200")
    args = ap.parse_args(argv)
    why = harness_ready()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    clients = tuple(c for c in args.clients.split(",") if c)
    unknown = set(clients) - set(CLIENTS)
    if unknown:
        ap.error(f"unknown clients: {', '.join(sorted(unknown))}")
    cases = [c for path in args.cases for c in load_cases(path, args.limit)]
    cases += [pad_large(c) for c in cases[:args.large]]
    report = evaluate(cases, clients, args.instruction, args.engine)
    print(render(report))
    if args.json:
        write_json(args.json, report)
    bad = any(report["summary"][c]["bad"] for c in clients)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
