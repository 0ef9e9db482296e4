"""What a codemod shows and records: a rich progress bar, the final table, the JSON report."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from fastapply.codemod.runner import FileResult, RunResult
from fastapply.fsutil import atomic_write

REPORT_VERSION = 1


class ProgressView:
    """Files done, failures and output tokens/s (over wall time) while the run goes."""

    def __init__(self, console: Console, total: int, enabled: bool = True):
        self.console = console
        self.total = total
        self.enabled = enabled
        self._lock = threading.Lock()
        self._failed = 0
        self._tokens = 0
        self._t0 = time.perf_counter()
        self.progress = Progress(
            SpinnerColumn(), TextColumn("codemod"), BarColumn(),
            TextColumn("{task.completed}/{task.total} files"),
            TextColumn("[red]{task.fields[failed]} failed"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            console=console, disable=not enabled, redirect_stdout=False, redirect_stderr=False, transient=False)
        self.task = self.progress.add_task("codemod", total=total, failed=0, rate="")

    def __enter__(self) -> ProgressView:
        self._t0 = time.perf_counter()
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def update(self, r: FileResult) -> None:
        with self._lock:
            self._failed += r.status == "failed"
            self._tokens += r.stats.output_tokens if r.stats else 0
            elapsed = time.perf_counter() - self._t0
            rate = f"{self._tokens / elapsed:.1f} tok/s" if self._tokens and elapsed > 0 else ""
            self.progress.update(self.task, advance=1, failed=self._failed, rate=rate)


def summary(run: RunResult, *, write: bool, engine: str, server: str | None, load_s: float = 0.0) -> dict:
    rs = run.results
    tokens = sum(r.stats.output_tokens for r in rs if r.stats)
    decode_s = sum(r.stats.decode_s for r in rs if r.stats)
    count = {s: sum(r.status == s for r in rs) for s in ("written", "changed", "unchanged", "failed", "skipped")}
    return {
        "files": len(rs),
        **count,
        "ok": all(r.ok for r in rs) and not run.interrupted,
        "interrupted": run.interrupted,
        "write": write,
        "engine": engine,
        "server": server,
        "model_load_s": round(load_s, 3),
        "wall_s": round(run.wall_s, 3),
        "files_per_s": round(len(rs) / run.wall_s, 3) if run.wall_s > 0 else 0.0,
        "output_tokens": tokens,
        "tokens_per_wall_s": round(tokens / run.wall_s, 2) if run.wall_s > 0 else 0.0,
        "decode_tokens_per_s": round(tokens / decode_s, 2) if decode_s > 0 else 0.0,
        "lines_added": sum(r.added for r in rs),
        "lines_removed": sum(r.removed for r in rs),
        "note": run.git_note,
    }


def file_record(r: FileResult) -> dict:
    stats = None
    if r.stats is not None:
        stats = vars(r.stats) | {"tokens_per_s": round(r.stats.tokens_per_s, 2),
                                 "tokens_per_pass": round(r.stats.tokens_per_pass, 3)}
    return {
        "path": r.path, "status": r.status, "ok": r.ok, "reason": r.reason or None, "message": r.message or None,
        "engine": r.engine, "language": r.language, "lines_added": r.added, "lines_removed": r.removed,
        "elapsed_s": round(r.elapsed_s, 4), "stats": stats, "findings": [vars(f) for f in r.findings],
        "diff": r.diff or None,
        # a refused file: the hint (what to resend), the readings the merge chose between, best first
        "refusal": r.refusal,
    }


def write_report(path: str | Path, summ: dict, run: RunResult, root: Path) -> None:
    doc = {"version": REPORT_VERSION, "root": str(root), "summary": summ,
           "files": [file_record(r) for r in run.results]}
    atomic_write(path, (json.dumps(doc, indent=2) + "\n").encode("utf-8"))


STYLE = {"written": "green", "changed": "cyan", "unchanged": "dim", "failed": "bold red", "skipped": "yellow"}


def render_table(console: Console, run: RunResult, summ: dict, max_ok_rows: int = 200) -> None:
    """One row per file (files that succeeded: the first `max_ok_rows`; failures: all)."""
    with_tokens = summ["output_tokens"] > 0
    t = Table(title="fastapply codemod")
    t.add_column("file", overflow="fold", ratio=3)
    t.add_column("status")
    t.add_column("detail", overflow="fold", ratio=2)
    t.add_column("engine")
    if with_tokens:
        t.add_column("tokens", justify="right")
        t.add_column("tok/s", justify="right")
    t.add_column("time", justify="right")
    hidden = 0
    for r in run.results:
        if r.ok:
            if max_ok_rows <= 0:
                hidden += 1
                continue
            max_ok_rows -= 1
            detail = f"+{r.added} -{r.removed}" if r.status != "unchanged" else ""
            if r.findings:
                detail = (detail + " " if detail else "") + f"({len(r.findings)} notes)"
        else:
            detail = f"{r.reason}: {r.message}"
        s = r.stats
        tokens = [str(s.output_tokens), f"{s.tokens_per_s:.1f}"] if s and s.output_tokens else ["", ""]
        t.add_row(r.path, f"[{STYLE.get(r.status, '')}]{r.status}[/]", detail, r.engine or "",
                  *(tokens if with_tokens else []), f"{r.elapsed_s:.2f}s")
    if hidden:
        t.caption = f"{hidden} more files that succeeded are not shown (see --report)"
    console.print(t)
    verb = "written" if summ["write"] else "would change"
    n_changed = summ["written"] + summ["changed"]
    line = (f"{summ['files']} files: {n_changed} {verb}, {summ['unchanged']} unchanged, "
            f"{summ['failed']} failed, {summ['skipped']} skipped in {summ['wall_s']:.2f}s "
            f"({summ['files_per_s']:.1f} files/s")
    if summ["output_tokens"]:
        line += f", {summ['output_tokens']} tokens, {summ['tokens_per_wall_s']:.1f} tok/s"
    line += ")"
    if summ["model_load_s"]:
        line += f"; model load {summ['model_load_s']:.1f}s"
    console.print(line, highlight=False)
    if run.interrupted:
        console.print("[yellow]interrupted: every file is either unchanged or fully written[/]")
    if summ["note"]:
        console.print(f"[yellow]note: {summ['note']}[/]")
    if not summ["write"] and n_changed:
        console.print("dry run: nothing written (add --write)", highlight=False)
