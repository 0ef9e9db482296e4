"""The merge's time limit: a merge answers or refuses in bounded time, never a minute of work.

Measured on 5,000-line files (evals.merge_time), a merge takes well under a second once the
original is parsed once per request (memo.py); the limit is a safety net for inputs no one has
measured. `structural_merge` opens a `limit()`; the loops that grow with the input call `check()`,
which raises `TooCostly` past the deadline. Where that happens while the merge is still deciding,
the request is refused (the file was too costly to place); while it gathers readings after a
refusal, it keeps the readings it has. One deadline per thread (a server merges on several).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

# Seconds a merge may take on the CPU it runs on, past which it refuses. A generous multiple of the
# slowest merge measured (0.5 s on a 4,978-line TypeScript file, evals/RESULTS.md), so that a
# loaded machine does not turn answers into refusals.
MERGE_SECONDS = 3.0

_local = threading.local()


class TooCostly(Exception):
    """The merge ran past its deadline."""


@contextmanager
def limit(seconds: float | None = None):
    """The deadline of one merge on this thread, `MERGE_SECONDS` unless given (an inner merge, such
    as a hint's, keeps the outer one)."""
    outer = getattr(_local, "deadline", None)
    span = MERGE_SECONDS if seconds is None else seconds
    _local.deadline = time.monotonic() + span if outer is None else outer
    try:
        yield
    finally:
        _local.deadline = outer


def check() -> None:
    deadline = getattr(_local, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise TooCostly


def expired() -> bool:
    deadline = getattr(_local, "deadline", None)
    return deadline is not None and time.monotonic() > deadline
