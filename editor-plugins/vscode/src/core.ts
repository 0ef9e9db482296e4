// The extension's client logic that does not need VS Code: server command line, command arguments,
// applying LSP TextEdits to a string, summary text. `extension.ts` wires it to VS Code; the node
// test (`test/client.test.ts`) runs it against the real Python server.

export const APPLY_COMMAND = "fastapply.applyEdit";
export const PREVIEW_COMMAND = "fastapply.previewEdit";
export const ENGINES = ["auto", "speculative", "plain", "structural"] as const;

export interface Settings {
  serverCommand: string[];
  engine?: string;
  model?: string;
  remoteServer?: string;
  remoteTokenEnv?: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** The language server's command line from the extension settings. */
export function buildServerCommand(s: Settings): ServerCommand {
  const cmd = (s.serverCommand ?? []).filter((x) => typeof x === "string" && x.length > 0);
  if (cmd.length === 0) {
    throw new Error("fastapply.serverCommand is empty: set it to the fastapply-lsp executable");
  }
  const args = cmd.slice(1);
  if (s.engine) {
    if (!(ENGINES as readonly string[]).includes(s.engine)) {
      throw new Error(`fastapply.engine must be one of ${ENGINES.join(", ")}, not ${JSON.stringify(s.engine)}`);
    }
    args.push("--engine", s.engine);
  }
  const remote = (s.remoteServer ?? "").trim();
  if (remote) {
    if (!/^[^\s:]+:\d+$/.test(remote) && !/^\[[0-9a-fA-F:]+\]:\d+$/.test(remote)) {
      throw new Error(`fastapply.remoteServer must be HOST:PORT, not ${JSON.stringify(remote)}`);
    }
    args.push("--server", remote);
    if (s.remoteTokenEnv) {
      args.push("--token-env", s.remoteTokenEnv);
    }
  } else if (s.model) {
    args.push("--model", s.model);
  }
  return { command: cmd[0], args };
}

export interface ApplyArgument {
  uri: string;
  update: string;
  instruction?: string;
  engine?: string;
}

/** `workspace/executeCommand` arguments for fastapply.applyEdit / previewEdit. */
export function commandArguments(uri: string, update: string, opts: { instruction?: string; engine?: string } = {}):
  ApplyArgument[] {
  if (!update || update.trim() === "") {
    throw new Error("the edit snippet is empty");
  }
  const arg: ApplyArgument = { uri, update };
  if (opts.instruction) arg.instruction = opts.instruction;
  if (opts.engine) arg.engine = opts.engine;
  return [arg];
}

export interface Position {
  line: number;
  character: number;
}

export interface TextEdit {
  range: { start: Position; end: Position };
  newText: string;
}

/** Start offsets of the lines of `text` (LSP line ends: \n, \r\n, \r). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 13 /* \r */) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (ch === 10 /* \n */) {
      starts.push(i + 1);
    }
  }
  return starts;
}

function lineEnd(text: string, starts: number[], line: number): number {
  let end = line + 1 < starts.length ? starts[line + 1] : text.length;
  if (end > starts[line] && text.charCodeAt(end - 1) === 10) end--;
  if (end > starts[line] && text.charCodeAt(end - 1) === 13) end--;
  return end;
}

/** Offset of an LSP position (UTF-16 columns: JavaScript strings are UTF-16). Clamped like editors do. */
export function offsetAt(text: string, pos: Position, starts = lineStarts(text)): number {
  if (pos.line >= starts.length) return text.length;
  if (pos.line < 0) return 0;
  const start = starts[pos.line];
  return Math.min(start + Math.max(0, pos.character), lineEnd(text, starts, pos.line));
}

/** Apply non-overlapping TextEdits whose ranges all refer to `text` (one TextDocumentEdit). */
export function applyTextEdits(text: string, edits: TextEdit[]): string {
  const starts = lineStarts(text);
  const spans = edits
    .map((e, i) => ({ s: offsetAt(text, e.range.start, starts), t: offsetAt(text, e.range.end, starts), e, i }))
    .sort((a, b) => a.s - b.s || a.t - b.t || a.i - b.i);
  let out = "";
  let pos = 0;
  for (const { s, t, e } of spans) {
    if (s < pos) throw new Error("overlapping edits");
    out += text.slice(pos, s) + e.newText;
    pos = t;
  }
  return out + text.slice(pos);
}

export interface ApplySummary {
  uri: string;
  applied: boolean;
  engine: string;
  language?: string | null;
  edits: number;
  linesRemoved: number;
  linesAdded: number;
  changedLines: number;
  outputTokens: number;
  tokensPerSecond: number;
  seconds: number;
  message?: string;
  merged?: string;
  diff?: string;
}

function fileName(uri: string): string {
  const path = decodeURIComponent(uri.replace(/^[a-z]+:\/\//i, ""));
  return path.split("/").pop() || uri;
}

/** One line for a notification / the status bar tooltip. */
export function formatSummary(s: ApplySummary): string {
  const name = fileName(s.uri);
  if (s.edits === 0) return `Fast Apply: ${name} unchanged (${s.engine})`;
  const speed = s.outputTokens > 0 ? `, ${Math.round(s.tokensPerSecond)} tok/s` : "";
  const verb = s.applied ? "applied to" : "preview of";
  return `Fast Apply ${verb} ${name}: ${s.edits} edit${s.edits === 1 ? "" : "s"}, ` +
    `-${s.linesRemoved}/+${s.linesAdded} lines, ${s.engine}${speed}, ${s.seconds.toFixed(2)}s`;
}

/** The status bar item's text: the last tokens/s (model engines) or the engine name. */
export function statusText(s: ApplySummary | undefined): string {
  if (!s) return "$(zap) Fast Apply";
  if (s.outputTokens > 0) return `$(zap) ${Math.round(s.tokensPerSecond)} tok/s`;
  return `$(zap) ${s.engine}`;
}

/** The message of an error from sendRequest (a JSON-RPC ResponseError) or anything else. */
export function errorMessage(err: unknown): string {
  if (err && typeof err === "object" && "message" in err) {
    return String((err as { message: unknown }).message);
  }
  return String(err);
}

/** A JSON-RPC error response from the server (which has already shown it with window/showMessage). */
export function isServerError(err: unknown): boolean {
  return !!err && typeof err === "object" && typeof (err as { code?: unknown }).code === "number";
}

/** JSON-RPC error codes the server uses. */
export const ErrorCodes = {
  InvalidParams: -32602,
  RequestCancelled: -32800,
  ContentModified: -32801,
  RequestFailed: -32803,
} as const;
