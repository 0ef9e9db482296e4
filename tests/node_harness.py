"""The Node harnesses of the real-client tests (tests/morph_clients, tests/http_clients): ready, or
the test skipped with the reason."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def ensure(harness: Path, ready: Callable[[], str | None]) -> None:
    """Skip unless node and npm are here and the harness's locked packages are installed (an offline
    `npm ci` first: the npm cache may hold them)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not installed")
    if ready() is not None:
        try:
            subprocess.run(["npm", "ci", "--offline", "--no-audit", "--no-fund"], cwd=harness, capture_output=True,
                           timeout=300)
        except subprocess.TimeoutExpired:
            pass
    why = ready()
    if why is not None:
        pytest.skip(why)
