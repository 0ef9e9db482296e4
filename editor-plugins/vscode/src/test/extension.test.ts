// Smoke test of extension.ts without VS Code: `vscode` and `vscode-languageclient/node` are replaced
// by small fakes, so activation, command wiring, settings -> server command, status bar and error
// paths run under plain node. (The protocol side is covered by client.test.ts against the real server.)
// A refused apply's quick pick of readings runs against a fake server that keeps one document.

import * as assert from "assert";
import Module = require("module");

type Fn = (...args: any[]) => any;
const commands = new Map<string, Fn>();
const errors: string[] = [];
const sent: { method: unknown; params: any }[] = [];
const started: { command: string; args: string[] }[] = [];
let clipboard = "";
let reply: any = { uri: "file:///w/a.py", applied: true, engine: "speculative", edits: 2, linesRemoved: 1,
  linesAdded: 2, changedLines: 2, outputTokens: 40, tokensPerSecond: 512.3, seconds: 0.2 };
const config: Record<string, unknown> = { serverCommand: ["/venv/bin/fastapply-lsp"], engine: "plain", model: "",
  remoteServer: "", remoteTokenEnv: "FASTAPPLY_TOKEN" };
const statusItem: any = { show() {}, dispose() {} };
const outputLines: string[] = [];
// The one document: its text and LSP version, as the editor (and a server in sync with it) sees them.
const docState = { text: "", version: 1 };
const doc = { uri: { toString: () => "file:///w/a.py", path: "/w/a.py", scheme: "file" },
  getText: () => docState.text, languageId: "python" };

// -- the quick pick, the diff tabs and the preview provider, as the tests drive and inspect them --
class FakeQuickPick {
  items: any[] = [];
  activeItems: any[] = [];
  selectedItems: any[] = [];
  title = "";
  placeholder = "";
  matchOnDescription = false;
  matchOnDetail = false;
  ignoreFocusOut = false;
  disposed = false;
  private listeners: Record<string, Fn[]> = { active: [], accept: [], hide: [] };
  onDidChangeActive = (f: Fn) => this.listeners.active.push(f);
  onDidAccept = (f: Fn) => this.listeners.accept.push(f);
  onDidHide = (f: Fn) => this.listeners.hide.push(f);
  show() { setImmediate(() => void user(this)); }
  hide() { for (const f of this.listeners.hide) f(); }
  dispose() { this.disposed = true; }
  // what the user does
  activate(i: number) { this.activeItems = [this.items[i]]; for (const f of this.listeners.active) f(this.activeItems); }
  accept(i: number) { this.activeItems = this.selectedItems = [this.items[i]]; for (const f of this.listeners.accept) f(); }
}
let user: (qp: FakeQuickPick) => Promise<void> = async () => undefined;
const quickPicks: FakeQuickPick[] = [];
class TabInputTextDiff { constructor(public original: any, public modified: any) {} }
const tabs: { input: TabInputTextDiff; title: string }[] = [];
const diffs: { left: any; right: any; title: string; options: any }[] = [];
let provider: { provideTextDocumentContent(uri: any): string } | undefined;
const tick = () => new Promise((r) => setImmediate(r));

const fakeVscode = {
  window: {
    activeTextEditor: { document: doc, selection: {} } as any,
    visibleTextEditors: [],
    createOutputChannel: () => ({ appendLine: (l: string) => outputLines.push(l), dispose() {} }),
    createStatusBarItem: () => statusItem,
    showErrorMessage: (m: string) => { errors.push(m); },
    setStatusBarMessage: () => undefined,
    showQuickPick: async () => undefined,
    createQuickPick: () => { const qp = new FakeQuickPick(); quickPicks.push(qp); return qp; },
    tabGroups: {
      get all() { return [{ tabs: [...tabs] }]; },
      close: async (closing: any[]) => { for (const t of closing) tabs.splice(tabs.indexOf(t), 1); return true; },
    },
  },
  TabInputTextDiff,
  StatusBarAlignment: { Right: 2 },
  ViewColumn: { Beside: -2 },
  EventEmitter: class { event = () => undefined; fire() {} },
  commands: {
    registerCommand: (name: string, fn: Fn) => { commands.set(name, fn); return { dispose() {} }; },
    executeCommand: async (name: string, left: any, right: any, title: string, options: any) => {
      if (name === "vscode.diff") {
        diffs.push({ left, right, title, options });
        tabs.push({ input: new TabInputTextDiff(left, right), title });
      }
    },
  },
  workspace: {
    getConfiguration: () => ({ get: (k: string, d: unknown) => (k in config ? config[k] : d) }),
    registerTextDocumentContentProvider: (_scheme: string, p: any) => { provider = p; return { dispose() {} }; },
    onDidCloseTextDocument: () => ({ dispose() {} }),
    onDidChangeConfiguration: () => ({ dispose() {} }),
    textDocuments: [],
    asRelativePath: (u: any) => String(u),
  },
  env: { clipboard: { readText: async () => clipboard } },
  Uri: { from: (x: any) => ({ ...x, toString: () => `${x.scheme}:${x.path}?${x.query}` }) },
};

class FakeLanguageClient {
  code2ProtocolConverter = { asUri: (u: any) => u.toString() };
  constructor(_id: string, _name: string, server: any) { started.push({ command: server.command, args: server.args }); }
  async start() {}
  async stop() {}
  async sendRequest(method: unknown, params: any) {
    sent.push({ method, params });
    if (params.command === "fastapply.applyReading") return fakeApplyReading(params.arguments[0]);
    if (reply instanceof Error) throw reply;
    return reply;
  }
}
const fakeClient = { LanguageClient: FakeLanguageClient, ExecuteCommandRequest: { type: "workspace/executeCommand" } };

const M = Module as any;
const load = M._load;
M._load = function (request: string, ...rest: unknown[]) {
  if (request === "vscode") return fakeVscode;
  if (request === "vscode-languageclient/node") return fakeClient;
  return load.call(this, request, ...rest);
};

// -- a refusal with readings, and the server's side of fastapply.applyReading --------------------
const ORIGINAL = "def f():\n    return 1\n";
const READINGS = ["def f():\n    try:\n        return 1\n    except E:\n        return 0\n",
  "def f():\n    return 1\n\n\ndef g():\n    pass\n"];
const refusal = {
  uri: "file:///w/a.py", version: 7, hint: "Resend with context: add `return 1` above region 1.",
  reasons: ["two placements"], texts_omitted: false, hints: [],
  readings: [
    { index: 1, how: "wrapped", original_lines: [2, 2], reading_lines: [2, 5], text: READINGS[0],
      diff: "--- original\n+++ reading 1\n@@ -1,2 +1,5 @@\n def f():\n-    return 1\n+    try:\n+        return 1\n" +
        "+    except E:\n+        return 0\n" },
    { index: 2, how: "appended", original_lines: [3, 2], reading_lines: [3, 6], text: null, // left out for size
      diff: "--- original\n+++ reading 2\n@@ -1,2 +1,6 @@\n def f():\n     return 1\n+\n+\n+def g():\n+    pass\n" },
  ],
};

function fakeApplyReading(arg: { uri: string; version: number; reading: number }) {
  if (arg.version !== docState.version) {
    throw Object.assign(new Error("a.py: the document changed since the readings were computed; apply the " +
      "snippet again (nothing changed)"), { code: -32801 });
  }
  docState.text = READINGS[arg.reading - 1];
  docState.version++;
  return { uri: arg.uri, applied: true, engine: "reading", edits: 1, linesRemoved: 1, linesAdded: 4, changedLines: 4,
    outputTokens: 0, tokensPerSecond: 0, seconds: 0.01, message: `Fast Apply: reading ${arg.reading} applied` };
}

function readingRequests() {
  return sent.filter((s) => s.params.command === "fastapply.applyReading").map((s) => s.params.arguments[0]);
}

async function refusedApply(pick: (qp: FakeQuickPick) => Promise<void>) {
  docState.text = ORIGINAL;
  docState.version = 7;
  reply = Object.assign(new Error(refusal.hint + "\nstructural merge refused: two placements; nothing changed"),
    { code: -32803, data: { reason: "refused", ...refusal } });
  user = pick;
  clipboard = "def f():\n    try:\n        # ... existing code ...\n";
  await commands.get("fastapply.applyClipboard")!();
  return quickPicks[quickPicks.length - 1];
}

async function readingTests() {
  // pick reading 2 after looking at both: each previewed as a diff of the document against it
  let previewed: string[] = [];
  let qp = await refusedApply(async (q) => {
    q.activate(0);
    await tick();
    q.activate(1);
    await tick();
    previewed = diffs.map((d) => provider!.provideTextDocumentContent(d.right));
    q.accept(1);
  });
  assert.strictEqual(qp.placeholder, refusal.hint);
  assert.deepStrictEqual(qp.items.map((i) => i.label), ["wrapped", "appended"]);
  assert.match(qp.items[0].detail, /differs from the document at line 2: try: ⏎ return 1/);
  assert.match(qp.items[1].detail, /differs from reading 1 at line 2: return 1 ⏎ def g\(\):/);
  assert.deepStrictEqual(diffs.map((d) => d.left), [doc.uri, doc.uri]);
  assert.deepStrictEqual(previewed, READINGS); // reading 2 rebuilt from its diff
  assert.ok(diffs.every((d) => d.options.preserveFocus && d.options.viewColumn === -2 &&
    /^a\.py ↔ reading \d/.test(d.title)));
  assert.deepStrictEqual(readingRequests(), [{ uri: "file:///w/a.py", version: 7, reading: 2 }]);
  assert.strictEqual(docState.text, READINGS[1]);
  assert.ok(qp.disposed && tabs.length === 0, "the pick and its diff tabs are closed");
  assert.strictEqual(provider!.provideTextDocumentContent(diffs[0].right), "", "the previews are forgotten");
  assert.strictEqual(statusItem.text, "$(zap) reading");

  // the document edited while the choice is open: the server refuses, nothing applied
  diffs.length = 0;
  const before = errors.length;
  qp = await refusedApply(async (q) => {
    q.activate(0);
    docState.text = "# typed\n" + ORIGINAL;
    docState.version++;
    q.accept(0);
  });
  assert.strictEqual(readingRequests().length, 2);
  assert.strictEqual(readingRequests()[1].text, READINGS[0]);
  assert.strictEqual(docState.text, "# typed\n" + ORIGINAL);
  assert.strictEqual(errors.length, before, "the server shows its own error (showMessage), not twice");
  assert.ok(outputLines.some((l) => /changed since the readings were computed/.test(l)));
  assert.ok(tabs.length === 0);

  // Escape: nothing applied
  qp = await refusedApply(async (q) => {
    q.activate(1);
    await tick();
    q.hide();
  });
  assert.strictEqual(readingRequests().length, 2);
  assert.strictEqual(docState.text, ORIGINAL);
  assert.ok(qp.disposed && tabs.length === 0);
}

async function main() {
  const ext = require("../extension");
  const subs: unknown[] = [];
  ext.activate({ subscriptions: subs });
  assert.deepStrictEqual([...commands.keys()].sort(),
    ["fastapply.applyClipboard", "fastapply.applySelection", "fastapply.preview"]);

  // empty clipboard: refused before the server is started
  clipboard = "  ";
  await commands.get("fastapply.applyClipboard")!();
  assert.ok(/clipboard is empty/.test(errors.pop() ?? ""));
  assert.strictEqual(started.length, 0);

  // apply the clipboard: server started from the settings, one executeCommand, status bar updated
  clipboard = "def f():\n    return 2\n";
  await commands.get("fastapply.applyClipboard")!();
  assert.deepStrictEqual(started, [{ command: "/venv/bin/fastapply-lsp", args: ["--engine", "plain"] }]);
  assert.deepStrictEqual(sent[0].params, { command: "fastapply.applyEdit",
    arguments: [{ uri: "file:///w/a.py", update: clipboard }] });
  assert.strictEqual(statusItem.text, "$(zap) 512 tok/s");

  // a server error: already shown by the server (showMessage), not shown twice
  reply = Object.assign(new Error("structural merge refused"), { code: -32803 });
  await commands.get("fastapply.applyClipboard")!();
  assert.strictEqual(errors.length, 0);

  // selection with nothing selected: refused
  await commands.get("fastapply.applySelection")!();
  assert.ok(/select the edit snippet/.test(errors.pop() ?? ""));

  await readingTests();
  console.log("all passed (extension smoke test)");
}

main().catch((err) => {
  console.log(`FAIL extension smoke test: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
