"""A file's form on every front-end (issue 44, item 6): a CRLF file, a UTF-8 BOM, a file without a
final newline and a file mixing CRLF and LF lines keep their form, new lines included, through the
CLI, gRPC (unary and streamed), HTTP (Morph's and Relace's formats, plain and streamed), the LSP and
the codemod, engine structural.

The merge itself takes the form apart and puts it back (`fastapply/merge/form.py`); what is tested
here is that no front-end loses it on the way in or out: a reader that turns CRLF into LF, a BOM
dropped, a `.strip()`, an LSP edit that splits `\\r\\n`. Every expected file is built by hand from the
original by exact string replacement, so the new lines carry the ending the form promises. The
snippet goes with LF endings (as agents send it) and with CRLF.

Real servers on 127.0.0.1 and a real LSP client over stdio, as tests/test_grpc.py, test_http.py and
test_lsp.py do; the CLI is a subprocess; the codemod runs in process (as tests/test_codemod.py).
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from rich.console import Console

from fastapply.api import Applier, ApplyError, ApplyRequest
from fastapply.client import FastApplyClient
from tests.test_grpc import stream_text
from tests.test_http import serving, sse_events

REPO = Path(__file__).resolve().parents[1]
BOM = "\ufeff"
CRLF = "\r\n"


# -- the forms -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Form:
    name: str
    path: str  # the file's name: the language comes from it (build.bat has no grammar: merged by lines)
    original: str
    update: str  # with LF endings
    expected: str

    def snippet(self, ending: str) -> str:
        return self.update if ending == "lf" else self.update.replace("\n", CRLF)


PY = "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
# one new line and one changed line (the line merge) in the middle of the file
PY_UPDATE = "# ... existing code ...\ndef add(a, b):\n    # the sum\n    return int(a) + int(b)\n# ... existing code ...\n"


def py_expected(original: str, nl: str) -> str:
    old = f"    return a + b{nl}"
    assert original.count(old) == 1
    return original.replace(old, f"    # the sum{nl}    return int(a) + int(b){nl}")


PY_CRLF = PY.replace("\n", CRLF)
NO_FINAL = PY.removesuffix("\n")
# an edit that touches the last line, which has no newline
LAST_UPDATE = "# ... existing code ...\ndef sub(a, b):\n    return b - a\n"


def last_expected(original: str) -> str:
    assert original.endswith("return a - b") and original.count("return a - b") == 1
    return original.replace("return a - b", "return b - a")


BAT = ("@echo off\r\nset NAME=world\r\necho Hello %NAME%\r\nset COUNT=1\r\necho done\r\n")
BAT_UPDATE = "REM ... existing code ...\necho Hello %NAME%\necho Welcome\nset COUNT=1\nREM ... existing code ...\n"

# CRLF and LF lines mixed: each unchanged line keeps its own ending, a changed one that of the line it
# replaces, a new line the ending of the line before it (`def add` ends in CRLF, `def sub` in LF)
MIXED = ("import os\r\nimport sys\n\n\ndef add(a, b):\r\n    return a + b\r\n\n\n"
         "def sub(a, b):\n    return a - b\r\n")
MIXED_UPDATE = ("# ... existing code ...\ndef add(a, b):\n    # the sum\n    return a + b\n\n\n"
                "def sub(a, b):\n    # the difference\n    return a - b\n")
# a changed line takes the ending of the line it replaces (`return a - b\r\n`), not its neighbour's
MIXED_CHANGE = "# ... existing code ...\ndef sub(a, b):\n    return b - a\n"

FORMS = [
    Form("py-crlf", "app.py", PY_CRLF, PY_UPDATE, py_expected(PY_CRLF, CRLF)),
    Form("bat-crlf", "build.bat", BAT, BAT_UPDATE,
         BAT.replace("echo Hello %NAME%\r\n", "echo Hello %NAME%\r\necho Welcome\r\n")),
    Form("bom-lf", "app.py", BOM + PY, PY_UPDATE, BOM + py_expected(PY, "\n")),
    Form("bom-crlf", "app.py", BOM + PY_CRLF, PY_UPDATE, BOM + py_expected(PY_CRLF, CRLF)),
    # the BOM's own line changed: the BOM stays in front of it (and an LSP edit on line 0 counts it)
    Form("bom-crlf-first-line", "app.py", BOM + PY_CRLF, "import os, sys\n# ... existing code ...\n",
         BOM + PY_CRLF.replace("import os\r\n", "import os, sys\r\n")),
    Form("no-final-newline-mid", "app.py", NO_FINAL, PY_UPDATE, py_expected(NO_FINAL, "\n")),
    Form("no-final-newline-last", "app.py", NO_FINAL, LAST_UPDATE, last_expected(NO_FINAL)),
    Form("crlf-no-final-newline-last", "app.py", NO_FINAL.replace("\n", CRLF), LAST_UPDATE,
         last_expected(NO_FINAL.replace("\n", CRLF))),
    Form("bom-crlf-no-final-newline-mid", "app.py", BOM + NO_FINAL.replace("\n", CRLF), PY_UPDATE,
         BOM + py_expected(NO_FINAL.replace("\n", CRLF), CRLF)),
    Form("mixed-insert", "app.py", MIXED, MIXED_UPDATE,
         MIXED.replace("def add(a, b):\r\n", "def add(a, b):\r\n    # the sum\r\n")
              .replace("def sub(a, b):\n", "def sub(a, b):\n    # the difference\n")),
    Form("mixed-change", "app.py", MIXED, MIXED_CHANGE,
         MIXED.replace("    return a - b\r\n", "    return b - a\r\n")),
]
ENDINGS = ("lf", "crlf")  # the snippet's own line endings
MATRIX = [pytest.param(f, e, id=f"{f.name}-{e}") for f in FORMS for e in ENDINGS]
LF_ONLY = [pytest.param(f, "lf", id=f"{f.name}-lf") for f in FORMS]

# a snippet the merge refuses whatever the file's form (its new line does not parse)
REFUSED = "# ... existing code ...\n    totally = unrelated(\n# ... existing code ...\n"


def test_expected_files_have_the_form_they_promise():
    """The hand-built expected files: each differs from its original, and carries its form."""
    for f in FORMS:
        assert f.expected != f.original, f.name
        assert f.expected.startswith(BOM) == f.original.startswith(BOM), f.name
        assert f.expected.endswith("\n") == f.original.endswith("\n"), f.name
        body = f.expected.removeprefix(BOM)
        assert BOM not in body, f.name
        if CRLF in f.original and f.original.count(CRLF) == f.original.count("\n"):
            assert body.count(CRLF) == body.count("\n") > 0, f.name  # every line CRLF, the new ones too
        elif CRLF not in f.original:
            assert "\r" not in body, f.name
    mixed = next(f for f in FORMS if f.name == "mixed-insert").expected
    assert "    # the sum\r\n" in mixed and "    # the difference\n" in mixed and "import sys\n" in mixed


@pytest.mark.parametrize("form, ending", MATRIX)
def test_in_process(form: Form, ending: str):
    """The baseline every front-end is held to: `Applier.apply` itself."""
    r = Applier().apply(ApplyRequest(form.original, form.snippet(ending), path=form.path, engine="structural"))
    assert r.merged == form.expected


# -- CLI --------------------------------------------------------------------------------------------

def fastapply(*args, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fastapply.cli", *map(str, args)], input=stdin,
                          capture_output=True, cwd=REPO, timeout=300)


def _files(tmp_path: Path, form: Form, ending: str) -> tuple[Path, Path]:
    f = tmp_path / form.path
    f.write_bytes(form.original.encode("utf-8"))
    u = tmp_path / "snippet.txt"
    u.write_bytes(form.snippet(ending).encode("utf-8"))
    return f, u


@pytest.mark.parametrize("form, ending", MATRIX)
def test_cli_in_place(tmp_path, form: Form, ending: str):
    f, u = _files(tmp_path, form, ending)
    r = fastapply("apply", f, "--update", u, "--engine", "structural", "--in-place", "--quiet")
    assert r.returncode == 0, r.stderr.decode()
    assert f.read_bytes() == form.expected.encode("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f.name, u.name])  # no temp file left


@pytest.mark.parametrize("form, ending", LF_ONLY)
def test_cli_stdout_and_stream(tmp_path, form: Form, ending: str):
    """Printed, whole and streamed: the same bytes as the file written."""
    f, u = _files(tmp_path, form, ending)
    for extra in ((), ("--stream",)):
        r = fastapply("apply", f, "--update", u, "--engine", "structural", "--quiet", *extra)
        assert r.returncode == 0, r.stderr.decode()
        assert r.stdout == form.expected.encode("utf-8"), extra
    assert f.read_bytes() == form.original.encode("utf-8")


def test_cli_snippet_from_stdin_with_crlf(tmp_path):
    form = next(f for f in FORMS if f.name == "bom-crlf")
    f, _ = _files(tmp_path, form, "lf")
    r = fastapply("apply", f, "--update", "-", "--engine", "structural", "--in-place", "--quiet",
                  stdin=form.snippet("crlf").encode("utf-8"))
    assert r.returncode == 0, r.stderr.decode()
    assert f.read_bytes() == form.expected.encode("utf-8")


@pytest.mark.parametrize("form", [f for f in FORMS if f.path.endswith(".py")], ids=lambda f: f.name)
def test_cli_refusal_leaves_the_file_untouched(tmp_path, form: Form):
    f = tmp_path / form.path
    f.write_bytes(form.original.encode("utf-8"))
    u = tmp_path / "snippet.txt"
    u.write_bytes(REFUSED.encode("utf-8"))
    r = fastapply("apply", f, "--update", u, "--engine", "structural", "--in-place")
    assert r.returncode == 1 and b"refused" in r.stderr, r.stderr.decode()
    assert f.read_bytes() == form.original.encode("utf-8")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".fastapply-tmp")] == []


# -- gRPC and HTTP: one server ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def servers():
    """The gRPC server with HTTP attached, as `fastapply serve` runs them (structural: no model)."""
    with serving() as pair:
        yield pair


@pytest.fixture(scope="module")
def grpc_client(servers):
    with FastApplyClient(servers[0].address) as c:
        yield c


@pytest.fixture(scope="module")
def http(servers):
    with httpx.Client(base_url=servers[1].url, timeout=120) as h:
        yield h


@pytest.mark.parametrize("form, ending", MATRIX)
def test_grpc_unary_and_stream(grpc_client, form: Form, ending: str):
    kw = dict(path=form.path, engine="structural")
    unary = grpc_client.apply(form.original, form.snippet(ending), **kw)
    assert unary.merged == form.expected
    text, final = stream_text(grpc_client.apply_stream(form.original, form.snippet(ending), **kw))
    assert text == unary.merged and final.merged == unary.merged
    # the original as the file's bytes (what a client that reads the file sends)
    raw = grpc_client.apply(form.original.encode("utf-8"), form.snippet(ending).encode("utf-8"), **kw)
    assert raw.merged.encode("utf-8") == form.expected.encode("utf-8")


@pytest.mark.parametrize("form", [f for f in FORMS if f.name in ("bom-crlf-no-final-newline-mid", "mixed-insert",
                                                                 "bat-crlf")], ids=lambda f: f.name)
def test_cli_client_in_place_over_grpc(servers, tmp_path, form: Form):
    """`fastapply client apply --in-place`: the CLI's file handling around a gRPC call."""
    f, u = _files(tmp_path, form, "lf")
    r = fastapply("client", "apply", f, "--update", u, "--server", servers[0].address, "--engine", "structural",
                  "--in-place", "--quiet")
    assert r.returncode == 0, r.stderr.decode()
    assert f.read_bytes() == form.expected.encode("utf-8")


def morph_body(form: Form, ending: str, **kw) -> dict:
    content = f"<code>{form.original}</code>\n<update>{form.snippet(ending)}</update>"
    return {"model": "fastapply-structural", "messages": [{"role": "user", "content": content}], **kw}


@pytest.mark.parametrize("form, ending", MATRIX)
def test_http_morph_plain_and_stream(http, form: Form, ending: str):
    r = http.post("/v1/chat/completions", json=morph_body(form, ending))
    assert r.status_code == 200, r.text
    merged = r.json()["choices"][0]["message"]["content"]
    assert merged == form.expected
    with http.stream("POST", "/v1/chat/completions", json=morph_body(form, ending, stream=True)) as s:
        assert s.status_code == 200
        events = sse_events(s)
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events
                   if isinstance(e, dict) and e.get("choices"))
    assert text == merged


def relace_body(form: Form, ending: str, **kw) -> dict:
    return {"initial_code": form.original, "edit_snippet": form.snippet(ending), "model": "fastapply-structural",
            **kw}


@pytest.mark.parametrize("form, ending", MATRIX)
def test_http_relace_plain_and_stream(http, form: Form, ending: str):
    r = http.post("/v1/code/apply", json=relace_body(form, ending))
    assert r.status_code == 200, r.text
    merged = r.json()["mergedCode"]
    assert merged == form.expected
    with http.stream("POST", "/v1/code/apply", json=relace_body(form, ending, stream=True)) as s:
        assert s.status_code == 200
        events = sse_events(s)
    assert "".join(e["chunk"] for e in events if isinstance(e, dict) and "chunk" in e) == merged


def test_http_body_as_raw_utf8_bytes(http):
    """The body's bytes as a client that does not escape non-ASCII sends them (the BOM as EF BB BF)."""
    form = next(f for f in FORMS if f.name == "bom-crlf")
    body = json.dumps(relace_body(form, "lf"), ensure_ascii=False).encode("utf-8")
    assert b"\xef\xbb\xbf" in body
    r = http.post("/v1/code/apply", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json()["mergedCode"] == form.expected


# -- LSP --------------------------------------------------------------------------------------------

_script = Path(sys.executable).parent / "fastapply-lsp"
LSP_SERVER = ([str(_script)] if _script.exists() else [sys.executable, "-m", "lsp.server"]) + \
    ["--engine", "structural"]
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def client_apply(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with a TextDocumentEdit (positions in UTF-16 code units; a line ends at
    "\\r\\n", "\\r" or "\\n"; a character past the line's end is its end), written here apart from
    lsp/edits.py so that the server's positions are checked by another reading of the rules."""
    lines = _LINE.findall(text)
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line)

    def offset(p: types.Position) -> int:
        if p.line >= len(lines):
            return len(text)
        body = lines[p.line].rstrip("\r\n")
        units = i = 0
        while i < len(body) and units + (2 if ord(body[i]) > 0xFFFF else 1) <= p.character:
            units += 2 if ord(body[i]) > 0xFFFF else 1
            i += 1
        return starts[p.line] + i

    spans = sorted((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits)
    out, pos = [], 0
    for s, t, new in spans:
        assert s >= pos, "overlapping edits"
        out.append(text[pos:s] + new)
        pos = t
    return "".join(out) + text[pos:]


class Editor:
    """The client's copy of each document, changed by the server's workspace/applyEdit."""

    def __init__(self, client: LanguageClient):
        self.client = client
        self.text: dict[str, str] = {}
        self.version: dict[str, int] = {}
        self.edits: list[list[types.TextEdit]] = []

    def open(self, uri: str, text: str, language: str) -> None:
        self.text[uri], self.version[uri] = text, 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))

    def apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        for change in params.edit.document_changes or []:
            uri = change.text_document.uri
            if change.text_document.version != self.version[uri]:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="stale version")
            self.edits.append(list(change.edits))
            self.text[uri] = client_apply(self.text[uri], change.edits)
            self.version[uri] += 1
            self.client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.version[uri]),
                [types.TextDocumentContentChangeWholeDocument(text=self.text[uri])]))
        return types.ApplyWorkspaceEditResult(applied=True)


def _on_apply_edit(client: LanguageClient, params: types.ApplyWorkspaceEditParams):
    return client.editor.apply_edit(params)


def _make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.WORKSPACE_APPLY_EDIT: _on_apply_edit})
    client.editor = Editor(client)
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=LSP_SERVER, client_factory=_make_client),
                    scope="module")
async def lsp(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)),
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16])),
        root_uri="file:///tmp"))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("form, ending", MATRIX)
async def test_lsp_edits_keep_the_form(lsp: LanguageClient, form: Form, ending: str):
    editor: Editor = lsp.editor
    uri = f"file:///tmp/form-{form.name}-{ending}/{form.path}"
    editor.open(uri, form.original, "bat" if form.path.endswith(".bat") else "python")
    try:
        preview = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="fastapply.previewEdit", arguments=[{"uri": uri, "update": form.snippet(ending)}]))
        assert preview["applied"] is False and preview["merged"] == form.expected
        assert editor.text[uri] == form.original
        summary = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="fastapply.applyEdit", arguments=[{"uri": uri, "update": form.snippet(ending)}]))
        assert summary["applied"] is True, summary
        assert editor.text[uri] == form.expected  # the TextEdits, applied by the client's own reading of LSP
        for e in editor.edits[-1]:  # no edit ends between the "\r" and the "\n" of a line ending
            assert "\r\n" not in form.original or not e.new_text.endswith("\r"), e
    finally:
        editor.close(uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_lsp_after_incremental_changes_to_a_crlf_document(lsp: LanguageClient):
    """The server's copy of a CRLF + BOM document, changed by ranges (as editors sync), stays CRLF."""
    editor: Editor = lsp.editor
    form = next(f for f in FORMS if f.name == "bom-crlf")
    uri = "file:///tmp/form-incremental/app.py"
    editor.open(uri, form.original, "python")
    try:
        # `return a - b` -> `return a - b  # diff`, then a new line after `import os` (line 0, after the BOM)
        changes = [(types.Range(types.Position(8, 16), types.Position(8, 16)), "  # diff"),
                   (types.Range(types.Position(0, 10), types.Position(0, 10)), "\r\nimport sys")]
        for rng, new in changes:
            editor.text[uri] = client_apply(editor.text[uri], [types.TextEdit(rng, new)])
            editor.version[uri] += 1
            lsp.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=editor.version[uri]),
                [types.TextDocumentContentChangePartial(range=rng, text=new)]))
        now = BOM + PY_CRLF.replace("import os\r\n", "import os\r\nimport sys\r\n") \
            .replace("return a - b", "return a - b  # diff")
        assert editor.text[uri] == now
        summary = await lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command="fastapply.applyEdit", arguments=[{"uri": uri, "update": PY_UPDATE}]))
        assert summary["applied"] is True, summary
        assert editor.text[uri] == py_expected(now, CRLF)
    finally:
        editor.close(uri)


# -- codemod ----------------------------------------------------------------------------------------

def codemod(tmp_path: Path, root: Path, entries: list[dict], *extra: str) -> tuple[int, str]:
    from fastapply.cli import build_parser
    from fastapply.codemod.cli import run_codemod

    manifest = tmp_path / "edits.jsonl"
    manifest.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    err = io.StringIO()
    args = build_parser().parse_args(["codemod", "--manifest", str(manifest), "--root", str(root), "--engine",
                                      "structural", "--write", "--allow-dirty", "--no-progress", "--jobs", "1",
                                      *extra])
    try:
        rc = run_codemod(args, console=Console(file=err, width=250), out=io.StringIO())
    except ApplyError as e:
        return 1, e.message
    return rc, err.getvalue()


@pytest.mark.parametrize("ending, remote", [("lf", False), ("crlf", False), ("lf", True)],
                         ids=["lf", "crlf", "lf-over-grpc"])
def test_codemod_writes_each_form(tmp_path, request, ending: str, remote: bool):
    """One run over a file of each form (and one it refuses): the files on disk, byte for byte; in
    process, and with `--server` (RemoteApplier over gRPC)."""
    root = tmp_path / "root"
    entries = []
    for i, f in enumerate(FORMS):
        rel = f"f{i}-{f.name}/{f.path}"
        (root / rel).parent.mkdir(parents=True)
        (root / rel).write_bytes(f.original.encode("utf-8"))
        entries.append({"path": rel, "update": f.snippet(ending)})
    refused = next(f for f in FORMS if f.name == "bom-crlf")
    (root / "refused.py").write_bytes(refused.original.encode("utf-8"))
    entries.append({"path": "refused.py", "update": REFUSED})
    extra = ("--server", request.getfixturevalue("servers")[0].address) if remote else ()
    rc, err = codemod(tmp_path, root, entries, *extra)
    assert rc == 1, err  # the refused file fails the run
    wrong = [e["path"] for e, f in zip(entries, FORMS) if (root / e["path"]).read_bytes() != f.expected.encode()]
    assert wrong == [], err
    assert (root / "refused.py").read_bytes() == refused.original.encode("utf-8")
    assert [p for p in root.rglob("*") if p.name.endswith(".fastapply-tmp")] == []


def test_codemod_update_dir_snippet_with_crlf(tmp_path):
    """A snippet read from a file (`--update-dir`), written with CRLF, into a BOM + CRLF file."""
    from fastapply.cli import build_parser
    from fastapply.codemod.cli import run_codemod

    form = next(f for f in FORMS if f.name == "bom-crlf")
    root, updates = tmp_path / "root", tmp_path / "updates"
    root.mkdir()
    updates.mkdir()
    (root / form.path).write_bytes(form.original.encode("utf-8"))
    (updates / form.path).write_bytes(form.snippet("crlf").encode("utf-8"))
    args = build_parser().parse_args(["codemod", "--update-dir", str(updates), "--root", str(root), "--engine",
                                      "structural", "--write", "--allow-dirty", "--no-progress"])
    err = io.StringIO()
    rc = run_codemod(args, console=Console(file=err, width=250), out=io.StringIO())
    assert rc == 0, err.getvalue()
    assert (root / form.path).read_bytes() == form.expected.encode("utf-8")

