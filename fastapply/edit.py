"""`apply_edit`: one call for the common case, for agents and scripts.

    import fastapply

    merged = fastapply.apply_edit(original, update, path="app.py")

It returns the whole merged file, or raises `ApplyError` with what to do next: a refusal
(`code == "refused"`) carries `hint` (the line to resend), `hints` and `readings` (the whole files
the snippet may mean). The engine defaults to `structural`, the model-free merge, which needs no
extra and never loads a model; `engine="auto"` adds the judge where the model extra is installed.
Everything else (streaming, sampling, your own model or server) is `Applier` / `ApplyRequest`.
"""

from __future__ import annotations

import threading

from fastapply.api import Applier, ApplyError, ApplyRequest

_shared: Applier | None = None
_shared_lock = threading.Lock()


def apply_edit(original: str, update: str, *, path: str | None = None, language: str | None = None,
               engine: str = "structural", instruction: str | None = None, section: bool = False,
               applier: Applier | None = None) -> str:
    """The merged file of `update` applied to `original`, or `ApplyError`.

    `path` (or `language`) names the language; `engine` is one of `ENGINES`; `instruction` says what
    the edit does (the model engines read it). `section`: `original` is a section of a file, which
    the caller splices the answer back into (both its edges are cuts: a snippet that restates code
    beyond them is refused, `ApplyRequest.section`). `applier` serves the request; by default one shared
    by every call of this process, which loads the default model the first time an engine needs it.
    A model's file that fails the checks raises too (`refused`, its findings as `reasons`): what is
    returned is always a file that passed them.
    """
    req = ApplyRequest(original=original, update=update, instruction=instruction, language=language, path=path,
                       engine=engine, section=section)
    result = (applier or _shared_applier()).apply(req)
    errors = [f.line() for f in result.findings if f.severity == "error"]
    if errors:
        raise ApplyError("refused", f"the {result.engine} engine's file failed its checks; nothing to use: "
                                    + "; ".join(errors), errors)
    return result.merged


def _shared_applier() -> Applier:
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Applier()
        return _shared
