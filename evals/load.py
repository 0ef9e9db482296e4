"""Load benchmark for the gRPC server: N concurrent clients for a bounded time.

    .venv/bin/python -m evals.load --clients 32 --seconds 20 --engine structural --json /tmp/load_structural.json
    .venv/bin/python -m evals.load --clients 32 --seconds 60 --engine speculative --json /tmp/load_model.json

Starts `fastapply serve` on a free 127.0.0.1 port as a subprocess (or uses `--server HOST:PORT`),
waits until health is SERVING (the model is loaded for the model engines), then runs `--clients`
threads, each with its own channel, sending requests back to back for `--seconds`. A request still
running when the window closes gets `--grace` more seconds, then its deadline cancels it; it is
counted as `unfinished`, not as an error. Prints requests/s, latency percentiles and errors by
status code; `--json OUT` writes the same figures.

Inputs: the structural engine cycles through the shared-eval cases it merges (commits_dev.jsonl);
the model engines use small built-in files (a few lines each) so that one request takes seconds on
a CPU.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CASES = REPO.parent / "shared" / "evals" / "commits_dev.jsonl"

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


def start_server(args) -> tuple[subprocess.Popen, str, str | None]:
    cmd = [sys.executable, "-m", "fastapply.cli", "serve", "--host", "127.0.0.1", "--port", "0",
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
        m = re.search(r"serving on (\S+) .*?(?:metrics on (\S+))?$", line.strip())
        if m:
            threading.Thread(target=p.stderr.read, daemon=True).start()  # keep draining its log
            return p, m.group(1), m.group(2)


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


def run(args) -> dict:
    from fastapply.api import ApplyError, TextDelta
    from fastapply.client import FastApplyClient

    cases = load_cases(args.engine, Path(args.cases), args.limit)
    proc = None
    metrics_url = None
    if args.server:
        target = args.server
    else:
        proc, target, metrics_url = start_server(args)
    t_ready = time.monotonic()
    try:
        with FastApplyClient(target) as c:
            c.wait_ready(30)
            while c.health() != "SERVING":
                if proc is not None and proc.poll() is not None:
                    raise SystemExit("the server exited while loading the model")
                time.sleep(0.5)
        ready_s = time.monotonic() - t_ready

        lat: list[float] = []
        errors: dict[str, int] = {}
        unfinished = 0
        mismatches = 0
        out_tokens = 0
        lock = threading.Lock()
        start = time.monotonic() + 0.2
        end = start + args.seconds

        def client_loop(i: int) -> None:
            nonlocal unfinished, mismatches, out_tokens
            k = i
            with FastApplyClient(target) as cl:
                cl.wait_ready(30)
                while time.monotonic() < start:
                    time.sleep(0.005)
                while time.monotonic() < end:
                    case = cases[k % len(cases)]
                    k += args.clients
                    kw = dict(language=case["language"], engine=args.engine,
                              max_output_tokens=args.max_output_tokens,
                              timeout=max(0.05, end - time.monotonic()) + args.grace)
                    t0 = time.monotonic()
                    try:
                        if args.stream:
                            result = None
                            for ev in cl.apply_stream(case["original"], case["update"], **kw):
                                if not isinstance(ev, TextDelta):
                                    result = ev
                        else:
                            result = cl.apply(case["original"], case["update"], **kw)
                    except ApplyError as e:
                        t1 = time.monotonic()
                        with lock:
                            if e.code == "deadline_exceeded" and t1 >= end:
                                unfinished += 1
                            else:
                                name = getattr(getattr(e, "status", None), "name", e.code)
                                errors[name] = errors.get(name, 0) + 1
                        continue
                    t1 = time.monotonic()
                    with lock:
                        lat.append(t1 - t0)
                        out_tokens += result.stats.output_tokens
                        if case.get("expected") is not None and result.merged != case["expected"]:
                            mismatches += 1

        threads = [threading.Thread(target=client_loop, args=(i,), daemon=True) for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = max(time.monotonic() - start, 1e-9)
        server_metrics = scrape(metrics_url)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()

    done = len(lat)
    report = {
        "engine": args.engine, "clients": args.clients, "seconds": args.seconds, "stream": args.stream,
        "cases": len(cases), "server_ready_s": round(ready_s, 2), "elapsed_s": round(elapsed, 2),
        "requests_ok": done, "errors": sum(errors.values()), "errors_by_code": errors, "unfinished": unfinished,
        "mismatches_vs_structural": mismatches,
        "requests_per_s": done / elapsed,
        "latency_s": {"p50": percentile(lat, 0.5), "p90": percentile(lat, 0.9), "p99": percentile(lat, 0.99),
                      "mean": sum(lat) / done if done else float("nan"), "max": max(lat) if lat else float("nan")},
        "output_tokens_per_s": out_tokens / elapsed,
    }
    if server_metrics:
        report["server"] = {k: server_metrics.get(k) for k in (
            "fastapply_tokens_per_second", "fastapply_acceptance_ratio", "fastapply_forward_passes_total",
            "fastapply_output_tokens_total") if k in server_metrics}
    return report


def print_report(r: dict) -> None:
    lat = r["latency_s"]
    print(f"engine={r['engine']} clients={r['clients']} window={r['seconds']}s stream={r['stream']} "
          f"cases={r['cases']} (server ready in {r['server_ready_s']}s)")
    print(f"  requests ok      {r['requests_ok']}  ({r['requests_per_s']:.1f} req/s over {r['elapsed_s']}s)")
    print(f"  latency          p50 {lat['p50'] * 1000:.1f} ms   p90 {lat['p90'] * 1000:.1f} ms   "
          f"p99 {lat['p99'] * 1000:.1f} ms   max {lat['max'] * 1000:.1f} ms")
    print(f"  errors           {r['errors']} {r['errors_by_code'] or ''}")
    print(f"  unfinished       {r['unfinished']} (still running when the window closed)")
    print(f"  mismatches       {r['mismatches_vs_structural']} (result differs from the in-process structural merge)")
    if r["engine"] != "structural":
        srv = r.get("server", {})
        print(f"  output tokens/s  {r['output_tokens_per_s']:.1f} aggregate; server decode "
              f"{srv.get('fastapply_tokens_per_second', float('nan')):.1f} tokens/s, acceptance "
              f"{srv.get('fastapply_acceptance_ratio', float('nan')):.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.load", description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--engine", default="structural", choices=["structural", "speculative", "plain"])
    ap.add_argument("--stream", action="store_true", help="use ApplyEditStream instead of ApplyEdit")
    ap.add_argument("--cases", default=str(DEFAULT_CASES), help="JSONL cases for the structural engine")
    ap.add_argument("--limit", type=int, default=None, help="use at most this many cases")
    ap.add_argument("--server", default=None, help="HOST:PORT of a running server (default: start one)")
    ap.add_argument("--model", default=None, help="model for the server it starts")
    ap.add_argument("--max-queue", type=int, default=None, help="server model queue bound (default: --clients)")
    ap.add_argument("--max-output-tokens", type=int, default=None)
    ap.add_argument("--grace", type=float, default=2.0, help="seconds a running request may overrun the window")
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    report = run(args)
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
