"""fastapply: merge lazy edit snippets into whole files, fast and exactly.

    merged = fastapply.apply_edit(original, update, path="app.py")   # or raises fastapply.ApplyError

`apply_edit` (fastapply.edit) is the common case; `Applier` and `ApplyRequest` the rest. These
names (`from fastapply import Applier, ApplyRequest`) load on first use (PEP 562):
every `import fastapply.x` runs this file first, and a package that imported `fastapply.api` here
would put itself in a cycle with every module the API imports that names the package
(`from fastapply import judge` in fastapply.pipeline). tests/test_architecture.py fails on any cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and editors see; at run time `__getattr__` below loads them
    from fastapply.api import (
        ApplyError,
        ApplyRequest,
        ApplyResult,
        Applier,
        ErrorCode,
        Finding,
        Sampling,
        Stats,
        TextDelta,
    )
    from fastapply.edit import apply_edit

__all__ = ["ApplyError", "ApplyRequest", "ApplyResult", "Applier", "ErrorCode", "Finding", "Sampling", "Stats",
           "TextDelta", "apply_edit"]
__version__ = "0.1.0"  # the one place it is written: pyproject.toml reads it from here
_HOME = {"apply_edit": "fastapply.edit"}  # where a name of __all__ lives, if not in fastapply.api


def __getattr__(name: str):
    """The API's names, from fastapply.api (or `_HOME`) on first use (then cached as plain module attributes)."""
    if name not in __all__:
        # AttributeError, not ImportError: `from fastapply import judge` asks here first, then imports
        # the submodule when told there is no such attribute.
        raise AttributeError(f"module 'fastapply' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME.get(name, "fastapply.api")), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
