"""fastapply language server (pygls 2): apply a lazy edit snippet to an open document.

Commands (`workspace/executeCommand`), each with one argument object
`{"uri": str, "update": str, "instruction"?: str, "engine"?: str}`:

- `fastapply.applyEdit`: merges `update` into the text the server tracks for `uri` (didOpen /
  didChange), then asks the client to apply a `WorkspaceEdit` of minimal TextEdits against the
  version it read (`documentChanges` + `VersionedTextDocumentIdentifier`). It refuses, changing
  nothing, when the document changed meanwhile, when the result failed validation, or when the
  apply failed or was cancelled. Returns a summary (edits, changed lines, tokens/s, engine).
- `fastapply.previewEdit`: same inputs; returns the merged text and a unified diff, edits nothing.
- `fastapply.applyReading` `{"uri", "version": int, "reading": int, "text"?: str}`: applies one of the
  readings of the document's last refusal (1-based, as the refusal numbered them), through the same
  versioned WorkspaceEdit of minimal edits and the same stale-document guard as applyEdit.

A refusal (the structural merge was unsure) is the command's error whose `message` starts with a
one-line hint (what to resend) and whose `data` holds `fastapply.refusal.payload` (`hint`, `hints`,
`reasons`, `readings` [{index, how, original_lines, reading_lines, diff, text}], `texts_omitted`)
beside `reason` ("refused"), `uri` and `version` (the document version the merge read). The server
keeps the last refusal's readings per document until the document changes or closes, so a client
may send only the index; after a change `fastapply.applyReading` refuses (CONTENT_MODIFIED) and
applies nothing. Where the readings' whole files and diffs pass `--max-refusal-bytes` (default
`REFUSAL_MAX_BYTES`, 4 MiB) the texts are left out (`text` null, `texts_omitted` true); the diffs
against the document still rebuild every file, and the server still holds the texts.

Long applies report `$/progress` (server-created via `window/workDoneProgress/create` when the
client supports it, or the client's own `workDoneToken`); `$/cancelRequest` or a progress cancel
stops decoding. Failures are sent as `window/showMessage` and as the command's error.

Run: `fastapply-lsp` (stdio) or `fastapply-lsp --tcp 2087`; `--engine`, `--model`, or
`--server HOST:PORT` (gRPC; token from `--token-env`, default FASTAPPLY_TOKEN).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import logging
import os
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from fastapply import __version__
from fastapply.api import DEFAULT_ENGINE, ENGINES, Applier, ApplyError, ApplyRequest, ApplyResult, ErrorCode, TextDelta
from fastapply.cli_common import add_model_budget_arg, draft_model_option
from fastapply.merge import structural_merge
from fastapply.refusal import context_hints, payload
from lsp.edits import changed_lines, minimal_edits, normalize_encoding, unified_diff

log = logging.getLogger("fastapply.lsp")

APPLY_COMMAND = "fastapply.applyEdit"
PREVIEW_COMMAND = "fastapply.previewEdit"
APPLY_READING_COMMAND = "fastapply.applyReading"

# The most bytes of readings (whole files plus diffs) one refusal carries. Clients parse a message
# whole (VS Code's JSON-RPC, Neovim's vim.json): a few MB is quick for both, and holds four
# readings of a file of a few hundred KB with their diffs. Above it the texts are left out, never cut.
REFUSAL_MAX_BYTES = 4 * 1024 * 1024  # 4 MiB

STALE_READINGS = "the document changed since the readings were computed; apply the snippet again (nothing changed)"

# JSON-RPC / LSP error codes
INVALID_PARAMS = -32602
REQUEST_CANCELLED = -32800
CONTENT_MODIFIED = -32801
REQUEST_FAILED = -32803

# fastapply error code -> LSP error code of the command's response
ERROR_CODES: dict[ErrorCode, int] = {
    ErrorCode.INVALID_ARGUMENT: INVALID_PARAMS,
    ErrorCode.USAGE: REQUEST_FAILED,
    ErrorCode.TOO_LONG: INVALID_PARAMS,
    ErrorCode.REFUSED: REQUEST_FAILED,
    ErrorCode.QUEUE_FULL: REQUEST_FAILED,
    ErrorCode.UNAUTHENTICATED: REQUEST_FAILED,
    ErrorCode.UNAVAILABLE: REQUEST_FAILED,
    ErrorCode.CANCELLED: REQUEST_CANCELLED,
    ErrorCode.DEADLINE_EXCEEDED: REQUEST_FAILED,
    ErrorCode.INTERNAL: REQUEST_FAILED,
}

# The workDoneToken of the executeCommand request being dispatched (read by the command handler).
_WORK_DONE_TOKEN: contextvars.ContextVar = contextvars.ContextVar("fastapply_work_done_token", default=None)


class CommandFailed(JsonRpcException):
    """A command error that reaches the client as the response's error (code, message, data)."""

    def __init__(self, message: str, code: int = REQUEST_FAILED, reason: str = "failed",
                 reasons: list[str] | None = None, data: dict | None = None):
        super().__init__(message=message, code=code,
                         data={"reason": reason, "reasons": list(reasons or []), **(data or {})})


class FastApplyProtocol(LanguageServerProtocol):
    """Adds what pygls does not give a command handler: the request's cancellation, its workDoneToken."""

    def _handle_cancel_notification(self, msg_id):
        self._server.cancel_request(msg_id)
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams):
        _WORK_DONE_TOKEN.set(params.work_done_token)
        return (yield from super().lsp_workspace__execute_command(params))


@dataclass
class ApplyArgs:
    uri: str
    update: str
    instruction: str | None
    engine: str
    language: str | None = None
    model_budget: float | None = None  # engine auto: the model's seconds on a refused merge


@dataclass
class ReadingArgs:
    uri: str
    version: int
    reading: int  # 1-based, as the refusal numbered them
    text: str | None  # the reading's whole file, when the client has it: must be the kept one


@dataclass
class KeptReadings:
    """The last refusal with readings on one document: what `fastapply.applyReading` applies."""

    version: int | None  # the document version the merge read
    original: str  # ... and its text
    readings: list[tuple[str, str]]  # (how, whole file), best first; [] once the document changed

    @property
    def stale(self) -> bool:
        return not self.readings


class FastApplyServer(LanguageServer):
    """The language server over "an Applier": `fastapply.api.Applier` (in process) or
    `fastapply.remote.RemoteApplier` (a gRPC server); it only needs `apply_stream`, `model_loaded`
    and `close`."""

    def __init__(self, applier: Applier, engine: str = DEFAULT_ENGINE, progress_interval: float = 0.2,
                 max_refusal_bytes: int = REFUSAL_MAX_BYTES):
        super().__init__("fastapply-lsp", _version(), protocol_cls=FastApplyProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.applier = applier
        self.default_engine = engine
        self.progress_interval = progress_interval
        self.max_refusal_bytes = max_refusal_bytes
        self.kept: dict[str, KeptReadings] = {}  # by unquoted uri, as pygls keys its documents
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fastapply-apply")
        self._cancel: dict[object, threading.Event] = {}
        self._all_cancel: set[threading.Event] = set()

    # -- cancellation -------------------------------------------------------------------------
    def cancel_request(self, msg_id) -> None:
        ev = self._cancel.get(msg_id)
        if ev is not None:
            log.info("cancel requested for %s", msg_id)
            ev.set()

    def cancel_all(self) -> None:
        for ev in list(self._all_cancel):
            ev.set()

    # -- messages -----------------------------------------------------------------------------
    def show(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def fail(self, message: str, code: int = REQUEST_FAILED, reason: str = "failed",
             reasons: list[str] | None = None, data: dict | None = None) -> CommandFailed:
        """Tell the user (showMessage) and build the command's error."""
        self.show(f"Fast Apply: {message}")
        return CommandFailed(message, code, reason, reasons, data)

    # -- readings kept for fastapply.applyReading -----------------------------------------------
    def document_changed(self, uri: str) -> None:
        """The readings no longer fit the document: keep only the fact that they were offered."""
        kept = self.kept.get(unquote(uri))
        if kept is not None and not kept.stale:
            self.kept[unquote(uri)] = KeptReadings(kept.version, "", [])

    def document_closed(self, uri: str) -> None:
        self.kept.pop(unquote(uri), None)

    # -- the commands -------------------------------------------------------------------------
    def parse_args(self, args: tuple) -> ApplyArgs:
        if len(args) != 1 or not isinstance(args[0], dict):
            raise self.fail("expected one argument {uri, update, instruction?, engine?}", INVALID_PARAMS,
                            "invalid_argument")
        a = args[0]
        uri, update = a.get("uri"), a.get("update")
        instruction, engine = a.get("instruction"), a.get("engine") or self.default_engine
        language = a.get("language")
        if not isinstance(uri, str) or not uri:
            raise self.fail("argument 'uri' (a string) is missing", INVALID_PARAMS, "invalid_argument")
        if not isinstance(update, str):
            raise self.fail("argument 'update' (a string) is missing", INVALID_PARAMS, "invalid_argument")
        if not update.strip():
            raise self.fail("the update snippet is empty", INVALID_PARAMS, "invalid_argument")
        if instruction is not None and not isinstance(instruction, str):
            raise self.fail("argument 'instruction' must be a string", INVALID_PARAMS, "invalid_argument")
        if engine not in ENGINES:
            raise self.fail(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}", INVALID_PARAMS,
                            "invalid_argument")
        if language is not None and not isinstance(language, str):
            raise self.fail("argument 'language' must be a string", INVALID_PARAMS, "invalid_argument")
        budget = a.get("modelBudget")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int | float) or budget < 0):
            raise self.fail("argument 'modelBudget' must be a number of seconds >= 0 (0: no limit)", INVALID_PARAMS,
                            "invalid_argument")
        unknown = sorted(set(a) - {"uri", "update", "instruction", "engine", "language", "modelBudget"})
        if unknown:
            raise self.fail(f"unknown argument(s): {', '.join(unknown)}", INVALID_PARAMS, "invalid_argument")
        return ApplyArgs(uri, update, instruction, engine, language, None if budget is None else float(budget))

    def document(self, uri: str):
        docs = self.workspace.text_documents
        doc = docs.get(unquote(uri)) or docs.get(uri)
        if doc is None:
            raise self.fail(f"{_short(uri)} is not open in the editor (the server only edits documents "
                            "the client opened)", INVALID_PARAMS, "unknown_document")
        return doc

    async def run_command(self, args: tuple, edit: bool) -> dict:
        started = time.perf_counter()
        a = self.parse_args(args)
        doc = self.document(a.uri)
        original, version = doc.source, doc.version
        path = urlparse(a.uri).path if a.uri.startswith("file:") else None
        req = ApplyRequest(original=original, update=a.update, instruction=a.instruction,
                           path=unquote(path) if path else None, engine=a.engine, language=a.language,
                           model_budget_s=a.model_budget)
        result = await self._serve(req, a, edit, version)

        enc = self.workspace.position_encoding or "utf-16"
        edits = minimal_edits(original, result.merged, normalize_encoding(getattr(enc, "value", enc)))
        summary = _summary(a.uri, original, result, edits, version, started)
        if not edit:
            summary.update(merged=result.merged, diff=unified_diff(original, result.merged, _short(a.uri)),
                           applied=False)
            summary["message"] = _summary_line(summary, preview=True)
            return summary

        # The document may have changed while the engine ran: the edits would then be wrong.
        self.check_unchanged(a.uri, version, original, " changed during the apply (version {old} -> {new}); "
                             "nothing changed, run it again")

        if not edits:
            summary.update(applied=True, message=f"Fast Apply: {_short(a.uri)} unchanged ({result.engine})")
            return summary
        await self._send_edit(a.uri, version, edits)
        summary.update(applied=True)
        summary["message"] = _summary_line(summary)
        return summary

    def check_unchanged(self, uri: str, version: int | None, original: str, changed: str) -> None:
        """The stale-document guard: raise (CONTENT_MODIFIED) unless `uri` is still `version` with
        text `original`. `changed` is the message's tail, with `{old}`/`{new}` versions."""
        now = self.workspace.text_documents.get(unquote(uri))
        if now is None:
            raise self.fail(f"{_short(uri)} was closed meanwhile; nothing changed", CONTENT_MODIFIED,
                            "document_closed")
        if now.version != version or now.source != original:
            raise self.fail(_short(uri) + changed.format(old=version, new=now.version), CONTENT_MODIFIED, "stale")

    async def _serve(self, req: ApplyRequest, a: ApplyArgs, edit: bool, version: int | None) -> ApplyResult:
        """The applier's result, with progress and cancellation; every failure becomes the command's error."""
        cancel = threading.Event()
        msg_id = self.protocol.msg_id
        if msg_id is not None:
            self._cancel[msg_id] = cancel
        self._all_cancel.add(cancel)
        progress = _Progress(self, cancel, _WORK_DONE_TOKEN.get())
        try:
            await progress.begin("Fast Apply" if edit else "Fast Apply: preview", f"{_short(a.uri)} ({a.engine})")
            result = await self._apply(req, cancel, progress)
        except ApplyError as e:
            if e.code == ErrorCode.REFUSED:
                raise await self._refused(req, a.uri, version, e) from None
            msg = "cancelled; nothing changed" if e.code == ErrorCode.CANCELLED else f"{e.message}; nothing changed"
            raise self.fail(msg, ERROR_CODES[e.code], e.code.value, e.reasons) from None
        except Exception as e:  # an engine bug must not take the server down, nor half-apply
            log.exception("apply failed")
            raise self.fail(f"internal error: {e}; nothing changed", REQUEST_FAILED, "internal") from None
        finally:
            progress.end()
            self._cancel.pop(msg_id, None)
            self._all_cancel.discard(cancel)

        if not result.ok:
            errors = [f.line() for f in result.findings if f.severity == "error"]
            raise self.fail("the merged file failed validation, nothing changed: " + "; ".join(errors),
                            REQUEST_FAILED, "refused", errors)
        if cancel.is_set():
            raise self.fail("cancelled; nothing changed", REQUEST_CANCELLED, "cancelled")
        return result

    async def _refused(self, req: ApplyRequest, uri: str, version: int | None, e: ApplyError) -> CommandFailed:
        """A refusal as the command's error: the hint first, the readings in `data`; the readings kept."""
        loop = asyncio.get_running_loop()
        body = await loop.run_in_executor(self.executor, refusal_payload, req, e, self.max_refusal_bytes)
        if e.readings:
            self.kept[unquote(uri)] = KeptReadings(version, req.original, list(e.readings))
        else:
            self.kept.pop(unquote(uri), None)
        # The message's first line is the hint (the applier's message may already start with it).
        message = e.message if e.message.startswith(body["hint"]) else f"{body['hint']}\n{e.message}"
        return self.fail(f"{message}; nothing changed", ERROR_CODES[e.code], e.code.value, e.reasons,
                         {**body, "uri": uri, "version": version})

    # -- fastapply.applyReading -------------------------------------------------------------------
    def parse_reading_args(self, args: tuple) -> ReadingArgs:
        if len(args) != 1 or not isinstance(args[0], dict):
            raise self.fail("expected one argument {uri, version, reading, text?}", INVALID_PARAMS,
                            "invalid_argument")
        a = args[0]
        uri, version, reading, text = a.get("uri"), a.get("version"), a.get("reading"), a.get("text")
        if not isinstance(uri, str) or not uri:
            raise self.fail("argument 'uri' (a string) is missing", INVALID_PARAMS, "invalid_argument")
        if not isinstance(version, int) or isinstance(version, bool):
            raise self.fail("argument 'version' (the refusal's document version, an integer) is missing",
                            INVALID_PARAMS, "invalid_argument")
        if not isinstance(reading, int) or isinstance(reading, bool):
            raise self.fail("argument 'reading' (the reading's index, from 1) is missing", INVALID_PARAMS,
                            "invalid_argument")
        if text is not None and not isinstance(text, str):
            raise self.fail("argument 'text' must be a string", INVALID_PARAMS, "invalid_argument")
        unknown = sorted(set(a) - {"uri", "version", "reading", "text"})
        if unknown:
            raise self.fail(f"unknown argument(s): {', '.join(unknown)}", INVALID_PARAMS, "invalid_argument")
        return ReadingArgs(uri, version, reading, text)

    async def apply_reading(self, args: tuple) -> dict:
        """Apply reading `reading` of the document's last refusal, if the document is still the one
        the readings were computed on; else nothing, and the error says so."""
        started = time.perf_counter()
        a = self.parse_reading_args(args)
        doc = self.document(a.uri)
        kept = self.kept.get(unquote(a.uri))
        if kept is None:
            raise self.fail(f"no readings are kept for {_short(a.uri)}: run fastapply.applyEdit first (a refusal "
                            "offers them)", INVALID_PARAMS, "no_readings")
        if kept.stale or a.version != kept.version:
            raise self.fail(f"{_short(a.uri)}: {STALE_READINGS}", CONTENT_MODIFIED, "stale")
        if not 1 <= a.reading <= len(kept.readings):
            raise self.fail(f"argument 'reading' must be 1 to {len(kept.readings)}, not {a.reading}", INVALID_PARAMS,
                            "invalid_argument")
        how, text = kept.readings[a.reading - 1]
        if a.text is not None and a.text != text:
            raise self.fail(f"{_short(a.uri)}: the reading sent is not reading {a.reading} of the last refusal "
                            "(a later apply replaced it); nothing changed, apply the snippet again",
                            CONTENT_MODIFIED, "stale")
        self.check_unchanged(a.uri, kept.version, kept.original, f": {STALE_READINGS} (version {{old}} -> {{new}})")
        original = doc.source
        enc = self.workspace.position_encoding or "utf-16"
        edits = minimal_edits(original, text, normalize_encoding(getattr(enc, "value", enc)))
        if edits:
            await self._send_edit(a.uri, kept.version, edits)  # the client's didChange then marks them stale
        summary = _reading_summary(a.uri, original, text, edits, kept.version, started)
        summary.update(reading=a.reading, how=how)
        summary["message"] = f"Fast Apply: reading {a.reading} ({how}) applied to {_short(a.uri)}: " + \
            f"{len(edits)} edit(s), -{summary['linesRemoved']}/+{summary['linesAdded']} lines"
        return summary

    async def _send_edit(self, uri: str, version: int | None, edits) -> None:
        """Ask the client to apply the edits (`workspace/applyEdit`); a failure or refusal is the command's error."""
        workspace_edit = self._workspace_edit(uri, version, edits)
        try:
            response = await self.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=workspace_edit, label="Fast Apply"))
        except Exception as e:
            raise self.fail(f"the editor could not apply the edit: {e}", REQUEST_FAILED, "client") from None
        if not response.applied:
            raise self.fail("the editor refused the edit" + (f": {response.failure_reason}"
                                                            if response.failure_reason else ""),
                            REQUEST_FAILED, "client_refused")

    def _workspace_edit(self, uri: str, version: int | None, edits) -> types.WorkspaceEdit:
        lsp_edits = [types.TextEdit(range=types.Range(start=types.Position(e.start.line, e.start.character),
                                                      end=types.Position(e.end.line, e.end.character)),
                                    new_text=e.new_text) for e in edits]
        caps = self.client_capabilities
        ws = caps.workspace.workspace_edit if caps and caps.workspace else None
        if ws is not None and ws.document_changes:
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=lsp_edits)])
        return types.WorkspaceEdit(changes={uri: lsp_edits})  # clients without documentChanges

    async def _apply(self, req: ApplyRequest, cancel: threading.Event, progress: _Progress) -> ApplyResult:
        loop = asyncio.get_running_loop()
        total = max(1, len(req.original))

        def work() -> ApplyResult:
            result = None
            produced, last = 0, 0.0
            if req.engine != "structural" and not self.applier.model_loaded:
                loop.call_soon_threadsafe(progress.report, "loading the model", 0)
            for ev in self.applier.apply_stream(req, cancel.is_set):
                if isinstance(ev, TextDelta):
                    produced += len(ev.text)
                    now = time.monotonic()
                    if now - last >= self.progress_interval:
                        last = now
                        pct = min(99, int(100 * produced / total))
                        loop.call_soon_threadsafe(progress.report, f"{produced} chars written", pct)
                elif isinstance(ev, ApplyResult):
                    result = ev
                if cancel.is_set():
                    raise ApplyError("cancelled", "cancelled")
            if result is None:
                raise ApplyError("internal", "the engine ended without a result")
            return result

        return await loop.run_in_executor(self.executor, work)


class _Progress:
    """Work-done progress for one command; a no-op when the client has no progress support."""

    def __init__(self, server: FastApplyServer, cancel: threading.Event, client_token):
        self.server = server
        self.cancel = cancel
        self.token = client_token
        self.active = False

    async def begin(self, title: str, message: str) -> None:
        wdp = self.server.work_done_progress
        if self.token is None:
            caps = self.server.client_capabilities
            if not (caps and caps.window and caps.window.work_done_progress):
                return
            token = f"fastapply-{uuid.uuid4()}"
            try:
                await wdp.create_async(token)
            except Exception as e:  # the client refused: go on without progress
                log.info("progress create refused: %s", e)
                return
            self.token = token
        wdp.begin(self.token, types.WorkDoneProgressBegin(title=title, message=message, cancellable=True,
                                                          percentage=0))
        fut = wdp.tokens.get(self.token)
        if fut is not None:  # window/workDoneProgress/cancel cancels this future
            fut.add_done_callback(lambda f: self.cancel.set() if f.cancelled() else None)
        self.active = True

    def report(self, message: str, percentage: int) -> None:
        if self.active:
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage))

    def end(self) -> None:
        if self.active:
            self.active = False
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="done"))
            self.server.work_done_progress.tokens.pop(self.token, None)


def _short(uri: str) -> str:
    return os.path.basename(unquote(urlparse(uri).path)) or uri


def _summary(uri: str, original: str, result: ApplyResult, edits: list, version: int | None,
             started: float) -> dict:
    """The command's result object (what changed, how fast) before it is previewed or applied."""
    removed, added = changed_lines(original, result.merged)
    return {
        "uri": uri,
        "engine": result.engine,
        "language": result.language,
        "edits": len(edits),
        "linesRemoved": removed,
        "linesAdded": added,
        "changedLines": max(removed, added) if edits else 0,
        "outputTokens": result.stats.output_tokens,
        "forwardPasses": result.stats.forward_passes,
        "tokensPerSecond": round(result.stats.tokens_per_s, 1),
        "seconds": round(time.perf_counter() - started, 3),
        "version": version,
        "findings": [{"kind": f.kind, "message": f.message, "severity": f.severity} for f in result.findings],
    }


def _reading_summary(uri: str, original: str, text: str, edits: list, version: int | None,
                     started: float) -> dict:
    """fastapply.applyReading's result: the shape of applyEdit's, with no engine at work."""
    removed, added = changed_lines(original, text)
    return {"uri": uri, "applied": True, "engine": "reading", "language": None, "edits": len(edits),
            "linesRemoved": removed, "linesAdded": added, "changedLines": max(removed, added) if edits else 0,
            "outputTokens": 0, "forwardPasses": 0, "tokensPerSecond": 0.0,
            "seconds": round(time.perf_counter() - started, 3), "version": version, "findings": []}


def refusal_payload(req: ApplyRequest, e: ApplyError, max_bytes: int | None = REFUSAL_MAX_BYTES) -> dict:
    """The structured refusal (`fastapply.refusal.payload`). The hints are the applier's; one that
    gave none (a remote server of an older version) gets them from the structural merge here."""
    hint, hints = e.hint, e.hints
    if hint is None:
        hints = _hints(req, e)
    return payload(req.original, req.update, e.reasons, e.readings, hints=hints, hint=hint, max_bytes=max_bytes)


def _hints(req: ApplyRequest, e: ApplyError) -> list:
    def merge(original: str, update: str) -> str | None:
        return structural_merge(original, update, req.language, req.path).text

    try:
        return context_hints(req.original, req.update, [text for _, text in e.readings], merge)
    except Exception:  # a hint is a help: without one the refusal still stands, with its readings
        log.exception("computing the refusal's hints failed")
        return []


def _summary_line(s: dict, preview: bool = False) -> str:
    what = "preview" if preview else "applied"
    speed = f", {s['tokensPerSecond']:.0f} tok/s" if s.get("outputTokens") else ""
    return (f"Fast Apply {what}: {s['edits']} edit(s), -{s['linesRemoved']}/+{s['linesAdded']} lines, "
            f"engine {s['engine']}{speed}, {s['seconds']:.2f}s")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("fastapply")
    except Exception:
        return "0"


def _not_a_command_failure(record: logging.LogRecord) -> bool:
    """pygls logs every command error with a traceback; ours are expected outcomes, not bugs."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, CommandFailed)


def build_server(applier: Applier, engine: str = DEFAULT_ENGINE,
                 max_refusal_bytes: int = REFUSAL_MAX_BYTES) -> FastApplyServer:
    server = FastApplyServer(applier, engine, max_refusal_bytes=max_refusal_bytes)
    json_rpc_log = logging.getLogger("pygls.protocol.json_rpc")
    if _not_a_command_failure not in json_rpc_log.filters:
        json_rpc_log.addFilter(_not_a_command_failure)

    @server.command(APPLY_COMMAND)
    async def apply_edit(ls: FastApplyServer, *args):
        return await ls.run_command(args, edit=True)

    @server.command(PREVIEW_COMMAND)
    async def preview_edit(ls: FastApplyServer, *args):
        return await ls.run_command(args, edit=False)

    @server.command(APPLY_READING_COMMAND)
    async def apply_reading(ls: FastApplyServer, *args):
        return await ls.apply_reading(args)

    # pygls updates the document first, then calls these.
    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: FastApplyServer, params: types.DidChangeTextDocumentParams):
        ls.document_changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: FastApplyServer, params: types.DidCloseTextDocumentParams):
        ls.document_closed(params.text_document.uri)

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: FastApplyServer, *args):
        ls.cancel_all()

    return server


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fastapply-lsp", description="fastapply language server")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    p.add_argument("--tcp", type=int, metavar="PORT", default=None, help="listen on a TCP port instead")
    p.add_argument("--host", default="127.0.0.1", help="address for --tcp (default 127.0.0.1)")
    p.add_argument("--engine", default=DEFAULT_ENGINE, choices=ENGINES,
                   help=f"engine when a command does not name one (default {DEFAULT_ENGINE})")
    p.add_argument("--model", default=None, help="model for the in-process engine (spec name, HF dir or .gguf)")
    p.add_argument("--device", default=None, help="cpu or cuda for the in-process engine")
    p.add_argument("--dtype", default=None, choices=["fp32", "bf16", "fp16"])
    p.add_argument("--draft-model", default=None, metavar="NAME",
                   help="a small model with the target's tokenizer that drafts where the file has nothing (hf engine)")
    p.add_argument("--server", default=None, metavar="HOST:PORT",
                   help="forward applies to a fastapply gRPC server instead of running the engine here")
    p.add_argument("--token-env", default="FASTAPPLY_TOKEN",
                   help="environment variable holding the gRPC server's token (default FASTAPPLY_TOKEN)")
    p.add_argument("--max-refusal-bytes", type=int, default=REFUSAL_MAX_BYTES, metavar="N",
                   help="most bytes of readings (whole files + diffs) a refusal carries; above it the whole "
                        "files are left out and the diffs sent (default 4 MiB)")
    add_model_budget_arg(p)
    p.add_argument("--log-file", default=None, help="write logs here (stderr by default)")
    p.add_argument("--log-level", default="WARNING")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(filename=args.log_file, level=args.log_level.upper(),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.server:
        from fastapply.remote import RemoteApplier

        if args.draft_model:
            logging.getLogger("fastapply.lsp").warning("--draft-model is ignored with --server (the server's option)")
        # No queue-full retries: the editor shows the refusal at once.
        applier = RemoteApplier(args.server, token=os.environ.get(args.token_env) or None, queue_full_retries=0)
    else:
        try:
            options = draft_model_option(args, args.engine)
        except ApplyError as e:  # before the protocol starts: one line on stderr
            print(f"fastapply-lsp: error: {e.message}", file=sys.stderr)
            return 1
        applier = Applier(model_name=args.model, device=args.device, dtype=args.dtype, backend_options=options,
                          model_budget_s=args.model_budget)
    server = build_server(applier, args.engine, args.max_refusal_bytes)
    try:
        if args.tcp is not None:
            server.start_tcp(args.host, args.tcp)
        else:
            # The protocol owns the real stdout; anything else printing (a model library) goes to stderr.
            proto_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
            os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
            sys.stdout = sys.stderr
            server.start_io(sys.stdin.buffer, proto_out)
    finally:
        server.cancel_all()
        applier.close()
        server.executor.shutdown(wait=False, cancel_futures=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
