"""Run a codemod: apply each entry, report it, and write it only under the write rules.

Write rules (`--write`), checked per file; a file that fails any of them is left untouched:
- its path stays inside the root (`manifest.resolve_target`);
- in a git work tree, it is tracked and has no uncommitted changes (staged or not), unless
  `allow_dirty`; an untracked or ignored file has no committed copy to go back to, so it counts
  as uncommitted;
- the result passed validation (`ApplyResult.ok`);
- the bytes on disk are still exactly those read when its apply started (else "changed during
  run"); the check is a re-read right before the rename, so a change landing in between those
  two is the one window left;
- the write is atomic (`fsutil.atomic_write`: temp file in the same folder, fsync, rename, mode
  kept) and the line endings are those read (`SourceFile.encode`).

Jobs run in a thread pool, also with `jobs=1`, so that Ctrl-C only ever reaches the main thread:
it sets the stop flag, in-flight model decodes stop at their next check (`should_stop`), no new
write starts, and the writes already started finish their rename. Every file is then either old
or new, and no temp file is left. `--fail-fast` uses the same flag on the first failure.

Jobs run on "an Applier": in process they share one `Applier` (one loaded model; model requests
queue on its lock, structural ones run side by side); with a server (`RemoteApplier`), each job is
one concurrent gRPC call, cancelled on the server when the run stops.
"""

from __future__ import annotations

import difflib
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from fastapply.api import DEFAULT_ENGINE, ApplyError, ApplyRequest, ApplyResult, ErrorCode, Finding, ShouldStop, Stats
from fastapply.codemod.manifest import Target
from fastapply.fsutil import atomic_write, read_source
from fastapply.refusal import payload as refusal_payload

# status: what happened to the file. "changed" = would change (dry run).
OK_STATUSES = ("written", "changed", "unchanged")


@dataclass
class FileResult:
    path: str
    status: str  # written | changed | unchanged | failed | skipped
    reason: str = ""  # failed/skipped: a stable code (see REASONS)
    message: str = ""
    engine: str | None = None
    language: str | None = None
    stats: Stats | None = None
    findings: list[Finding] = field(default_factory=list)
    diff: str = ""
    added: int = 0
    removed: int = 0
    elapsed_s: float = 0.0
    refusal: dict | None = None  # a refused file: hint, readings and hints (`fastapply.refusal.payload`)

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES


# failed/skipped reasons of the run itself (besides the engine's error codes, below)
RUN_REASONS = {
    "unsafe_path": "the path leaves the root",
    "read_error": "missing, unreadable or not UTF-8",
    "dirty": "uncommitted changes in git (use --allow-dirty)",
    "validation": "the result failed validation",
    "changed_during_run": "the file changed on disk during the run",
    "write_error": "the write failed",
    "fail_fast": "not run or not written: an earlier file failed (--fail-fast)",
    "interrupted": "not run or not written: the run was interrupted (Ctrl-C)",
}

# the engine's error codes, as a file's failure reason (the reason is the code itself)
ERROR_REASONS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_ARGUMENT: "bad input",
    ErrorCode.USAGE: "bad usage",
    ErrorCode.TOO_LONG: "too long for the model, or over the structural merge's size cap",
    ErrorCode.REFUSED: "the engine refused",
    ErrorCode.QUEUE_FULL: "the server's queue stayed full",
    ErrorCode.UNAUTHENTICATED: "the server refused the token",
    ErrorCode.UNAVAILABLE: "engine or server unavailable",
    ErrorCode.CANCELLED: "cancelled",
    ErrorCode.DEADLINE_EXCEEDED: "the server call timed out (--timeout)",
    ErrorCode.INTERNAL: "internal error",
}

REASONS: dict[str, str] = {**RUN_REASONS, **{code.value: text for code, text in ERROR_REASONS.items()}}


@dataclass(frozen=True)
class Options:
    root: Path  # real, absolute
    write: bool = False
    engine: str = DEFAULT_ENGINE
    instruction: str | None = None  # for entries without their own
    max_output_tokens: int | None = None
    model_budget_s: float | None = None  # engine auto: per file (None: the applier's default)
    jobs: int = 1
    fail_fast: bool = False
    allow_dirty: bool = False


@dataclass
class RunResult:
    results: list[FileResult]
    wall_s: float
    interrupted: bool = False
    git_note: str = ""  # why no dirty check was made, when it was wanted

    @property
    def failed(self) -> list[FileResult]:
        return [r for r in self.results if not r.ok]


def split_lines(text: str) -> list[str]:
    """Lines with their "\n" (a "\r" stays on its line); unlike str.splitlines, only "\n" splits."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified_diff(path: str, old: str, new: str) -> tuple[str, int, int]:
    """A `git apply`-able diff of `old` -> `new`, and the counts of added and removed lines."""
    out: list[str] = []
    added = removed = 0
    for line in difflib.unified_diff(split_lines(old), split_lines(new), f"a/{path}", f"b/{path}"):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out), added, removed


class GitState:
    """Which files of a git work tree are tracked, and which of those have uncommitted changes.

    Paths are "/"-separated and relative to the top of the work tree; git is asked once per run.
    """

    def __init__(self, top: Path, tracked: set[str], changed: set[str]):
        self.top = top
        self.tracked = tracked
        self.changed = changed

    @classmethod
    def load(cls, root: Path) -> GitState | None:
        """None when `root` is not in a git work tree (or git is missing): no check is possible."""
        def git(*args: str) -> list[str]:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True).stdout
            return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
        try:
            top = Path(git("rev-parse", "--show-toplevel")[0].strip()).resolve()
            tracked = set(git("ls-files", "-z", "--full-name", str(top)))
            status = git("status", "--porcelain=v1", "-z", "--untracked-files=no")
        except (OSError, IndexError, subprocess.CalledProcessError):
            return None
        changed: set[str] = set()
        records = iter(status)
        for rec in records:  # "XY path"; a staged rename or copy is followed by its source path
            changed.add(rec[3:])
            if rec[:1] in ("R", "C"):
                changed.add(next(records, ""))
        return cls(top, tracked, changed)

    def dirty_reason(self, real: Path) -> str:
        """Why writing `real` is refused, or "" when it is committed and unchanged."""
        if not real.is_relative_to(self.top):
            return ""
        rel = real.relative_to(self.top).as_posix()
        if rel not in self.tracked:
            return "not committed to git (untracked or ignored)"
        if rel in self.changed:
            return "has uncommitted changes in git"
        return ""


class AnApplier(Protocol):
    """What the runner needs of an Applier (`fastapply.api.Applier` or `fastapply.remote.RemoteApplier`)."""

    def apply(self, req: ApplyRequest, should_stop: ShouldStop | None = None) -> ApplyResult: ...


class Runner:
    """Applies targets with `applier` under `options`.

    Hooks (called from worker threads):
    - `on_result(result)`: after each file, for progress;
    - `before_write(path)`: a test seam, fired after the file was read and its result computed
      and before the on-disk check and the write (only when the result would change the file);
      tests use it to modify a file mid-run or to send Ctrl-C.
    """

    def __init__(self, applier: AnApplier, options: Options,
                 on_result: Callable[[FileResult], None] | None = None,
                 before_write: Callable[[Path], None] | None = None):
        self.applier = applier
        self.options = options
        self.on_result = on_result
        self.before_write = before_write
        self._stop = threading.Event()
        self._stop_reason = ""
        self._git: GitState | None = None

    def stop(self, reason: str) -> None:
        """No new job and no new write starts; in-flight model work is cancelled (it polls the flag)."""
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()

    def run(self, targets: list[Target]) -> RunResult:
        o = self.options
        git_note = ""
        if o.write and not o.allow_dirty:
            self._git = GitState.load(o.root)
            if self._git is None:
                git_note = "not a git work tree: files written without the uncommitted-changes check"
        t0 = time.perf_counter()
        interrupted = False
        with ThreadPoolExecutor(max_workers=max(1, o.jobs), thread_name_prefix="codemod") as pool:
            futures = [pool.submit(self._job, t) for t in targets]
            while True:  # the main thread only waits, so Ctrl-C lands here and never in a job
                try:
                    if not wait(futures, timeout=0.25).not_done:
                        break
                except KeyboardInterrupt:
                    interrupted = True
                    self.stop("interrupted")
        results = [f.result() for f in futures]
        return RunResult(results, time.perf_counter() - t0, interrupted, git_note)

    def _job(self, target: Target) -> FileResult:
        t0 = time.perf_counter()
        try:
            r = self._apply_one(target)
        except BaseException as e:  # a job never raises: the pool would swallow it
            r = FileResult(target.entry.path, "failed", "internal", f"{type(e).__name__}: {e}")
        r.elapsed_s = time.perf_counter() - t0
        if r.status == "failed" and self.options.fail_fast:
            self.stop("fail_fast")
        if self.on_result:
            self.on_result(r)
        return r

    def _skipped(self, path: str) -> FileResult:
        return FileResult(path, "skipped", self._stop_reason, REASONS[self._stop_reason])

    def _apply_one(self, target: Target) -> FileResult:
        o, entry = self.options, target.entry
        path = entry.path
        if self._stop.is_set():
            return self._skipped(path)
        if target.real is None:
            return FileResult(path, "failed", "unsafe_path", target.unsafe)
        real = target.real
        try:
            src = read_source(real, "file")
        except ApplyError as e:
            return FileResult(path, "failed", "read_error", e.message.replace(str(real), path))
        if self._git is not None:
            why = self._git.dirty_reason(real)
            if why:
                return FileResult(path, "failed", "dirty", f"{why}; not written (use --allow-dirty)")
        if not src.text.strip():
            return FileResult(path, "failed", "invalid_argument", "the file is empty: nothing to apply an edit to")
        req = ApplyRequest(original=src.text, update=entry.update, instruction=entry.instruction or o.instruction,
                           path=path, engine=o.engine, max_output_tokens=o.max_output_tokens,
                           model_budget_s=o.model_budget_s)
        try:
            result = self.applier.apply(req, self._stop.is_set)
        except Exception as e:
            if self._stop.is_set():  # cancelled by the stop
                return self._skipped(path)
            if not isinstance(e, ApplyError):
                raise
            refused = refusal_payload(src.text, entry.update, e.reasons, e.readings, e.hints, e.hint) \
                if e.code == "refused" else None
            return FileResult(path, "failed", e.code.value, e.message, refusal=refused)
        info = dict(engine=result.engine, language=result.language, stats=result.stats, findings=result.findings)
        if not result.ok:
            errors = "; ".join(f.line() for f in result.findings if f.severity == "error")
            return FileResult(path, "failed", "validation", errors, **info)
        new = src.encode(result.merged)
        if new == src.raw:
            return FileResult(path, "unchanged", **info)
        diff, added, removed = unified_diff(path, src.raw.decode("utf-8"), new.decode("utf-8"))
        changes = dict(diff=diff, added=added, removed=removed, **info)
        if not o.write:
            return FileResult(path, "changed", **changes)
        if self.before_write:
            self.before_write(real)
        if self._stop.is_set():
            return self._skipped(path)
        try:
            if real.read_bytes() != src.raw:
                return FileResult(path, "failed", "changed_during_run",
                                  "the file changed on disk after it was read; not written", **changes)
        except OSError as e:
            return FileResult(path, "failed", "changed_during_run", f"cannot re-read the file: {e.strerror}",
                              **changes)
        try:
            atomic_write(real, new)
        except OSError as e:
            return FileResult(path, "failed", "write_error", f"write failed: {e.strerror or e}", **changes)
        return FileResult(path, "written", **changes)
