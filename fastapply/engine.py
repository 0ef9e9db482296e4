"""ModelEngine: a loaded edit model, its spec, and the speculative decode of one request.

The Hugging Face engine (registered as "hf" in `fastapply.backends.MODEL_BACKENDS`). Its two
seams are factories: `backend_factory(model, device)` builds the `Backend` the verify loop drives,
and `drafter_factory(sources, k_max=...)` builds the `Drafter` for each request. An optional draft
model (`load(..., draft_model=NAME)`, `fastapply.model_draft`) extends those drafts where the file
has none (`draft.FileModelDrafter`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from fastapply.backends.base import Backend
from fastapply.backends.hf import HFBackend
from fastapply.backends.scoring import score_continuations
from fastapply.decode import DecodeConfig, decode
from fastapply.draft import DrafterFactory, FileModelDrafter, SourceDrafter
from fastapply.model_draft import DraftModel, check_draft_tokenizer, load_draft_model
from fastapply.models import LoadedModel, ModelSpec, check_model_name, load_model
from fastapply.types import ApplyError, ApplyRequest, Finding, Stats, TextDelta

# The judge scores in bf16 on a CPU whose model runs fp32: about 2.4x faster here, and scoring does
# not promise greedy identity (how often a bf16 pick differs from fp32's: evals/RESULTS.md).
JUDGE_DTYPE_CPU = "bf16"
_TORCH_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}

# Output budget on top of original + update tokens: the merged file can only be longer than the
# original by what the update brings, plus the model's closing tag.
_BUDGET_SLACK = 64


class TokenText:
    """Each token's text, cached; used to spot stop strings without re-decoding the output."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self._cache: dict[int, str] = {}

    def __call__(self, t: int) -> str:
        s = self._cache.get(t)
        if s is None:
            s = self._cache[t] = self.tokenizer.decode([t])
        return s


def make_stop_check(stops: Sequence[str], text: TokenText) -> Callable[[list[int], int], int | None]:
    """A stop rule shared by our decode loop and the benchmark's `generate` baselines.

    Stop right after the first new token whose text completes one of `stops`.
    """
    stops = tuple(s for s in stops if s)
    if not stops:
        return lambda out, n_new: None
    keep = max(len(s) for s in stops) - 1

    def check(out: list[int], n_new: int) -> int | None:
        base = len(out) - n_new
        ctx = "".join(text(t) for t in out[max(0, base - keep):base])[-keep:] if keep else ""
        for i in range(base, len(out)):
            ctx += text(out[i])
            if any(s in ctx for s in stops):
                return i + 1
            ctx = ctx[-keep:] if keep else ""
        return None

    return check


class SpecEngine:
    """What every model engine shares around its decoder: the spec's prompt, the output budget, the
    stop rule, and the verified tokens turned into streamed, extracted text. The vLLM engine
    (`fastapply.backends.vllm`) reuses it, so both engines give the same results."""

    def __init__(self, spec: ModelSpec, tokenizer, eos, max_positions: int):
        self.spec = spec
        self.tokenizer = tokenizer
        self.token_text = TokenText(tokenizer)
        eos = eos or tokenizer.eos_token_id
        self.stop_ids = frozenset(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        self.stop_check = make_stop_check(spec.stop, self.token_text)
        self.max_positions = max_positions

    @property
    def name(self) -> str:
        return self.spec.name

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def prompt_ids(self, req: ApplyRequest) -> list[int]:
        return self.spec.prompt_ids(self.tokenizer, req.original, req.update, req.instruction)

    def answer_ids(self, text: str, end: bool = True) -> list[int]:
        """An answer's tokens as the model writes them (the judge scores these): `text`, then (with
        `end`) the spec's end of answer: its first stop string where the prompt opens a tag or block
        for the answer (`<updated-code>`, `<code>`), else the end-of-turn token."""
        if not end:
            return self.encode(text)
        if self.spec.stop and (self.spec.assistant_prefix or self.spec.format == "completion"):
            return self.encode(text + self.spec.stop[0])
        eos = getattr(self.tokenizer, "eos_token_id", None)
        return self.encode(text) + [eos if eos in self.stop_ids else min(self.stop_ids)]

    def budget(self, req: ApplyRequest, prompt_len: int, encode: Callable[[str], list[int]] | None = None) -> int:
        if req.max_output_tokens:
            want = req.max_output_tokens
        else:
            encode = encode or self.encode
            want = len(encode(req.original)) + len(encode(req.update)) + _BUDGET_SLACK
        if prompt_len + want > self.max_positions:
            raise ApplyError("too_long", f"the file is too long for the model's context: prompt {prompt_len} tokens + "
                                         f"output budget {want} > {self.max_positions}; split the file or use a "
                                         "longer-context model")
        return want

    def finished(self, out: list[int]) -> bool:
        """Did the output end on a stop token or stop string (rather than run out of budget)?"""
        return bool(out) and (out[-1] in self.stop_ids or self.stop_check(out, 1) is not None)

    def text_events(self, chunks: Iterable[list[int]]) -> Iterator[TextDelta | tuple[str, list[Finding]]]:
        """Verified token chunks -> TextDelta events as text is verified, then one (merged, findings)."""
        out: list[int] = []
        sent = ""
        for new in chunks:
            out.extend(new)
            raw = self.tokenizer.decode(out, skip_special_tokens=True)
            # A multi-byte character split across tokens decodes as U+FFFD until it is complete.
            visible = self.spec.extract(raw.rstrip("\ufffd"), final=False)
            if len(visible) > len(sent):
                yield TextDelta(visible[len(sent):])
                sent = visible
        raw = self.tokenizer.decode(out, skip_special_tokens=True)
        merged = self.spec.extract(raw, final=True)
        findings = []
        if not self.finished(out):
            findings.append(Finding("truncated", f"the model did not finish within {len(out)} tokens; "
                                                 "the output is incomplete"))
        if merged[:len(sent)] != sent:  # cannot happen with a prefix-stable extract; guards the stream contract
            findings.append(Finding("stream", "final text does not extend the streamed text"))
        elif len(merged) > len(sent):
            yield TextDelta(merged[len(sent):])
        yield merged, findings


class ModelEngine(SpecEngine):
    # One request at a time: the pipeline serialises callers on the model lock.
    concurrent = False

    def __init__(self, loaded: LoadedModel, backend_factory: Callable[..., Backend] = HFBackend,
                 drafter_factory: DrafterFactory = SourceDrafter, judge_dtype: str | None = None,
                 draft: DraftModel | None = None):
        gc = getattr(loaded.model, "generation_config", None)
        cfg = loaded.model.config.get_text_config()
        super().__init__(loaded.spec, loaded.tokenizer, getattr(gc, "eos_token_id", None),
                         getattr(cfg, "max_position_embeddings", None) or 4096)
        self.loaded = loaded
        self.backend = backend_factory(loaded.model, loaded.device)
        self.drafter_factory = drafter_factory
        self.judge_dtype = judge_dtype or (JUDGE_DTYPE_CPU if loaded.device == "cpu" else loaded.dtype)
        if self.judge_dtype not in _TORCH_DTYPES:
            raise ApplyError("invalid_argument", f"judge_dtype must be one of {', '.join(_TORCH_DTYPES)}, "
                                                 f"not {self.judge_dtype!r}")
        self._judge_backend: Backend | None = None
        self.draft = draft

    @classmethod
    def load(cls, name: str | None = None, device: str | None = None, dtype: str | None = None,
             draft_model: str | None = None, **options) -> ModelEngine:
        """`draft_model`: a small model of the target's family (same tokenizer) that drafts where the
        file cannot; `options`: keyword arguments of the constructor (`backend_factory`, `drafter_factory`, `judge_dtype`)."""
        unknown = sorted(set(options) - {"backend_factory", "drafter_factory", "judge_dtype"})
        if unknown:
            raise ApplyError("invalid_argument", f"the hf backend has no option(s) {', '.join(unknown)}")
        if draft_model:
            check_model_name(draft_model)  # a bad name fails before the target loads
            check_draft_tokenizer(name, draft_model)  # ... and another family's tokenizer, before any weights
        loaded = load_model(name, device=device, dtype=dtype)
        draft = None
        if draft_model:
            draft = load_draft_model(draft_model, loaded, options.get("backend_factory", HFBackend))
        return cls(loaded, draft=draft, **options)

    def decode_tokens(self, req: ApplyRequest, draft_texts: Sequence[tuple[str, str]] | None,
                      should_stop: Callable[[], bool] | None, stats: Stats,
                      k_max: int = 128, backend: Backend | None = None) -> Iterator[list[int]]:
        """Yield verified output tokens in chunks. `draft_texts=None` decodes plainly; otherwise the
        texts (first = primary) are the draft sources. `backend`: another copy of the model (the
        judge's dtype) to decode with."""
        # The original and the update are both draft sources and budget inputs: tokenize each once.
        cache: dict[str, list[int]] = {}

        def encode(text: str) -> list[int]:
            if text not in cache:
                cache[text] = self.encode(text)
            return cache[text]

        ids = self.prompt_ids(req)
        max_new = self.budget(req, len(ids), encode)
        drafter = None
        if draft_texts is not None:
            drafter = self.drafter_factory([(name, encode(text)) for name, text in draft_texts], k_max=k_max)
            if self.draft is not None:
                drafter = FileModelDrafter(drafter, self.draft.drafter(ids, k_max, stats))
        s = req.sampling
        cfg = DecodeConfig(max_new_tokens=max_new, temperature=s.temperature, top_p=s.top_p, seed=s.seed)
        try:
            yield from decode(backend or self.backend, ids, drafter, cfg, self.stop_ids, self.stop_check, should_stop,
                              stats)
        finally:
            if self.draft is not None:
                self.draft.backend.release()

    def generate(self, req: ApplyRequest, draft_texts: Sequence[tuple[str, str]] | None,
                 should_stop: Callable[[], bool] | None, stats: Stats,
                 k_max: int = 128) -> Iterator[TextDelta | tuple[str, list[Finding]]]:
        """Yield TextDelta events as text is verified, then one (merged, findings) tuple."""
        yield from self.text_events(self.decode_tokens(req, draft_texts, should_stop, stats, k_max))

    def confirm(self, req: ApplyRequest, draft_texts: Sequence[tuple[str, str]], should_stop: Callable[[], bool] | None,
                stats: Stats, k_max: int = 128) -> Iterator[TextDelta | tuple[str, list[Finding]]]:
        """`generate` where the file must be one of the merge's readings (`auto`): an act of judging,
        decoded in `judge_dtype` like the judge's scores (bf16 on a CPU: such requests took 1.4x less
        time here; evals/RESULTS.md). Greedy output is the model's in that dtype."""
        yield from self.text_events(self.decode_tokens(req, draft_texts, should_stop, stats, k_max,
                                                       backend=self.judge_backend()))

    def score(self, prompt_ids: list[int], answers: list[list[int]],
              should_stop: Callable[[], bool] | None = None) -> list[float]:
        """Each answer's sum of token log-probabilities after the prompt (the judge's `Scorer`),
        in `judge_dtype`: a second copy of the weights in that dtype when it is not the model's.
        Stops within one forward pass of `should_stop()` (ApplyError 'cancelled')."""
        return score_continuations(self.judge_backend(), prompt_ids, answers, should_stop=should_stop)

    def judge_backend(self) -> Backend:
        if self._judge_backend is None:
            if self.judge_dtype == self.loaded.dtype:
                self._judge_backend = self.backend
            else:
                import copy

                import torch

                model = copy.deepcopy(self.loaded.model).to(getattr(torch, _TORCH_DTYPES[self.judge_dtype]))
                self._judge_backend = HFBackend(model, self.loaded.device)
        return self._judge_backend
