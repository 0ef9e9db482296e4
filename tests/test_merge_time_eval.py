"""evals.merge_time: it times each case in a child process, prints the table, writes the JSON, and
records a case past the cap as a timeout instead of waiting on it (no timing is asserted)."""

from __future__ import annotations

import json
import time

from evals import merge_time

CASES = [
    {"id": "small/py#context", "language": "python", "path": "a.py",
     "original": "import os\n\n\ndef f(x):\n    y = x + 1\n    return y\n\n\ndef g():\n    return os.getcwd()\n",
     "update": "# ... existing code ...\ndef f(x):\n    y = x + 2\n    return y\n# ... existing code ...\n",
     "expected": "import os\n\n\ndef f(x):\n    y = x + 2\n    return y\n\n\ndef g():\n    return os.getcwd()\n"},
    {"id": "small/go#context", "language": "go", "path": "a.go",
     "original": "package main\n\nfunc f(x int) int {\n\ty := x + 1\n\treturn y\n}\n\nfunc g() int {\n\treturn 2\n}\n",
     "update": "// ... existing code ...\nfunc g() int {\n\treturn 3\n}\n",
     "expected": "package main\n\nfunc f(x int) int {\n\ty := x + 1\n\treturn y\n}\n\nfunc g() int {\n\treturn 3\n}\n"},
]


def _write(tmp_path):
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    return path


def test_times_each_case_and_prints_the_table(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert merge_time.main(["--cases", str(_write(tmp_path)), "--runs", "2", "--json", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    for text in ("median", "p99", "small / python", "small / go", "slowest", "small/go#context"):
        assert text in printed
    data = json.loads(out.read_text())
    assert [r["verdict"] for r in data["rows"]] == ["exact", "exact"]
    assert [r["lines"] for r in data["rows"]] == [10, 10]
    assert all(r["seconds"] > 0 for r in data["rows"])
    assert data["summary"]["all"]["cases"] == 2 and data["summary"]["groups"]["small / go"]["cases"] == 1


def test_a_case_past_the_cap_is_a_timeout_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    real = merge_time.structural_merge

    def slow_on_go(original, update, language=None, path=None):
        if language == "go":
            time.sleep(60)
        return real(original, update, language, path)

    monkeypatch.setattr(merge_time, "structural_merge", slow_on_go)  # the forked child inherits it
    out = tmp_path / "t.json"
    assert merge_time.main(["--cases", str(_write(tmp_path)), "--runs", "1", "--cap", "1", "--json", str(out),
                            "--quiet", "--profile-over", "0.5"]) == 0
    rows = {r["id"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["small/py#context"]["verdict"] == "exact"
    assert rows["small/go#context"]["verdict"] == "timeout" and rows["small/go#context"]["seconds"] == 1
    assert "no profile: over the 1 s cap" in capsys.readouterr().out


def test_profile_text_names_the_merge_functions():
    import cProfile

    prof = cProfile.Profile()
    prof.enable()
    merge_time.structural_merge(CASES[0]["original"], CASES[0]["update"], "python")
    prof.disable()
    text = merge_time.profile_text(prof, top=5)
    assert "-- by cumulative --" in text and "-- by tottime --" in text and "structural_merge" in text


def test_a_crash_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch):
    def broken(original, update, language=None, path=None):
        raise ValueError("boom")

    monkeypatch.setattr(merge_time, "structural_merge", broken)
    out = tmp_path / "t.json"
    assert merge_time.main(["--cases", str(_write(tmp_path)), "--runs", "1", "--json", str(out), "--quiet"]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["verdict"], r["seconds"], r["reason"]) for r in rows] == [("crash", None, "ValueError: boom")] * 2
