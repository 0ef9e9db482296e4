// Drives Morph's own clients, unmodified, against a fastapply server:
//   sdk-apply    @morphllm/morphsdk applyEdit({originalCode, codeEdit, instruction}, {morphApiKey, morphApiUrl})
//   sdk-execute  new FastApplyClient({apiKey}).execute({target_filepath, code_edit, instruction}, {morphApiUrl, baseDir})
//                (executeEditFile: reads the file, calls the server, writes the answer)
//   mcp          @morphllm/morphmcp over stdio, its `edit_file` tool called by the MCP SDK's client
//
//   node run.mjs JOBS.json RESULTS.json
// JOBS.json: {url, key, mcpRoot, jobs: [{id, client, update, instruction, original | path, options?, key?}]}
// (a job's `key` replaces the API key; the MCP server reads its key once, so each key gets its own)
// RESULTS.json: {tools: [...MCP tool names], results: [{id, client, ok, error, merged?}], mcpStderr, harnessPid}
// The MCP server runs under no_egress.cjs (NO_EGRESS_LOG is passed on to it).
import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

import { FastApplyClient, applyEdit } from "@morphllm/morphsdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const MCP_SERVER = join(dirname(require.resolve("@morphllm/morphmcp/package.json")), "dist", "index.js");
// The tools that call Morph-only endpoints: fastapply answers edit_file alone.
const DISABLED_TOOLS = "codebase_search,github_codebase_search,reflex_list,reflex_predict,reflex_summary,reflex_traces";

const [jobsFile, resultsFile] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(jobsFile, "utf8"));

async function sdkApply(job) {
  const r = await applyEdit({ originalCode: job.original, codeEdit: job.update, instruction: job.instruction },
                            { morphApiKey: job.key ?? spec.key, morphApiUrl: spec.url, ...job.options });
  return r.success ? { ok: true, merged: r.mergedCode } : { ok: false, error: r.error, errorCode: r.errorCode };
}

async function sdkExecute(job) {
  const client = new FastApplyClient({ apiKey: job.key ?? spec.key });
  const r = await client.execute({ target_filepath: basename(job.path), code_edit: job.update, instruction: job.instruction },
                                 { morphApiUrl: spec.url, baseDir: dirname(job.path), ...job.options });
  return r.success ? { ok: true } : { ok: false, error: r.error, errorCode: r.errorCode };
}

async function startMcp(key) {
  const stderr = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--require", join(here, "no_egress.cjs"), MCP_SERVER, spec.mcpRoot],
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, MORPH_API_KEY: key, MORPH_API_URL: spec.url,
      DISABLED_TOOLS, WORKSPACE_ROOT: spec.mcpRoot, NODE_OPTIONS: `--require ${join(here, "no_egress.cjs")}`,
      ...(process.env.NO_EGRESS_LOG ? { NO_EGRESS_LOG: process.env.NO_EGRESS_LOG } : {}),
    },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d) => stderr.push(String(d)));
  const client = new Client({ name: "fastapply-morph-clients", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr };
}

async function mcpEdit(mcp, job) {
  const r = await mcp.client.callTool({ name: "edit_file",
                                        arguments: { path: job.path, code_edit: job.update, instruction: job.instruction } });
  const text = (r.content ?? []).map((c) => c.text ?? "").join("");
  return r.isError ? { ok: false, error: text } : { ok: true, text };
}

const results = [];
const mcps = new Map();  // API key -> {client, stderr}
let tools = [];
try {
  for (const job of spec.jobs) {
    let out;
    try {
      if (job.client === "sdk-apply") out = await sdkApply(job);
      else if (job.client === "sdk-execute") out = await sdkExecute(job);
      else if (job.client === "mcp") {
        const key = job.key ?? spec.key;
        if (!mcps.has(key)) {
          mcps.set(key, await startMcp(key));
          tools = (await mcps.get(key).client.listTools()).tools.map((t) => t.name);
        }
        out = await mcpEdit(mcps.get(key), job);
      } else throw new Error(`unknown client ${job.client}`);
    } catch (e) {
      out = { ok: false, error: `${e?.name ?? "Error"}: ${e?.message ?? e}` };
    }
    results.push({ id: job.id, client: job.client, ...out });
  }
} finally {
  for (const mcp of mcps.values()) await mcp.client.close();
}
const mcpStderr = [...mcps.values()].map((m) => m.stderr.join("")).join("\n");
writeFileSync(resultsFile, JSON.stringify({ tools, results, mcpStderr, harnessPid: process.pid }));
