"""Load benchmark for the server, over gRPC, HTTP or both: N concurrent clients for a bounded time.

    .venv/bin/python -m evals.load --clients 32 --seconds 20 --engine structural --json /tmp/load_structural.json
    .venv/bin/python -m evals.load --clients 32 --seconds 20 --engine structural --protocol both
    .venv/bin/python -m evals.load --clients 32 --seconds 60 --engine speculative --json /tmp/load_model.json

Starts `fastapply serve` (gRPC and HTTP) on free 127.0.0.1 ports as a subprocess (or uses
`--server HOST:PORT` and `--http URL`), waits until health is SERVING (the model is loaded for the
model engines), then runs `--clients` threads, each with its own channel or HTTP connection,
sending requests back to back for `--seconds`: gRPC `ApplyEdit`, or HTTP `/v1/chat/completions`
in Morph's message format. `--protocol both` measures gRPC, then HTTP, on the same server; each
protocol sends one warm-up request before its window (`--warm-all`: every case once, the steady state
of a server that has seen each file before: HTTP remembers a file's guessed language and its token
counts by its digest, and the merge its parses). A request still
running when the window closes gets `--grace` more seconds, then its deadline cancels it; it is
counted as `unfinished`, not as an error. Prints requests/s, latency percentiles and errors by
status code, and the CPU seconds the server (its `process_cpu_seconds_total`) and the client threads
spent per completed request: on a machine whose cores they share, what each protocol costs the
server itself. `--json OUT` writes the same figures.

Inputs: the structural engine cycles through the shared-eval cases it merges (commits_dev.jsonl);
the model engines use small built-in files (a few lines each) so that one request takes seconds on
a CPU.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CASES = REPO / "evals" / "cases" / "commits_dev.jsonl"
WARM_UP_TIMEOUT_S = 300.0  # the one request each protocol sends before its window

SMALL_CASES = [
    ("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
     "def add(a, b):\n    # the sum\n    return a + b\n\n# ... existing code ...\n"),
    ("def greet(name):\n    return 'hi ' + name\n\n\ndef shout(name):\n    return greet(name).upper()\n",
     "# ... existing code ...\n\ndef shout(name):\n    return greet(name).upper() + '!'\n"),
    ("import os\n\n\ndef home():\n    return os.environ['HOME']\n",
     "import os\n\n\ndef home():\n    return os.environ.get('HOME', '/')\n"),
    ("class Box:\n    def __init__(self, v):\n        self.v = v\n\n    def get(self):\n        return self.v\n",
     "class Box:\n    # ... existing code ...\n\n    def get(self):\n        return self.v or 0\n"),
]


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def load_cases(engine: str, path: Path, limit: int | None) -> list[dict]:
    from fastapply.api import Applier, ApplyError, ApplyRequest

    if engine != "structural":
        local = Applier()
        out = []
        for orig, upd in SMALL_CASES:
            try:
                exp = local.apply(ApplyRequest(orig, upd, language="python", engine="structural")).merged
            except ApplyError:
                exp = None
            out.append({"original": orig, "update": upd, "language": "python", "expected": exp})
        return out
    local = Applier()
    out = []
    for line in path.read_text().splitlines():
        c = json.loads(line)
        try:
            r = local.apply(ApplyRequest(c["original"], c["update"], language=c["language"], engine="structural"))
        except ApplyError:
            continue  # refusals are not what this measures
        c["expected"] = r.merged
        out.append(c)
        if limit and len(out) >= limit:
            break
    if not out:
        raise SystemExit(f"no usable cases in {path}")
    return out


def start_server(args) -> tuple[subprocess.Popen, str, str, str | None]:
    """`fastapply serve` with gRPC and HTTP on free ports: (process, gRPC target, HTTP URL, metrics URL)."""
    cmd = [sys.executable, "-m", "fastapply.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--http-port", "0",
           "--max-queue", str(args.max_queue if args.max_queue is not None else args.clients),
           "--workers", str(max(64, 2 * args.clients + 8)), "--metrics-port", "0"]
    if args.engine == "structural":
        cmd.append("--no-preload")
    if args.model:
        cmd += ["--model", args.model]
    p = subprocess.Popen(cmd, cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines = []
    while True:
        line = p.stderr.readline()
        if not line:
            raise SystemExit("the server did not start:\n" + "".join(lines))
        lines.append(line)
        m = re.search(r"serving on (\S+) ", line)
        if m:
            threading.Thread(target=p.stderr.read, daemon=True).start()  # keep draining its log
            http, metrics = re.search(r"HTTP on (http[^\s,]+)", line), re.search(r"metrics on (\S+)", line)
            return p, m.group(1), http.group(1), metrics.group(1) if metrics else None


def scrape(url: str | None) -> dict[str, float]:
    if not url:
        return {}
    try:
        body = urllib.request.urlopen(url, timeout=5).read().decode()
    except OSError:
        return {}
    out: dict[str, float] = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                out[name] = float(value)
            except ValueError:
                pass
    return out


class CallFailed(Exception):
    """One request failed: `name` is its error label (a gRPC status, or HTTP status and code)."""

    def __init__(self, name: str, deadline: bool = False):
        super().__init__(name)
        self.name, self.deadline = name, deadline


class GrpcCaller:
    """ApplyEdit / ApplyEditStream with the project's gRPC client."""

    def __init__(self, target: str):
        from fastapply.client import FastApplyClient

        self.client = FastApplyClient(target)
        self.client.wait_ready(30)

    def call(self, case: dict, args, timeout: float) -> tuple[str, int]:
        from fastapply.api import ApplyError, TextDelta

        kw = dict(language=case["language"], engine=args.engine, max_output_tokens=args.max_output_tokens,
                  timeout=timeout)
        try:
            if args.stream:
                result = [ev for ev in self.client.apply_stream(case["original"], case["update"], **kw)
                          if not isinstance(ev, TextDelta)][-1]
            else:
                result = self.client.apply(case["original"], case["update"], **kw)
        except ApplyError as e:
            status = getattr(getattr(e, "status", None), "name", e.code)
            raise CallFailed(status, e.code == "deadline_exceeded") from None
        return result.merged, result.stats.output_tokens

    def close(self) -> None:
        self.client.close()


class HttpCaller:
    """POST /v1/chat/completions in Morph's message format, unary or streamed (server-sent events)."""

    def __init__(self, url: str):
        import httpx

        self.httpx = httpx
        self.client = httpx.Client(base_url=url, limits=httpx.Limits(max_connections=1))

    def call(self, case: dict, args, timeout: float) -> tuple[str, int]:
        body = {"model": f"fastapply-{args.engine}", "stream": args.stream,
                "stream_options": {"include_usage": True} if args.stream else None,
                "max_tokens": args.max_output_tokens,
                "messages": [{"role": "user",
                              "content": f"<code>{case['original']}</code>\n<update>{case['update']}</update>"}]}
        try:
            if not args.stream:
                r = self.client.post("/v1/chat/completions", json=body, timeout=timeout)
                _check(r)
                data = r.json()
                return data["choices"][0]["message"]["content"], (data.get("usage") or {}).get("completion_tokens", 0)
            with self.client.stream("POST", "/v1/chat/completions", json=body, timeout=timeout) as r:
                _check(r)
                return _read_chat_stream(r)
        except self.httpx.TimeoutException:
            raise CallFailed("timeout", deadline=True) from None
        except self.httpx.TransportError as e:
            raise CallFailed(type(e).__name__) from None

    def close(self) -> None:
        self.client.close()


def _check(r) -> None:
    if r.status_code != 200:
        r.read()
        code = (r.json().get("error") or {}).get("code", "?") if r.headers.get("content-type", "").startswith(
            "application/json") else "?"
        raise CallFailed(f"HTTP {r.status_code} {code}")


def _read_chat_stream(r) -> tuple[str, int]:
    parts, tokens = [], 0
    for line in r.iter_lines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        ev = json.loads(line[len("data: "):])
        if "error" in ev:
            raise CallFailed(f"stream {ev['error'].get('code')}")
        parts += [c["delta"].get("content") or "" for c in ev.get("choices", [])]
        tokens = (ev.get("usage") or {}).get("completion_tokens", tokens)
    return "".join(parts), tokens


def measure(make_caller, cases: list[dict], args) -> dict:
    """`--clients` threads, each with its own connection, sending requests back to back for `--seconds`."""
    lat: list[float] = []
    errors: dict[str, int] = {}
    counts = {"unfinished": 0, "mismatches": 0, "out_tokens": 0}
    lock = threading.Lock()
    start = time.monotonic() + 0.2
    end = start + args.seconds

    def client_loop(i: int) -> None:
        caller = make_caller()
        k = i
        try:
            while time.monotonic() < start:
                time.sleep(0.005)
            while time.monotonic() < end:
                case = cases[k % len(cases)]
                k += args.clients
                t0 = time.monotonic()
                try:
                    merged, tokens = caller.call(case, args, max(0.05, end - time.monotonic()) + args.grace)
                except CallFailed as e:
                    with lock:
                        if e.deadline and time.monotonic() >= end:
                            counts["unfinished"] += 1
                        else:
                            errors[e.name] = errors.get(e.name, 0) + 1
                    continue
                t1 = time.monotonic()
                with lock:
                    lat.append(t1 - t0)
                    counts["out_tokens"] += tokens
                    if case.get("expected") is not None and merged != case["expected"]:
                        counts["mismatches"] += 1
        finally:
            caller.close()

    threads = [threading.Thread(target=client_loop, args=(i,), daemon=True) for i in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = max(time.monotonic() - start, 1e-9)
    done = len(lat)
    return {
        "elapsed_s": round(elapsed, 2), "requests_ok": done, "errors": sum(errors.values()), "errors_by_code": errors,
        "unfinished": counts["unfinished"], "mismatches_vs_structural": counts["mismatches"],
        "requests_per_s": done / elapsed,
        "latency_s": {"p50": percentile(lat, 0.5), "p90": percentile(lat, 0.9), "p99": percentile(lat, 0.99),
                      "mean": sum(lat) / done if done else float("nan"), "max": max(lat) if lat else float("nan")},
        "output_tokens_per_s": counts["out_tokens"] / elapsed,
    }


def wait_serving(target: str, proc: subprocess.Popen | None) -> None:
    from fastapply.client import FastApplyClient

    with FastApplyClient(target) as c:
        c.wait_ready(30)
        while c.health() != "SERVING":
            if proc is not None and proc.poll() is not None:
                raise SystemExit("the server exited while loading the model")
            time.sleep(0.5)


def run(args) -> list[dict]:
    """One report per protocol, measured one after the other against the same server process."""
    cases = load_cases(args.engine, Path(args.cases), args.limit)
    proc, metrics_url = None, None
    if args.server:
        target, url = args.server, args.http
    else:
        proc, target, url, metrics_url = start_server(args)
    protocols = ["grpc", "http"] if args.protocol == "both" else [args.protocol]
    if "http" in protocols and not url:
        raise SystemExit("--protocol http against --server needs --http URL")
    reports = []
    try:
        t_ready = time.monotonic()
        wait_serving(target, proc)
        ready_s = time.monotonic() - t_ready
        for protocol in protocols:
            make = (lambda: GrpcCaller(target)) if protocol == "grpc" else (lambda: HttpCaller(url))
            warm = make()  # one request first: HTTP's first model-free answer loads the usage tokenizer
            try:
                for case in cases if args.warm_all else cases[:1]:
                    warm.call(case, args, WARM_UP_TIMEOUT_S)
            finally:
                warm.close()
            before, client0 = scrape(metrics_url), _cpu_seconds()
            report = {"protocol": protocol, "engine": args.engine, "clients": args.clients, "seconds": args.seconds,
                      "stream": args.stream, "cases": len(cases), "warm_all": args.warm_all,
                      "server_ready_s": round(ready_s, 2),
                      **measure(make, cases, args)}
            after = scrape(metrics_url)
            report |= _cpu_figures(before, after, _cpu_seconds() - client0, report["requests_ok"])
            server = _server_figures(before, after)
            if server:
                report["server"] = server
            reports.append(report)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    return reports


def _cpu_seconds() -> float:
    """This process's CPU time: the clients' (they share the machine with the server)."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _cpu_figures(before: dict[str, float], after: dict[str, float], client_s: float, done: int) -> dict:
    """CPU seconds the server and the clients spent over the window, and per completed request: on
    a machine whose cores the clients share, what each protocol costs the server itself."""
    out = {"client_cpu_s": round(client_s, 2),
           "client_cpu_ms_per_request": round(1000 * client_s / done, 2) if done else None}
    key = "process_cpu_seconds_total"
    if key in after and key in before:
        server_s = after[key] - before[key]
        out |= {"server_cpu_s": round(server_s, 2),
                "server_cpu_ms_per_request": round(1000 * server_s / done, 2) if done else None}
    return out


def _server_figures(before: dict[str, float], after: dict[str, float]) -> dict:
    """The model engines' decode figures over this protocol's window (counters differenced)."""
    if not after:
        return {}
    d = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in (
        "fastapply_output_tokens_total", "fastapply_decode_seconds_total", "fastapply_drafted_tokens_total",
        "fastapply_accepted_tokens_total", "fastapply_forward_passes_total")}
    dec, drafted = d["fastapply_decode_seconds_total"], d["fastapply_drafted_tokens_total"]
    return {"fastapply_tokens_per_second": d["fastapply_output_tokens_total"] / dec if dec > 0 else float("nan"),
            "fastapply_acceptance_ratio": d["fastapply_accepted_tokens_total"] / drafted if drafted else float("nan"),
            "fastapply_forward_passes_total": d["fastapply_forward_passes_total"],
            "fastapply_output_tokens_total": d["fastapply_output_tokens_total"]}


def print_report(r: dict) -> None:
    lat = r["latency_s"]
    print(f"protocol={r['protocol']} engine={r['engine']} clients={r['clients']} window={r['seconds']}s "
          f"stream={r['stream']} cases={r['cases']} (server ready in {r['server_ready_s']}s)")
    print(f"  requests ok      {r['requests_ok']}  ({r['requests_per_s']:.1f} req/s over {r['elapsed_s']}s)")
    print(f"  latency          p50 {lat['p50'] * 1000:.1f} ms   p90 {lat['p90'] * 1000:.1f} ms   "
          f"p99 {lat['p99'] * 1000:.1f} ms   max {lat['max'] * 1000:.1f} ms")
    print(f"  errors           {r['errors']} {r['errors_by_code'] or ''}")
    print(f"  unfinished       {r['unfinished']} (still running when the window closed)")
    print(f"  mismatches       {r['mismatches_vs_structural']} (result differs from the in-process structural merge)")
    if r.get("server_cpu_ms_per_request") is not None:
        print(f"  CPU per request  server {r['server_cpu_ms_per_request']:.1f} ms, clients "
              f"{r['client_cpu_ms_per_request']:.1f} ms (server {r['server_cpu_s']} s, clients {r['client_cpu_s']} s)")
    if r["engine"] != "structural":
        srv = r.get("server", {})
        print(f"  output tokens/s  {r['output_tokens_per_s']:.1f} aggregate; server decode "
              f"{srv.get('fastapply_tokens_per_second', float('nan')):.1f} tokens/s, acceptance "
              f"{srv.get('fastapply_acceptance_ratio', float('nan')):.2f}")


def print_table(reports: list[dict]) -> None:
    print("| protocol | engine | clients | completed | req/s | p50 | p99 | errors | unfinished |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in reports:
        lat = r["latency_s"]
        print(f"| {r['protocol']} | {r['engine']} | {r['clients']} | {r['requests_ok']} | {r['requests_per_s']:.1f} | "
              f"{lat['p50'] * 1000:.0f} ms | {lat['p99'] * 1000:.0f} ms | {r['errors']} | {r['unfinished']} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.load", description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--engine", default="structural", choices=("auto", "speculative", "plain", "structural"))
    ap.add_argument("--protocol", default="grpc", choices=["grpc", "http", "both"],
                    help="gRPC ApplyEdit, HTTP /v1/chat/completions, or both one after the other (default grpc)")
    ap.add_argument("--stream", action="store_true", help="streaming calls (ApplyEditStream; HTTP stream=true)")
    ap.add_argument("--cases", default=str(DEFAULT_CASES), help="JSONL cases for the structural engine")
    ap.add_argument("--limit", type=int, default=None, help="use at most this many cases")
    ap.add_argument("--server", default=None, help="HOST:PORT of a running server's gRPC (default: start one)")
    ap.add_argument("--http", default=None, help="URL of that server's HTTP API (with --server and --protocol http)")
    ap.add_argument("--model", default=None, help="model for the server it starts")
    ap.add_argument("--max-queue", type=int, default=None, help="server model queue bound (default: --clients)")
    ap.add_argument("--max-output-tokens", type=int, default=None)
    ap.add_argument("--grace", type=float, default=2.0, help="seconds a running request may overrun the window")
    ap.add_argument("--warm-all", action="store_true",
                    help="send every case once before each window (a server that has seen each file), not just one")
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    reports = run(args)
    for r in reports:
        print_report(r)
    print_table(reports)
    if args.json:
        Path(args.json).write_text(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
