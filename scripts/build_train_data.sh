#!/bin/bash
# Build the training data set from the 18 allowed repositories (issue 12) with `fastapply data`.
#   scripts/build_train_data.sh MIRRORS OUT
# MIRRORS holds OWNER+NAME/repo git directories (bare mirrors); OUT gets repos/OWNER+NAME.{train,dev}.jsonl,
# then train.jsonl and dev.jsonl (their concatenation, written to a temp file and renamed: a reader never
# sees half a file). Dev = the commits held out by hash (5%). Originals of at most 150 lines.
set -euo pipefail
MIRRORS=${1:?mirror folder}; OUT=${2:?output folder}
REPOS="Textualize/rich fastapi/fastapi pytest-dev/pytest axios/axios fastify/fastify koajs/koa colinhacks/zod
honojs/hono TanStack/query urfave/cli go-chi/chi labstack/echo clap-rs/clap tokio-rs/axum dtolnay/anyhow
FasterXML/jackson-core google/guice apache/commons-lang"
FASTAPPLY=${FASTAPPLY:-$(dirname "$0")/../.venv/bin/fastapply}
mkdir -p "$OUT/repos"
for r in $REPOS; do
  k=${r/\//+}
  "$FASTAPPLY" data --git-dir "$MIRRORS/$k/repo" --repo-name "$r" --max-lines 150 --dev-percent 5 \
    --out "$OUT/repos/$k.train.jsonl" --dev-out "$OUT/repos/$k.dev.jsonl"
done
for split in train dev; do
  (for r in $REPOS; do cat "$OUT/repos/${r/\//+}.$split.jsonl"; done) > "$OUT/.$split.jsonl.tmp"
  mv "$OUT/.$split.jsonl.tmp" "$OUT/$split.jsonl"
done
wc -l "$OUT/train.jsonl" "$OUT/dev.jsonl"
