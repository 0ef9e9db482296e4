"""The lean install (`pip install fastapply`, no model extra), simulated in this venv: each module of
the model stack set to None in `sys.modules` by a sitecustomize, which is how Python reads a module
that is not installed (`import torch` raises ModuleNotFoundError; `find_spec` finds nothing).
tests/test_wheel.py does the same with a real install of the wheel in a fresh venv.

Structural requests never import the stack; a request that needs a missing extra is one error line
that names it, and nothing is written; `auto` refuses where the merge does, with its readings and a
reason that names the model extra.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fastapply import ApplyError, ApplyRequest, extras
from fastapply.api import Applier

ROOT = Path(__file__).resolve().parents[1]
STACK = ("torch", "transformers", "accelerate", "gguf", "peft", "vllm", "safetensors", "tokenizers", "numpy",
         "huggingface_hub", "matplotlib")
JUDGED = ROOT / "examples" / "judged"  # the merge refuses with several readings
DEMO = ROOT / "examples" / "demo"  # the merge is sure


def _python(code: str, tmp_path: Path, lean: bool) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if lean:
        (tmp_path / "sitecustomize.py").write_text(f"import sys\nfor _m in {STACK!r}:\n    sys.modules[_m] = None\n")
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_structural_requests_never_import_the_model_stack(tmp_path):
    code = f"""
import contextlib, io, json, sys
import fastapply
from fastapply import Applier, ApplyRequest
import fastapply.server, fastapply.httpapi.app, fastapply.codemod.cli, lsp.server
from fastapply.cli import main
original, update = open({str(DEMO / "app.py")!r}).read(), open({str(DEMO / "update.py")!r}).read()
assert fastapply.apply_edit(original, update, path="app.py") == open({str(DEMO / "expected.py")!r}).read()
assert Applier().apply(ApplyRequest(original, update, path="app.py", engine="auto")).engine == "structural"
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(["apply", {str(DEMO / "app.py")!r}, "--update", {str(DEMO / "update.py")!r}, "--quiet"])
print(json.dumps([rc, sorted(m for m in {STACK!r} if m in sys.modules)]))
"""
    proc = _python(code, tmp_path, lean=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == [0, []], "a structural request imported the model stack"


# One process runs each command line (cli.main) and API call without the model extra, and reports.
_LEAN_RUNS = """
import contextlib, io, json, shutil, sys
import fastapply
from fastapply.cli import main
judged = {judged!r}
out = {{}}
for name, argv in {runs!r}:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    out[name] = [rc, err.getvalue()]
original, update = open(judged + "/rows.py").read(), open(judged + "/update.py").read()
for engine in ("auto", "speculative"):
    try:
        fastapply.apply_edit(original, update, path="rows.py", engine=engine)
        out["api_" + engine] = None
    except fastapply.ApplyError as e:
        out["api_" + engine] = [e.code, e.message, len(e.readings), e.reasons, getattr(e, "extra", None)]
out["imported"] = sorted(m for m in {stack!r} if sys.modules.get(m) is not None)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def lean_runs(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("lean")
    target = tmp / "rows.py"
    shutil.copy(JUDGED / "rows.py", target)
    update = str(JUDGED / "update.py")
    demo = ["apply", str(DEMO / "app.py"), "--update", str(DEMO / "update.py"), "--quiet"]
    runs = [
        ("auto_refused", ["apply", str(target), "--update", update, "--in-place"]),
        ("auto_sure", demo),
        ("speculative", ["apply", str(target), "--update", update, "--in-place", "--engine", "speculative"]),
        ("plain", demo + ["--engine", "plain"]),
        ("model_path", demo + ["--engine", "speculative", "--model", str(tmp)]),
        ("draft_model", demo + ["--engine", "speculative", "--draft-model", "smollm2-135m"]),
        ("vllm", demo + ["--backend", "vllm"]),
        ("train", ["train", "--data", str(tmp / "none.jsonl"), "--out", str(tmp / "run")]),
    ]
    (tmp / "config.json").write_text("{}")  # --model DIR: a model directory by its shape
    code = _LEAN_RUNS.format(judged=str(JUDGED), runs=runs, stack=STACK)
    proc = _python(code, tmp, lean=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    out["file_unchanged"] = target.read_text() == (JUDGED / "rows.py").read_text()
    return out


def test_auto_without_the_model_extra_answers_where_the_merge_is_sure(lean_runs):
    assert lean_runs["auto_sure"] == [0, ""]


def test_auto_without_the_model_extra_refuses_with_the_readings_and_names_it(lean_runs):
    rc, err = lean_runs["auto_refused"]
    assert rc == 1 and "Traceback" not in err and lean_runs["file_unchanged"]
    assert err.startswith("fastapply: error: Resend with context")  # the refusal's hint, as without the extra
    assert "the judge is not installed" in err and "pip install 'fastapply[model]'" in err
    code, message, readings, reasons, _ = lean_runs["api_auto"]
    assert code == "refused" and readings >= 2 and any("fastapply[model]" in r for r in reasons)


@pytest.mark.parametrize("run, extra", [("speculative", "model"), ("plain", "model"), ("model_path", "model"),
                                        ("draft_model", "model"), ("vllm", "vllm"), ("train", "train")])
def test_a_request_that_needs_a_missing_extra_is_one_line_naming_it(lean_runs, run, extra):
    rc, err = lean_runs[run]
    assert rc == 1 and err.count("\n") == 1, err
    assert err.startswith(f"fastapply: error: install the {extra} extra") and f"pip install 'fastapply[{extra}]'" in err
    assert lean_runs["file_unchanged"]  # the speculative run was --in-place


def test_the_api_names_the_missing_extra_as_a_typed_error(lean_runs):
    code, message, _, _, extra = lean_runs["api_speculative"]
    assert code == "unavailable" and extra == "model" and "\n" not in message
    assert lean_runs["imported"] == []


class _PeftlessEngine:
    """An engine whose load imports a module of the model extra late (as an adapter spec imports peft)."""

    @classmethod
    def load(cls, name, device=None, dtype=None, **options):
        raise ModuleNotFoundError(f"No module named {options['module']!r}", name=options["module"])


def test_a_late_import_of_a_missing_extra_is_the_same_line(monkeypatch):
    from fastapply import backends

    monkeypatch.setitem(backends.MODEL_BACKENDS, "peftless", "tests.test_lean:_PeftlessEngine")
    req = ApplyRequest("x = 1\n", "x = 2\n", engine="plain")
    with pytest.raises(extras.ExtraMissing) as e:
        Applier(backend="peftless", backend_options={"module": "peft"}).apply(req)
    assert e.value.extra == "model" and "pip install 'fastapply[model]'" in e.value.message
    # a module no extra installs is a bug or a broken install: its own error, not a wrong hint
    with pytest.raises(ModuleNotFoundError):
        Applier(backend="peftless", backend_options={"module": "no_such_module"}).apply(req)


def test_import_errors_map_to_their_extra():
    named = {m: extras.from_import_error(ModuleNotFoundError(m, name=m)) for m in
             ("torch", "transformers.models", "vllm", "matplotlib", "peft", "accelerate", "yaml")}
    assert {m: e and e.extra for m, e in named.items()} == {
        "torch": "model", "transformers.models": "model", "vllm": "vllm", "matplotlib": "train", "peft": "model",
        "accelerate": "model", "yaml": None}
    assert extras.missing("model") == []  # this venv has every extra (`make test` installs them)
    with pytest.raises(ApplyError):
        raise extras.ExtraMissing(extras.EXTRAS["vllm"], ["vllm"])


def test_a_lean_server_is_healthy_and_names_the_extra_to_a_model_request(tmp_path):
    """A server without the model extra preloads nothing it can load: that is a structural server by
    design, so health says SERVING (a load balancer keeps it), and a model request is the one line."""
    code = """
import json, time
from fastapply.api import Applier
from fastapply.client import FastApplyClient
from fastapply.server import FastApplyServer
srv = FastApplyServer(Applier(), host="127.0.0.1", port=0, preload=True).start()
deadline = time.time() + 60
while not srv.loaded.is_set() and time.time() < deadline:
    time.sleep(0.05)
with FastApplyClient(srv.address) as c:
    health = c.health()
    try:
        c.apply("x = 1\\n", "x = 2\\n", path="a.py", engine="speculative")
        error = None
    except Exception as e:
        error = str(e)
srv.stop(grace=0).wait(10)
print(json.dumps([health, error]))
"""
    proc = _python(code, tmp_path, lean=True)
    assert proc.returncode == 0, proc.stderr
    health, error = json.loads(proc.stdout.splitlines()[-1])
    assert health == "SERVING"
    assert error and "pip install 'fastapply[model]'" in error, error
    assert "could not be loaded" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
