"""`fastapply serve --http-port` with the default engine loads the model, as `serve` alone does.

It did not (issue 39): the HTTP front-end warms the tokenizer that counts model-free answers' usage in
a thread of its own, beside the server's model preload. On a fresh machine that thread converts the
GGUF (importing transformers' model classes) while the preload imports the engine, and transformers'
lazy modules, imported from two threads at once, handed the preload a half-imported module: "model
backend 'hf' cannot be imported (... cannot import name 'DynamicCache' from 'transformers')", and
/health answered 503 for as long as the server ran. Both now load under `fastapply.backends.LOAD_LOCK`.

The model test starts the real server as a user does on a fresh machine (an empty cache, but for the
assembled GGUF, linked in when present: the conversion is what raced), waits for /health 200 and
applies a case that needs the model. The other test checks the lock without any model.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from fastapply.api import ApplyRequest, ApplyResult
from fastapply.models import cache_root

REPO = Path(__file__).resolve().parent.parent
JUDGED = REPO / "examples" / "judged"
HEALTHY_WITHIN_S = 900.0  # a fresh cache converts the GGUF once (~1 minute) on a shared 2-core machine
REQUEST_TIMEOUT_S = 600.0


def test_the_usage_tokenizer_loads_under_the_model_stack_lock(monkeypatch):
    """While another thread holds `LOAD_LOCK` (a model loading), the HTTP front-end's tokenizer waits:
    it neither resolves weights nor imports transformers until the lock is free."""
    from fastapply.backends import LOAD_LOCK
    from fastapply.httpapi import usage

    resolved = threading.Event()

    def resolve_weights(name):
        resolved.set()
        raise RuntimeError("no weights in this test")

    monkeypatch.setattr("fastapply.models.resolve_weights", resolve_weights)
    counter = usage.TokenCounter()
    holder_has_it, release = threading.Event(), threading.Event()

    def hold():
        with LOAD_LOCK:
            holder_has_it.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holder_has_it.wait(10)
    counter.warm()
    assert not resolved.wait(1.0)  # still waiting for the lock
    release.set()
    holder.join(10)
    assert resolved.wait(10)  # then it went on (and, without weights, counts nothing)
    assert counter.usage(ApplyRequest("a\n", "b\n"), ApplyResult("b\n", "structural", None)) is None


def _serve(cache: Path) -> tuple[subprocess.Popen, str, list[str]]:
    cmd = [sys.executable, "-m", "fastapply.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--http-port", "0"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "FASTAPPLY_CACHE": str(cache)})
    lines: list[str] = []
    for line in proc.stderr:
        lines.append(line)
        m = re.search(r"HTTP on (http://[^\s,]+)", line)
        if m:
            threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()  # drains the pipe
            return proc, m.group(1), lines
    proc.kill()
    raise AssertionError("fastapply serve did not start:\n" + "".join(lines))


def _wait_healthy(url: str, proc: subprocess.Popen, lines: list[str]) -> None:
    end = time.monotonic() + HEALTHY_WITHIN_S
    while time.monotonic() < end:
        assert proc.poll() is None, "the server exited:\n" + "".join(lines)
        assert not any("could not be loaded" in line for line in lines), "".join(lines)
        try:
            if httpx.get(url + "/health", timeout=10).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(2)
    raise AssertionError(f"/health not 200 within {HEALTHY_WITHIN_S:.0f} s:\n" + "".join(lines))


@pytest.mark.model
def test_serve_with_http_and_the_default_engine_loads_the_model_and_applies_with_it(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    if (cache_root() / "gguf").is_dir():
        (cache / "gguf").symlink_to(cache_root() / "gguf")
    proc, url, lines = _serve(cache)
    try:
        _wait_healthy(url, proc, lines)
        assert httpx.get(url + "/health").json() == {"status": "SERVING", "model_loaded": True}
        original, update = (JUDGED / "rows.py").read_text(), (JUDGED / "update.py").read_text()
        r = httpx.post(url + "/v1/chat/completions", timeout=REQUEST_TIMEOUT_S, json={
            "messages": [{"role": "user", "content": f"<code>{original}</code>\n<update>{update}</update>"}]})
        assert r.status_code == 200, r.text[-2000:]
        body = r.json()
        # the structural merge refuses this snippet (examples/judged): the answer needed the model
        assert body["fastapply"]["engine"] != "structural"
        assert body["choices"][0]["message"]["content"] == (JUDGED / "expected.py").read_text()
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
