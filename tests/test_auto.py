"""The `auto` engine: the structural merge when it is sure, the model (drafted by the merge's
readings) where it refuses, and a refusal with both sets of reasons when the model's file fails
its checks. The model is a test double; the merge is real. The judge: tests/test_judge.py."""

import subprocess
import sys

import pytest

from fastapply.api import DEFAULT_ENGINE, Applier, ApplyError, ApplyRequest, TextDelta
from fastapply.merge import structural_merge
from fastapply.merge.candidates import candidate_texts

ORIGINAL = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"
# `return x` anchors twice: the merge refuses the tie; the model must decide.
TIED = "# ... existing code ...\n    x = 2\n    return x\n# ... existing code ...\n"
EXPECTED_TIED = "def f():\n    x = 2\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"
SURE = "def g():\n    x = 3\n    return x\n"  # a bare function: the merge places it by name
EXPECTED_SURE = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 3\n    return x\n"


class FakeModel:
    """Writes `text` as a model engine would, and records the draft sources it was given."""

    concurrent = False

    def __init__(self, text: str):
        self.text = text
        self.calls: list[list[tuple[str, str]] | None] = []

    def generate(self, req, draft_texts, should_stop, stats):
        self.calls.append(draft_texts)
        stats.output_tokens = len(self.text.split())
        yield TextDelta(self.text)
        yield self.text, []


class NoModel(Applier):
    """An Applier whose model must not be needed."""

    @property
    def model(self):
        raise AssertionError("the model was loaded although the structural merge was sure")


def test_auto_is_the_default_engine():
    assert DEFAULT_ENGINE == "auto" and ApplyRequest("a", "b").engine == "auto"


def test_auto_returns_the_structural_result_without_the_model():
    result = NoModel().apply(ApplyRequest(ORIGINAL, SURE, language="python"))
    assert result.merged == EXPECTED_SURE and result.engine == "structural" and result.ok


def test_auto_asks_the_model_when_the_merge_refuses_with_its_readings_as_drafts():
    merge = structural_merge(ORIGINAL, TIED, "python")
    assert not merge.ok and len(merge.readings) >= 2
    model = FakeModel(EXPECTED_TIED)  # no `score`: a model that cannot judge generates
    result = Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert result.merged == EXPECTED_TIED and result.engine == "speculative" and result.ok
    assert any(f.kind == "auto" and "ambiguous" in f.message for f in result.findings)
    (sources,) = model.calls
    names = [name for name, _ in sources]
    assert names[:2] == ["reading 1", "reading 2"] and names[-2:] == ["original", "update"]
    assert [text for _, text in sources[:len(merge.readings)]] == [r.text for r in merge.readings]
    assert dict(sources)["reading 1"] == EXPECTED_TIED  # the merge's own placement comes first


def test_auto_refuses_with_both_sets_of_reasons_when_the_model_fails_its_checks():
    model = FakeModel(ORIGINAL)  # the edit ignored: the edit checks catch it
    with pytest.raises(ApplyError) as e:
        Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert e.value.code == "refused"
    assert any("ambiguous" in r for r in e.value.reasons)
    assert any(r.startswith("edit_missing") for r in e.value.reasons)
    assert [text for _, text in e.value.readings][0] == EXPECTED_TIED  # the readings ride along
    assert "readings" in e.value.message


def test_auto_refuses_a_model_file_that_is_none_of_the_readings():
    """The model's file passes every check but is neither reading (both functions edited): where
    the merge named its readings, the model may only confirm one."""
    both = EXPECTED_TIED.replace("def g():\n    x = 1", "def g():\n    x = 2")
    assert both not in [r.text for r in structural_merge(ORIGINAL, TIED, "python").readings]
    with pytest.raises(ApplyError) as e:
        Applier(model_engine=FakeModel(both)).apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert e.value.code == "refused" and any("none of its readings" in r or "other than the merge" in r
                                             for r in e.value.reasons + [e.value.message])


class ConfirmingModel(FakeModel):
    """An engine that decodes a file that must be a reading with another copy of itself (the
    judge's dtype): it records which of its two writers each request used."""

    def __init__(self, text: str):
        super().__init__(text)
        self.used: list[str] = []

    def generate(self, req, draft_texts, should_stop, stats):
        self.used.append("generate")
        yield from super().generate(req, draft_texts, should_stop, stats)

    def confirm(self, req, draft_texts, should_stop, stats):
        self.used.append("confirm")
        yield from super().generate(req, draft_texts, should_stop, stats)


def test_a_file_that_must_be_a_reading_is_written_by_the_engines_confirm():
    model = ConfirmingModel(EXPECTED_TIED)
    result = Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert result.merged == EXPECTED_TIED and model.used == ["confirm"]
    # the speculative engine, and auto where the merge named no reading, generate as before
    model = ConfirmingModel(EXPECTED_TIED)
    Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, TIED, language="python", engine="speculative"))
    assert model.used == ["generate"]
    nothing = "# ... existing code ...\nnothing_like_it()\n# ... existing code ...\n"
    assert not structural_merge(ORIGINAL, nothing, "python").readings
    model = ConfirmingModel(ORIGINAL + "nothing_like_it()\n")
    try:
        Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, nothing, language="python"))
    except ApplyError as e:  # its file puts the line past a marker that then stands for nothing
        assert "beyond a marker" in e.message
    assert model.used == ["generate"]


def test_candidates_are_the_places_the_merge_was_choosing_between():
    texts = candidate_texts(ORIGINAL, TIED)
    assert texts == [EXPECTED_TIED, "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 2\n    return x\n"]
    assert candidate_texts(ORIGINAL, "# ... existing code ...\nnothing_like_it()\n# ... existing code ...\n") == []


def test_cli_writes_nothing_when_the_merge_and_the_model_both_fail(tmp_path):
    # The real CLI with a model that cannot load: the merge refuses, the model is unavailable, and
    # the file stays byte-identical.
    src = tmp_path / "app.py"
    src.write_text(ORIGINAL)
    upd = tmp_path / "u.py"
    upd.write_text(TIED)
    r = subprocess.run([sys.executable, "-m", "fastapply.cli", "apply", str(src), "--update", str(upd),
                        "--in-place", "--model", str(tmp_path / "missing-model")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "fastapply: error:" in r.stderr
    assert src.read_text() == ORIGINAL


class LineByLineModel(FakeModel):
    """Streams `text` a line at a time, asking `should_stop` before each line as a decode loop does
    between verification passes; stopped, it raises what the engine raises."""

    def generate(self, req, draft_texts, should_stop, stats):
        self.calls.append(draft_texts)
        self.lines_written = 0
        for line in self.text.splitlines(keepends=True):
            if should_stop is not None and should_stop():
                raise ApplyError("cancelled", "stopped")
            self.lines_written += 1
            stats.output_tokens += 1
            stats.accepted_tokens += 1
            yield TextDelta(line)
        yield self.text, []


def test_auto_stops_the_model_where_it_departs_from_every_reading():
    """The file must be a reading, and streamed text is the final file's prefix: the first line that
    begins none of them decides the request, so the rest is never decoded."""
    departs = ORIGINAL.replace("def f():\n    x = 1", "def f():\n    x = 9") + "# more\n" * 50
    model = LineByLineModel(departs)
    with pytest.raises(ApplyError) as e:
        Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert e.value.code == "refused" and any("departed from all" in r for r in e.value.reasons)
    assert model.lines_written == 2  # `def f():`, then the line that departs


def test_auto_lets_a_model_that_follows_a_reading_finish():
    model = LineByLineModel(EXPECTED_TIED)
    result = Applier(model_engine=model).apply(ApplyRequest(ORIGINAL, TIED, language="python"))
    assert result.merged == EXPECTED_TIED and model.lines_written == len(EXPECTED_TIED.splitlines())
