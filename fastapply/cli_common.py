"""What the `fastapply` subcommands share: argument groups, reading the inputs, printing or
writing one result, and the exit code of each error code."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable

from fastapply.api import (
    DEFAULT_ENGINE,
    DEFAULT_MODEL_BUDGET_S,
    Applier,
    ENGINES,
    ApplyError,
    ApplyRequest,
    ApplyResult,
    ErrorCode,
    Sampling,
    StreamEvent,
    TextDelta,
    decode_utf8,
)
from fastapply.fsutil import SourceFile, atomic_write, read_source

EXIT_FAIL, EXIT_USAGE = 1, 2

# error code -> process exit code: a usage error is 2 (as argparse's own), every other failure 1
EXIT_CODES: dict[ErrorCode, int] = {
    ErrorCode.INVALID_ARGUMENT: EXIT_FAIL,
    ErrorCode.USAGE: EXIT_USAGE,
    ErrorCode.TOO_LONG: EXIT_FAIL,
    ErrorCode.REFUSED: EXIT_FAIL,
    ErrorCode.QUEUE_FULL: EXIT_FAIL,
    ErrorCode.UNAUTHENTICATED: EXIT_FAIL,
    ErrorCode.UNAVAILABLE: EXIT_FAIL,
    ErrorCode.CANCELLED: EXIT_FAIL,
    ErrorCode.DEADLINE_EXCEEDED: EXIT_FAIL,
    ErrorCode.INTERNAL: EXIT_FAIL,
}


def add_model_args(p: argparse.ArgumentParser) -> None:
    """Model options shared by every subcommand that may load a model."""
    p.add_argument("--model", default=None, help="model spec name (default: qwen2.5-coder-0.5b), HF model dir or .gguf")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    p.add_argument("--dtype", default=None, choices=["fp32", "bf16", "fp16"],
                   help="default: fp32 on CPU (exact), bf16 on CUDA")
    p.add_argument("--draft-model", default=None, metavar="NAME",
                   help="hf backend: a small model with the target's tokenizer (e.g. qwen2.5-coder-0.5b for a "
                        "Qwen2.5-Coder target) that drafts where the file has nothing; off by default")


def add_backend_args(p: argparse.ArgumentParser) -> None:
    """The model backend and the vLLM backend's options (`fastapply apply`, `fastapply serve`)."""
    p.add_argument("--backend", default="hf", choices=["hf", "vllm"],
                   help="hf: fastapply's own decode loop (default); vllm: vLLM's engine with fastapply's "
                        "drafter as its proposer (continuous batching; install with `make vllm`)")
    p.add_argument("--tensor-parallel-size", type=int, default=None, help="vllm: split the model over N GPUs")
    p.add_argument("--max-draft", type=int, default=None, help="vllm: draft tokens per step at most, 1-128 (default 64)")
    p.add_argument("--speculation", default=None, choices=["fastapply", "ngram", "none"],
                   help="vllm: the proposer: fastapply's drafter (default), vLLM's ngram, or none")


_VLLM_OPTIONS = ("tensor_parallel_size", "max_draft", "speculation")


def draft_model_option(args, engine: str | None = None) -> dict:
    """The backend option of `--draft-model`, checked before any request: the name, and that its
    tokenizer is the target's. With the structural engine no model runs: ignored, with a note."""
    draft = getattr(args, "draft_model", None)
    if not draft:
        return {}
    if engine == "structural":
        print("fastapply: note: --draft-model is ignored with --engine structural (no model runs)", file=sys.stderr)
        return {}
    if getattr(args, "backend", "hf") != "hf":
        raise ApplyError("usage", "--draft-model: only with --backend hf (vLLM drafts with fastapply's proposer)")
    from fastapply.model_draft import check_draft_pair

    check_draft_pair(args.model, draft)
    return {"draft_model": draft}


def applier_from_args(args) -> Applier:
    """The Applier of a command's model arguments; bad backend options fail here, before anything starts."""
    backend = getattr(args, "backend", "hf")
    options = {k: getattr(args, k) for k in _VLLM_OPTIONS if getattr(args, k, None) is not None}
    if options and backend != "vllm":
        flags = ", ".join("--" + k.replace("_", "-") for k in options)
        raise ApplyError("usage", f"{flags}: only with --backend vllm")
    options |= draft_model_option(args, getattr(args, "engine", None))
    applier = Applier(model_name=args.model, device=args.device, dtype=args.dtype, backend=backend,
                      backend_options=options, model_budget_s=getattr(args, "model_budget", None))
    if backend != "hf":  # the hf engine has nothing to check before loading (and importing it costs torch)
        applier.check()
    return applier


def add_request_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--instruction", default=None, help="what the edit does (optional)")
    p.add_argument("--engine", default=DEFAULT_ENGINE, choices=ENGINES)
    p.add_argument("--language", default=None, help="override language detection")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--max-output-tokens", type=int, default=None)
    p.add_argument("--section", action="store_true",
                   help="the file is a section of a larger file, to be spliced back in its place: both its edges are "
                        "cuts, so nothing is written beyond its first or last line and a snippet that restates code "
                        "beyond them is refused")
    add_model_budget_arg(p)


def add_model_budget_arg(p: argparse.ArgumentParser, default_help: str | None = None) -> None:
    p.add_argument("--model-budget", type=float, default=None, metavar="SECONDS",
                   help="engine auto: seconds the model may spend on a refused merge (judging its readings, then "
                        "writing), after which the refusal is answered with its readings; 0: no limit "
                        f"({default_help or f'default {DEFAULT_MODEL_BUDGET_S:g}'})")


def request_from_args(args, original: str, update: str, path: str | None) -> ApplyRequest:
    return ApplyRequest(original=original, update=update, instruction=args.instruction, language=args.language,
                        path=path, engine=args.engine,
                        sampling=Sampling(args.temperature, args.top_p, args.seed),
                        max_output_tokens=args.max_output_tokens, model_budget_s=args.model_budget,
                        section=args.section)


def add_apply_output_args(p: argparse.ArgumentParser) -> None:
    """Input/output options shared by `apply` and `client apply`."""
    p.add_argument("file")
    p.add_argument("--update", required=True, help="the update snippet file, or - for stdin")
    p.add_argument("--in-place", action="store_true", help="write the merged file back (atomically) if it is valid")
    p.add_argument("--stream", action="store_true", help="print text as it is verified")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--force", action="store_true",
                   help="print the output even if validation failed (never writes it); with --in-place: "
                        "replace a read-only file (a valid result only, its mode kept)")
    p.add_argument("--quiet", action="store_true", help="no stats line")
    p.add_argument("--show-readings", action="store_true",
                   help="when the merge refuses, print the files it was choosing between (readings) as diffs "
                        "against the original, on stdout (nothing is written)")


def read_apply_inputs(args) -> tuple[SourceFile, ApplyRequest]:
    src = read_source(args.file, "file")
    if args.in_place and not args.force and read_only(src.path):
        # as editors do: a read-only file is not replaced unless asked (before any work is done)
        raise ApplyError("invalid_argument", f"{args.file} is read-only; nothing written (--force replaces it)")
    if not src.text.strip():
        raise ApplyError("invalid_argument", f"file {args.file!r} is empty: nothing to apply an edit to")
    if args.update == "-":
        update = decode_utf8(sys.stdin.buffer.read(), "update from stdin")
    else:
        update = read_source(args.update, "update").text
    return src, request_from_args(args, src.text, update, args.file)


def wants_stream(args) -> bool:
    return args.stream and not args.in_place and not args.json


def write_stdout(src: SourceFile, text: str) -> None:
    """Print merged text with the file's own line endings (a CRLF file keeps its CRs): bytes to
    stdout's buffer, so that no text layer translates them."""
    data = src.encode(text)
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text-only stream (embedding callers): the best it can take
        sys.stdout.write(data.decode("utf-8"))
    else:
        sys.stdout.flush()
        out.write(data)
    sys.stdout.flush()


def finish_apply(args, src: SourceFile, events: Iterable[StreamEvent]) -> int:
    """Print or write the result of one apply (local or remote) and return the exit code."""
    stream = wants_stream(args)
    result: ApplyResult | None = None
    for ev in events:
        if isinstance(ev, TextDelta):
            if stream:
                write_stdout(src, ev.text)
        else:
            result = ev
    assert result is not None
    errors = [f for f in result.findings if f.severity == "error"]
    if args.json:
        print(json.dumps({"merged": result.merged, "engine": result.engine, "language": result.language,
                          "ok": result.ok, "stats": vars(result.stats) | {"tokens_per_s": result.stats.tokens_per_s},
                          "findings": [vars(f) for f in result.findings], "margin": result.margin}))
    elif errors and (args.in_place or not args.force):  # an invalid file is never written
        if stream:
            sys.stdout.write("\n")
        raise ApplyError("refused", "the result failed validation, nothing written: " + _describe(errors))
    elif args.in_place:
        _write_back(args, src, result.merged)
    elif not stream:
        write_stdout(src, result.merged)
    if errors and args.force and not args.json:
        print(f"fastapply: warning: printed although validation failed: {_describe(errors)}", file=sys.stderr)
    if not args.quiet:
        print(f"fastapply: engine={result.engine} language={result.language} {result.stats.line()}", file=sys.stderr)
    # --force asks for the output whatever it is; without it a failed validation is a failure.
    return EXIT_FAIL if errors and not args.force else 0


def read_only(path) -> bool:
    """No write permission bit, or no write access for this user (root has access to all)."""
    try:
        return not (path.stat().st_mode & 0o222) or not os.access(path, os.W_OK)
    except OSError:
        return False  # gone or unreadable: the read or the write says so


def _write_back(args, src: SourceFile, merged: str) -> None:
    if merged == src.text:
        print(f"fastapply: {args.file}: unchanged", file=sys.stderr)
        return
    if src.path.read_bytes() != src.raw:
        raise ApplyError("refused", f"{args.file} changed on disk while the edit was applied; nothing written, run again")
    if read_only(src.path) and not args.force:  # made read-only while the edit was applied
        raise ApplyError("invalid_argument", f"{args.file} is read-only; nothing written (--force replaces it)")
    try:
        atomic_write(src.path, src.encode(merged))
    except OSError as e:
        raise ApplyError("invalid_argument", f"cannot write {args.file}: {e.strerror}; nothing written") from None
    print(f"fastapply: wrote {args.file}", file=sys.stderr)


def _describe(findings) -> str:
    return "; ".join(f.line() for f in findings)


def print_readings(original: str, path: str, readings: list[tuple[str, str]], out=None) -> None:
    """Each reading of a refused snippet as a unified diff against the original."""
    import difflib

    out = out or sys.stdout
    for i, (how, text) in enumerate(readings, 1):
        out.write(f"# reading {i} of {len(readings)}: {how}\n")
        out.writelines(difflib.unified_diff(original.splitlines(keepends=True), text.splitlines(keepends=True),
                                            f"a/{path.lstrip('/')}", f"b/{path.lstrip('/')} (reading {i})"))
        if text and not text.endswith("\n"):
            out.write("\n\\ No newline at end of file\n")

