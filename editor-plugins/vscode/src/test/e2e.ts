// The readings' quick pick in a real VS Code (code-server's build, driven by a headless browser):
// a second extension that, once the workbench starts, applies a snippet the structural merge
// refuses, walks the quick pick with the workbench's own commands and checks the document.
// tests/test_vscode_real.py packages it with a package.json and starts everything; results go
// to $FASTAPPLY_E2E_OUT as JSON lines ({name, ok, detail}).
//
// FASTAPPLY_E2E_CASE: JSON {path, original, update, readings: [whole files], hows: [...]}.

import * as fs from "fs";
import * as vscode from "vscode";

interface Case {
  path: string;
  original: string;
  update: string;
  readings: string[];
  hows: string[];
}

const PREVIEW_SCHEME = "fastapply-preview";

function report(name: string, ok: boolean, detail = ""): void {
  fs.appendFileSync(process.env.FASTAPPLY_E2E_OUT!, JSON.stringify({ name, ok, detail }) + "\n");
}

async function until<T>(what: string, probe: () => T | undefined | false, ms = 60000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The diff tab previewing a reading, if one is open. */
function previewTab(): vscode.Tab | undefined {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) =>
    t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PREVIEW_SCHEME);
}

async function setText(doc: vscode.TextDocument, text: string): Promise<void> {
  const edit = new vscode.WorkspaceEdit();
  edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
  await vscode.workspace.applyEdit(edit);
}

/** Apply the case's snippet (clipboard) and wait for the readings' quick pick (its first preview);
 * `done` settles when the command ends (after the pick). */
async function refuse(c: Case): Promise<{ done: Thenable<unknown> }> {
  await vscode.env.clipboard.writeText(c.update);
  const done = vscode.commands.executeCommand("fastapply.applyClipboard");
  await until("the first reading's preview", () => previewTab()?.label.includes("reading 1"));
  return { done };
}

async function pick(c: Case, doc: vscode.TextDocument, k: number): Promise<void> {
  await setText(doc, c.original);
  const { done } = await refuse(c);
  for (let i = 2; i <= k; i++) {
    await vscode.commands.executeCommand("workbench.action.quickOpenSelectNext");
    await until(`the preview of reading ${i}`, () => previewTab()?.label.includes(`reading ${i}:`), 10000);
  }
  await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
  await done;
  const want = c.readings[k - 1];
  const got = await until(`reading ${k} in the document`, () => doc.getText() === want, 10000)
    .then(() => true, () => false);
  report(`reading ${k}: the document equals it`, got, got ? "" : doc.getText().slice(0, 400));
  report(`reading ${k}: the preview is closed`, previewTab() === undefined);
}

async function stale(c: Case, doc: vscode.TextDocument): Promise<void> {
  await setText(doc, c.original);
  const { done } = await refuse(c);
  const typed = "# typed while the choice was open\n" + c.original;
  await setText(doc, typed);
  await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
  await done;
  await new Promise((r) => setTimeout(r, 1500)); // an edit, were one sent, would have landed
  const ok = doc.getText() === typed;
  report("stale: nothing applied", ok, ok ? "" : doc.getText().slice(0, 400));
}

async function escape(c: Case, doc: vscode.TextDocument): Promise<void> {
  await setText(doc, c.original);
  const { done } = await refuse(c);
  await vscode.commands.executeCommand("workbench.action.quickOpenSelectNext");
  await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
  await done;
  await new Promise((r) => setTimeout(r, 1000));
  report("escape: nothing applied", doc.getText() === c.original);
  report("escape: the preview is closed", previewTab() === undefined);
}

export async function activate(): Promise<void> {
  try {
    const c: Case = JSON.parse(fs.readFileSync(process.env.FASTAPPLY_E2E_CASE!, "utf8"));
    report("VS Code", true, `${vscode.version} (${vscode.env.appName}, ${vscode.env.appHost})`);
    const doc = await vscode.workspace.openTextDocument(c.path);
    await vscode.window.showTextDocument(doc, { preview: false });
    for (let k = 1; k <= c.readings.length; k++) await pick(c, doc, k);
    await stale(c, doc);
    await escape(c, doc);
  } catch (err) {
    report("no error", false, err instanceof Error ? err.stack ?? err.message : String(err));
  }
  report("done", true);
}
