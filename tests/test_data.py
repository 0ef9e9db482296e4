"""`fastapply data`: training cases from a small git repository built here (Python and Go commits)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from fastapply.api import Applier, ApplyError, ApplyRequest
from fastapply.cli import main
from fastapply.data.cli import generate
from fastapply.data.defined import why_undefined
from fastapply.data.gitcases import DataError, Limits
from fastapply.data.hunks import diff
from fastapply.data.regions import context_regions
from fastapply.data.snippets import Style

FIELDS = ("id", "source", "language", "path", "original", "update", "expected", "instruction", "variant")

PY_FUNCS = [(f"f{i}", f"    value = x * {i} + {i * 7}\n    return value - {i}\n") for i in range(8)]
GO_FUNCS = [(f"F{i}", f"\tv := x * {i}\n\treturn v + {i * 3}\n") for i in range(8)]


def py_file(bodies: dict[str, str]) -> str:
    parts = ['"""A small module."""\n\nimport os\n']
    for name, body in PY_FUNCS:
        parts.append(f"\n\ndef {name}(x):\n    # {name} keeps its own comment\n{bodies.get(name, body)}")
    return "".join(parts)


def go_file(bodies: dict[str, str]) -> str:
    parts = ["package small\n\nimport \"fmt\"\n"]
    for name, body in GO_FUNCS:
        parts.append(f"\n// {name} is exported.\nfunc {name}(x int) int {{\n{bodies.get(name, body)}}}\n")
    return "".join(parts)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env).stdout.decode()


def commit(repo: Path, files: dict[str, str | bytes], message: str) -> None:
    for name, text in files.items():
        (repo / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("src")
    git(repo, "init", "-q", "-b", "main")
    py, go = {}, {}
    commit(repo, {"mod.py": py_file(py), "small.go": go_file(go), "README.md": "hi\n"}, "initial")
    for i in range(1, 7):
        py[f"f{i}"] = f"    value = x * {i} + {i * 7}\n    if value > {i * 100}:\n        value = {i * 100}\n" \
                      f"    return value - {i}\n"
        commit(repo, {"mod.py": py_file(py)}, f"clamp f{i}")
        go[f"F{i}"] = f"\tv := x * {i}\n\tfmt.Println(v)\n\treturn v + {i * 3}\n"
        commit(repo, {"small.go": go_file(go)}, f"log F{i}")
    py["f7"] = "    return x\n"
    go["F7"] = "\treturn x\n"
    commit(repo, {"mod.py": py_file(py), "small.go": go_file(go)}, "simplify the last ones")
    commit(repo, {"latin.py": b"x = '\xe9'\n" * 12}, "a latin-1 file")
    commit(repo, {"latin.py": b"x = '\xe8'\n" * 12}, "not UTF-8: skipped")
    commit(repo, {"README.md": "hello\n"}, "docs only")
    return repo


def run_cli(*args: str) -> int:
    return main(["data", "--max-per-path", "50", *args])


def test_cases_are_the_commits_files_byte_exact_and_deterministic(repo, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run_cli("--git-dir", str(repo), "--out", str(a), "--repo-name", "t/small") == 0
    assert run_cli("--git-dir", str(repo), "--out", str(b), "--repo-name", "t/small") == 0
    assert a.read_bytes() == b.read_bytes()
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    assert len(rows) >= 10
    assert {r["language"] for r in rows} == {"python", "go"}
    for r in rows:
        assert all(k in r for k in FIELDS)
        repo_name, rest = r["source"].split("@", 1)
        sha, path = rest.split(":", 1)
        assert repo_name == "t/small" and path == r["path"] and r["id"].endswith("#" + r["variant"])
        assert git(repo, "show", f"{sha}:{path}") == r["expected"]
        assert git(repo, "show", f"{sha}^:{path}") == r["original"]
        assert r["update"] != r["original"]


def test_structural_merge_rebuilds_most_cases(repo):
    train, _ = generate(str(repo / ".git"), "HEAD", Limits(), "t/small", max_per_path=50)
    applier, exact = Applier(), 0
    for r in train:
        try:
            merged = applier.apply(ApplyRequest(r["original"], r["update"], language=r["language"],
                                                engine="structural")).merged
        except ApplyError:
            continue
        exact += merged == r["expected"]
    assert exact >= 0.8 * len(train)


def test_dev_split_holds_out_whole_commits(repo, tmp_path):
    train, dev = generate(str(repo / ".git"), "HEAD", Limits(), "t/small", max_per_path=50, dev_percent=30)
    sha = lambda r: r["source"].split("@")[1].split(":")[0]  # noqa: E731
    assert train and dev and not ({sha(r) for r in train} & {sha(r) for r in dev})
    out, dev_out = tmp_path / "t.jsonl", tmp_path / "d.jsonl"
    assert run_cli("--git-dir", str(repo), "--out", str(out), "--dev-out", str(dev_out), "--dev-percent", "30") == 0
    assert len(out.read_text().splitlines()) == len(train) and len(dev_out.read_text().splitlines()) == len(dev)


def test_rev_and_max_cases(repo, tmp_path):
    out = tmp_path / "o.jsonl"
    assert run_cli("--git-dir", str(repo), "--out", str(out), "--max-cases", "3") == 0
    assert len(out.read_text().splitlines()) == 3
    assert run_cli("--git-dir", str(repo), "--out", str(out), "--rev", "HEAD~12") == 0
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert first and all(r["language"] in ("python", "go") for r in first)
    assert len(first) < len(generate(str(repo / ".git"), "HEAD", Limits(), "t", max_per_path=50)[0])
    assert main(["data", "--git-dir", str(repo), "--out", str(out), "--max-per-path", "2"]) == 0
    paths = [json.loads(line)["path"] for line in out.read_text().splitlines()]
    assert sorted(paths) == ["mod.py", "mod.py", "small.go", "small.go"]


def test_no_usable_commits_is_an_error_and_writes_nothing(tmp_path, capsys):
    repo = tmp_path / "docs"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"README.md": "a\n"}, "one")
    commit(repo, {"README.md": "b\n"}, "two")
    out = tmp_path / "out.jsonl"
    assert run_cli("--git-dir", str(repo), "--out", str(out)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no usable commits" in err[0]
    assert not out.exists()


@pytest.mark.parametrize("bad", ["not-a-repo", "bad-rev", "no-folder"])
def test_bad_input_is_one_line_and_keeps_the_old_file(repo, tmp_path, capsys, bad):
    out = tmp_path / "keep.jsonl"
    out.write_text("old\n")
    args = {"not-a-repo": ["--git-dir", str(tmp_path), "--out", str(out)],
            "bad-rev": ["--git-dir", str(repo), "--out", str(out), "--rev", "no-such-branch"],
            "no-folder": ["--git-dir", str(repo), "--out", str(tmp_path / "missing" / "o.jsonl")]}[bad]
    assert run_cli(*args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fastapply data: error:")
    assert {"not-a-repo": "not a git repository", "bad-rev": "no-such-branch", "no-folder": "does not exist"}[bad] \
        in err[0]
    assert out.read_text() == "old\n"


def test_bad_numbers_are_usage_errors(repo, tmp_path):
    for flag, value in (("--max-cases", "0"), ("--max-lines", "-3"), ("--max-cases", "many")):
        with pytest.raises(SystemExit) as e:
            run_cli("--git-dir", str(repo), "--out", str(tmp_path / "o.jsonl"), flag, value)
        assert e.value.code == 2
    with pytest.raises(DataError):
        generate(str(repo / ".git"), "deadbeef", Limits(), "t")


def test_context_that_fits_two_places_is_not_well_defined():
    # the change sits between lines that also occur together elsewhere: a reader cannot place it
    block = ["    a = 1", "    b = 2", "    c = 3", "    d = 4"]
    original = "\n".join(["def f():"] + block + ["", "def g():"] + block) + "\n"
    expected = original.replace("    b = 2\n    c = 3\n    d = 4\n", "    b = 2\n    x = 0\n    c = 3\n    d = 4\n", 1)
    d = diff(original, expected)
    narrow, wide = context_regions(d, 1), context_regions(d, 3)
    assert why_undefined(d, narrow, Style("# ... existing code ...")) is not None
    assert why_undefined(d, wide, Style("# ... existing code ...")) is None


def test_a_marker_wording_found_in_the_original_is_refused():
    original = "def f():\n    # ...\n    return 1\n\n\ndef g():\n    return 2\n"
    expected = original.replace("return 2", "return 3")
    d = diff(original, expected)
    regions = context_regions(d, 2)
    assert why_undefined(d, regions, Style("# ...")) == "the marker wording occurs in the original"


def test_an_edit_made_twice_gives_one_case(tmp_path):
    repo = tmp_path / "twice"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    before, after = py_file({}), py_file({"f3": "    return x + 3\n"})
    commit(repo, {"mod.py": before}, "one")
    commit(repo, {"mod.py": after}, "edit")
    commit(repo, {"mod.py": before}, "revert")
    commit(repo, {"mod.py": after}, "edit again")
    train, _ = generate(str(repo / ".git"), "HEAD", Limits(), "t", max_per_path=50)
    pairs = [(r["original"], r["expected"]) for r in train]
    assert pairs.count((before, after)) == 1 and len(pairs) == len(set(pairs))
