// Drives Relace's SDK and Continue's OpenAI adapters, unmodified, against a fastapply server:
//   relace           @relace-ai/relace: new Relace() (RELACE_BASE_URL, RELACE_API_KEY from the environment),
//                    client.post("/code/apply", {body}) (the SDK has no apply method of its own), with
//                    {stream: true} for a stream of {data} events
//   continue-openai  @continuedev/openai-adapters' provider `openai` as Continue's apply step calls it:
//                    chatCompletionStream({model, messages: [the rendered apply prompt], stream: true,
//                    max_tokens: 4096}) (the adapter adds stream_options.include_usage)
//   continue-relace  its provider `relace` as Continue's core calls it: the snippet as the user message,
//                    `prediction: undefined` (so initialCode ""), unless the job gives a prediction
//   continue-default Continue's default apply prompt (any model without an apply template of its own:
//                    core/llm/templates/edit/gpt.ts `defaultApplyPrompt` at continuedev/continue d0a3c0b) through
//                    the adapter's chatCompletionStream: the user message with the ORIGINAL CODE and SUGGESTED
//                    EDIT fences, then the assistant message "```\n" (a prefill), model named as a user would
//   continue-template  a string apply template (promptTemplates.apply) rendered by Handlebars as Continue's
//                    renderPromptTemplate does, through the adapter's completionStream (`POST /v1/completions`,
//                    where Continue's `openai` and `lmstudio` providers send a string prompt); `template`:
//                    "morph" (Morph's documented template) or "aixapply" (aiXapply's style, its file asked bare)
//   ollama-generate  the Ollama JavaScript library's generate({raw: true, stream: true}) with the rendered
//                    template, the body Continue's `ollama` provider sends to `POST /api/generate`
//
//   node --require ../morph_clients/no_egress.cjs run.mjs JOBS.json RESULTS.json
// JOBS.json: {url, key, metricsUrl?, jobs: [{id, client, original?, update, instruction?, stream?, key?,
//             model?, prediction?, abort?: "first-chunk" | "in-flight", trace?}]}
//   abort "first-chunk": the client leaves its stream after the first piece of text (Relace's SDK: a
//   `break`, on which the SDK aborts the request; Continue's: the signal it was given); "in-flight":
//   it aborts its request (the signal) once the server counts it in flight (metricsUrl).
//   trace: the job runs with Continue's own request trace on (VERBOSE_FETCH, @continuedev/fetch),
//   whose lines come back as `trace`: the exact request a Continue adapter sent.
// RESULTS.json: {results: [{id, client, ok, merged?, usage?, chunks, aborted?, trace?, error?: {name,
//               status, message, body}}], harnessPid}
import { readFileSync, writeFileSync } from "node:fs";

import Relace from "@relace-ai/relace";
import { constructLlmApi } from "@continuedev/openai-adapters";
import Handlebars from "handlebars";
import { Ollama } from "ollama";

const [jobsFile, resultsFile] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(jobsFile, "utf8"));
const IN_FLIGHT_POLL_MS = 20;
const IN_FLIGHT_WAIT_MS = 60_000;

// Continue's apply prompt as fastapply's docs configure it (promptTemplates.apply), rendered with the
// whole document as original_code and the chat's code block as new_code (core/edit/streamDiffLines.ts).
const applyPrompt = (original, update) => `<code>${original}</code>\n<update>${update}</update>`;

// Continue's default apply prompt (gpt.ts defaultApplyPrompt). Continue writes it with its own `dedent`
// tag, which indents each interpolated value's lines to the template's indentation and then removes
// that indentation from every line: the file and the snippet come out exactly as given.
const defaultApplyPrompt = (original, update) => [
  { role: "user", content: "ORIGINAL CODE:\n```\n" + original + "\n```\n\nSUGGESTED EDIT:\n```\n" + update
    + "\n```\n\nApply the SUGGESTED EDIT to the ORIGINAL CODE. Output the complete modified file.\n"
    + "- Output ONLY code. Do NOT explain, summarize, or describe changes.\n"
    + "- Leave existing comments in place unless changes require modifying them.\n"
    + "- Preserve all unchanged code exactly as-is." },
  { role: "assistant", content: "```\n" },
];

// String apply templates as users write them in promptTemplates.apply (Handlebars, triple braces: raw).
const TEMPLATES = {
  morph: "<code>{{{ original_code }}}</code>\n<update>{{{ new_code }}}</update>",  // Continue's Morph docs
  aixapply: "You apply a partial Update Snippet to the Source File and output the FULL resulting file.\n"
    + "Do not wrap the result in markdown fences. Do not include XML tags or any explanation.\n\n### Task\n"
    + "<source_file>{{{original_code}}}</source_file>\n\n<update_snippet>{{{new_code}}}</update_snippet>\n\n"
    + "Please generate the full updated code strictly following the instructions.\n",
};
const rendered = (job) => Handlebars.compile(TEMPLATES[job.template])({ original_code: job.original, new_code: job.update });

async function inFlight() {
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  while (Date.now() < deadline) {
    const text = await (await fetch(spec.metricsUrl)).text();
    const m = text.match(/^fastapply_inflight_requests (\S+)$/m);
    if (m && Number(m[1]) >= 1) return;
    await new Promise((ok) => setTimeout(ok, IN_FLIGHT_POLL_MS));
  }
  throw new Error("the server never counted the request in flight");
}

function abortWhenInFlight(job, controller) {
  if (job.abort === "in-flight") inFlight().then(() => controller.abort(), () => controller.abort());
}

function errorOf(e) {
  return { name: e?.constructor?.name ?? e?.name ?? "Error", status: e?.status ?? e?.status_code, message: String(e?.message ?? e),
           body: e?.error };
}

async function relace(job) {
  const client = new Relace(job.key ? { apiKey: job.key } : {});
  const body = { initialCode: job.original, editSnippet: job.update, instruction: job.instruction,
                 model: job.model, stream: Boolean(job.stream) };
  const controller = new AbortController();
  abortWhenInFlight(job, controller);
  if (!job.stream) {
    const r = await client.post("/code/apply", { body, signal: controller.signal });
    return { ok: true, merged: r.mergedCode, usage: r.usage, chunks: 0 };
  }
  const stream = await client.post("/code/apply", { body, stream: true, signal: controller.signal });
  let merged = "", usage, chunks = 0, error;
  for await (const event of stream) {
    const data = event.data;
    if (typeof data.chunk === "string") {
      merged += data.chunk;
      chunks++;
      if (job.abort === "first-chunk") return { ok: false, aborted: true, merged, chunks };  // a break: the SDK aborts
    }
    if (data.usage) usage = data.usage;
    if (data.error) error = data.error;
  }
  if (controller.signal.aborted) return { ok: false, aborted: true, merged, chunks };
  return error ? { ok: false, error: { name: "StreamError", message: error.message, body: error }, chunks }
               : { ok: true, merged, usage, chunks };
}

async function continueStream(api, body, job) {
  const controller = new AbortController();
  abortWhenInFlight(job, controller);
  let merged = "", usage, chunks = 0;
  for await (const chunk of api.chatCompletionStream(body, controller.signal)) {
    const text = chunk.choices?.[0]?.delta?.content;
    if (typeof text === "string" && text) {
      merged += text;
      chunks++;
      if (job.abort === "first-chunk") {
        controller.abort();
        return { ok: false, aborted: true, merged, chunks };
      }
    }
    if (chunk.usage) usage = chunk.usage;
  }
  if (controller.signal.aborted) return { ok: false, aborted: true, merged, chunks };
  return { ok: true, merged, usage, chunks };
}

async function continueOpenai(job) {
  const api = constructLlmApi({ provider: "openai", apiBase: `${spec.url}/v1/`, apiKey: job.key ?? spec.key });
  return continueStream(api, {
    model: job.model ?? "fastapply-auto", max_tokens: 4096, stream: true,
    messages: [{ role: "user", content: applyPrompt(job.original, job.update) }],
  }, job);
}

async function continueRelace(job) {
  const api = constructLlmApi({ provider: "relace", apiBase: `${spec.url}/v1/`, apiKey: job.key ?? spec.key });
  const prediction = job.prediction === undefined ? undefined : { type: "content", content: job.prediction };
  return continueStream(api, { model: job.model ?? "Fast-Apply", max_tokens: 4096, stream: true, prediction,
                               messages: [{ role: "user", content: job.update }] }, job);
}

async function continueDefault(job) {
  const api = constructLlmApi({ provider: "openai", apiBase: `${spec.url}/v1/`, apiKey: job.key ?? spec.key });
  return continueStream(api, { model: job.model ?? "qwen2.5-coder:1.5b", max_tokens: 4096, stream: true,
                               messages: defaultApplyPrompt(job.original, job.update) }, job);
}

async function continueTemplate(job) {
  const api = constructLlmApi({ provider: "openai", apiBase: `${spec.url}/v1/`, apiKey: job.key ?? spec.key });
  const controller = new AbortController();
  let merged = "", usage, chunks = 0;
  for await (const chunk of api.completionStream({ model: job.model ?? "fastapply-1.5b", prompt: rendered(job),
                                                   max_tokens: 4096, stream: true }, controller.signal)) {
    const text = chunk.choices?.[0]?.text;
    if (typeof text === "string" && text) {
      merged += text;
      chunks++;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  return { ok: true, merged, usage, chunks };
}

async function ollamaGenerate(job) {
  const client = new Ollama({ host: spec.url, headers: { Authorization: `Bearer ${job.key ?? spec.key}` } });
  const stream = await client.generate({ model: job.model ?? "codellama:7b", prompt: rendered(job), raw: true,
                                         stream: true, keep_alive: 1800, options: { num_predict: 4096 } });
  let merged = "", chunks = 0, last;
  for await (const part of stream) {
    if (part.response) {
      merged += part.response;
      chunks++;
    }
    last = part;
  }
  return { ok: true, merged, chunks, usage: { prompt_tokens: last?.prompt_eval_count, completion_tokens: last?.eval_count },
           doneReason: last?.done_reason };
}

async function traced(job, run) {
  if (!job.trace) return run();
  const trace = [];
  const log = console.log;
  process.env.VERBOSE_FETCH = "1";
  console.log = (...args) => trace.push(args.join(" "));
  try {
    return { ...(await run()), trace };
  } catch (e) {
    e.trace = trace;
    throw e;
  } finally {
    console.log = log;
    delete process.env.VERBOSE_FETCH;
  }
}

const CLIENTS = { relace, "continue-openai": continueOpenai, "continue-relace": continueRelace,
                  "continue-default": continueDefault, "continue-template": continueTemplate,
                  "ollama-generate": ollamaGenerate };
const results = [];
for (const job of spec.jobs) {
  let out;
  try {
    out = await traced(job, () => CLIENTS[job.client](job));
  } catch (e) {
    const aborted = e?.name === "AbortError" || e?.constructor?.name === "APIUserAbortError";
    out = { ok: false, aborted, error: errorOf(e), trace: e?.trace };
  }
  results.push({ id: job.id, client: job.client, ...out });
}
writeFileSync(resultsFile, JSON.stringify({ results, harnessPid: process.pid }));
