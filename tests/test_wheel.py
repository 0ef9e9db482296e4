"""The wheel people install: built by `python -m build` (tests/conftest.py `dist`), installed with pip
into a fresh virtual environment (its lean dependencies from the package index; no editable install,
no repository on the path, run from a folder outside it). There the CLI, a structural HTTP server,
the LSP's entry point and the README's Python API examples work, the model stack is absent, and
`--engine auto` on a refused merge names the extra to install.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

import fastapply
from tests.test_api_examples import check_examples

ROOT = Path(__file__).resolve().parents[1]
MODEL_STACK = {"torch", "transformers", "accelerate", "gguf", "peft", "vllm", "safetensors", "tokenizers"}
DEMO, JUDGED = ROOT / "examples" / "demo", ROOT / "examples" / "judged"


@dataclass
class Lean:
    venv: Path
    work: Path  # the working folder: outside the repository
    env: dict[str, str]
    install_s: float

    def run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
        exe = argv[0] if os.sep in argv[0] else str(self.venv / "bin" / argv[0])
        return subprocess.run([exe, *argv[1:]], cwd=self.work, env=self.env, capture_output=True, text=True,
                              timeout=timeout)


@pytest.fixture(scope="module")
def lean(dist, tmp_path_factory) -> Lean:
    root = tmp_path_factory.mktemp("wheel")
    venv, work = root / "venv", root / "work"
    work.mkdir()
    # Nothing of this environment leaks in: no PYTHONPATH, no active venv.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    t0 = time.monotonic()
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(dist["wheel"])],
                          cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, "pip install of the wheel failed (is the package index reachable?):\n" + proc.stderr[-3000:]
    for name in ("app.py", "update.py", "expected.py"):
        shutil.copy(DEMO / name, work / f"demo_{name}")
    for name in ("rows.py", "update.py"):
        shutil.copy(JUDGED / name, work / f"judged_{name}")
    return Lean(venv, work, env, time.monotonic() - t0)


def test_the_wheel_installs_the_lean_set_from_outside_the_repository(lean):
    listed = json.loads(lean.run("python", "-m", "pip", "list", "--format=json").stdout)
    names = {d["name"].lower().replace("_", "-") for d in listed}
    assert "fastapply" in names and not names & MODEL_STACK, names & MODEL_STACK
    where = lean.run("python", "-c", "import fastapply, lsp; print(fastapply.__file__); print(lsp.__file__)")
    assert where.returncode == 0 and all(line.startswith(str(lean.venv)) for line in where.stdout.split()), where.stdout
    size = sum(p.stat().st_size for p in lean.venv.rglob("*") if p.is_file() and not p.is_symlink())
    print(f"\nlean install: {len(listed)} distributions, {size / 1e6:.0f} MB, pip install {lean.install_s:.1f} s")


def test_both_entry_points_print_the_version(lean):
    for prog in ("fastapply", "fastapply-lsp"):
        proc = lean.run(prog, "--version")
        assert proc.returncode == 0 and proc.stdout.strip() == f"{prog} {fastapply.__version__}", proc.stderr
    for sub in ("apply", "serve", "client", "codemod", "data", "train"):
        assert lean.run("fastapply", sub, "--help").returncode == 0, sub


def test_fastapply_apply_merges_and_auto_names_the_model_extra(lean):
    proc = lean.run("fastapply", "apply", "demo_app.py", "--update", "demo_update.py", "--quiet")
    assert proc.returncode == 0 and proc.stdout == (DEMO / "expected.py").read_text(), proc.stderr
    proc = lean.run("fastapply", "apply", "judged_rows.py", "--update", "judged_update.py", "--in-place")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "the judge is not installed" in proc.stderr and "pip install 'fastapply[model]'" in proc.stderr
    assert (lean.work / "judged_rows.py").read_text() == (JUDGED / "rows.py").read_text()  # nothing written
    proc = lean.run("fastapply", "apply", "demo_app.py", "--update", "demo_update.py", "--engine", "speculative")
    assert proc.returncode == 1 and proc.stderr.startswith("fastapply: error: install the model extra")
    assert proc.stderr.count("\n") == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_structural_http_server_answers(lean):
    port = _free_port()
    server = subprocess.Popen([str(lean.venv / "bin" / "fastapply"), "serve", "--port", "0", "--http-port", str(port),
                               "--http-default-engine", "structural", "--no-preload"],
                              cwd=lean.work, env=lean.env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # its start line says it listens
            line = server.stderr.readline()
            if "serving on" in line or not line:
                break
        assert server.poll() is None, "the server exited: " + server.stderr.read()[-3000:]
        url = f"http://127.0.0.1:{port}/v1/code/apply"
        status, body = _post(url, {"initial_code": (DEMO / "app.py").read_text(),
                                   "edit_snippet": (DEMO / "update.py").read_text()})
        assert status == 200 and body["mergedCode"] == (DEMO / "expected.py").read_text(), body
        status, body = _post(url, {"initial_code": (JUDGED / "rows.py").read_text(),
                                   "edit_snippet": (JUDGED / "update.py").read_text(), "model": "fastapply-auto"})
        assert status >= 400 and "fastapply[model]" in json.dumps(body), body
    finally:
        server.terminate()
        server.wait(timeout=60)
        server.stderr.close()


def test_the_readme_api_examples_run_in_the_install(lean):
    out = check_examples(str(lean.venv / "bin" / "python"), lean.work, lean.env)
    assert out.startswith("Resend with context:")
