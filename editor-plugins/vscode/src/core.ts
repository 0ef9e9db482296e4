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

// -- a refusal's readings: a choice for the user ------------------------------------------------

export const APPLY_READING_COMMAND = "fastapply.applyReading";

/** One reading of a refused apply (`data.readings[i]` of the server's error; see fastapply/refusal.py). */
export interface ReadingView {
  index: number; // 1-based, best first
  how: string;
  original_lines: [number, number];
  reading_lines: [number, number];
  diff: string; // unified diff: the document the merge read -> this reading
  text: string | null; // the whole file; null where the server left it out for size
}

/** A refused apply's error data, when it offers readings. */
export interface Refusal {
  uri: string;
  version: number; // the document version the merge read
  hint: string; // one line: what to resend
  reasons: string[];
  readings: ReadingView[];
  texts_omitted: boolean;
}

/** The refusal a server error carries, when it offers readings to choose from; else undefined. */
export function refusalOf(err: unknown): Refusal | undefined {
  const data = err && typeof err === "object" ? (err as { data?: unknown }).data : undefined;
  if (!data || typeof data !== "object") return undefined;
  const r = data as Partial<Refusal>;
  if (!Array.isArray(r.readings) || r.readings.length === 0 || typeof r.uri !== "string" ||
    typeof r.version !== "number") {
    return undefined;
  }
  return { uri: r.uri, version: r.version, hint: typeof r.hint === "string" ? r.hint : "",
    reasons: Array.isArray(r.reasons) ? r.reasons : [], readings: r.readings, texts_omitted: !!r.texts_omitted };
}

// Python's str.splitlines (what the server's difflib split on), keeping the line ends.
const PY_LINE = /[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])|[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+$/;
const PY_LINES = new RegExp(PY_LINE.source, "g");
const PY_LINE_AT = new RegExp(PY_LINE.source, "y");

export function pyLines(text: string): string[] {
  return text.match(PY_LINES) ?? [];
}

/** The line (split like Python's splitlines, with its end) that starts at `pos` of `text`. */
function pyLineAt(text: string, pos: number): string {
  PY_LINE_AT.lastIndex = pos;
  return PY_LINE_AT.exec(text)?.[0] ?? "";
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n/;

/** `text` patched by a unified diff as the server's difflib writes it (lines split like Python's
 * splitlines; a last line with no line end runs into the next diff line). Throws if it does not fit. */
export function applyUnifiedDiff(text: string, diff: string): string {
  const old = pyLines(text);
  const out: string[] = [];
  let pos = diff.indexOf("\n", diff.indexOf("\n") + 1) + 1; // past "--- original\n+++ reading k\n"
  let at = 0; // next old line to copy
  while (pos < diff.length) {
    const m = HUNK.exec(diff.slice(pos, pos + 200));
    if (!m) throw new Error(`the diff does not fit the document (no hunk at offset ${pos})`);
    pos += m[0].length;
    const oldLen = m[2] === undefined ? 1 : Number(m[2]);
    const newLen = m[4] === undefined ? 1 : Number(m[4]);
    const start = oldLen === 0 ? Number(m[1]) : Number(m[1]) - 1;
    out.push(...old.slice(at, start));
    at = start;
    let oldLeft = oldLen;
    let newLeft = newLen;
    while (oldLeft > 0 || newLeft > 0) {
      const tag = diff[pos];
      if (tag === " " || tag === "-") {
        const line = old[at];
        if (line === undefined || !diff.startsWith(line, pos + 1)) {
          throw new Error(`the diff does not fit the document at line ${at + 1}`);
        }
        if (tag === " ") out.push(line);
        pos += 1 + line.length;
        at++;
        oldLeft--;
        if (tag === " ") newLeft--;
      } else if (tag === "+") {
        const line = pyLineAt(diff, pos + 1);
        out.push(line);
        pos += 1 + line.length;
        newLeft--;
      } else {
        throw new Error(`the diff does not fit the document (unexpected ${JSON.stringify(tag)} at offset ${pos})`);
      }
    }
  }
  out.push(...old.slice(at));
  return out.join("");
}

/** A reading's whole file: its text, or the document patched by its diff where the text was left out. */
export function readingText(r: ReadingView, documentText: string): string {
  return r.text ?? applyUnifiedDiff(documentText, r.diff);
}

/** The first line (1-based) where `text` differs from `base`, and its next lines there (trimmed, non-blank). */
export function firstDifference(base: string, text: string, n = 2): { line: number; lines: string[] } {
  const a = pyLines(base);
  const b = pyLines(text);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const lines = b.slice(i).map((x) => x.trim()).filter((x) => x.length > 0).slice(0, n);
  return { line: i + 1, lines };
}

export interface ReadingItem {
  label: string;
  description: string;
  detail: string;
  index: number; // the reading's 1-based index
}

/** Every reading's whole file (see `readingText`), in the refusal's order. */
export function readingTexts(refusal: Refusal, documentText: string): string[] {
  return refusal.readings.map((r) => readingText(r, documentText));
}

/** Quick pick items: each reading's `how`, and where it first differs: from the document (the
 * best reading) or from the best reading (the others), so that the items tell the readings apart. */
export function readingItems(refusal: Refusal, documentText: string,
  texts = readingTexts(refusal, documentText)): ReadingItem[] {
  return refusal.readings.map((r, i) => {
    const d = firstDifference(i === 0 ? documentText : texts[0], texts[i]);
    const what = d.lines.length > 0 ? d.lines.join(" ⏎ ") : "(the file ends here)";
    return {
      label: r.how,
      description: i === 0 ? `reading ${r.index}, the merge's first` : `reading ${r.index}`,
      detail: `${i === 0 ? "differs from the document" : "differs from reading 1"} at line ${d.line}: ${what}`,
      index: r.index,
    };
  });
}

export interface ReadingArgument {
  uri: string;
  version: number;
  reading: number;
  text?: string;
}

/** `workspace/executeCommand` arguments for fastapply.applyReading: the refusal's document version
 * (the server's stale guard) and the reading's index, with its text where the client holds it. */
export function readingArguments(refusal: Refusal, index: number): ReadingArgument[] {
  const r = refusal.readings.find((x) => x.index === index);
  if (!r) throw new Error(`the refusal has no reading ${index}`);
  const arg: ReadingArgument = { uri: refusal.uri, version: refusal.version, reading: index };
  if (r.text !== null) arg.text = r.text;
  return [arg];
}
