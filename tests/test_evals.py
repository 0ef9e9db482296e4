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


def test_accuracy_counts_refusals_readings_recall_and_the_judges_picks(tmp_path, monkeypatch):
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
    monkeypatch.setattr("fastapply.judge.MARGIN_NATS_OTHER", 10.0)  # a model calibrated for placements
    applier = Applier(model_engine=TableScorer({"def f():\n    x = 2": -1.0, "def g():\n    x = 2": -16.0}))
    rows = [accuracy.run_case(applier, c, "auto") for c in cases]
    s = accuracy.summarize(rows)
    assert (s["merge_refusals"], s["readings_recall"], s["refusals_with_two_readings_or_more"]) == (3, 2, 2)
    assert (s["judged"], s["judged_right"], s["judged_wrong"]) == (2, 1, 1)
    assert s["judged_wrong_cases"] == [{"id": "t/2#loose_markers", "margin": 15.0, "expected_reading": 2,
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


# -- the speedup formula and the draft-model figures (issue 29) -----------------------------------------

def test_leviathan_formula_per_pass_reduces_to_theorem_3_8():
    from evals.spec_formula import alpha_by_group, leviathan_speedup, leviathan_tokens, predicted_speedup

    assert leviathan_tokens(0.0, 5) == 1.0 and leviathan_tokens(1.0, 5) == 6.0
    assert leviathan_tokens(0.5, 2) == pytest.approx(1.75)  # 1 + 0.5 + 0.25
    # one source at a fixed k: E / (c k + 1), Theorem 3.8
    passes = [([("model", 4)], 2)] * 10
    assert predicted_speedup(passes, {"model": 0.8}, 0.1) == pytest.approx(leviathan_speedup(0.8, 4, 0.1))
    # file tokens cost no draft-model step; a model run after the file is reached only through it
    mixed = [([("structural", 2), ("model", 1)], 3)]
    assert predicted_speedup(mixed, {"file": 0.5, "model": 1.0}, 0.2) == pytest.approx((1 + 0.5 + 0.25 + 0.25) / 1.2)
    by_source = {"structural": {"drafted": 10, "accepted": 6, "rejected": 2}, "original": {"drafted": 4, "accepted": 2,
                 "rejected": 0}, "model": {"drafted": 5, "accepted": 3, "rejected": 1}}
    assert alpha_by_group(by_source) == {"file": 0.8, "model": 0.75}


def test_new_token_fraction_counts_what_no_source_holds():
    from evals.speed import new_token_fraction

    original = list(range(100, 120))
    expected = original[:10] + [1, 2, 3, 4, 5] + original[10:]
    assert new_token_fraction(expected, [original], n=4) == pytest.approx(5 / 25)
    assert new_token_fraction(expected, [original, [9, 1, 2, 3, 4, 5, 9]], n=4) == 0.0
    assert new_token_fraction(original, [original[:3]], n=4) == 1.0  # no 4-token window matches
    assert new_token_fraction([], [original]) == 0.0


def _speed_row(i, model=True):
    st = {"drafted": 30, "accepted": 24, "rejected": 2}
    row = {"id": f"case{i}", "prompt_tokens": 100, "output_tokens": 40, "finished": True, "plain_s": 20.0,
           "plain_prefill_s": 4.0, "fastapply_s": 8.0, "fastapply_decode_s": 4.0, "identical": True, "accepted": 30,
           "tokens_per_pass": 5.0, "speedup_vs_plain": 2.5, "decode_speedup_vs_plain": 4.0,
           "plain_tokens_per_s": 2.5, "fastapply_tokens_per_s": 10.0,
           "file": {"alpha_by_source": {"file": 0.9}, "by_source": {"structural": st}, "predicted_speedup": 5.0,
                    "measured_speedup": 4.0, "pass_shapes": [[8, 0, 7]] * 5}}
    if model:
        row["file+model"] = {"s": 6.0, "decode_s": 2.0, "tokens_per_pass": 8.0, "identical": i != 1,
                             "draft_steps": 10, "draft_step_s": 0.05, "cost_ratio": 0.125,
                             "speedup_vs_file_only": 8.0 / 6.0,
                             "alpha_by_source": {"file": 0.9, "model": 0.5},
                             "by_source": {"structural": st, "model": {"drafted": 10, "accepted": 4, "rejected": 4}},
                             "predicted_speedup": 6.0, "predicted_speedup_at": {"0.05": 7.0}, "measured_speedup": 8.0,
                             "pass_shapes": [[2, 3, 4]] * 5}
    return row


def test_speed_summary_adds_the_formula_beside_the_measurement():
    from evals.speed import summarize

    s = summarize([_speed_row(0), _speed_row(2)])
    assert s["all_identical"] is True and s["speedup_vs_plain"] == 2.5
    assert s["tokens_per_pass"] == {"file": 5.0, "file+model": 8.0}
    assert s["alpha_by_source"]["file"] == {"file": pytest.approx(24 / 26)}
    assert s["alpha_by_source"]["file+model"]["model"] == pytest.approx(0.5)
    assert s["cost_ratio"] == pytest.approx(0.05 / (16.0 / 40))  # step 0.05 s / plain 0.4 s per token
    assert s["predicted_speedup"] == {"file": 5.0, "file+model": 6.0, "file+model at c=0.05": 7.0}
    assert s["measured_speedup"] == {"file": 4.0, "file+model": 8.0}
    assert s["speedup_vs_file_only"] == pytest.approx(4.0 / 2.0)  # decode time, file run / file+model run
    assert summarize([_speed_row(0), _speed_row(1)])["all_identical"] is False  # a file+model run differed
    plain = summarize([_speed_row(0, model=False)])
    assert "cost_ratio" not in plain and plain["tokens_per_pass"] == {"file": 5.0}


def test_device_check_runs_on_a_tiny_configuration(tmp_path, capsys):
    """The GPU check's script, on CPU with a tiny shape: costs, overhead, c and predictions come out."""
    from evals import gpu_cost

    patterns = tmp_path / "speed.json"
    patterns.write_text(json.dumps({"cases": [_speed_row(0), _speed_row(1, model=False)]}))
    out = tmp_path / "gpu.json"
    assert gpu_cost.main(["--config", "tiny", "--draft-config", "tiny", "--device", "cpu", "--dtype", "fp32",
                          "--contexts", "64,128", "--chunks", "1,4,16", "--repeats", "1", "--loop-tokens", "24",
                          "--patterns", str(patterns), "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert set(r["target"]["forward"]["64"]) == {"1", "4", "16"} and r["target"]["prefill"]["128"] > 0
    assert r["loop_overhead"]["tokens"] == 24 and r["loop_overhead"]["spec_passes"] >= 1
    assert set(r["cost_ratio"]) == {"64", "128"}
    by_id = {p["id"]: p for p in r["predictions"]}
    assert by_id["case0"]["file+model_tokens_per_s"] > 0 and by_id["case0"]["plain_tokens_per_s"] > 0
    assert "file+model_tokens_per_s" not in by_id["case1"]
    assert by_id["case0"]["file_tokens_per_pass"] == pytest.approx(41 / 5)  # 1 + 5 x (7 + 1) tokens in 5 passes
    assert set(r["median_tokens_per_s"]) == {"plain", "file", "file+model"}
    assert "predicted decode tokens/s per request" in capsys.readouterr().out
