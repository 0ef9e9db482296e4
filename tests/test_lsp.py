"""End to end: a real LSP client (pytest-lsp) drives `fastapply-lsp` over stdio (engine structural).

The client keeps its own copy of each document, applies the server's `workspace/applyEdit` like an
editor does (refusing a stale version), and sends didChange back.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest
import pytest_asyncio
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from lsp.edits import apply_edits

ROOT = Path(__file__).resolve().parents[1]
EVALS = ROOT / "evals" / "cases"
_script = Path(sys.executable).parent / "fastapply-lsp"
SERVER = [str(_script)] if _script.exists() else [sys.executable, "-m", "lsp.server"]
SERVER = SERVER + ["--engine", "structural"]

pytestmark = pytest.mark.asyncio(loop_scope="module")

BROKEN = "def f(:\n    ((((\n  x = [\n"  # the structural engine refuses: the original does not parse


def real_cases(n: int) -> list[dict]:
    """`n` commits_dev cases, different languages first, that the structural engine merges exactly."""
    path = EVALS / "commits_dev.jsonl"
    if not path.exists():
        pytest.skip("shared evals absent")
    from evals.lsp_edits import pick_cases

    try:
        cases = pick_cases(path, n)
    except NotImplementedError:
        pytest.skip("structural merge not implemented yet")
    if not cases:
        pytest.skip("no case the structural engine merges exactly")
    return cases


class Docs:
    """The client's side of the documents: text + version, edited like an editor would."""

    def __init__(self, client: LanguageClient):
        self.client = client
        self.text: dict[str, str] = {}
        self.version: dict[str, int] = {}
        self.edits_seen: list[types.ApplyWorkspaceEditParams] = []
        self.refuse_next = False
        self.on_progress_create = None  # a hook run when the server creates a progress token

    def open(self, uri: str, text: str, language: str = "python") -> None:
        self.text[uri], self.version[uri] = text, 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))

    def change_full(self, uri: str, text: str) -> None:
        self.text[uri] = text
        self.version[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.version[uri]),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))

    def change_range(self, uri: str, start: tuple[int, int], end: tuple[int, int], new_text: str) -> None:
        rng = {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}}
        self.text[uri] = apply_edits(self.text[uri], [{"range": rng, "newText": new_text}])
        self.version[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.version[uri]),
            [types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(*start), types.Position(*end)), text=new_text)]))

    def on_apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.edits_seen.append(params)
        if self.refuse_next:
            self.refuse_next = False
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="user said no")
        for change in params.edit.document_changes or []:
            uri = change.text_document.uri
            if change.text_document.version != self.version.get(uri):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="stale version")
            edits = [{"range": {"start": {"line": e.range.start.line, "character": e.range.start.character},
                                "end": {"line": e.range.end.line, "character": e.range.end.character}},
                      "newText": e.new_text} for e in change.edits]
            self.change_full(uri, apply_edits(self.text[uri], edits))
        return types.ApplyWorkspaceEditResult(applied=True)


def capabilities(progress: bool = True) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)),
        window=types.WindowClientCapabilities(work_done_progress=progress),
        general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
    )


def _on_apply_edit(client: LanguageClient, params: types.ApplyWorkspaceEditParams):
    return client.docs.on_apply_edit(params)


def _on_progress_create(client: LanguageClient, params: types.WorkDoneProgressCreateParams):
    DEFAULT_CLIENT_FEATURES[types.WINDOW_WORK_DONE_PROGRESS_CREATE](client, params)
    if client.docs.on_progress_create is not None:
        client.docs.on_progress_create(params)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.WORKSPACE_APPLY_EDIT: _on_apply_edit,
                                   types.WINDOW_WORK_DONE_PROGRESS_CREATE: _on_progress_create})
    client.docs = Docs(client)
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client), scope="module")
async def server(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities(),
                                                               root_uri="file:///tmp"))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def client(server: LanguageClient):
    """One server for the module; each test starts with a clean client-side record."""
    docs: Docs = server.docs
    docs.edits_seen.clear()
    docs.refuse_next = False
    docs.on_progress_create = None
    server.messages.clear()
    server.progress_reports.clear()
    return server


async def execute(client: LanguageClient, command: str, **arg):
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[arg]))


def messages(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Error]


async def test_apply_real_cases(client: LanguageClient):
    docs: Docs = client.docs
    for i, case in enumerate(real_cases(3)):
        ext = {"python": "py", "go": "go", "rust": "rs", "java": "java", "typescript": "ts", "javascript": "js",
               "tsx": "tsx", "jsx": "jsx"}.get(case["language"], "txt")
        uri = f"file:///tmp/case{i}.{ext}"
        docs.open(uri, case["original"], case["language"])
        summary = await execute(client, "fastapply.applyEdit", uri=uri, update=case["update"])
        assert docs.text[uri] == case["expected"], case["id"]
        assert summary["applied"] is True and summary["engine"] == "structural"
        assert summary["edits"] >= 1 and summary["changedLines"] >= 1
        assert summary["edits"] <= max(summary["linesRemoved"], summary["linesAdded"])
        (params,) = docs.edits_seen[-1:]
        change = params.edit.document_changes[0]
        assert change.text_document.version == 1 and len(change.edits) == summary["edits"]
    assert not messages(client)
    # progress was created, begun and ended for every apply
    ends = [r for reports in client.progress_reports.values() for r in reports if r.kind == "end"]
    assert len(ends) == 3


async def test_incremental_sync_then_apply(client: LanguageClient):
    docs: Docs = client.docs
    uri = "file:///tmp/inc.py"
    docs.open(uri, "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    docs.change_range(uri, (1, 11), (1, 12), "10")  # the server must track this edit
    update = "# ... existing code ...\ndef g():\n    return 3\n"
    summary = await execute(client, "fastapply.applyEdit", uri=uri, update=update)
    assert docs.text[uri] == "def f():\n    return 10\n\n\ndef g():\n    return 3\n"
    assert summary["edits"] == 1
    e = docs.edits_seen[-1].edit.document_changes[0].edits[0]
    assert (e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character,
            e.new_text) == (5, 11, 5, 12, "3")
    assert docs.edits_seen[-1].edit.document_changes[0].text_document.version == 2


async def test_preview_edits_nothing(client: LanguageClient):
    docs: Docs = client.docs
    uri = "file:///tmp/prev.py"
    original = "def f():\n    return 1\n"
    docs.open(uri, original)
    res = await execute(client, "fastapply.previewEdit", uri=uri, update="def f():\n    return 2\n")
    assert res["merged"] == "def f():\n    return 2\n"
    assert "-    return 1\n+    return 2\n" in res["diff"] and res["diff"].startswith("--- a/prev.py")
    assert res["applied"] is False and not docs.edits_seen and docs.text[uri] == original


async def test_stale_version_refused(client: LanguageClient):
    """The user types while the apply runs: the server sees the new version and edits nothing."""
    docs: Docs = client.docs
    uri = "file:///tmp/stale.py"
    docs.open(uri, "def f():\n    return 1\n")

    def on_create(params: types.WorkDoneProgressCreateParams):
        # The apply has read version 1; this change arrives before it ends.
        docs.change_range(uri, (0, 0), (0, 0), "# typed\n")

    docs.on_progress_create = on_create
    with pytest.raises(JsonRpcException) as err:
        await execute(client, "fastapply.applyEdit", uri=uri, update="def f():\n    return 2\n")
    assert err.value.code == -32801 and "changed during the apply" in err.value.message
    assert not docs.edits_seen and docs.text[uri] == "# typed\ndef f():\n    return 1\n"
    assert any("changed during the apply" in m for m in messages(client))


async def test_client_refusal_is_reported(client: LanguageClient):
    docs: Docs = client.docs
    uri = "file:///tmp/refuse.py"
    docs.open(uri, "def f():\n    return 1\n")
    docs.refuse_next = True
    with pytest.raises(JsonRpcException) as err:
        await execute(client, "fastapply.applyEdit", uri=uri, update="def f():\n    return 2\n")
    assert "user said no" in err.value.message
    assert docs.text[uri] == "def f():\n    return 1\n"


async def test_failed_apply_changes_nothing(client: LanguageClient):
    docs: Docs = client.docs
    uri = "file:///tmp/broken.py"
    docs.open(uri, BROKEN)
    with pytest.raises(JsonRpcException) as err:
        await execute(client, "fastapply.applyEdit", uri=uri, update="def g():\n    return 1\n")
    assert err.value.code == -32803 and "does not parse" in err.value.message
    assert err.value.data["reason"] == "refused"
    assert not docs.edits_seen and docs.text[uri] == BROKEN
    assert any("does not parse" in m and "nothing changed" in m for m in messages(client))


@pytest.mark.parametrize("arguments, expect", [
    ([], "expected one argument"),
    (["file:///tmp/x.py"], "expected one argument"),
    ([{"update": "x = 1\n"}], "'uri'"),
    ([{"uri": "file:///tmp/bad.py"}], "'update'"),
    ([{"uri": "file:///tmp/bad.py", "update": "   \n"}], "empty"),
    ([{"uri": "file:///tmp/bad.py", "update": "x = 1\n", "engine": "magic"}], "unknown engine"),
    ([{"uri": "file:///tmp/bad.py", "update": "x = 1\n", "colour": "red"}], "unknown argument"),
    ([{"uri": "file:///tmp/never-opened.py", "update": "x = 1\n"}], "not open"),
])
async def test_bad_arguments(client: LanguageClient, arguments, expect):
    if "file:///tmp/bad.py" not in client.docs.text:
        client.docs.open("file:///tmp/bad.py", "x = 0\n")
    with pytest.raises(JsonRpcException) as err:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="fastapply.applyEdit", arguments=arguments))
    assert err.value.code == -32602 and expect in err.value.message
    assert not client.docs.edits_seen
    assert any(expect in m for m in messages(client))


# -- cancellation: a server whose applier decodes slowly (40 chunks a second) until told to stop ------

SLOW_SERVER = r'''
import os, sys, time
from fastapply.api import ApplyError, ApplyResult, TextDelta
from lsp.server import build_server

class SlowApplier:
    model_loaded = True
    def apply_stream(self, req, should_stop=None):
        for i in range(400):
            if should_stop is not None and should_stop():
                with open(os.environ["FASTAPPLY_TEST_MARKER"], "a") as f:
                    f.write(f"stopped {i}\n")
                raise ApplyError("cancelled", "cancelled")
            yield TextDelta("x")
            time.sleep(0.025)
        yield ApplyResult(req.original + "# slow\n", "slow", "python")
    def close(self):
        pass

build_server(SlowApplier(), "plain").start_io(sys.stdin.buffer, sys.stdout.buffer)
'''


@pytest.fixture(scope="module")
def marker(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("slow") / "marker.txt"


@pytest.fixture(scope="module")
def slow_config(marker):
    import os

    env = dict(os.environ, FASTAPPLY_TEST_MARKER=str(marker))
    return ClientServerConfig(server_command=[sys.executable, "-c", SLOW_SERVER], client_factory=make_client,
                              server_env=env)


@contextlib.asynccontextmanager
async def session(config: ClientServerConfig):
    """A client of the server `config` starts, its session initialized; shut down after."""
    c = await config.start()
    await c.initialize_session(types.InitializeParams(capabilities=capabilities(), root_uri="file:///tmp"))
    try:
        yield c
    finally:
        await c.shutdown_session()
        await c.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def slow(slow_config):
    async with session(slow_config) as c:
        yield c


async def _wait_for(pred, timeout: float = 10.0):
    import asyncio

    for _ in range(int(timeout / 0.02)):
        if pred():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


def _begun(client: LanguageClient) -> list:
    return [t for t, reports in client.progress_reports.items() if any(r.kind == "report" for r in reports)]


async def test_progress_cancel_stops_decoding(slow: LanguageClient, marker: Path):
    import asyncio

    docs: Docs = slow.docs
    uri = "file:///tmp/slow1.py"
    docs.open(uri, "x = 1\n")
    task = asyncio.ensure_future(execute(slow, "fastapply.applyEdit", uri=uri, update="x = 2\n"))
    await _wait_for(lambda: _begun(slow))
    (token,) = _begun(slow)
    begin = slow.progress_reports[token][0]
    assert begin.kind == "begin" and begin.cancellable
    slow.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(JsonRpcException) as err:
        await task
    assert err.value.code == -32800 and "cancelled" in err.value.message
    await _wait_for(marker.exists)
    assert marker.read_text().startswith("stopped")
    assert not docs.edits_seen and docs.text[uri] == "x = 1\n"
    assert slow.progress_reports[token][-1].kind == "end"


async def test_cancel_request_stops_decoding(slow: LanguageClient, marker: Path):
    import asyncio

    docs: Docs = slow.docs
    slow.progress_reports.clear()
    marker.unlink(missing_ok=True)
    uri = "file:///tmp/slow2.py"
    docs.open(uri, "y = 1\n")
    fut = asyncio.wrap_future(slow.protocol.send_request(
        types.WORKSPACE_EXECUTE_COMMAND,
        types.ExecuteCommandParams(command="fastapply.applyEdit", arguments=[{"uri": uri, "update": "y = 2\n"}]),
        msg_id="apply-to-cancel"))
    await _wait_for(lambda: _begun(slow))
    slow.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="apply-to-cancel"))
    with pytest.raises(JsonRpcException) as err:
        await fut
    assert err.value.code == -32800
    await _wait_for(marker.exists)  # the decoding thread saw the flag and stopped
    assert not docs.edits_seen and docs.text[uri] == "y = 1\n"


# -- remote mode: the language server forwards to a fastapply gRPC server (with a token) ------------

@pytest.fixture(scope="module")
def grpc_server():
    server_mod = pytest.importorskip("fastapply.server")
    pytest.importorskip("fastapply.client")
    srv = server_mod.FastApplyServer(host="127.0.0.1", port=0, token="s3cret", preload=False, workers=4)
    srv.start()
    yield srv
    srv.stop(grace=0).wait(5)


async def _remote_client(address: str, token: str) -> LanguageClient:
    import os

    cmd = SERVER[:-2] + ["--server", address]  # no --engine: the command names it
    env = dict(os.environ, FASTAPPLY_TOKEN=token)
    c = await ClientServerConfig(server_command=cmd, client_factory=make_client, server_env=env).start()
    await c.initialize_session(types.InitializeParams(capabilities=capabilities(progress=False), root_uri="file:///tmp"))
    return c


async def test_remote_server_mode(grpc_server):
    c = await _remote_client(grpc_server.address, "s3cret")
    try:
        case = real_cases(1)[0]
        uri = "file:///tmp/remote.py" if case["language"] == "python" else f"file:///tmp/remote.{case['language']}"
        c.docs.open(uri, case["original"], case["language"])
        summary = await execute(c, "fastapply.applyEdit", uri=uri, update=case["update"], engine="structural")
        assert c.docs.text[uri] == case["expected"] and summary["engine"] == "structural"
        # a refusal on the server side arrives as the same kind of error, nothing changed
        c.docs.open("file:///tmp/remote_broken.py", BROKEN)
        with pytest.raises(JsonRpcException) as err:
            await execute(c, "fastapply.applyEdit", uri="file:///tmp/remote_broken.py", update="x = 1\n",
                          engine="structural")
        assert "does not parse" in err.value.message and c.docs.text["file:///tmp/remote_broken.py"] == BROKEN
    finally:
        await c.shutdown_session()
        await c.stop()


async def test_remote_wrong_token(grpc_server):
    c = await _remote_client(grpc_server.address, "wrong")
    try:
        c.docs.open("file:///tmp/remote2.py", "x = 1\n")
        with pytest.raises(JsonRpcException) as err:
            await execute(c, "fastapply.applyEdit", uri="file:///tmp/remote2.py", update="x = 2\n",
                          engine="structural")
        assert err.value.data["reason"] == "unauthenticated"
        assert c.docs.text["file:///tmp/remote2.py"] == "x = 1\n" and not c.docs.edits_seen
    finally:
        await c.shutdown_session()
        await c.stop()


# -- a refusal as a choice: its readings in the error's data, fastapply.applyReading applies one ------

JUDGED = ROOT / "examples" / "judged"  # a body wrapped in try/except: the merge refuses with 4 readings


def judged() -> tuple[str, str]:
    return (JUDGED / "rows.py").read_text(), (JUDGED / "update.py").read_text()


def judged_readings() -> list[tuple[str, str]]:
    from fastapply.merge import structural_merge

    original, update = judged()
    return [(r.how, r.text) for r in structural_merge(original, update, None, "rows.py").readings]


async def refuse(client: LanguageClient, uri: str, command: str = "fastapply.applyEdit") -> JsonRpcException:
    """Open the judged example at `uri` and apply its snippet: the error of the refusal."""
    original, update = judged()
    client.docs.open(uri, original)
    with pytest.raises(JsonRpcException) as err:
        await execute(client, command, uri=uri, update=update)
    return err.value


async def apply_reading(client: LanguageClient, **arg):
    return await execute(client, "fastapply.applyReading", **arg)


async def test_refusal_carries_the_readings(client: LanguageClient):
    uri = "file:///tmp/refused.py"
    err = await refuse(client, uri)
    data, expected = err.data, judged_readings()
    assert len(expected) == 4 and err.code == -32803
    assert data["reason"] == "refused" and data["uri"] == uri and data["version"] == 1
    assert err.message.split("\n")[0] == data["hint"] and data["hint"].startswith("Resend")
    assert data["reasons"] and data["texts_omitted"] is False
    assert [(r["index"], r["how"], r["text"]) for r in data["readings"]] == [
        (i, how, text) for i, (how, text) in enumerate(expected, 1)]
    for r in data["readings"]:
        assert r["diff"].startswith(f"--- original\n+++ reading {r['index']}\n")
        first, last = r["reading_lines"]
        assert 1 <= first <= last + 1 <= len(r["text"].splitlines()) + 1
    assert not client.docs.edits_seen and client.docs.text[uri] == judged()[0]
    assert any(m.startswith("Fast Apply: " + data["hint"]) for m in messages(client))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
async def test_apply_reading_gives_that_reading(client: LanguageClient, k: int):
    uri = f"file:///tmp/reading{k}.py"
    err = await refuse(client, uri)
    summary = await apply_reading(client, uri=uri, version=err.data["version"], reading=k)
    want = judged_readings()[k - 1][1]
    assert client.docs.text[uri] == want
    assert summary["applied"] is True and summary["reading"] == k and summary["edits"] >= 1
    (params,) = client.docs.edits_seen
    change = params.edit.document_changes[0]
    assert change.text_document.version == 1 and len(change.edits) == summary["edits"]
    # applied once: the document changed, the readings are gone
    with pytest.raises(JsonRpcException) as again:
        await apply_reading(client, uri=uri, version=1, reading=k)
    assert again.value.code == -32801 and client.docs.text[uri] == want


async def test_apply_reading_with_its_text(client: LanguageClient):
    uri = "file:///tmp/reading_text.py"
    err = await refuse(client, uri)
    other = err.data["readings"][0]["text"]
    with pytest.raises(JsonRpcException) as wrong:  # not reading 2's text: from another refusal
        await apply_reading(client, uri=uri, version=1, reading=2, text=other)
    assert wrong.value.code == -32801 and "not reading 2" in wrong.value.message
    assert client.docs.text[uri] == judged()[0] and not client.docs.edits_seen
    await apply_reading(client, uri=uri, version=1, reading=2, text=err.data["readings"][1]["text"])
    assert client.docs.text[uri] == judged_readings()[1][1]


async def test_apply_reading_after_the_document_changed(client: LanguageClient):
    """The user typed while the choice was open: nothing applied, and the error says why."""
    uri = "file:///tmp/reading_stale.py"
    await refuse(client, uri)
    client.docs.change_range(uri, (0, 0), (0, 0), "# typed\n")
    typed = client.docs.text[uri]
    with pytest.raises(JsonRpcException) as err:
        await apply_reading(client, uri=uri, version=1, reading=1)
    assert err.value.code == -32801 and err.value.data["reason"] == "stale"
    assert "the document changed since the readings were computed; apply the snippet again" in err.value.message
    assert not client.docs.edits_seen and client.docs.text[uri] == typed
    assert any("changed since the readings were computed" in m for m in messages(client))


async def test_apply_reading_after_undoing_the_change(client: LanguageClient):
    """The same text again, at a later version, is still not the document the readings were read on."""
    uri = "file:///tmp/reading_undo.py"
    original = judged()[0]
    await refuse(client, uri)
    client.docs.change_full(uri, "# typed\n" + original)
    client.docs.change_full(uri, original)
    with pytest.raises(JsonRpcException) as err:
        await apply_reading(client, uri=uri, version=1, reading=1)
    assert err.value.code == -32801 and not client.docs.edits_seen


async def test_preview_refusal_keeps_the_readings_too(client: LanguageClient):
    uri = "file:///tmp/reading_preview.py"
    err = await refuse(client, uri, "fastapply.previewEdit")
    assert len(err.data["readings"]) == 4 and not client.docs.edits_seen
    await apply_reading(client, uri=uri, version=1, reading=3)
    assert client.docs.text[uri] == judged_readings()[2][1]


async def test_closing_the_document_drops_the_readings(client: LanguageClient):
    uri = "file:///tmp/reading_closed.py"
    await refuse(client, uri)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    client.docs.open(uri, judged()[0])  # reopened: version 1 again, and no readings
    with pytest.raises(JsonRpcException) as err:
        await apply_reading(client, uri=uri, version=1, reading=1)
    assert err.value.code == -32602 and "no readings are kept" in err.value.message


@pytest.mark.parametrize("arg, expect", [
    ({"version": 1, "reading": 1}, "'uri'"),
    ({"uri": "file:///tmp/reading_args.py", "reading": 1}, "'version'"),
    ({"uri": "file:///tmp/reading_args.py", "version": 1}, "'reading'"),
    ({"uri": "file:///tmp/reading_args.py", "version": 1, "reading": 0}, "must be 1 to 4"),
    ({"uri": "file:///tmp/reading_args.py", "version": 1, "reading": 5}, "must be 1 to 4"),
    ({"uri": "file:///tmp/reading_args.py", "version": 1, "reading": 1, "text": 3}, "'text'"),
    ({"uri": "file:///tmp/reading_args.py", "version": 1, "reading": 1, "colour": "red"}, "unknown argument"),
    ({"uri": "file:///tmp/never-opened.py", "version": 1, "reading": 1}, "not open"),
])
async def test_apply_reading_bad_arguments(client: LanguageClient, arg, expect):
    uri = "file:///tmp/reading_args.py"
    if uri not in client.docs.text:
        await refuse(client, uri)
    with pytest.raises(JsonRpcException) as err:
        await apply_reading(client, **arg)
    assert err.value.code == -32602 and expect in err.value.message
    assert not client.docs.edits_seen and client.docs.text[uri] == judged()[0]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def small_limit():
    """A server whose clients take small messages: the readings' whole files are left out."""
    async with session(ClientServerConfig(server_command=SERVER + ["--max-refusal-bytes", "2000"],
                                          client_factory=make_client)) as c:
        yield c


async def test_texts_left_out_over_the_limit(small_limit: LanguageClient):
    import difflib

    uri = "file:///tmp/reading_small.py"
    err = await refuse(small_limit, uri)
    data, original = err.data, judged()[0]
    assert data["texts_omitted"] is True and all(r["text"] is None for r in data["readings"])
    for r, (_, text) in zip(data["readings"], judged_readings()):  # the diffs still say what each file is
        want = "".join(difflib.unified_diff(original.splitlines(True), text.splitlines(True), "original",
                                            f"reading {r['index']}", n=3))
        assert r["diff"] == want
    await apply_reading(small_limit, uri=uri, version=1, reading=2)  # the server kept the texts
    assert small_limit.docs.text[uri] == judged_readings()[1][1]


# An applier that refuses as an older or remote one may: no hint of its own, the structural
# merge's readings (or none, when the instruction says so).
REFUSING_SERVER = r'''
import sys
from fastapply.api import ApplyError
from fastapply.merge import structural_merge
from lsp.server import build_server

class RefusingApplier:
    model_loaded = True
    def apply_stream(self, req, should_stop=None):
        merge = structural_merge(req.original, req.update, req.language, req.path)
        readings = [] if req.instruction == "no readings" else [(r.how, r.text) for r in merge.readings]
        raise ApplyError("refused", "refused for the test", merge.reasons or ["no reason"], readings)
        yield
    def close(self):
        pass

build_server(RefusingApplier(), "structural").start_io(sys.stdin.buffer, sys.stdout.buffer)
'''


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def refusing():
    async with session(ClientServerConfig(server_command=[sys.executable, "-c", REFUSING_SERVER],
                                          client_factory=make_client)) as c:
        yield c


async def test_a_refusal_without_readings(refusing: LanguageClient):
    uri = "file:///tmp/no_readings.py"
    original, update = judged()
    refusing.docs.open(uri, original)
    with pytest.raises(JsonRpcException) as err:
        await execute(refusing, "fastapply.applyEdit", uri=uri, update=update, instruction="no readings")
    data = err.value.data
    assert data["readings"] == [] and data["hints"] == [] and data["reason"] == "refused"
    assert err.value.message.split("\n")[0] == data["hint"] and "refused for the test" in err.value.message
    with pytest.raises(JsonRpcException) as none:
        await apply_reading(refusing, uri=uri, version=1, reading=1)
    assert none.value.code == -32602 and "no readings are kept" in none.value.message
    assert refusing.docs.text[uri] == original and not refusing.docs.edits_seen


async def test_hints_computed_where_the_applier_sent_none(refusing: LanguageClient):
    """The server's own hints equal those the in-process applier gives with its refusal."""
    from fastapply.api import Applier, ApplyError, ApplyRequest

    uri = "file:///tmp/rows.py"
    original, update = judged()
    with pytest.raises(ApplyError) as own:
        list(Applier().apply_stream(ApplyRequest(original=original, update=update, engine="structural",
                                                 path="/tmp/rows.py")))
    refusing.docs.open(uri, original)
    with pytest.raises(JsonRpcException) as err:
        await execute(refusing, "fastapply.applyEdit", uri=uri, update=update)
    data = err.value.data
    assert data["hint"] == own.value.hint and data["hints"] == [h.to_dict() for h in own.value.hints]
    assert len(data["readings"]) == 4
