"""Shared fixtures: the shared eval cases and one loaded default model per test session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_EVALS = REPO.parent / "shared" / "evals"


def load_shared(name: str) -> list[dict]:
    path = SHARED_EVALS / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def model_engine():
    """The real default model (`models.DEFAULT_MODEL`, fp32 on CPU), loaded once for the whole session."""
    from fastapply.engine import ModelEngine

    return ModelEngine.load()


@pytest.fixture(scope="session")
def model_applier(model_engine):
    from fastapply.api import Applier

    return Applier(model_engine=model_engine)
