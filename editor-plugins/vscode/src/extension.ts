// VS Code side of Fast Apply: starts fastapply-lsp (vscode-languageclient), registers the commands,
// shows the last apply in the status bar. The server sends the edit itself (workspace/applyEdit),
// which the language client applies as minimal TextEdits; progress and its cancel button come from
// the server's work-done progress. A refused apply that offers readings becomes a quick pick: each
// reading previewed as a diff of the document against it, the chosen one applied by the server
// (fastapply.applyReading: a versioned edit, refused if the document changed meanwhile).

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

function showSummary(summary: core.ApplySummary): void {
  status.text = core.statusText(summary);
  status.tooltip = core.formatSummary(summary);
  vscode.window.setStatusBarMessage(summary.message ?? core.formatSummary(summary), 5000);
}

function reportFailure(what: string, err: unknown): void {
  // The server has already shown the reason (window/showMessage); keep a copy in the log.
  output.appendLine(`${what} failed: ${core.errorMessage(err)}`);
  if (!core.isServerError(err)) vscode.window.showErrorMessage(`Fast Apply: ${core.errorMessage(err)}`);
}

async function applyTo(doc: vscode.TextDocument, update: string): Promise<void> {
  try {
    showSummary(await execute(core.APPLY_COMMAND, doc, update));
  } catch (err) {
    reportFailure("apply", err);
    const refusal = core.refusalOf(err);
    if (refusal) await chooseReading(doc, refusal);
  }
}

/** The refused apply's readings as a quick pick, each previewed as a diff; the chosen one applied
 * by the server. Escape applies nothing. */
async function chooseReading(doc: vscode.TextDocument, refusal: core.Refusal): Promise<void> {
  let texts: string[];
  try {
    texts = core.readingTexts(refusal, doc.getText());
  } catch (err) { // a diff that no longer fits: the document changed since the refusal
    output.appendLine(`readings not shown: ${core.errorMessage(err)}`);
    vscode.window.showErrorMessage("Fast Apply: the document changed since the readings were computed; " +
      "apply the snippet again");
    return;
  }
  const items = core.readingItems(refusal, doc.getText(), texts);
  const shown = new Set<string>(); // this pick's preview documents
  const picked = await pickWithPreview(doc, refusal.hint, items, texts, shown);
  await closePreviews(shown);
  if (!picked) return;
  try {
    const c = await ensureClient();
    showSummary(await c.sendRequest(ExecuteCommandRequest.type, {
      command: core.APPLY_READING_COMMAND,
      arguments: core.readingArguments(refusal, picked.index),
    }) as core.ApplySummary);
  } catch (err) {
    reportFailure("applying the reading", err);
  }
}

function pickWithPreview(doc: vscode.TextDocument, hint: string, items: core.ReadingItem[], texts: string[],
  shown: Set<string>): Promise<core.ReadingItem | undefined> {
  const qp = vscode.window.createQuickPick<core.ReadingItem>();
  qp.title = `Fast Apply: ${items.length} readings of the snippet; pick one to apply (Escape: none)`;
  qp.placeholder = hint;
  qp.items = items;
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.ignoreFocusOut = true; // the diff preview takes the editor area; the pick stays open
  return new Promise((resolve) => {
    let chosen: core.ReadingItem | undefined;
    qp.onDidChangeActive((active) => {
      const item = active[0];
      if (item) void previewReading(doc, item, texts[items.indexOf(item)], shown);
    });
    qp.onDidAccept(() => {
      chosen = qp.selectedItems[0] ?? qp.activeItems[0];
      qp.hide();
    });
    qp.onDidHide(() => {
      qp.dispose();
      resolve(chosen);
    });
    qp.show();
  });
}

async function previewReading(doc: vscode.TextDocument, item: core.ReadingItem, text: string,
  shown: Set<string>): Promise<void> {
  const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: doc.uri.path,
    query: `reading=${item.index}&at=${Date.now()}` });
  previews.set(uri.toString(), text);
  shown.add(uri.toString());
  previewChanged.fire(uri);
  const name = doc.uri.path.split("/").pop();
  // Beside the document, as one preview tab that the next reading replaces; the document's own tab stays.
  await vscode.commands.executeCommand("vscode.diff", doc.uri, uri, `${name} ↔ reading ${item.index}: ${item.label}`,
    { preview: true, preserveFocus: true, viewColumn: vscode.ViewColumn.Beside });
}

/** Close the diff tabs of one pick's previews and forget their texts. */
async function closePreviews(shown: Set<string>): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputTextDiff && shown.has(t.input.modified.toString()));
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
  for (const key of shown) previews.delete(key);
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
    reportFailure("preview", err);
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
