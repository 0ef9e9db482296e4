"""Shared fixtures: the dev sets' cases (evals/cases/), one loaded default model per test session,
and the sdist and wheel built once from the repository's files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The dev sets (commits_dev, hard_dev, public_fixtures) and our own cases: all in the repository, so
# a clone in any folder runs every test (tests/test_standalone.py).
SHARED_EVALS = REPO / "evals" / "cases"


def load_shared(name: str) -> list[dict]:
    path = SHARED_EVALS / name
    assert path.is_file(), f"{path} is missing: the dev sets ship in evals/cases/ (restore it from git)"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def repo_files() -> list[str]:
    """The files a clone of the working tree holds: tracked, and untracked unless ignored."""
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                         capture_output=True, check=True).stdout.decode()
    return [p for p in out.split("\0") if p and (REPO / p).is_file()]


def copy_repo(dest: Path) -> Path:
    """A copy of the repository's files (a build writes *.egg-info beside the sources)."""
    for rel in repo_files():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, dest / rel)
    return dest


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> dict[str, Path]:
    """`python -m build` on a copy of the repository: {"sdist": ..., "wheel": ...}. The wheel is built
    from the sdist (build's default), so a file the sdist leaves out is missing from the wheel too."""
    import importlib.util

    assert importlib.util.find_spec("build"), "install the build package (requirements-dev.txt; `make test` does)"
    tmp = tmp_path_factory.mktemp("dist")
    src = copy_repo(tmp / "src")
    # --no-isolation: the venv's setuptools (requirements-vllm.txt pins 78.1.1; pyproject wants >=77)
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,) = (tmp / "dist").glob("fastapply-*.tar.gz")
    (wheel,) = (tmp / "dist").glob("fastapply-*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="session")
def model_engine():
    """The real default model (`models.DEFAULT_MODEL`, fp32 on CPU), loaded once for the whole session."""
    from fastapply.engine import ModelEngine

    return ModelEngine.load()


@pytest.fixture(scope="session")
def model_applier(model_engine):
    from fastapply.api import Applier

    return Applier(model_engine=model_engine)
