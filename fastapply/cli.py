"""`fastapply` command line: `apply` here; other front-ends register their subcommands (FRONTENDS).

What subcommands share (argument groups, printing a result, exit codes) is in `fastapply.cli_common`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fastapply import __version__, extras
from fastapply.api import ApplyError
from fastapply.models import check_model_name
from fastapply.cli_common import (  # noqa: F401  (re-exported: front-ends used to import them from here)
    EXIT_CODES,
    EXIT_FAIL,
    EXIT_USAGE,
    add_apply_output_args,
    add_backend_args,
    add_model_args,
    applier_from_args,
    add_request_args,
    finish_apply,
    print_readings,
    read_apply_inputs,
    request_from_args,
    wants_stream,
)

# Modules with `register(subparsers)`; each adds its subcommands with `set_defaults(func=...)`.
FRONTENDS: tuple[str, ...] = (
    "fastapply.codemod.cli", "fastapply.grpc_cli", "fastapply.data.cli", "fastapply.train.cli",
)
# Subcommands that need an extra whatever their options (fastapply.extras), checked before they run.
COMMAND_EXTRAS: dict[str, str] = {"train": "train"}


def cmd_apply(args) -> int:
    src, req = read_apply_inputs(args)
    check_model_name(args.model)  # a bad --model is an error even when the merge needs no model
    applier = applier_from_args(args)
    try:
        return finish_apply(args, src, applier.apply_stream(req))
    except ApplyError as e:
        if args.show_readings and e.readings:
            print_readings(src.text, args.file, e.readings)
        raise
    finally:
        applier.close()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fastapply", description="Merge lazy edit snippets into whole files.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("apply", help="apply an update snippet to a file; print the merged file")
    add_apply_output_args(p)
    add_request_args(p)
    add_model_args(p)
    add_backend_args(p)
    p.set_defaults(func=cmd_apply)
    for mod in FRONTENDS:
        importlib.import_module(mod).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        extras.require(COMMAND_EXTRAS.get(args.command))
        return args.func(args)
    except ApplyError as e:
        print(f"fastapply: error: {e.message}", file=sys.stderr)
        return EXIT_CODES[e.code]
    except ImportError as e:  # a module of an extra that is not installed, imported deep in a command
        missing = extras.from_import_error(e)
        if missing is None:
            raise
        print(f"fastapply: error: {missing.message}", file=sys.stderr)
        return EXIT_CODES[missing.code]
    except KeyboardInterrupt:
        print("fastapply: interrupted; nothing written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
