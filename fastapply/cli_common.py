"""What the `fastapply` subcommands share: argument groups, reading the inputs, printing or
writing one result, and the exit code of each error code."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable

from fastapply.api import (
    DEFAULT_ENGINE,
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
    p.add_argument("--model", default=None, help="model spec name (default: gemma3-270m), HF model dir or .gguf")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    p.add_argument("--dtype", default=None, choices=["fp32", "bf16", "fp16"],
                   help="default: fp32 on CPU (exact), bf16 on CUDA")


def add_backend_args(p: argparse.ArgumentParser) -> None:
    """The model backend and the vLLM backend's options (`fastapply apply`, `fastapply serve`)."""
    p.add_argument("--backend", default="hf", choices=["hf", "vllm"],
                   help="hf: fastapply's own decode loop (default); vllm: vLLM's engine with fastapply's "
                        "drafter as its proposer (continuous batching; install with `make vllm`)")
    p.add_argument("--tensor-parallel-size", type=int, default=None, help="vllm: split the model over N GPUs")
    p.add_argument("--max-draft", type=int, default=None, help="vllm: draft tokens per step at most, 1-128 (default 32)")
    p.add_argument("--speculation", default=None, choices=["fastapply", "ngram", "none"],
                   help="vllm: the proposer: fastapply's drafter (default), vLLM's ngram, or none")


_VLLM_OPTIONS = ("tensor_parallel_size", "max_draft", "speculation")


def applier_from_args(args) -> Applier:
    """The Applier of a command's model arguments; bad backend options fail here, before anything starts."""
    backend = getattr(args, "backend", "hf")
    options = {k: getattr(args, k) for k in _VLLM_OPTIONS if getattr(args, k, None) is not None}
    if options and backend != "vllm":
        flags = ", ".join("--" + k.replace("_", "-") for k in options)
        raise ApplyError("usage", f"{flags}: only with --backend vllm")
    applier = Applier(model_name=args.model, device=args.device, dtype=args.dtype, backend=backend,
                      backend_options=options)
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


def request_from_args(args, original: str, update: str, path: str | None) -> ApplyRequest:
    return ApplyRequest(original=original, update=update, instruction=args.instruction, language=args.language,
                        path=path, engine=args.engine,
                        sampling=Sampling(args.temperature, args.top_p, args.seed),
                        max_output_tokens=args.max_output_tokens)


def add_apply_output_args(p: argparse.ArgumentParser) -> None:
    """Input/output options shared by `apply` and `client apply`."""
    p.add_argument("file")
    p.add_argument("--update", required=True, help="the update snippet file, or - for stdin")
    p.add_argument("--in-place", action="store_true", help="write the merged file back (atomically) if it is valid")
    p.add_argument("--stream", action="store_true", help="print text as it is verified")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--force", action="store_true", help="print the output even if validation failed (never writes)")
    p.add_argument("--quiet", action="store_true", help="no stats line")


def read_apply_inputs(args) -> tuple[SourceFile, ApplyRequest]:
    if args.force and args.in_place:
        raise ApplyError("usage", "--force never writes; drop --in-place")
    src = read_source(args.file, "file")
    if not src.text.strip():
        raise ApplyError("invalid_argument", f"file {args.file!r} is empty: nothing to apply an edit to")
    if args.update == "-":
        update = decode_utf8(sys.stdin.buffer.read(), "update from stdin")
    else:
        update = read_source(args.update, "update").text
    return src, request_from_args(args, src.text, update, args.file)


def wants_stream(args) -> bool:
    return args.stream and not args.in_place and not args.json


def finish_apply(args, src: SourceFile, events: Iterable[StreamEvent]) -> int:
    """Print or write the result of one apply (local or remote) and return the exit code."""
    stream = wants_stream(args)
    result: ApplyResult | None = None
    for ev in events:
        if isinstance(ev, TextDelta):
            if stream:
                sys.stdout.write(ev.text)
                sys.stdout.flush()
        else:
            result = ev
    assert result is not None
    errors = [f for f in result.findings if f.severity == "error"]
    if args.json:
        print(json.dumps({"merged": result.merged, "engine": result.engine, "language": result.language,
                          "ok": result.ok, "stats": vars(result.stats) | {"tokens_per_s": result.stats.tokens_per_s},
                          "findings": [vars(f) for f in result.findings]}))
    elif errors and not args.force:
        if stream:
            sys.stdout.write("\n")
        raise ApplyError("refused", "the result failed validation, nothing written: " + _describe(errors))
    elif args.in_place:
        if result.merged == src.text:
            print(f"fastapply: {args.file}: unchanged", file=sys.stderr)
        else:
            if src.path.read_bytes() != src.raw:
                raise ApplyError("refused", f"{args.file} changed on disk while the edit was applied; "
                                            "nothing written, run again")
            atomic_write(src.path, src.encode(result.merged))
            print(f"fastapply: wrote {args.file}", file=sys.stderr)
    elif not stream:
        sys.stdout.write(result.merged)
    if errors and args.force and not args.json:
        print(f"fastapply: warning: printed although validation failed: {_describe(errors)}", file=sys.stderr)
    if not args.quiet:
        print(f"fastapply: engine={result.engine} language={result.language} {result.stats.line()}", file=sys.stderr)
    # --force asks for the output whatever it is; without it a failed validation is a failure.
    return EXIT_FAIL if errors and not args.force else 0


def _describe(findings) -> str:
    return "; ".join(f.line() for f in findings)
