// The guard's own test for this harness, run with NO_EGRESS_STRICT=1 (loopback refused too): each
// client library here (Relace's SDK over fetch, Continue's adapters over @continuedev/fetch and the
// openai SDK, the Ollama library over fetch) must be stopped at the gate before it connects to the
// loopback server started here, which must see no request. Prints {errors, served} as JSON.
import http from "node:http";

import Relace from "@relace-ai/relace";
import { constructLlmApi } from "@continuedev/openai-adapters";
import { Ollama } from "ollama";

let served = 0;
const server = http.createServer((req, res) => { served++; res.end("{}"); });
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${server.address().port}`;
const code = (e) => e?.cause?.code ?? e?.code ?? e?.cause?.cause?.code ?? e?.errno ?? String(e?.message ?? e);
const drain = async (stream) => { for await (const _ of stream) { /* nothing */ } };
const body = { model: "m", messages: [{ role: "user", content: "<code>a</code><update>b</update>" }], stream: true };
const tries = {
  relace: () => new Relace({ apiKey: "k", baseURL: `${url}/v1`, maxRetries: 0 }).post("/code/apply", { body: {} }),
  "continue-openai": () => drain(constructLlmApi({ provider: "openai", apiBase: `${url}/v1/`, apiKey: "k" })
    .chatCompletionStream(body, new AbortController().signal)),
  "continue-relace": () => drain(constructLlmApi({ provider: "relace", apiBase: `${url}/v1/`, apiKey: "k" })
    .chatCompletionStream(body, new AbortController().signal)),
  "continue-completions": () => drain(constructLlmApi({ provider: "openai", apiBase: `${url}/v1/`, apiKey: "k" })
    .completionStream({ model: "m", prompt: "p", stream: true }, new AbortController().signal)),
  ollama: async () => drain(await new Ollama({ host: url }).generate({ model: "m", prompt: "p", raw: true, stream: true })),
};
const errors = {};
for (const [name, fn] of Object.entries(tries)) {
  try { await fn(); errors[name] = "CONNECTED"; } catch (e) { errors[name] = code(e); }
}
server.close();
console.log(JSON.stringify({ errors, served }));
