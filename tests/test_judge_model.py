"""The judge on the real shipped model (`fastapply.models.DEFAULT_MODEL`): the issue's wrap-the-body
case, where the structural merge refuses with three readings and the model must say which one the
snippet means."""

import pytest

from fastapply.api import ApplyRequest
from fastapply.judge import MARGIN_NATS, judge
from fastapply.merge import structural_merge

pytestmark = pytest.mark.model

READ_ROWS = "def read_rows(path):\n    conn = open_db(path)\n    rows = conn.fetch_all()\n    conn.close()\n    return rows\n"
TRY_AROUND_THE_BODY = ("def read_rows(path):\n    try:\n        # ... existing code ...\n"
                       "    except DatabaseError as exc:\n        log.warning(\"read failed: %s\", exc)\n"
                       "        return []\n")
# `return rows` stays inside the new `try` (not deleted, not moved after the handler)
EXPECTED = ("def read_rows(path):\n    try:\n        conn = open_db(path)\n        rows = conn.fetch_all()\n"
            "        conn.close()\n        return rows\n    except DatabaseError as exc:\n"
            "        log.warning(\"read failed: %s\", exc)\n        return []\n")


def test_auto_returns_the_reading_the_shipped_judge_prefers(model_applier):
    merge = structural_merge(READ_ROWS, TRY_AROUND_THE_BODY, "python")
    assert not merge.ok and EXPECTED in [r.text for r in merge.readings] and len(merge.readings) >= 2
    result = model_applier.apply(ApplyRequest(READ_ROWS, TRY_AROUND_THE_BODY, language="python"))
    assert result.engine == "judge" and result.merged == EXPECTED and result.ok
    assert result.margin >= MARGIN_NATS
    assert result.stats.judge_s > 0 and result.stats.forward_passes == 0  # scored, nothing generated


def test_window_and_whole_mode_pick_the_same_reading(model_engine):
    readings = [r.text for r in structural_merge(READ_ROWS, TRY_AROUND_THE_BODY, "python").readings]
    req = ApplyRequest(READ_ROWS, TRY_AROUND_THE_BODY, language="python")
    window, whole = judge(model_engine, req, readings, mode="window"), judge(model_engine, req, readings, mode="whole")
    assert readings[window.best] == readings[whole.best] == EXPECTED
