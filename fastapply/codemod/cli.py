"""`fastapply codemod`: apply a batch of lazy edit snippets to files under a root.

Dry run by default: the unified diffs go to stdout (in manifest order; `git apply`-able), the
progress bar, the table and the summary to stderr. `--write` writes each file atomically under
the rules in `fastapply.codemod.runner`.

Exit codes: 0 every file succeeded (written, would change, or unchanged); 1 any file failed or
was skipped; 2 bad usage (bad manifest line, duplicate file, bad option), before anything runs;
130 interrupted (Ctrl-C): every file is then either unchanged or fully written.

Two manifest entries for the same file (also through a symlink) are a usage error: each snippet
is merged into the file as it is on disk, so merge the snippets or run the codemod twice.
With --server, the model options are the server's; --jobs calls run at once.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from fastapply.api import DEFAULT_ENGINE, ENGINES, Applier, ApplyError
from fastapply.cli_common import EXIT_FAIL, add_model_args, add_model_budget_arg, draft_model_option
from fastapply.codemod.manifest import load_update_dir, parse_manifest, plan, usage
from fastapply.codemod.report import ProgressView, render_table, summary, write_report
from fastapply.codemod.runner import Options, Runner
from fastapply.fsutil import read_token_file

if TYPE_CHECKING:
    from fastapply.remote import RemoteApplier

EXIT_INTERRUPTED = 130


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "codemod", help="apply many update snippets to files under a root (dry run unless --write)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--manifest", metavar="FILE",
                     help='JSON Lines, one {"path", "update", "instruction"?} per line; paths relative to --root')
    src.add_argument("--update-dir", metavar="DIR", help="DIR/<relative path> holds the snippet for each file")
    p.add_argument("--root", default=".", help="the folder the paths are relative to (default: .)")
    p.add_argument("--write", action="store_true", help="write the files (atomically); default: dry run")
    p.add_argument("--allow-dirty", action="store_true",
                   help="in a git work tree, also write files that are untracked or have uncommitted changes")
    p.add_argument("--engine", default=DEFAULT_ENGINE, choices=ENGINES)
    p.add_argument("--instruction", default=None, help="instruction for entries that have none")
    p.add_argument("--max-output-tokens", type=int, default=None)
    add_model_budget_arg(p)
    p.add_argument("--server", metavar="HOST:PORT", default=None,
                   help="send the requests to a fastapply gRPC server instead of loading a model here")
    p.add_argument("--token-file", default=None, help="file holding the --server's bearer token")
    p.add_argument("--tls-ca", default=None, help="CA certificate (PEM) to verify the --server; enables TLS")
    p.add_argument("--timeout", type=float, default=None, help="deadline per --server call, in seconds")
    p.add_argument("--jobs", type=int, default=4,
                   help="files in flight at once (default 4); in process they share one model")
    p.add_argument("--report", metavar="FILE", default=None, help="write per-file results and stats as JSON")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failure (no further writes)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--quiet", action="store_true", help="no diffs and no table (the summary line stays)")
    add_model_args(p)
    p.set_defaults(func=run_codemod)


def make_applier(args, console: Console, need_model: bool) -> tuple[Applier | RemoteApplier, float]:
    """The in-process Applier (model loaded up front when needed) or the server's; and load seconds."""
    if args.server:
        from fastapply.remote import RemoteApplier

        if args.draft_model:
            console.print("codemod: note: --draft-model is ignored with --server (the server's own option)",
                          highlight=False)

        token = read_token_file(args.token_file) if args.token_file else None
        remote = RemoteApplier(args.server, token=token, tls_ca=args.tls_ca, timeout=args.timeout)
        try:
            remote.check()
        except ApplyError as e:
            remote.close()
            raise ApplyError(e.code, f"--server {args.server}: {e.message}; nothing was run", e.reasons) from None
        return remote, 0.0
    applier = Applier(model_name=args.model, device=args.device, dtype=args.dtype,
                      backend_options=draft_model_option(args, args.engine))
    load_s = 0.0
    if need_model:
        t0 = time.perf_counter()
        with console.status("loading the model", spinner="dots"):
            applier.model  # noqa: B018 - load once here, not in the first job
        load_s = time.perf_counter() - t0
    return applier, load_s


def run_codemod(args, before_write: Callable[[Path], None] | None = None,
                console: Console | None = None, out=None) -> int:
    """The subcommand; `before_write` is the runner's test seam (see `Runner`)."""
    console = console or Console(stderr=True)
    out = out or sys.stdout
    root = Path(args.root)
    if not root.is_dir():
        raise usage(f"--root {args.root!r} is not a directory")
    if args.jobs < 1:
        raise usage("--jobs must be at least 1")
    if args.max_output_tokens is not None and args.max_output_tokens <= 0:
        raise usage("--max-output-tokens must be positive")
    root = root.resolve()
    entries = parse_manifest(args.manifest) if args.manifest else load_update_dir(args.update_dir)
    targets = plan(entries, root)

    need_model = args.engine != "structural" and any(t.real is not None for t in targets)
    applier, load_s = make_applier(args, console, need_model)
    opts = Options(root=root, write=args.write, engine=args.engine, instruction=args.instruction,
                   max_output_tokens=args.max_output_tokens, model_budget_s=args.model_budget, jobs=args.jobs,
                   fail_fast=args.fail_fast,
                   allow_dirty=args.allow_dirty)
    try:
        with ProgressView(console, len(targets), enabled=not args.no_progress) as view:
            run = Runner(applier, opts, on_result=view.update, before_write=before_write).run(targets)
    finally:
        applier.close()

    summ = summary(run, write=args.write, engine=args.engine, server=args.server, load_s=load_s)
    if not args.write and not args.quiet:
        for r in run.results:
            out.write(r.diff)
        out.flush()
    if args.report:
        write_report(args.report, summ, run, root)
    if args.quiet:
        console.print(f"codemod: {summ['files']} files, {summ['written'] + summ['changed']} changed, "
                      f"{summ['failed']} failed, {summ['skipped']} skipped", highlight=False)
    else:
        render_table(console, run, summ)
    if run.interrupted:
        return EXIT_INTERRUPTED
    return 0 if summ["ok"] else EXIT_FAIL

