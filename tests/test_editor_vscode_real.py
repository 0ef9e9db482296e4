"""The VS Code extension in a real VS Code: a refused apply's readings chosen from the quick pick.

VS Code itself is code-server's build (npm; `make vscode-real` installs it under .venv/code-server),
its workbench loaded by a headless Chromium (Debian's chromium-headless-shell) that is granted the
clipboard over the DevTools protocol. A second extension (src/test/e2e.ts) drives the workbench
with its own commands (quick pick next / accept / close) and writes what it saw; this test packages
both extensions, starts everything, and reads the results. Skipped when a part is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "editor-plugins" / "vscode"
JUDGED = ROOT / "examples" / "judged"
CODE_SERVER = Path(os.environ.get("FASTAPPLY_CODE_SERVER", ROOT / ".venv" / "code-server" / "node_modules" / ".bin"
                                  / "code-server"))
RUN_TIMEOUT_S = 300  # the workbench's start, the language server's, four picks and two refusals
RUNNER_MANIFEST = {
    "name": "fastapply-e2e", "publisher": "fastapply", "version": "0.0.1", "license": "Apache-2.0",
    "repository": {"type": "git", "url": "https://github.com/fastapply/fastapply"},
    "engines": {"vscode": "^1.82.0"}, "main": "./e2e.js", "activationEvents": ["onStartupFinished"],
    "extensionDependencies": ["fastapply.fastapply"],
}


def _needs() -> tuple[str, str, Path]:
    """chromium, vsce and the language server, or skip."""
    chromium = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    vsce = EXT / "node_modules" / ".bin" / "vsce"
    server = Path(sys.executable).parent / "fastapply-lsp"
    if not CODE_SERVER.exists():
        pytest.skip(f"no code-server at {CODE_SERVER} (make vscode-real)")
    if chromium is None:
        pytest.skip("no headless chromium (apt-get install chromium-headless-shell)")
    if not vsce.exists() or shutil.which("node") is None:
        pytest.skip("the extension's node_modules (vsce) are absent")
    if not server.exists():
        pytest.skip("fastapply-lsp is not installed in this environment")
    pytest.importorskip("websockets")
    return chromium, str(vsce), server


def _package(vsce: str, folder: Path, out: Path) -> Path:
    proc = subprocess.run([vsce, "package", "--skip-license", "-o", str(out)], cwd=folder, capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _extensions(tmp: Path, vsce: str) -> Path:
    """Build the extension, package it and the runner, install both into a fresh extensions dir."""
    tsc = subprocess.run(["node", str(EXT / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "."], cwd=EXT,
                         capture_output=True, text=True, timeout=180)
    assert tsc.returncode == 0, tsc.stdout + tsc.stderr
    runner = tmp / "runner"
    runner.mkdir()
    shutil.copy(EXT / "out" / "test" / "e2e.js", runner / "e2e.js")
    (runner / "package.json").write_text(json.dumps(RUNNER_MANIFEST))
    (runner / "README.md").write_text("fastapply's end-to-end test runner\n")
    ext_dir = tmp / "extensions"
    for vsix in (_package(vsce, EXT, tmp / "fastapply.vsix"), _package(vsce, runner, tmp / "runner.vsix")):
        proc = subprocess.run([str(CODE_SERVER), "--extensions-dir", str(ext_dir), "--user-data-dir",
                               str(tmp / "user"), "--install-extension", str(vsix)], capture_output=True, text=True,
                              timeout=180)
        assert proc.returncode == 0 and "successfully installed" in proc.stdout, proc.stdout + proc.stderr
    return ext_dir


def _case(tmp: Path) -> Path:
    """examples/judged in a workspace, with the readings the structural merge gives it."""
    from fastapply.merge import structural_merge

    ws = tmp / "ws"
    ws.mkdir()
    original, update = (JUDGED / "rows.py").read_text(), (JUDGED / "update.py").read_text()
    path = ws / "rows.py"
    path.write_text(original)
    readings = structural_merge(original, update, None, str(path)).readings
    assert len(readings) >= 2
    case = tmp / "case.json"
    case.write_text(json.dumps({"path": str(path), "original": original, "update": update,
                                "readings": [r.text for r in readings], "hows": [r.how for r in readings]}))
    return case


def _settings(tmp: Path, server: Path) -> None:
    user = tmp / "user" / "User"
    user.mkdir(parents=True, exist_ok=True)
    (user / "settings.json").write_text(json.dumps({
        "fastapply.serverCommand": [str(server)], "fastapply.engine": "structural",
        "workbench.startupEditor": "none", "security.workspace.trust.enabled": False,
        "extensions.autoCheckUpdates": False, "extensions.autoUpdate": False, "telemetry.telemetryLevel": "off"}))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    # its own session: the language server the extension host starts goes down with it
    return subprocess.Popen(cmd, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def _wait_for(log: Path, pattern: str, proc: subprocess.Popen, timeout: float = 60) -> re.Match:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        m = re.search(pattern, log.read_text(errors="replace")) if log.exists() else None
        if m:
            return m
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        time.sleep(0.2)
    raise AssertionError(f"no {pattern!r} in {log}: " + log.read_text(errors="replace")[-3000:])


async def _run_workbench(devtools: str, url: str, out: Path, procs: list[subprocess.Popen]) -> list[dict]:
    """Over the DevTools protocol: grant the page the clipboard (applyClipboard reads it) and focus
    (a page that is not focused may not read it), open the workbench, wait for the runner's results
    (connected: the focus emulation ends with the session)."""
    import websockets

    async with websockets.connect(devtools, max_size=None) as ws:
        calls = iter(range(1, 1000))

        async def call(method: str, params: dict, session: str | None = None) -> dict:
            i = next(calls)
            await ws.send(json.dumps({"id": i, "method": method, "params": params,
                                      **({"sessionId": session} if session else {})}))
            while (reply := json.loads(await ws.recv())).get("id") != i:
                pass
            assert "error" not in reply, (method, reply)
            return reply["result"]

        await call("Browser.grantPermissions", {"origin": url.split("/?")[0],
                                                "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
        target = (await call("Target.createTarget", {"url": "about:blank"}))["targetId"]
        session = (await call("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
        await call("Emulation.setFocusEmulationEnabled", {"enabled": True}, session)
        await call("Page.navigate", {"url": url}, session)
        return await asyncio.to_thread(_results, out, procs)


def _results(out: Path, procs: list[subprocess.Popen]) -> list[dict]:
    t0 = time.monotonic()
    while time.monotonic() - t0 < RUN_TIMEOUT_S:
        lines = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
        if any(r["name"] == "done" for r in lines):
            return lines
        for p in procs:
            assert p.poll() is None, f"{p.args[0]} exited ({p.returncode}); results so far: {lines}"
        time.sleep(0.5)
    raise AssertionError(f"the runner did not finish in {RUN_TIMEOUT_S} s: {out.read_text() if out.exists() else ''}")


def test_readings_quick_pick_in_real_vscode(tmp_path):
    chromium, vsce, server = _needs()
    ext_dir = _extensions(tmp_path, vsce)
    case = _case(tmp_path)
    _settings(tmp_path, server)
    out = tmp_path / "results.jsonl"
    env = dict(os.environ, FASTAPPLY_E2E_OUT=str(out), FASTAPPLY_E2E_CASE=str(case))
    port = _free_port()
    code = _start([str(CODE_SERVER), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--extensions-dir",
                   str(ext_dir), "--user-data-dir", str(tmp_path / "user"), "--disable-telemetry",
                   "--disable-update-check", "--disable-workspace-trust", str(tmp_path / "ws")],
                  env, tmp_path / "code-server.log")
    procs = [code]
    try:
        _wait_for(tmp_path / "code-server.log", r"HTTP server listening", code)
        browser = _start([chromium, "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
                          f"--user-data-dir={tmp_path / 'chromium'}", "about:blank"], env, tmp_path / "chromium.log")
        procs.append(browser)
        devtools = _wait_for(tmp_path / "chromium.log", r"DevTools listening on (ws://\S+)", browser).group(1)
        results = asyncio.run(_run_workbench(devtools, f"http://127.0.0.1:{port}/?folder={tmp_path / 'ws'}", out,
                                             procs))
    finally:
        for p in reversed(procs):
            _stop(p)
    readings = json.loads(case.read_text())["readings"]
    names = [r["name"] for r in results]
    expected = ([f"reading {k}: the document equals it" for k in range(1, len(readings) + 1)]
                + ["stale: nothing applied", "escape: nothing applied", "escape: the preview is closed"])
    assert set(expected) <= set(names), results
    failed = [r for r in results if not r["ok"]]
    assert not failed, failed
    # the server's refusal of the stale pick, as the workbench logged its notification
    log = (tmp_path / "chromium.log").read_text(errors="replace")
    assert "the document changed since the readings were computed; apply the snippet again" in log
