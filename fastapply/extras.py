"""The optional parts of fastapply and what each needs.

`pip install fastapply` is the structural merge and every front-end (CLI, gRPC and HTTP servers,
LSP, codemod); none of them imports torch. The model stack, vLLM and training are extras
(pyproject.toml, `[project.optional-dependencies]`). A request that needs one that is missing gets
one line naming the extra to install (`ExtraMissing`, an `ApplyError`), never an import traceback.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from fastapply.types import ApplyError


@dataclass(frozen=True)
class Extra:
    name: str  # as in `pip install 'fastapply[name]'`
    needed_for: str  # what the reader was asking for, in their words
    # The top-level modules fastapply imports from it: all must be importable for the extra to count
    # as installed (found without importing them, which for torch takes seconds).
    modules: tuple[str, ...]
    includes: tuple[str, ...] = ()  # extras it installs too (pyproject.toml: "fastapply[model]")


EXTRAS: dict[str, Extra] = {e.name: e for e in (
    Extra("model", "the model engines (auto's judge, speculative, plain)",
          ("torch", "transformers", "tokenizers", "safetensors", "gguf")),
    Extra("vllm", "--backend vllm", ("vllm",), includes=("model",)),
    Extra("train", "fastapply train", ("peft", "matplotlib"), includes=("model",)),
)}

# Modules of the model extra imported on some paths only (peft: a spec with a LoRA adapter), so not
# checked up front; a failed import of one names the model extra, which installs them all.
_ALSO = {"accelerate": "model", "peft": "model", "numpy": "model", "huggingface_hub": "model"}


class ExtraMissing(ApplyError):
    """A request needs an extra that is not installed. Its message is one line: what to install."""

    def __init__(self, extra: Extra, missing: list[str]):
        super().__init__("unavailable", f"install the {extra.name} extra for {extra.needed_for}: "
                                        f"pip install 'fastapply[{extra.name}]' (not installed: {', '.join(missing)})")
        self.extra = extra.name
        self.missing = list(missing)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import; a module set to None in sys.modules
        return False


def missing(name: str) -> list[str]:
    """The modules of extra `name` (and of those it includes) that cannot be imported here (none:
    it is installed)."""
    extra = EXTRAS[name]
    modules = [m for inc in extra.includes for m in EXTRAS[inc].modules] + list(extra.modules)
    return [m for m in dict.fromkeys(modules) if not _importable(m)]


def require(name: str | None) -> None:
    """Raise `ExtraMissing`, naming `name` (which installs what it includes), unless it is installed."""
    absent = missing(name) if name else []
    if absent:
        raise ExtraMissing(EXTRAS[name], absent)


def from_import_error(error: ImportError) -> ExtraMissing | None:
    """The extra a failed import belongs to, as the error to raise instead; None for a module that
    belongs to no extra (a bug or a broken install: the original error says more)."""
    top = (getattr(error, "name", None) or "").split(".")[0]
    name = _ALSO.get(top) or next((e.name for e in EXTRAS.values() if top in e.modules), None)
    return ExtraMissing(EXTRAS[name], [top]) if name else None
