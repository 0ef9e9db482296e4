"""Model backends: the narrow `base.Backend` the decode loop drives, and the registry of model engines.

A model engine serves `generate(req, draft_texts, should_stop, stats)` for the pipeline (see
`fastapply.engine.ModelEngine`, the Hugging Face loop). Engines are chosen by name through
`MODEL_BACKENDS`, a dotted-path registry ("module:Class"), so a new one (vLLM, say) is one entry
and its module is imported only when it is used. An engine class has:

    class MyEngine:
        concurrent: bool = False  # True: it batches concurrent requests itself (no model lock)

        @classmethod
        def load(cls, name, device, dtype, **options) -> MyEngine: ...

        def generate(self, req, draft_texts, should_stop, stats):
            # yields TextDelta events, then one (merged, findings) tuple
"""

from __future__ import annotations

import importlib
import threading

from fastapply import extras
from fastapply.types import ApplyError

# Held while the model stack (torch, transformers, a backend module, weights) is imported or loaded.
# transformers' lazy modules import each other in cycles: two threads importing it at once can
# deadlock, which Python breaks by handing one of them a half-imported module ("cannot import name
# 'DynamicCache' from 'transformers'"). Whoever loads from it (the engine here, the HTTP front-end's
# tokenizer for usage counts) takes this lock, so one thread at a time does.
LOAD_LOCK = threading.RLock()

MODEL_BACKENDS: dict[str, str] = {
    "hf": "fastapply.engine:ModelEngine",
    "vllm": "fastapply.backends.vllm:VLLMEngine",
}
# The extra (fastapply.extras) a backend needs, checked before its module is imported: without it a
# request gets one line naming what to install.
BACKEND_EXTRAS: dict[str, str] = {"hf": "model", "vllm": "vllm"}


def engine_class(backend: str) -> type:
    """The engine class registered as `backend`; each failure names what to fix."""
    path = MODEL_BACKENDS.get(backend)
    if path is None:
        raise ApplyError("invalid_argument", f"unknown model backend {backend!r}; use one of "
                                             f"{', '.join(sorted(MODEL_BACKENDS))}")
    module_name, _, attr = path.partition(":")
    if not attr:
        raise ApplyError("internal", f"MODEL_BACKENDS[{backend!r}] = {path!r} is not 'module:Class'")
    extras.require(BACKEND_EXTRAS.get(backend))
    try:
        with LOAD_LOCK:
            module = importlib.import_module(module_name)
    except ImportError as e:
        raise extras.from_import_error(e) or ApplyError(
            "unavailable", f"model backend {backend!r} cannot be imported ({module_name}: {e})") from None
    cls = getattr(module, attr, None)
    if cls is None or not callable(getattr(cls, "load", None)):
        raise ApplyError("internal", f"MODEL_BACKENDS[{backend!r}]: {path} has no class with a `load` method")
    return cls


def load_engine(backend: str, name: str | None, device: str | None = None, dtype: str | None = None, **options):
    """Load model `name` (spec name, HF directory or .gguf) with the engine registered as `backend`.
    A module of an extra that loading imports late (peft, for a spec with an adapter) and finds
    missing is the same one line as a missing extra up front."""
    with LOAD_LOCK:
        cls = engine_class(backend)
        try:
            return cls.load(name, device=device, dtype=dtype, **options)
        except ImportError as e:
            missing = extras.from_import_error(e)
            if missing is None:
                raise
            raise missing from None
