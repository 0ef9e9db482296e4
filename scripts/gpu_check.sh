#!/usr/bin/env bash
# The device check (issue 29): the hardware side of the speedup formula on a lent GPU machine, in one
# command, with no network. That machine has Python 3.12, torch (CUDA), transformers, accelerate,
# safetensors and grpcio, but no tree-sitter, vLLM, gguf or our weights; what it needs travels with
# the tree: the tree-sitter wheel in .whl/ (fastapply.languages imports it; nothing is parsed here)
# and the acceptance patterns measured on CPU (evals/results/draft_model/*.json).
#
#   bash scripts/gpu_check.sh            # OUT (default /tmp), PATTERNS, CONFIG, DRAFT_CONFIG override
#
# It builds Qwen2.5-7B's shape (random weights, bf16) through fastapply's HF backend and decode loop,
# times one verify pass for chunks of 1-256 tokens at contexts of 1k-8k, the loop's overhead per
# pass, and the same for Qwen2.5-0.5B's shape (the cost ratio c), then prints the predicted decode
# tokens/s per request and the median, plain decoding's beside it. About 2-4 minutes on one H100;
# stopped at 7.5 minutes whatever happens. The JSON goes to $OUT/gpu_cost.json.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-/tmp}
PY=${PY:-python3}
CONFIG=${CONFIG:-qwen2.5-7b}
DRAFT_CONFIG=${DRAFT_CONFIG:-qwen2.5-0.5b}
shopt -s nullglob
MEASURED=(evals/results/draft_model/speed_*.json)
PATTERNS=${PATTERNS:-${MEASURED[*]}}
WHEEL=.whl/tree_sitter-0.26.1-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl
WHEEL_SHA256=7b14ac81a2afdcf75610f714f1d2eeaac40da93965c104cabb5c4c2b536a488a

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu_check: no NVIDIA GPU here (nvidia-smi finds none); the same measurement runs on CPU with" \
         "python -m evals.gpu_cost --device cpu" >&2
    exit 1
fi
nvidia-smi -L

DEPS=$(mktemp -d)
if ! "$PY" -c "import tree_sitter" 2>/dev/null; then
    echo "$WHEEL_SHA256  $WHEEL" | sha256sum -c --quiet -
    "$PY" -m pip install -q --no-index --no-deps --target "$DEPS" "$WHEEL"
fi
export PYTHONPATH="$PWD:$DEPS${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -c "import torch, transformers; assert torch.cuda.is_available(), 'torch sees no GPU'; \
print(f'torch {torch.__version__}, transformers {transformers.__version__}, {torch.cuda.get_device_name(0)}')"

# shellcheck disable=SC2086  # PATTERNS is a list of files
timeout 450 "$PY" -m evals.gpu_cost --config "$CONFIG" --draft-config "$DRAFT_CONFIG" --device cuda --dtype bf16 \
    --patterns $PATTERNS --json "$OUT/gpu_cost.json"
echo "gpu_check: figures in $OUT/gpu_cost.json"
