"""The eval scripts' own logic: how a case is scored, and the summaries the issue's commands print."""

import json

import pytest

from evals import accuracy

CASE = {"id": "x/y#sparse_context", "source": "o/r@1:f.py", "language": "python",
        "original": "a = 1\nb = 2\n", "update": "a = 1\nb = 3\n", "expected": "a = 1\nb = 3\n"}


def test_score_case_verdicts():
    assert accuracy.score_case(CASE, None, False)["refused"]
    good = accuracy.score_case(CASE, "a = 1\nb = 3\n", True)
    assert good["exact"] and good["byte_exact"] and not good["silent_wrong"]
    wrong = accuracy.score_case(CASE, "a = 1\nb = 2\n", True)
    assert wrong["silent_wrong"] and not wrong["silent_wrong_eol_only"] and not wrong["exact"]
    eol = accuracy.score_case(CASE, "a = 1\nb = 3", True)
    assert eol["silent_wrong"] and eol["silent_wrong_eol_only"]
    flagged = accuracy.score_case(CASE, "a = 1\nb = 2\n", False)
    assert flagged["flagged_wrong"] and not flagged["silent_wrong"]
    # Continue fixtures compare with blank lines ignored (dataset README); other sources byte for byte
    cont = dict(CASE, source="continuedev/continue@1:x.diff")
    assert accuracy.score_case(cont, "a = 1\n\nb = 3\n", True)["exact"]
    assert not accuracy.score_case(CASE, "a = 1\n\nb = 3\n", True)["exact"]


def test_accuracy_cli_summary(tmp_path):
    cases = [
        CASE,
        dict(CASE, id="x/z#loose_markers", language="javascript", original="f();\n",
             update="// ... existing code ...\nnothing_like_it();\n// ... existing code ...\n",
             expected="f();\n"),
    ]
    src = tmp_path / "cases.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in cases))
    out = tmp_path / "out.json"
    assert accuracy.main(["--engine", "structural", "--cases", str(src), "--json", str(out)]) == 0
    s = json.loads(out.read_text())["summary"]
    assert (s["cases"], s["exact"], s["refused"], s["silent_wrong"]) == (2, 1, 1, 0)
    assert s["exact_rate"] == 0.5
    assert s["by_language"]["python"]["exact"] == 1 and s["by_language"]["javascript"]["refused"] == 1
    assert s["by_variant"]["sparse_context"]["exact"] == 1 and s["by_variant"]["loose_markers"]["refused"] == 1


@pytest.mark.model
def test_drafting_cli_summary(tmp_path):
    """Replay target, real drafters: needs the default model's tokenizer (no weights are run)."""
    from evals import drafting

    case = dict(CASE, original="".join(f"value_{i} = compute({i})\n" for i in range(30)))
    case["expected"] = case["original"].replace("compute(7)", "compute(7, fast=True)")
    case["update"] = "# ... existing code ...\nvalue_6 = compute(6)\nvalue_7 = compute(7, fast=True)\n" \
                     "value_8 = compute(8)\n# ... existing code ...\n"
    src = tmp_path / "cases.jsonl"
    src.write_text(json.dumps(case) + "\n")
    out = tmp_path / "d.json"
    assert drafting.main(["--cases", str(src), "--k-max", "32", "--sweep", "8,32", "--json", str(out),
                          "--report", str(tmp_path / "rep")]) == 0
    data = json.loads(out.read_text())
    s = data["summary"]
    assert s["k_max"] == 32 and set(s["tokens_per_pass"]) >= {"file", "structural", "prompt_lookup"}
    assert s["structural_draft_available"] == 1
    row = data["cases"][0]
    n = row["output_tokens"]
    # every drafter produced the whole output, in at least ceil(n / (k_max + 1)) passes
    for name in ("file", "structural", "prompt_lookup", "oracle"):
        assert row[name]["passes"] >= -(-n // 33)
        assert row[name]["tokens_per_pass"] == pytest.approx(n / row[name]["passes"])
    # the structural draft holds the edit, so it never needs more passes than the oracle's schedule allows
    assert row["structural"]["passes"] == row["oracle"]["passes"]
    assert (tmp_path / "rep" / "tokens_per_pass.png").stat().st_size > 0
    # the sweep re-runs the same cases per length; its entry for --k-max is the main summary's
    assert set(s["sweep"]) == {"8", "32"} and s["sweep"]["32"]["tokens_per_pass"] == s["tokens_per_pass"]
    assert all(v <= 9 for v in s["sweep"]["8"]["tokens_per_pass"].values())  # at most 8 drafted + 1 per pass
    assert "By maximum draft length" in (tmp_path / "rep" / "README.md").read_text()
