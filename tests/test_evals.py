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


def test_serving_summary_takes_ratios_within_one_pair_and_checks_identity():
    from evals.serving import summarize

    def leg(tokens, seconds, merged="m", n_tokens=None):
        cases = [{"id": "a", "merged": merged, "tokens": n_tokens or tokens}]
        return {"tokens": tokens, "seconds": seconds, "cases": cases}

    results = {
        "vllm_fastapply+vllm_plain": {"vllm_fastapply": {"1": leg(100, 2.0)}, "vllm_plain": {"1": leg(100, 10.0)}},
        # a slower machine during this pair: the ratio is taken within it, not against the first pair
        "vllm_fastapply+vllm_ngram": {"vllm_fastapply": {"1": leg(100, 4.0)}, "vllm_ngram": {"1": leg(100, 8.0)}},
        "vllm_fastapply+hf": {"vllm_fastapply": {"8": leg(100, 1.0)}, "hf": {"8": leg(100, 3.0, merged="x")}},
    }
    s = summarize(results)
    assert s["speedup_vs_vllm_plain_1_client"] == 5.0
    assert s["speedup_vs_vllm_ngram_1_client"] == 2.0
    assert s["vllm_vs_hf_8_clients"] == 3.0
    assert s["tokens_per_s"]["vllm_fastapply"] == {"1": 50.0, "8": 100.0}
    assert s["identical"] is True and s["hf_identical_to_vllm_plain"] is False
    results["vllm_fastapply+vllm_plain"]["vllm_plain"]["1"]["cases"][0]["tokens"] = 99
    assert summarize(results)["identical"] is False


def test_accuracy_counts_refusals_readings_recall_and_the_judges_picks(tmp_path):
    """`auto` with a judge test double: one case the merge answers, two it refuses with readings
    that the judge picks from (one right, one wrong), one with no reading at all."""
    from fastapply.api import Applier
    from tests.test_auto import EXPECTED_TIED, ORIGINAL, TIED
    from tests.test_judge import TableScorer

    other = ORIGINAL.replace("def g():\n    x = 1", "def g():\n    x = 2")  # the tie's other place
    tied = dict(CASE, id="t/1#loose_markers", original=ORIGINAL, update=TIED, expected=EXPECTED_TIED)
    cases = [CASE, tied, dict(tied, id="t/2#loose_markers", expected=other),
             dict(CASE, id="t/3#loose_markers", update="# ... existing code ...\nnothing_like_it()\n"
                                                       "# ... existing code ...\n", expected="x\n")]
    applier = Applier(model_engine=TableScorer({"def f():\n    x = 2": -1.0, "def g():\n    x = 2": -6.0}))
    rows = [accuracy.run_case(applier, c, "auto") for c in cases]
    s = accuracy.summarize(rows)
    assert (s["merge_refusals"], s["readings_recall"], s["refusals_with_two_readings_or_more"]) == (3, 2, 2)
    assert (s["judged"], s["judged_right"], s["judged_wrong"]) == (2, 1, 1)
    assert s["judged_wrong_cases"] == [{"id": "t/2#loose_markers", "margin": 5.0, "expected_reading": 2,
                                        "readings": rows[2]["readings"]}]
    assert s["model_requests"] == 3 and s["model_seconds_median"] is not None and s["model_seconds_p90"] >= 0
    assert (s["exact"], s["silent_wrong"], s["refused"]) == (2, 1, 1)
    # chunks combine into the same summary
    for i, part in enumerate((rows[:2], rows[2:])):
        (tmp_path / f"c{i}.json").write_text(json.dumps({"summary": {"engine": "auto"}, "cases": part}))
    out = tmp_path / "all.json"
    assert accuracy.main(["--combine", str(tmp_path / "c0.json"), str(tmp_path / "c1.json"), "--json", str(out)]) == 0
    combined = json.loads(out.read_text())["summary"]
    assert {k: combined[k] for k in s if k in combined} == {k: v for k, v in s.items() if k in combined}
