// VS Code side of Fast Apply: starts fastapply-lsp (vscode-languageclient), registers the commands,
// shows the last apply in the status bar. The server sends the edit itself (workspace/applyEdit),
// which the language client applies as minimal TextEdits; progress and its cancel button come from
// the server's work-done progress.

import * as vscode from "vscode";
import { ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import * as core from "./core";

let client: LanguageClient | undefined;
let starting: Promise<LanguageClient> | undefined;
let status: vscode.StatusBarItem;
let output: vscode.OutputChannel;

const PREVIEW_SCHEME = "fastapply-preview";
const previews = new Map<string, string>();
const previewChanged = new vscode.EventEmitter<vscode.Uri>();

function settings(): core.Settings {
  const c = vscode.workspace.getConfiguration("fastapply");
  return {
    serverCommand: c.get<string[]>("serverCommand", ["fastapply-lsp"]),
    engine: c.get<string>("engine", "auto"),
    model: c.get<string>("model", ""),
    remoteServer: c.get<string>("remoteServer", ""),
    remoteTokenEnv: c.get<string>("remoteTokenEnv", "FASTAPPLY_TOKEN"),
  };
}

async function ensureClient(): Promise<LanguageClient> {
  if (client) return client;
  if (!starting) {
    starting = (async () => {
      const { command, args } = core.buildServerCommand(settings());
      const serverOptions: ServerOptions = { command, args, options: { env: process.env } };
      const clientOptions: LanguageClientOptions = {
        documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
        outputChannel: output,
      };
      const c = new LanguageClient("fastapply", "Fast Apply", serverOptions, clientOptions);
      await c.start();
      client = c;
      return c;
    })().finally(() => {
      starting = undefined;
    });
  }
  return starting;
}

async function restartClient(): Promise<void> {
  const old = client;
  client = undefined;
  if (old) await old.stop();
}

async function execute(command: string, doc: vscode.TextDocument, update: string): Promise<core.ApplySummary> {
  const c = await ensureClient();
  return c.sendRequest(ExecuteCommandRequest.type, {
    command,
    arguments: core.commandArguments(c.code2ProtocolConverter.asUri(doc.uri), update),
  }) as Promise<core.ApplySummary>;
}

async function applyTo(doc: vscode.TextDocument, update: string): Promise<void> {
  try {
    const summary = await execute(core.APPLY_COMMAND, doc, update);
    status.text = core.statusText(summary);
    status.tooltip = core.formatSummary(summary);
    vscode.window.setStatusBarMessage(core.formatSummary(summary), 5000);
  } catch (err) {
    // The server has already shown the reason (window/showMessage); keep a copy in the log.
    output.appendLine(`apply failed: ${core.errorMessage(err)}`);
    if (!core.isServerError(err)) vscode.window.showErrorMessage(`Fast Apply: ${core.errorMessage(err)}`);
  }
}

async function applyClipboard(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    vscode.window.showErrorMessage("Fast Apply: open the file to edit first");
    return;
  }
  const update = await vscode.env.clipboard.readText();
  if (!update.trim()) {
    vscode.window.showErrorMessage("Fast Apply: the clipboard is empty");
    return;
  }
  await applyTo(editor.document, update);
}

async function applySelection(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const update = editor ? editor.document.getText(editor.selection) : "";
  if (!editor || !update.trim()) {
    vscode.window.showErrorMessage("Fast Apply: select the edit snippet first");
    return;
  }
  const visible = new Set(vscode.window.visibleTextEditors.map((e) => e.document.uri.toString()));
  const candidates = vscode.workspace.textDocuments
    .filter((d) => d !== editor.document && (d.uri.scheme === "file" || d.uri.scheme === "untitled"))
    .sort((a, b) => Number(visible.has(b.uri.toString())) - Number(visible.has(a.uri.toString())));
  const pick = await vscode.window.showQuickPick(
    candidates.map((d) => ({ label: vscode.workspace.asRelativePath(d.uri), description: d.languageId, doc: d })),
    { placeHolder: "Apply the selection to which file?" },
  );
  if (pick) await applyTo(pick.doc, update);
}

async function preview(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    vscode.window.showErrorMessage("Fast Apply: open the file to edit first");
    return;
  }
  const selected = editor.document.getText(editor.selection);
  const update = selected.trim() ? selected : await vscode.env.clipboard.readText();
  try {
    const result = await execute(core.PREVIEW_COMMAND, editor.document, update);
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: editor.document.uri.path,
      query: String(Date.now()) });
    previews.set(uri.toString(), result.merged ?? "");
    previewChanged.fire(uri);
    const name = editor.document.uri.path.split("/").pop();
    await vscode.commands.executeCommand("vscode.diff", editor.document.uri, uri,
      `${name} ↔ Fast Apply preview (${result.edits} edits)`);
  } catch (err) {
    output.appendLine(`preview failed: ${core.errorMessage(err)}`);
    if (!core.isServerError(err)) vscode.window.showErrorMessage(`Fast Apply: ${core.errorMessage(err)}`);
  }
}

export function activate(context: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel("Fast Apply");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.text = core.statusText(undefined);
  status.tooltip = "Fast Apply: apply the clipboard to this file";
  status.command = "fastapply.applyClipboard";
  status.show();
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand("fastapply.applyClipboard", applyClipboard),
    vscode.commands.registerCommand("fastapply.applySelection", applySelection),
    vscode.commands.registerCommand("fastapply.preview", preview),
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, {
      onDidChange: previewChanged.event,
      provideTextDocumentContent: (uri) => previews.get(uri.toString()) ?? "",
    }),
    vscode.workspace.onDidCloseTextDocument((d) => {
      if (d.uri.scheme === PREVIEW_SCHEME) previews.delete(d.uri.toString());
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("fastapply")) void restartClient();
    }),
  );
}

export async function deactivate(): Promise<void> {
  await restartClient();
}
