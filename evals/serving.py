"""Serving benchmark: the HF engine against vLLM (with fastapply's proposer, plain, and vLLM's ngram).

    .venv/bin/python -m evals.serving --cases evals/cases/commits_dev.jsonl --limit 8 --max-lines 120 \\
        --clients 1,8 --json /tmp/serving.json

Starts `fastapply serve` for each configuration and sends the same cases, greedy, through the
gRPC server with N concurrent clients:

- `hf`: fastapply's own engine (`--backend hf`, speculative, drafted by the structural merge);
- `vllm_fastapply`: vLLM with fastapply's drafter as its custom proposer (`--backend vllm`);
- `vllm_plain`: vLLM without speculation (`--speculation none`);
- `vllm_ngram`: vLLM's own `ngram` proposer at the same K (`--speculation ngram`).

Fair load on a shared machine: configurations run in pairs, both servers up at once (an idle
vLLM server sleeps): vLLM + proposer beside plain vLLM, then beside ngram, then beside HF. In a
pair the cases go in batches of N (one case per client); each batch runs on both servers in turn,
the order swapped from batch to batch, so that a change in the machine's load falls on both
alike; every ratio is taken within one pair. Output tokens/s of a configuration at N clients =
its output tokens / its batches' wall time (`tokens_per_s` gives each configuration's figure from
the first pair that measured it; `tokens_per_s_by_group` all). `identical`: every case's merged
file and output token count from vLLM + proposer equal those of vLLM without speculation. The JSON is
rewritten after each batch, so an interrupted run leaves what it measured.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from evals.common import load_cases, write_json
from evals.load import SMALL_CASES, CallFailed, GrpcCaller, wait_serving

REPO = Path(__file__).resolve().parent.parent
CONFIGS = ("hf", "vllm_fastapply", "vllm_plain", "vllm_ngram")
# Configurations measured side by side (servers up together, batches interleaved). One vLLM server
# holds ~7 GiB of RAM on CPU (front process, engine core, worker), so two at a time: vLLM +
# proposer beside each other configuration in turn, and every ratio is taken within one pair.
GROUPS = (("vllm_fastapply", "vllm_plain"), ("vllm_fastapply", "vllm_ngram"), ("vllm_fastapply", "hf"))
ORDER = ("pairs of servers up together; in a pair the cases go in batches of N (one per client), each batch "
         "on both in turn, the order swapped per batch; ratios are taken within one pair")
CALL_TIMEOUT_S = 3600.0  # one request; plain vLLM on two CPU cores runs a 1k-token file for minutes


def serve_flags(config: str, max_draft: int) -> list[str]:
    return {"hf": ["--backend", "hf"],
            "vllm_fastapply": ["--backend", "vllm", "--speculation", "fastapply", "--max-draft", str(max_draft)],
            "vllm_plain": ["--backend", "vllm", "--speculation", "none"],
            "vllm_ngram": ["--backend", "vllm", "--speculation", "ngram", "--max-draft", str(max_draft)]}[config]


def start_server(config: str, args, log_dir: Path) -> tuple[subprocess.Popen, str]:
    """`fastapply serve` for one configuration on a free port; returns when it listens."""
    cmd = [sys.executable, "-m", "fastapply.cli", "serve", "--host", "127.0.0.1", "--port", "0",
           "--max-queue", "64", "--workers", "64", *serve_flags(config, args.max_draft)]
    for flag in ("model", "device", "dtype"):
        if getattr(args, flag):
            cmd += [f"--{flag}", getattr(args, flag)]
    log = open(log_dir / f"serve_{config}.log", "w", buffering=1)  # noqa: SIM115 (open while the server runs)
    p = subprocess.Popen(cmd, cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    while True:
        line = p.stderr.readline()
        if not line:
            log.close()
            raise SystemExit(f"the {config} server did not start; see {log.name}")
        log.write(line)
        m = re.search(r"serving on (\S+) ", line)
        if m:
            threading.Thread(target=lambda: [log.write(x) for x in p.stderr], daemon=True).start()
            return p, m.group(1)


def run_batch(target: str, batch: list[dict]) -> tuple[float, list[dict]]:
    """All cases of `batch` at once, one client (channel) each: (wall seconds, one record per case)."""
    call_args = SimpleNamespace(engine="speculative", max_output_tokens=None, stream=False)
    records: list[dict] = [{} for _ in batch]
    callers = [GrpcCaller(target) for _ in batch]

    def one(i: int) -> None:
        t0 = time.monotonic()
        try:
            merged, tokens = callers[i].call(batch[i], call_args, CALL_TIMEOUT_S)
            records[i] = {"id": batch[i].get("id"), "merged": merged, "tokens": tokens}
        except CallFailed as e:
            records[i] = {"id": batch[i].get("id"), "error": e.name}
        records[i]["seconds"] = round(time.monotonic() - t0, 3)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(batch))]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    for c in callers:
        c.close()
    return wall, records


def summarize(results: dict) -> dict:
    """The summary block from `results[group][config][n]`: tokens/s per configuration and client
    count (from the first group that ran it), `identical`, and the ratios, each within one group."""
    tps: dict[str, dict[str, float]] = {}
    by_group: dict[str, dict[str, dict[str, float]]] = {}
    for group, configs in results.items():
        for config, by_n in configs.items():
            for n, r in by_n.items():
                if r["seconds"] > 0:
                    v = round(r["tokens"] / r["seconds"], 2)
                    by_group.setdefault(group, {}).setdefault(config, {})[n] = v
                    tps.setdefault(config, {}).setdefault(n, v)

    def ratio(a: str, b: str, n: int) -> float | None:
        for figures in by_group.values():  # both measured in the same group: the same machine load
            x, y = figures.get(a, {}).get(str(n)), figures.get(b, {}).get(str(n))
            if x and y:
                return round(x / y, 3)
        return None

    return {"identical": identical(results, "vllm_fastapply", "vllm_plain"),
            "hf_identical_to_vllm_plain": identical(results, "hf", "vllm_plain"),
            "tokens_per_s": tps, "tokens_per_s_by_group": by_group,
            "vllm_vs_hf_8_clients": ratio("vllm_fastapply", "hf", 8),
            "speedup_vs_vllm_plain_1_client": ratio("vllm_fastapply", "vllm_plain", 1),
            "speedup_vs_vllm_ngram_1_client": ratio("vllm_fastapply", "vllm_ngram", 1)}


def identical(results: dict, a: str, b: str) -> bool | None:
    """Did `a` and `b` give the same file and token count for every case both ran, in any group
    and at any client count (None: no case in common)?"""
    runs: dict[str, list[dict]] = {a: [], b: []}
    for configs in results.values():
        for config in (a, b):
            for r in configs.get(config, {}).values():
                runs[config] += r["cases"]
    ref = {x["id"]: x for x in runs[b]}
    pairs = [(x, ref[x["id"]]) for x in runs[a] if x["id"] in ref]
    if not pairs:
        return None
    return all("error" not in x and "error" not in y and x["merged"] == y["merged"] and x["tokens"] == y["tokens"]
               for x, y in pairs)


def run(args) -> dict:
    cases = load_cases(args.cases, args.limit, args.max_lines)
    if not cases:
        raise SystemExit(f"no cases in {args.cases} (with --max-lines {args.max_lines})")
    for i, c in enumerate(cases):
        c.setdefault("id", f"case-{i}")
    clients = [int(x) for x in args.clients.split(",")]
    configs = [c for c in args.configs.split(",") if c]
    bad = sorted(set(configs) - set(CONFIGS))
    if bad:
        raise SystemExit(f"unknown config(s) {', '.join(bad)}; use {', '.join(CONFIGS)}")
    groups = [[c for c in group if c in configs] for group in GROUPS]
    groups = [g for g in groups if g]
    log_dir = Path(args.json).with_suffix("") if args.json else Path("/tmp/fastapply-serving")
    log_dir.mkdir(parents=True, exist_ok=True)
    out = {"cases": [c["id"] for c in cases], "clients": clients, "configs": configs, "max_draft": args.max_draft,
           "model": args.model or "default", "groups": groups, "order": ORDER, "server_ready_s": {}, "results": {}}
    servers: dict[str, tuple[subprocess.Popen, str]] = {}
    try:
        for group in groups:
            for config in [c for c in servers if c not in group]:  # free the memory before the next server
                stop_server(servers.pop(config)[0])
            for config in [c for c in group if c not in servers]:
                servers[config] = ready_server(config, args, log_dir, out)
            # The HF pair runs its largest client count first (its 8-client leg is the slowest to come).
            counts = sorted(clients, reverse=True) if "hf" in group and len(groups) > 1 else clients
            measure(out, "+".join(group), cases, counts, group, {c: servers[c][1] for c in group}, args)
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    return out


def ready_server(config: str, args, log_dir: Path, out: dict) -> tuple[subprocess.Popen, str]:
    t0 = time.monotonic()
    proc, target = start_server(config, args, log_dir)
    wait_serving(target, proc)
    # One small request first: first-call costs stay out of the measured batches.
    run_batch(target, [{"original": SMALL_CASES[0][0], "update": SMALL_CASES[0][1], "language": "python"}])
    out["server_ready_s"][config] = round(time.monotonic() - t0, 1)
    print(f"{config}: serving on {target}, ready and warm after {out['server_ready_s'][config]} s", flush=True)
    return proc, target


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()


def measure(out: dict, group_name: str, cases: list[dict], clients: list[int], configs: list[str],
            targets: dict[str, str], args) -> None:
    results = out["results"].setdefault(group_name, {})
    for ci, n in enumerate(clients):
        batches = [cases[i:i + n] for i in range(0, len(cases), n)]
        for b, batch in enumerate(batches):
            k = (b + ci) % len(configs)
            for config in configs[k:] + configs[:k]:
                wall, records = run_batch(targets[config], batch)
                r = results.setdefault(config, {}).setdefault(str(n), {"tokens": 0, "seconds": 0.0, "cases": []})
                r["tokens"] += sum(x.get("tokens", 0) for x in records)
                r["seconds"] = round(r["seconds"] + wall, 3)
                r["cases"] += records
                errors = [x["error"] for x in records if "error" in x]
                print(f"[{group_name}] {n} client(s) batch {b + 1}/{len(batches)} {config}: "
                      f"{sum(x.get('tokens', 0) for x in records)} tokens in {wall:.1f} s"
                      f"{' errors ' + ','.join(errors) if errors else ''}", flush=True)
                out["summary"] = summarize(out["results"])
                if args.json:
                    write_json(args.json, out)


def print_table(out: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    s = out["summary"]
    t = Table(title=f"output tokens/s through the gRPC server ({len(out['cases'])} cases, K={out['max_draft']})")
    t.add_column("config")
    for n in out["clients"]:
        t.add_column(f"{n} client(s)", justify="right")
    for config in out["configs"]:
        t.add_row(config, *[f"{v:.1f}" if (v := s["tokens_per_s"].get(config, {}).get(str(n))) else "-"
                            for n in out["clients"]])
    console = Console()
    console.print(t)
    for key in ("identical", "hf_identical_to_vllm_plain", "vllm_vs_hf_8_clients", "speedup_vs_vllm_plain_1_client",
                "speedup_vs_vllm_ngram_1_client"):
        console.print(f"{key}: {s[key]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.serving", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", required=True, help="JSONL cases (original, update, language)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--max-lines", type=int, default=None, help="only originals of at most this many lines")
    ap.add_argument("--clients", default="1,8", help="comma-separated client counts (default 1,8)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"subset of {','.join(CONFIGS)}")
    ap.add_argument("--max-draft", type=int, default=64, help="K for vLLM's proposers (fastapply and ngram)")
    ap.add_argument("--model", default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    out = run(args)
    if "summary" in out:
        print_table(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
