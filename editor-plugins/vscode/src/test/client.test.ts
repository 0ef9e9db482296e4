// The extension's client logic (src/core.ts) against the real Python server over stdio, with
// vscode-jsonrpc standing in for VS Code: spawn fastapply-lsp (engine structural), initialize,
// didOpen, executeCommand, answer workspace/applyEdit by applying the TextEdits, compare.
//
//   node out/test/client.test.js      (FASTAPPLY_LSP overrides the server path; FASTAPPLY_EVALS the data dir)

import * as assert from "assert";
import * as cp from "child_process";
import * as fs from "fs";
import * as path from "path";
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter }
  from "vscode-jsonrpc/node";
import * as core from "../core";

const ROOT = path.resolve(__dirname, "../../../..");
const SERVER = process.env.FASTAPPLY_LSP ?? path.join(ROOT, ".venv", "bin", "fastapply-lsp");
const EVALS = process.env.FASTAPPLY_EVALS ?? path.join(ROOT, "evals", "cases");
const JUDGED = path.join(ROOT, "examples", "judged"); // the merge refuses with 4 readings
const EXT: Record<string, string> = { python: "py", go: "go", rust: "rs", java: "java", typescript: "ts",
  javascript: "js", tsx: "tsx", jsx: "jsx" };

let failures = 0;
async function test(name: string, fn: () => Promise<void> | void): Promise<void> {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (err) {
    failures++;
    console.log(`FAIL ${name}: ${err instanceof Error ? err.stack : String(err)}`);
  }
}

// -- pure logic -------------------------------------------------------------------------------

function unitTests(): Promise<void>[] {
  return [
    test("buildServerCommand", () => {
      assert.deepStrictEqual(core.buildServerCommand({ serverCommand: ["/x/fastapply-lsp"], engine: "structural" }),
        { command: "/x/fastapply-lsp", args: ["--engine", "structural"] });
      assert.deepStrictEqual(core.buildServerCommand({ serverCommand: ["py", "-m", "lsp.server"], model: "m.gguf" }),
        { command: "py", args: ["-m", "lsp.server", "--model", "m.gguf"] });
      assert.deepStrictEqual(core.buildServerCommand({ serverCommand: ["s"], remoteServer: "gpu:50051",
        remoteTokenEnv: "TOK", model: "ignored" }), { command: "s", args: ["--server", "gpu:50051", "--token-env", "TOK"] });
      assert.throws(() => core.buildServerCommand({ serverCommand: [] }), /empty/);
      assert.throws(() => core.buildServerCommand({ serverCommand: ["s"], engine: "magic" }), /engine/);
      assert.throws(() => core.buildServerCommand({ serverCommand: ["s"], remoteServer: "nohost" }), /HOST:PORT/);
    }),
    test("commandArguments", () => {
      assert.deepStrictEqual(core.commandArguments("file:///a.py", "x\n", { engine: "plain" }),
        [{ uri: "file:///a.py", update: "x\n", engine: "plain" }]);
      assert.throws(() => core.commandArguments("file:///a.py", "  \n"), /empty/);
    }),
    test("applyTextEdits: CRLF, lone CR, surrogate pairs, end of file", () => {
      const e = (l1: number, c1: number, l2: number, c2: number, newText: string): core.TextEdit =>
        ({ range: { start: { line: l1, character: c1 }, end: { line: l2, character: c2 } }, newText });
      assert.strictEqual(core.applyTextEdits("a\r\nb\r\nc", [e(1, 0, 1, 1, "B"), e(2, 1, 2, 1, "!")]), "a\r\nB\r\nc!");
      assert.strictEqual(core.applyTextEdits("a\rb\nc", [e(1, 0, 2, 0, "")]), "a\rc");
      assert.strictEqual(core.applyTextEdits("s='😀x'\n", [e(0, 5, 0, 6, "y")]), "s='😀y'\n");
      assert.strictEqual(core.applyTextEdits("a\n", [e(1, 0, 1, 0, "b\n")]), "a\nb\n");
      assert.strictEqual(core.applyTextEdits("ab", [e(0, 99, 5, 0, "!")]), "ab!");
      assert.throws(() => core.applyTextEdits("abc", [e(0, 0, 0, 2, ""), e(0, 1, 0, 3, "")]), /overlapping/);
    }),
    test("applyUnifiedDiff: difflib's diffs, a last line with no line end, CRLF, form feeds", () => {
      const h = "--- original\n+++ reading 1\n";
      assert.strictEqual(core.applyUnifiedDiff("a\nb", h + "@@ -1,2 +1,2 @@\n a\n-b+c"), "a\nc");
      assert.strictEqual(core.applyUnifiedDiff("x\ny\n", h + "@@ -1,2 +1,2 @@\n x\n-y\n+z"), "x\nz");
      assert.strictEqual(core.applyUnifiedDiff("a\r\nb\r\n", h + "@@ -1,2 +1,3 @@\n a\r\n+B\r\n b\r\n"), "a\r\nB\r\nb\r\n");
      assert.strictEqual(core.applyUnifiedDiff("p\fq\n", h + "@@ -1,2 +1,2 @@\n p\f-q\n+r\n"), "p\fr\n");
      assert.strictEqual(core.applyUnifiedDiff("", h + "@@ -0,0 +1 @@\n+new\n"), "new\n");
      assert.strictEqual(core.applyUnifiedDiff("old\n", h + "@@ -1 +0,0 @@\n-old\n"), "");
      const long = Array.from({ length: 30 }, (_, i) => `l${i}\n`).join("");
      assert.strictEqual(core.applyUnifiedDiff(long, h + "@@ -2,3 +2,3 @@\n l1\n-l2\n+L2\n l3\n" +
        "@@ -25,3 +25,2 @@\n l24\n-l25\n l26\n"), long.replace("l2\n", "L2\n").replace("l25\n", ""));
      assert.throws(() => core.applyUnifiedDiff("other\nb\n", h + "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"), /does not fit/);
    }),
    test("formatSummary / statusText", () => {
      const s: core.ApplySummary = { uri: "file:///w/a%20b.py", applied: true, engine: "speculative", edits: 2,
        linesRemoved: 1, linesAdded: 3, changedLines: 3, outputTokens: 120, tokensPerSecond: 850.4, seconds: 0.5 };
      assert.strictEqual(core.formatSummary(s),
        "Fast Apply applied to a b.py: 2 edits, -1/+3 lines, speculative, 850 tok/s, 0.50s");
      assert.strictEqual(core.statusText(s), "$(zap) 850 tok/s");
      assert.strictEqual(core.statusText({ ...s, outputTokens: 0, engine: "structural" }), "$(zap) structural");
      assert.match(core.formatSummary({ ...s, edits: 0 }), /unchanged/);
    }),
  ];
}

// -- against the server -----------------------------------------------------------------------

interface Doc { text: string; version: number }

class Editor {
  docs = new Map<string, Doc>();
  messages: { type: number; message: string }[] = [];
  progress: { token: string | number; value: { kind: string } }[] = [];
  applied: unknown[] = [];
  onProgressCreate: (() => void) | undefined;

  constructor(public conn: MessageConnection) {
    conn.onRequest("workspace/applyEdit", (params: { edit: { documentChanges: {
      textDocument: { uri: string; version: number }; edits: core.TextEdit[] }[] } }) => {
      this.applied.push(params);
      for (const change of params.edit.documentChanges) {
        const doc = this.docs.get(change.textDocument.uri);
        if (!doc || doc.version !== change.textDocument.version) {
          return { applied: false, failureReason: "stale version" };
        }
        this.change(change.textDocument.uri, core.applyTextEdits(doc.text, change.edits));
      }
      return { applied: true };
    });
    conn.onRequest("window/workDoneProgress/create", () => {
      this.onProgressCreate?.();
      return null;
    });
    conn.onNotification("$/progress", (p: { token: string; value: { kind: string } }) => this.progress.push(p));
    conn.onNotification("window/showMessage", (p: { type: number; message: string }) => this.messages.push(p));
    conn.onNotification("window/logMessage", () => undefined);
  }

  open(uri: string, text: string, languageId: string): void {
    this.docs.set(uri, { text, version: 1 });
    void this.conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId, version: 1, text } });
  }

  change(uri: string, text: string): void {
    const doc = this.docs.get(uri)!;
    doc.text = text;
    doc.version++;
    void this.conn.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: doc.version }, contentChanges: [{ text }] });
  }

  execute(command: string, uri: string, update: string): Promise<core.ApplySummary> {
    return this.conn.sendRequest("workspace/executeCommand",
      { command, arguments: core.commandArguments(uri, update) }) as Promise<core.ApplySummary>;
  }

  applyReading(refusal: core.Refusal, index: number): Promise<core.ApplySummary> {
    return this.conn.sendRequest("workspace/executeCommand",
      { command: core.APPLY_READING_COMMAND, arguments: core.readingArguments(refusal, index) }) as
      Promise<core.ApplySummary>;
  }

  /** Open the judged example at `uri` and apply its snippet: the refusal the server answers. */
  async refuse(uri: string): Promise<core.Refusal> {
    this.open(uri, fs.readFileSync(path.join(JUDGED, "rows.py"), "utf8"), "python");
    try {
      await this.execute(core.APPLY_COMMAND, uri, fs.readFileSync(path.join(JUDGED, "update.py"), "utf8"));
    } catch (err) {
      const refusal = core.refusalOf(err);
      assert.ok(refusal, `a refusal with readings, not ${core.errorMessage(err)}`);
      assert.strictEqual(core.errorMessage(err).split("\n")[0], refusal.hint, "the message starts with the hint");
      return refusal;
    }
    throw new Error("the judged example was merged: expected a refusal");
  }
}

function readCases(): { id: string; language: string; original: string; update: string; expected: string }[] {
  const file = path.join(EVALS, "commits_dev.jsonl");
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

async function serverTests(): Promise<void> {
  if (!fs.existsSync(SERVER)) {
    console.log(`FAIL no server at ${SERVER} (set FASTAPPLY_LSP)`);
    failures++;
    return;
  }
  const { command, args } = core.buildServerCommand({ serverCommand: [SERVER], engine: "structural" });
  const proc = cp.spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const ed = new Editor(conn);
  conn.listen();
  try {
    await test("initialize", async () => {
      const res = await conn.sendRequest("initialize", {
        processId: process.pid, rootUri: null, capabilities: {
          workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } },
          window: { workDoneProgress: true },
          general: { positionEncodings: ["utf-16"] },
        } }) as { capabilities: { executeCommandProvider?: { commands: string[] } } };
      assert.deepStrictEqual([...(res.capabilities.executeCommandProvider?.commands ?? [])].sort(),
        [core.APPLY_COMMAND, core.APPLY_READING_COMMAND, core.PREVIEW_COMMAND]);
      void conn.sendNotification("initialized", {});
    });

    const cases = readCases();
    await test("real cases: the edits the server sends rebuild its merge; 3 equal the expected file", async () => {
      if (cases.length === 0) {
        console.log("     (skipped: no commits_dev.jsonl)");
        return;
      }
      const langs = new Map<string, number>();
      let exact = 0;
      let tried = 0;
      for (const c of cases) {
        if (exact >= 3 || tried >= 20) break;
        if ((langs.get(c.language) ?? 0) >= 1) continue; // one case per language first
        tried++;
        const uri = `file:///vscode-test/case${tried}.${EXT[c.language] ?? "txt"}`;
        ed.open(uri, c.original, c.language);
        let merged: string;
        try {
          merged = (await ed.execute(core.PREVIEW_COMMAND, uri, c.update)).merged!;
        } catch {
          continue; // the engine refused this case: not the client's business
        }
        const summary = await ed.execute(core.APPLY_COMMAND, uri, c.update);
        assert.strictEqual(ed.docs.get(uri)!.text, merged, `${c.id}: the edits rebuild the merge`);
        assert.ok(summary.applied && summary.edits >= 1 && summary.edits <= Math.max(summary.linesAdded,
          summary.linesRemoved), `${c.id}: ${core.formatSummary(summary)}`);
        console.log(`     ${c.id}: ${core.formatSummary(summary)}`);
        if (merged === c.expected) {
          exact++;
          langs.set(c.language, 1);
        }
      }
      assert.ok(exact >= 3, `only ${exact} cases matched the expected file`);
      assert.ok(ed.progress.some((p) => p.value.kind === "end"), "work-done progress was reported");
    });

    await test("a refused apply changes nothing and says why", async () => {
      const uri = "file:///vscode-test/broken.py";
      const broken = "def f(:\n    ((((\n  x = [\n";
      ed.open(uri, broken, "python");
      const before = ed.applied.length;
      await assert.rejects(ed.execute(core.APPLY_COMMAND, uri, "def g():\n    return 1\n"),
        (err: { code: number; message: string }) => err.code === core.ErrorCodes.RequestFailed &&
          /does not parse/.test(err.message));
      assert.strictEqual(ed.docs.get(uri)!.text, broken);
      assert.strictEqual(ed.applied.length, before);
      await new Promise((r) => setTimeout(r, 50));
      assert.ok(ed.messages.some((m) => m.type === 1 && /does not parse/.test(m.message)), "showMessage(Error)");
    });

    await test("a document changed during the apply is refused", async () => {
      const uri = "file:///vscode-test/stale.py";
      ed.open(uri, "def f():\n    return 1\n", "python");
      ed.onProgressCreate = () => ed.change(uri, "# typed meanwhile\ndef f():\n    return 1\n");
      try {
        await assert.rejects(ed.execute(core.APPLY_COMMAND, uri, "def f():\n    return 2\n"),
          (err: { code: number }) => err.code === core.ErrorCodes.ContentModified);
      } finally {
        ed.onProgressCreate = undefined;
      }
      assert.strictEqual(ed.docs.get(uri)!.text, "# typed meanwhile\ndef f():\n    return 1\n");
    });

    await test("a refusal offers its readings; the chosen one is applied", async () => {
      const uri = "file:///vscode-test/rows.py";
      const refusal = await ed.refuse(uri);
      const original = ed.docs.get(uri)!.text;
      assert.strictEqual(refusal.uri, uri);
      assert.strictEqual(refusal.version, 1);
      assert.strictEqual(refusal.readings.length, 4);
      for (const r of refusal.readings) {
        assert.strictEqual(core.applyUnifiedDiff(original, r.diff), r.text, `reading ${r.index}: its diff rebuilds it`);
      }
      const items = core.readingItems(refusal, original);
      assert.deepStrictEqual(items.map((i) => i.label), refusal.readings.map((r) => r.how));
      assert.ok(items.every((i) => /at line \d+: \S/.test(i.detail)), JSON.stringify(items.map((i) => i.detail)));
      const before = ed.applied.length;
      const summary = await ed.applyReading(refusal, 2);
      assert.strictEqual(ed.docs.get(uri)!.text, refusal.readings[1].text);
      assert.ok(summary.applied && summary.edits >= 1 && ed.applied.length === before + 1);
    });

    await test("a reading chosen after the document changed is refused, nothing applied", async () => {
      const uri = "file:///vscode-test/rows-stale.py";
      const refusal = await ed.refuse(uri);
      const typed = "# typed while the choice was open\n" + ed.docs.get(uri)!.text;
      ed.change(uri, typed);
      const before = ed.applied.length;
      await assert.rejects(ed.applyReading(refusal, 1), (err: { code: number; message: string }) =>
        err.code === core.ErrorCodes.ContentModified && /changed since the readings were computed/.test(err.message));
      assert.strictEqual(ed.docs.get(uri)!.text, typed);
      assert.strictEqual(ed.applied.length, before);
    });

    await test("bad arguments and unknown documents are invalid params", async () => {
      await assert.rejects(ed.execute(core.APPLY_COMMAND, "file:///vscode-test/never-opened.py", "x = 1\n"),
        (err: { code: number; message: string }) => err.code === core.ErrorCodes.InvalidParams && /not open/.test(err.message));
      await assert.rejects(conn.sendRequest("workspace/executeCommand", { command: core.APPLY_COMMAND, arguments: [] }),
        (err: { code: number }) => err.code === core.ErrorCodes.InvalidParams);
    });

    await test("preview returns a diff and edits nothing", async () => {
      const uri = "file:///vscode-test/prev.py";
      ed.open(uri, "def f():\n    return 1\n", "python");
      const before = ed.applied.length;
      const res = await ed.execute(core.PREVIEW_COMMAND, uri, "def f():\n    return 2\n");
      assert.strictEqual(res.merged, "def f():\n    return 2\n");
      assert.match(res.diff!, /^--- a\/prev\.py\n\+\+\+ b\/prev\.py\n/);
      assert.strictEqual(ed.applied.length, before);
      assert.strictEqual(ed.docs.get(uri)!.text, "def f():\n    return 1\n");
    });
  } finally {
    try {
      await conn.sendRequest("shutdown");
      void conn.sendNotification("exit");
    } catch {
      proc.kill();
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => { proc.kill(); resolve(); }, 3000);
      proc.on("exit", () => { clearTimeout(timer); resolve(); });
    });
    conn.dispose();
  }
}

async function main(): Promise<void> {
  const t0 = Date.now();
  await Promise.all(unitTests());
  await serverTests();
  console.log(`${failures === 0 ? "all passed" : `${failures} failed`} in ${Date.now() - t0} ms`);
  process.exit(failures === 0 ? 0 : 1);
}

void main();
