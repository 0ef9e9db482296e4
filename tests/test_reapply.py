"""evals.reapply: an edit applied again comes back unchanged, and the count says so."""

from __future__ import annotations

import json

from evals import reapply

ORIGINAL = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
UPDATE = "# ... existing code ...\ndef g():\n    return 3\n"
EXPECTED = "def f():\n    return 1\n\n\ndef g():\n    return 3\n"


def test_an_exact_edit_applied_again_is_counted_unchanged(tmp_path, capsys):
    cases = tmp_path / "cases.jsonl"
    rows = [{"id": "ok", "language": "python", "original": ORIGINAL, "update": UPDATE, "expected": EXPECTED},
            {"id": "not_exact", "language": "python", "original": ORIGINAL, "update": UPDATE, "expected": ORIGINAL}]
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.json"
    assert reapply.main(["--cases", str(cases), "--json", str(out)]) == 0
    summary = json.loads(out.read_text())["summary"]
    assert summary == {"exact_first": 1, "unchanged": 1, "refused": 0, "changed": 0}
    assert "1 unchanged" in capsys.readouterr().out
