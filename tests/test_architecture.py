"""`scripts/architecture.py`: the import graph has no cycle and no function in fastapply/ is long."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "architecture.py"


def _module():
    spec = importlib.util.spec_from_file_location("architecture", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cycle_finder_finds_cycles():
    arch = _module()
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert arch.cycles(graph) == [["a", "b", "c"]]
    assert arch.cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_and_no_function_over_80_lines():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--max-lines", "80"], capture_output=True, text=True,
                          timeout=120)
    assert "cycles: none" in proc.stdout, proc.stdout[-2000:]
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "fastapply.api -> " in proc.stdout and "longest function in fastapply/: " in proc.stdout
