"""The VS Code extension's client test (node + vscode-jsonrpc) against the real server.

Runs when node is installed and the extension's node_modules are present (or `npm ci --offline`
can install them from the npm cache); `make test-vscode` is the full run (npm ci, tsc, test, vsce).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "editor-plugins" / "vscode"


def _run(cmd: list[str], timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=EXT, capture_output=True, text=True, timeout=timeout)


def test_vscode_client_against_server():
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not installed")
    server = Path(sys.executable).parent / "fastapply-lsp"
    if not server.exists():
        pytest.skip("fastapply-lsp is not installed in this environment")
    if not (EXT / "node_modules" / "typescript").exists():
        try:
            proc = _run([npm, "ci", "--offline", "--no-audit", "--no-fund"], 180)
        except subprocess.TimeoutExpired:
            pytest.skip("npm ci --offline timed out")
        if proc.returncode != 0:
            pytest.skip("extension node_modules absent and not installable offline (run make test-vscode)")
    sources = [p.stat().st_mtime for p in [*(EXT / "src").rglob("*.ts"), EXT / "tsconfig.json"]]
    built = [EXT / "out" / "test" / name for name in ("client.test.js", "extension.test.js")]
    if not all(p.exists() for p in built) or max(sources) > min(p.stat().st_mtime for p in built):
        tsc = _run([node, str(EXT / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "."], 180)
        assert tsc.returncode == 0, tsc.stdout + tsc.stderr
    env = dict(os.environ, FASTAPPLY_LSP=str(server))
    for script in built:
        proc = subprocess.run([node, str(script.relative_to(EXT))], cwd=EXT, env=env, capture_output=True,
                              text=True, timeout=120)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out
        assert "all passed" in out and "FAIL" not in out, out
