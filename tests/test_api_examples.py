"""The Python API: `fastapply.apply_edit` for the common case, and the README's "Python API" examples
run as they are written (tests/test_wheel.py runs them again in a fresh install of the wheel)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import fastapply
from fastapply import ApplyError, Applier, Stats, TextDelta
from fastapply.refusal import Hint

ROOT = Path(__file__).resolve().parents[1]
STACK = ("torch", "transformers", "accelerate", "gguf", "peft", "vllm")


def api_examples() -> str:
    """The ```python blocks of README.md's "Python API" section, joined in order (each may use the
    names of the ones before, as a reader copying them would)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse((ROOT / "README.md").read_text(encoding="utf-8"))
    blocks, section = [], None
    for k, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag == "h2":
            section = tokens[k + 1].content
        elif tok.type == "fence" and tok.info.strip() == "python" and section == "Python API":
            blocks.append(tok.content)
    return "\n".join(blocks)


def check_examples(python: str, cwd: Path, env: dict | None = None) -> str:
    """Run the examples with `python` (a fresh interpreter) and fail if they import the model stack;
    their output."""
    code = api_examples() + f"\nimport sys\nassert not [m for m in {STACK!r} if m in sys.modules], 'the model stack'\n"
    proc = subprocess.run([python, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_readme_examples_run(tmp_path):
    code = api_examples()
    assert "fastapply.apply_edit(" in code and "Applier(" in code
    out = check_examples(sys.executable, tmp_path)
    assert out.startswith("Resend with context:")  # the refusal example refused, and printed its hint first


ORIGINAL = "def first():\n    x = 1\n    return x\n\n\ndef second():\n    x = 1\n    return x\n"
TWO_PLACES = "    x = 1\n    print(x)\n    return x\n# ... existing code ...\n"


def test_apply_edit_returns_the_merged_file():
    merged = fastapply.apply_edit(ORIGINAL, "def first():\n" + TWO_PLACES, path="app.py")
    assert merged == ORIGINAL.replace("x = 1\n    return x\n", "x = 1\n    print(x)\n    return x\n", 1)
    assert fastapply.apply_edit("x = 1\ny = 2\n", "x = 1\ny = 3\n", language="python") == "x = 1\ny = 3\n"
    assert "apply_edit" in fastapply.__all__ and fastapply.apply_edit is fastapply.edit.apply_edit


def test_a_refusal_carries_its_hint_hints_and_readings_as_typed_fields():
    with pytest.raises(ApplyError) as e:
        fastapply.apply_edit(ORIGINAL, TWO_PLACES, path="app.py")
    err = e.value
    assert err.code == "refused" and err.message.startswith(err.hint + "\n")
    assert isinstance(err.hint, str) and err.hints and all(isinstance(h, Hint) for h in err.hints)
    assert len(err.readings) >= 2 and all(isinstance(how, str) and isinstance(text, str) for how, text in err.readings)
    assert err.reasons


def test_bad_input_is_an_error_with_what_to_fix():
    with pytest.raises(ApplyError) as e:
        fastapply.apply_edit(ORIGINAL, "x = 2\n", engine="fastest")
    assert e.value.code == "invalid_argument" and "structural" in e.value.message
    with pytest.raises(ApplyError) as e:
        fastapply.apply_edit(ORIGINAL, "   \n", path="app.py")
    assert e.value.code == "invalid_argument"


class _MarkerLeft:
    """A model engine whose file keeps the snippet's marker: a result that fails the checks."""

    def generate(self, req, draft_texts, should_stop, stats: Stats):
        text = req.original + "# ... existing code ...\n"
        yield TextDelta(text)
        yield text, []


def test_a_model_file_that_fails_the_checks_is_never_returned():
    with pytest.raises(ApplyError) as e:
        fastapply.apply_edit(ORIGINAL, "def first():\n" + TWO_PLACES, path="app.py", engine="plain",
                             applier=Applier(model_engine=_MarkerLeft()))
    assert e.value.code == "refused" and e.value.reasons and "plain engine's file failed its checks" in e.value.message
