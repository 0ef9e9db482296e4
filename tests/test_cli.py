"""`fastapply apply` end to end, as a user runs it (a subprocess of the installed CLI)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "examples" / "demo"


def fastapply(*args, stdin=None, env=None):
    return subprocess.run([sys.executable, "-m", "fastapply.cli", *map(str, args)], input=stdin,
                          capture_output=True, cwd=REPO, env={**os.environ, **(env or {})}, timeout=600)


def test_structural_apply_prints_merged_file():
    r = fastapply("apply", DEMO / "app.py", "--update", DEMO / "update.py", "--engine", "structural")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (DEMO / "expected.py").read_bytes()
    assert b"engine=structural" in r.stderr


def test_in_place_writes_atomically_and_keeps_mode_and_crlf(tmp_path):
    f = tmp_path / "app.py"
    f.write_bytes((DEMO / "app.py").read_bytes().replace(b"\n", b"\r\n"))
    f.chmod(0o640)
    r = fastapply("apply", f, "--update", DEMO / "update.py", "--engine", "structural", "--in-place")
    assert r.returncode == 0, r.stderr
    data = f.read_bytes()
    assert b"def low_stock" in data and data.count(b"\r\n") == data.count(b"\n")
    assert f.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["app.py"]  # no temp file left behind


def test_update_from_stdin():
    r = fastapply("apply", DEMO / "app.py", "--update", "-", "--engine", "structural",
                  stdin=(DEMO / "update.py").read_bytes())
    assert r.returncode == 0, r.stderr
    assert "def low_stock" in r.stdout.decode()


@pytest.mark.parametrize("setup, update, message", [
    ("missing", b"x = 2\n", b"does not exist"),
    ("empty", b"x = 2\n", b"is empty"),
    ("binary", b"x = 2\n", b"not valid UTF-8"),
    ("ok", b"", b"update snippet is empty"),
    ("ok", b"\xff\xfe x", b"not valid UTF-8"),
])
def test_bad_input_is_one_clear_line_and_writes_nothing(tmp_path, setup, update, message):
    f = tmp_path / "f.py"
    content = {"empty": b"", "binary": b"x = 1\n\xff\xfe\n", "ok": b"x = 1\n"}.get(setup)
    if content is not None:
        f.write_bytes(content)
    u = tmp_path / "u.py"
    u.write_bytes(update)
    r = fastapply("apply", f, "--update", u, "--engine", "structural", "--in-place")
    assert r.returncode == 1
    lines = r.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastapply: error:") and message.decode() in lines[0]
    if content is not None:
        assert f.read_bytes() == content


def test_structural_refusal_writes_nothing(tmp_path):
    f = tmp_path / "f.py"
    f.write_text("def a():\n    return 1\n")
    u = tmp_path / "u.py"
    u.write_text("# ... existing code ...\n    totally = unrelated(\n# ... existing code ...\n")
    r = fastapply("apply", f, "--update", u, "--engine", "structural", "--in-place")
    assert r.returncode == 1 and b"refused" in r.stderr
    assert f.read_text() == "def a():\n    return 1\n"


def test_unknown_language_is_refused_and_text_means_lines_only(tmp_path):
    f = tmp_path / "f.py"
    f.write_text("x = 1\ny = 2\n")
    u = tmp_path / "u.py"
    u.write_text("x = 1\ny = 3\n")
    # a typo must not silently drop the syntax checks by reading the file as plain text
    r = fastapply("apply", f, "--update", u, "--engine", "structural", "--language", "pyhton", "--in-place")
    assert r.returncode == 1 and b"unknown language 'pyhton'" in r.stderr
    assert f.read_text() == "x = 1\ny = 2\n"
    r = fastapply("apply", f, "--update", u, "--engine", "structural", "--language", "text", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["merged"] == "x = 1\ny = 3\n"
    assert json.loads(r.stdout)["language"] is None


def test_unknown_engine_is_usage_error():
    r = fastapply("apply", DEMO / "app.py", "--update", DEMO / "update.py", "--engine", "magic")
    assert r.returncode == 2 and b"invalid choice" in r.stderr


def test_model_path_that_does_not_exist():
    r = fastapply("apply", DEMO / "app.py", "--update", DEMO / "update.py", "--model", "/nonexistent/model.gguf")
    assert r.returncode == 1
    assert r.stderr.decode().strip().splitlines()[-1] == \
        "fastapply: error: model path '/nonexistent/model.gguf' does not exist"


@pytest.mark.model
def test_model_apply_end_to_end(tmp_path):
    """The speculative engine (real model) prints a file and the stats line."""
    r = fastapply("apply", DEMO / "app.py", "--update", DEMO / "update.py", "--engine", "speculative", "--json",
                  "--max-output-tokens", "60")
    assert r.returncode == 1  # 60 tokens cannot hold the file: flagged truncated, never passed as good
    import json

    res = json.loads(r.stdout)
    assert res["engine"] == "speculative" and not res["ok"]
    assert res["stats"]["output_tokens"] == 60 and res["stats"]["forward_passes"] < 60
    assert any(f["kind"] == "truncated" for f in res["findings"])
    # --in-place with an output that failed validation leaves the file alone.
    f = tmp_path / "app.py"
    f.write_bytes((DEMO / "app.py").read_bytes())
    r = fastapply("apply", f, "--update", DEMO / "update.py", "--engine", "speculative", "--in-place",
                  "--max-output-tokens", "60")
    assert r.returncode == 1 and b"nothing written" in r.stderr
    assert f.read_bytes() == (DEMO / "app.py").read_bytes()


def test_whole_function_rewrite_without_trailing_context():
    """The rewritten method shares only its header with the original; a new method follows it in the
    snippet, so the old body's last line must go (it used to survive: a silent wrong)."""
    from fastapply.merge import structural_merge

    original = (DEMO / "app.py").read_text()
    update = (DEMO / "update.py").read_text().replace("\n    def remove(self, name: str) -> None:\n", "")
    m = structural_merge(original, update, "python")
    assert m.text == (DEMO / "expected.py").read_text(), m.reasons


def test_a_refusal_names_its_readings_and_show_readings_prints_them_as_diffs(tmp_path):
    """The same three lines fit two functions: the refusal says how many readings there are and
    where they differ; --show-readings prints each as a diff against the original; nothing is written."""
    f = tmp_path / "m.py"
    original = "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    return x\n"
    f.write_text(original)
    u = tmp_path / "u.py"
    u.write_text("    x = 1\n    log(x)\n    return x\n")
    r = fastapply("apply", str(f), "--update", str(u), "--engine", "structural", "--in-place", "--show-readings")
    assert r.returncode == 1 and f.read_text() == original
    err, out = r.stderr.decode(), r.stdout.decode()
    n = out.count("# reading ")  # the two functions, and the widest placement (line 2 to the end)
    assert n >= 2 and f"{n} readings" in err and "differs from reading 1 at line 3" in err
    assert "@@ -1,5 +1,6 @@" in out and "@@ -5,4 +5,5 @@" in out and out.count("+    log(x)") == n
