"""How small are the edits the language server sends? Drives `fastapply-lsp` over stdio on real cases.

    .venv/bin/python -m evals.lsp_edits [--cases 3] [--engine structural] [--data PATH]

For each case: open the original, run `fastapply.applyEdit` with the case's snippet, apply the
`workspace/applyEdit` it sends (as an editor would), and print the number of TextEdits next to the
changed lines of the diff, the characters the edits replace/insert, and whether the document then
equals `expected`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "evals" / "cases" / "commits_dev.jsonl"
EXT = {"python": "py", "go": "go", "rust": "rs", "java": "java", "typescript": "ts", "javascript": "js",
       "tsx": "tsx", "jsx": "jsx", "markdown": "md", "sql": "sql"}


def pick_cases(path: Path, n: int) -> list[dict]:
    """`n` cases the structural engine merges exactly, one per language first (file order)."""
    from fastapply.merge import structural_merge

    by_lang: dict[str, list[dict]] = {}
    with Path(path).open() as f:
        for line in f:
            c = json.loads(line)
            if len(by_lang.get(c["language"], [])) >= n:
                continue
            m = structural_merge(c["original"], c["update"], c["language"])
            if m.ok and m.text == c["expected"]:
                by_lang.setdefault(c["language"], []).append(c)
    out: list[dict] = []
    for rank in range(n):
        for cases in by_lang.values():
            if rank < len(cases) and len(out) < n:
                out.append(cases[rank])
    return out


def server_command(engine: str) -> list[str]:
    script = Path(sys.executable).parent / "fastapply-lsp"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "lsp.server"]
    return cmd + ["--engine", engine]


async def run(cases: list[dict], engine: str) -> list[dict]:
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    from lsp.edits import apply_edits, changed_lines, offset_at

    client = LanguageClient("lsp-edits-eval", "0")
    docs: dict[str, tuple[str, int]] = {}
    seen: list = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams):
        for ch in params.edit.document_changes or []:
            text, version = docs[ch.text_document.uri]
            if ch.text_document.version != version:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="stale")
            edits = [{"range": {"start": {"line": e.range.start.line, "character": e.range.start.character},
                                "end": {"line": e.range.end.line, "character": e.range.end.character}},
                      "newText": e.new_text} for e in ch.edits]
            seen.append((text, edits))
            docs[ch.text_document.uri] = (apply_edits(text, edits), version + 1)
        return types.ApplyWorkspaceEditResult(applied=True)

    cmd = server_command(engine)
    await client.start_io(cmd[0], *cmd[1:])
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)))))
    client.initialized(types.InitializedParams())
    rows = []
    try:
        for i, c in enumerate(cases):
            uri = f"file:///eval/case{i}.{EXT.get(c['language'], 'txt')}"
            docs[uri] = (c["original"], 1)
            client.text_document_did_open(types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=c["language"], version=1, text=c["original"])))
            seen.clear()
            t0 = time.perf_counter()
            summary = await client.workspace_execute_command_async(types.ExecuteCommandParams(
                command="fastapply.applyEdit", arguments=[{"uri": uri, "update": c["update"]}]))
            secs = time.perf_counter() - t0
            removed, added = changed_lines(c["original"], c["expected"])
            edits = seen[0][1] if seen else []
            replaced = sum(offset_at(c["original"], e["range"]["end"]["line"], e["range"]["end"]["character"])
                           - offset_at(c["original"], e["range"]["start"]["line"], e["range"]["start"]["character"])
                           for e in edits)
            rows.append({"id": c["id"], "language": c["language"], "lines": c["original"].count("\n"),
                         "removed": removed, "added": added, "edits": len(edits), "replaced_chars": replaced,
                         "inserted_chars": sum(len(e["newText"]) for e in edits),
                         "exact": docs[uri][0] == c["expected"], "seconds": secs,
                         "summary_edits": summary["edits"]})
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=3)
    ap.add_argument("--engine", default="structural")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    if not args.data.exists():
        print(f"no data at {args.data}", file=sys.stderr)
        return 1
    rows = asyncio.run(run(pick_cases(args.data, args.cases), args.engine))
    head = f"{'case':<58} {'lang':<10} {'lines':>5} {'-lines':>6} {'+lines':>6} {'edits':>5} " \
           f"{'repl.ch':>7} {'ins.ch':>6} {'exact':>5} {'secs':>5}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['id'][:58]:<58} {r['language']:<10} {r['lines']:>5} {r['removed']:>6} {r['added']:>6} "
              f"{r['edits']:>5} {r['replaced_chars']:>7} {r['inserted_chars']:>6} {str(r['exact']):>5} "
              f"{r['seconds']:>5.2f}")
    return 0 if all(r["exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
