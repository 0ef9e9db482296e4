// The guard's own test, run with NO_EGRESS_STRICT=1 (loopback refused too): each client library the
// clients use (fetch, http, https, axios, openai) must be stopped at the gate before it connects to
// the loopback server started here, which must see no request. Prints {errors, served} as JSON.
import http from "node:http";
import https from "node:https";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// axios as the MCP server loads it (its error report), openai as the SDK loads it (the apply call)
const modules = join(dirname(fileURLToPath(import.meta.url)), "node_modules");
const require = createRequire(import.meta.url);
const axios = require(require.resolve("axios", { paths: [join(modules, "@morphllm", "morphmcp")] }));
const OpenAI = require(require.resolve("openai", { paths: [join(modules, "@morphllm", "morphsdk")] }));

let served = 0;
const server = http.createServer((req, res) => { served++; res.end("{}"); });
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${server.address().port}`;
const code = (e) => e?.cause?.code ?? e?.code ?? e?.cause?.cause?.code ?? String(e?.message ?? e);
const request = (lib, u) => new Promise((ok, fail) => lib.get(u, ok).on("error", fail));
const tries = {
  fetch: () => fetch(url),
  http: () => request(http, url),
  https: () => request(https, url.replace("http:", "https:")),
  axios: () => axios.post(url, {}),
  openai: () => new (OpenAI.default ?? OpenAI)({ apiKey: "sk-x", baseURL: url, maxRetries: 0 }).models.list(),
};
const errors = {};
for (const [name, fn] of Object.entries(tries)) {
  try { await fn(); errors[name] = "CONNECTED"; } catch (e) { errors[name] = code(e); }
}
server.close();
console.log(JSON.stringify({ errors, served }));
