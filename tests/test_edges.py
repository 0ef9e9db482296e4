"""Edges found by probing the front-ends as a new user would (issue 15): a read-only file is not
replaced without --force, a NaN or infinite temperature is bad input everywhere, a CRLF file printed
to stdout keeps its CRs, and a request too large for the structural merge is refused at once
(`too_long`) instead of holding a server core. Nothing invalid or partial is ever written."""

from __future__ import annotations

import argparse
import json
import math
import os
import stat
import urllib.error
import urllib.request

import pytest

from fastapply import pipeline
from fastapply.api import Applier, ApplyError, ApplyRequest, ApplyResult, Finding, Sampling, TextDelta, check_request
from fastapply.cli import main
from fastapply.cli_common import finish_apply
from fastapply.fsutil import read_source

ORIG = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
UPDATE = "def add(a, b):\n    # the sum\n    return a + b\n\n# ... existing code ...\n"
MERGED = "def add(a, b):\n    # the sum\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def _files(tmp_path, original: str = ORIG, newline: str = "\n"):
    f = tmp_path / "app.py"
    f.write_bytes(original.replace("\n", newline).encode())
    u = tmp_path / "update.py"
    u.write_text(UPDATE)
    return f, u


# -- --in-place on a read-only file -------------------------------------------------------------------

def test_in_place_refuses_a_read_only_file(tmp_path, capsys):
    f, u = _files(tmp_path)
    f.chmod(0o444)
    code = main(["apply", str(f), "--update", str(u), "--engine", "structural", "--in-place", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "read-only" in err and "--force" in err and "nothing written" in err
    assert f.read_text() == ORIG and stat.S_IMODE(f.stat().st_mode) == 0o444


def test_in_place_force_replaces_a_read_only_file_keeping_its_mode(tmp_path, capsys):
    f, u = _files(tmp_path)
    f.chmod(0o444)
    code = main(["apply", str(f), "--update", str(u), "--engine", "structural", "--in-place", "--force", "--quiet"])
    assert code == 0 and "wrote" in capsys.readouterr().err
    assert f.read_text() == MERGED and stat.S_IMODE(f.stat().st_mode) == 0o444
    assert not [p.name for p in tmp_path.iterdir() if "fastapply-tmp" in p.name]


def test_in_place_writable_file_is_written_as_before(tmp_path):
    f, u = _files(tmp_path)
    f.chmod(0o640)
    assert main(["apply", str(f), "--update", str(u), "--engine", "structural", "--in-place", "--quiet"]) == 0
    assert f.read_text() == MERGED and stat.S_IMODE(f.stat().st_mode) == 0o640


def _args(tmp_path, **kw) -> argparse.Namespace:
    base = dict(file=str(tmp_path / "app.py"), in_place=True, force=True, stream=False, json=False, quiet=True)
    return argparse.Namespace(**(base | kw))


def test_force_never_writes_a_result_that_failed_validation(tmp_path):
    """--force with --in-place lifts the read-only guard only: an invalid result is never written."""
    f, _ = _files(tmp_path)
    f.chmod(0o444)
    bad = ApplyResult("def add(a, b:\n", "speculative", "python", findings=[Finding("parse", "does not parse")])
    with pytest.raises(ApplyError) as ei:
        finish_apply(_args(tmp_path), read_source(f), iter([TextDelta(bad.merged), bad]))
    assert ei.value.code == "refused" and "nothing written" in ei.value.message
    assert f.read_text() == ORIG


def test_unwritable_folder_is_a_clear_error_and_leaves_no_file(tmp_path, monkeypatch):
    f, _ = _files(tmp_path)

    def fail(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("fastapply.cli_common.atomic_write", fail)
    with pytest.raises(ApplyError) as ei:
        finish_apply(_args(tmp_path, force=False), read_source(f), iter([ApplyResult(MERGED, "structural", "python")]))
    assert ei.value.code == "invalid_argument" and "cannot write" in ei.value.message
    assert f.read_text() == ORIG


# -- NaN / inf sampling ---------------------------------------------------------------------------------

@pytest.mark.parametrize("temperature,top_p", [(math.nan, 1.0), (math.inf, 1.0), (-math.inf, 1.0),
                                               (0.0, math.nan), (0.0, math.inf), (-1.0, 1.0), (0.0, 0.0)])
def test_non_finite_or_out_of_range_sampling_is_invalid(temperature, top_p):
    with pytest.raises(ApplyError) as ei:
        check_request(ApplyRequest(ORIG, UPDATE, sampling=Sampling(temperature, top_p)))
    assert ei.value.code == "invalid_argument" and "temperature" in ei.value.message
    check_request(ApplyRequest(ORIG, UPDATE, sampling=Sampling(0.7, 0.9)))  # in range: fine


@pytest.mark.parametrize("flag,value", [("--temperature", "nan"), ("--temperature", "inf"), ("--top-p", "nan")])
def test_cli_refuses_nan_sampling(tmp_path, capsys, flag, value):
    f, u = _files(tmp_path)
    assert main(["apply", str(f), "--update", str(u), "--engine", "structural", flag, value]) == 1
    captured = capsys.readouterr()
    assert "temperature must be" in captured.err and captured.out == ""


def test_grpc_refuses_nan_temperature():
    from fastapply.client import FastApplyClient
    from fastapply.server import FastApplyServer

    srv = FastApplyServer(Applier(), host="127.0.0.1", port=0, preload=False).start()
    try:
        with FastApplyClient(srv.address) as c:
            for t in (math.nan, math.inf):
                with pytest.raises(ApplyError) as ei:
                    c.apply(ORIG, UPDATE, engine="structural", temperature=t)
                assert ei.value.code == "invalid_argument" and "temperature" in ei.value.message
            assert c.apply(ORIG, UPDATE, engine="structural").merged == MERGED  # still serving
    finally:
        srv.stop(grace=0).wait(10)


def test_http_refuses_nan_temperature():
    from fastapply.httpapi.server import attach_http
    from fastapply.server import FastApplyServer

    srv = FastApplyServer(Applier(), host="127.0.0.1", port=0, preload=False)
    http = attach_http(srv, 0)
    srv.start()
    try:
        body = json.dumps({"model": "fastapply-structural", "temperature": math.nan, "messages": [
            {"role": "user", "content": f"<code>{ORIG}</code>\n<update>{UPDATE}</update>"}]}).encode()
        assert b"NaN" in body  # Python's json writes it; a lenient client may too
        req = urllib.request.Request(f"http://127.0.0.1:{http.port}/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as ei:
            urllib.request.urlopen(req, timeout=10)
        assert ei.value.code == 400 and b"temperature" in ei.value.read()
    finally:
        srv.stop(grace=0).wait(10)


# -- CRLF to stdout ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("stream", [False, True])
def test_crlf_file_printed_to_stdout_keeps_its_crs(tmp_path, capfdbinary, stream):
    f, u = _files(tmp_path, newline="\r\n")
    argv = ["apply", str(f), "--update", str(u), "--engine", "structural", "--quiet"] + (["--stream"] if stream else [])
    assert main(argv) == 0
    out = capfdbinary.readouterr().out
    assert out == MERGED.replace("\n", "\r\n").encode()


def test_lf_file_printed_to_stdout_unchanged(tmp_path, capfdbinary):
    f, u = _files(tmp_path)
    assert main(["apply", str(f), "--update", str(u), "--engine", "structural", "--quiet"]) == 0
    assert capfdbinary.readouterr().out == MERGED.encode()


# -- a request too large for the structural merge ----------------------------------------------------------

def _huge() -> str:
    return ORIG + "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(pipeline.MAX_MERGE_CHARS // 30))


@pytest.mark.parametrize("engine", ["structural", "auto"])
def test_structural_merge_refuses_a_huge_request_at_once(engine):
    original = _huge()
    assert len(original) > pipeline.MAX_MERGE_CHARS
    with pytest.raises(ApplyError) as ei:
        Applier().apply(ApplyRequest(original, UPDATE, language="python", engine=engine))
    assert ei.value.code == "too_long" and "cap" in ei.value.message and f"{pipeline.MAX_MERGE_CHARS:,}" in ei.value.message


def test_just_under_the_cap_still_merges(monkeypatch):
    monkeypatch.setattr(pipeline, "MAX_MERGE_CHARS", len(ORIG) + len(UPDATE))
    assert Applier().apply(ApplyRequest(ORIG, UPDATE, engine="structural")).merged == MERGED
    monkeypatch.setattr(pipeline, "MAX_MERGE_CHARS", len(ORIG) + len(UPDATE) - 1)
    with pytest.raises(ApplyError) as ei:
        Applier().apply(ApplyRequest(ORIG, UPDATE, engine="structural"))
    assert ei.value.code == "too_long"


def test_model_engines_draft_without_the_merge_over_the_cap(monkeypatch):
    monkeypatch.setattr(pipeline, "MAX_MERGE_CHARS", 10)

    def boom(*a, **k):
        raise AssertionError("the structural merge ran over the cap")

    monkeypatch.setattr(pipeline, "structural_merge", boom)
    sources, notes = pipeline.draft_sources(ApplyRequest(ORIG, UPDATE, engine="speculative"), "python")
    assert [name for name, _ in sources] == ["original", "update"]
    assert notes and "cap" in notes[0].message


def test_cli_and_grpc_report_the_cap(tmp_path, capsys, monkeypatch):
    from fastapply.client import FastApplyClient
    from fastapply.server import FastApplyServer

    monkeypatch.setattr(pipeline, "MAX_MERGE_CHARS", 50)
    f, u = _files(tmp_path)
    assert main(["apply", str(f), "--update", str(u), "--engine", "structural", "--in-place"]) == 1
    assert "structural merge's cap" in capsys.readouterr().err and f.read_text() == ORIG
    srv = FastApplyServer(Applier(), host="127.0.0.1", port=0, preload=False).start()
    try:
        with FastApplyClient(srv.address) as c:
            with pytest.raises(ApplyError) as ei:
                c.apply(ORIG, UPDATE, engine="structural")
            assert ei.value.code == "too_long" and "cap" in ei.value.message
    finally:
        srv.stop(grace=0).wait(10)


def test_read_only_check_sees_mode_bits_even_for_root(tmp_path):
    from fastapply.cli_common import read_only

    f, _ = _files(tmp_path)
    assert not read_only(f)
    f.chmod(0o444)
    assert read_only(f)
    os.chmod(f, 0o644)
    assert not read_only(f)
