// Smoke test of extension.ts without VS Code: `vscode` and `vscode-languageclient/node` are replaced
// by small fakes, so activation, command wiring, settings -> server command, status bar and error
// paths run under plain node. (The protocol side is covered by client.test.ts against the real server.)

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
const doc = { uri: { toString: () => "file:///w/a.py", path: "/w/a.py", scheme: "file" },
  getText: () => "", languageId: "python" };

const fakeVscode = {
  window: {
    activeTextEditor: { document: doc, selection: {} } as any,
    visibleTextEditors: [],
    createOutputChannel: () => ({ appendLine() {}, dispose() {} }),
    createStatusBarItem: () => statusItem,
    showErrorMessage: (m: string) => { errors.push(m); },
    setStatusBarMessage: () => undefined,
    showQuickPick: async () => undefined,
  },
  StatusBarAlignment: { Right: 2 },
  EventEmitter: class { event = () => undefined; fire() {} },
  commands: {
    registerCommand: (name: string, fn: Fn) => { commands.set(name, fn); return { dispose() {} }; },
    executeCommand: async () => undefined,
  },
  workspace: {
    getConfiguration: () => ({ get: (k: string, d: unknown) => (k in config ? config[k] : d) }),
    registerTextDocumentContentProvider: () => ({ dispose() {} }),
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
  console.log("all passed (extension smoke test)");
}

main().catch((err) => {
  console.log(`FAIL extension smoke test: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
