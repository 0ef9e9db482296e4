"""Drives the Python clients of open apply models, unmodified, against a fastapply server; run under
the loopback-only guard (`python no_egress.py run.py JOBS.json RESULTS.json`):

  fastapply-mcp   PyPI fastapply-mcp 1.1.1 (tickernelz): its MCP tool `call_tool("fast_apply_edit",
                  {target_filepath, original_code, code_edit})`, which sends the Kortix FastApply prompt
                  (XML-escaped blocks) with the OpenAI SDK to FAST_APPLY_URL, FAST_APPLY_MODEL left at its
                  default `fastapply-1.5b`, takes the file out of <updated-code>, unescapes and strips it,
                  and splices it over `original_code` in the file on disk
  osmosis         Osmosis-Apply-1.7B's MCP server (Osmosis-AI/Osmosis-Apply-1.7B-MCP, codemerge.py, not on
                  PyPI), as it calls the Ollama Python library (PyPI ollama 0.6.3): `ollama.chat(model=
                  "Osmosis/Osmosis-Apply-1.7B", stream=False, messages=[system, user, {"role": "assistant",
                  "content": "<code>"}])` against OLLAMA_HOST, then `"<code>" + content`, the text up to the
                  first </code>, and `file_content.replace(original_code.strip(), edited_code.strip())`

  ollama-discovery  the same library's list() and show(model): the model discovery its clients do first

JOBS.json: {jobs: [{id, client, original, update, section?}]} (`section`: the original_code the tool gets,
a part of the file; default the whole file). Each job edits its own copy of the file in a directory of
its own (fastapply-mcp edits only files under its working directory).
RESULTS.json: {results: [{id, client, ok, disk, reply?, error?}]}
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

# Osmosis' system prompt, as its MCP server and helper send it (the Python literal starts and ends
# with a newline).
OSMOSIS_SYSTEM_PROMPT = """
You are a helpful assistant for a code editor that applies an edit to code to merge them together. That is, you will be given code wrapper in <code> tags and an edit wrapped in <edit> tags, and you will apply the edit to the code.

For example:

<code>
CODE_SNIPPET
</code>

<edit>
EDIT_SNIPPET
</edit>

The code is any type of code and the edit is in the form of:

// ... existing code ...
FIRST_EDIT
// ... existing code ...
SECOND_EDIT
// ... existing code ...
THIRD_EDIT
// ... existing code ...

The merged code must be exact with no room for any errors. Make sure all whitespaces are preserved correctly. A small typo in code will cause it to fail to compile or error out, leading to poor user experience.

Output the code wrapped in <code> tags.
"""


def fastapply_mcp(job: dict, workdir: Path) -> dict:
    from fastapply_mcp import main  # reads FAST_APPLY_URL, FAST_APPLY_MODEL, FAST_APPLY_API_KEY

    target = workdir / "target.txt"
    _write(target, job["original"])
    os.chdir(workdir)  # the tool edits files under its working directory only
    reply = asyncio.run(main.call_tool("fast_apply_edit", {"target_filepath": "target.txt",
                                                           "original_code": job.get("section", job["original"]),
                                                           "code_edit": job["update"]}))
    text = reply[0]["text"]
    return {"ok": text.startswith("✅"), "reply": text[:2000], "disk": _read(target)}


def osmosis(job: dict, workdir: Path) -> dict:
    import ollama

    target = workdir / "target.txt"
    _write(target, job["original"])
    original_code, edit_snippet = job.get("section", job["original"]), job["update"]
    try:
        response = ollama.chat(model="Osmosis/Osmosis-Apply-1.7B", stream=False, messages=[
            {"role": "system", "content": OSMOSIS_SYSTEM_PROMPT},
            {"role": "user", "content": f"<code>\n{original_code}\n</code>\n\n\n<edit>\n{edit_snippet}\n</edit>"},
            {"role": "assistant", "content": "<code>"}])
    except ollama.ResponseError as e:
        return {"ok": False, "error": {"name": "ResponseError", "status": e.status_code, "message": e.error},
                "disk": _read(target)}
    full_response = "<code>" + response["message"]["content"]
    edited_code = full_response[full_response.find("<code>") + 6:full_response.find("</code>")]
    file_content = _read(target)
    _write(target, file_content.replace(original_code.strip(), edited_code.strip()))
    return {"ok": True, "reply": response["message"]["content"][:200], "model": response["model"],
            "counts": [response.get("prompt_eval_count"), response.get("eval_count")],
            "disk": _read(target)}


def ollama_discovery(job: dict, workdir: Path) -> dict:
    """What Ollama clients ask before they send a prompt (Continue's `ollama` provider asks /api/show):
    the library's typed answers, which it validates, for a name the server does not know."""
    import ollama

    listed = ollama.list()
    shown = ollama.show(job.get("model", "Osmosis/Osmosis-Apply-1.7B"))
    return {"ok": True, "models": [m.model for m in listed.models], "template": shown.template,
            "family": shown.details.family if shown.details else None,
            "capabilities": list(shown.capabilities or []), "model_info": dict(shown.modelinfo or {})}


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as f:  # bytes as they are: no newline translation
        return f.read()


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


CLIENTS = {"fastapply-mcp": fastapply_mcp, "osmosis": osmosis, "ollama-discovery": ollama_discovery}


def main() -> None:
    jobs_file, results_file = sys.argv[1:3]
    spec = json.loads(Path(jobs_file).read_text())
    results = []
    home = os.getcwd()
    for job in spec["jobs"]:
        with tempfile.TemporaryDirectory(prefix="fastapply-py-client-") as tmp:
            try:
                out = CLIENTS[job["client"]](job, Path(tmp))
            except Exception as e:  # the client's own failure, reported as the result
                out = {"ok": False, "error": {"name": type(e).__name__, "message": str(e)[:2000]}}
            finally:
                os.chdir(home)
        results.append({"id": job["id"], "client": job["client"], **out})
    Path(results_file).write_text(json.dumps({"results": results, "pid": os.getpid()}))


if __name__ == "__main__":
    main()
