"""Speed of the structural merge in the languages of issue 37: one structural request per language on
a file of about 300 lines with a small edit, timed over N runs.

    .venv/bin/python -m evals.lang_speed --runs 20 --json evals/results/lang_speed.json

Each file is generated here (no repository's code): a realistic unit of the language (a method, a CI
job, a CSS rule, a Makefile rule, a Terraform resource ...) repeated with its numbers varied, inside
the wrapper the language needs (a class, a component). The snippet edits one line of the middle unit
and shows the lines around it up to a line that occurs once in the file (the unit's header, at most
8 lines away), with the language's usual marker on each side, as agents write it. Timed:
`Applier().apply(ApplyRequest(..., engine="structural"))` end to end (merge, readings, checks, the
format's parser), median and max over the runs after one warm-up; `exact` says the answer is the
expected file. Timings depend on the machine and its load: compare runs on one machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass

from evals.common import write_json
from fastapply.api import Applier, ApplyError, ApplyRequest
from fastapply.languages import BY_NAME, detect_language

TARGET_LINES = 300


@dataclass(frozen=True)
class Spec:
    """A generated file: head, `unit` repeated with {i} varied, tail; the edit changes `line` of the
    middle unit to `new` (both formatted with that unit's {i})."""

    path: str
    head: str
    unit: str
    tail: str
    line: str
    new: str


SPECS: dict[str, Spec] = {
    "php": Spec(
        "src/Billing.php", "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Billing;\n\nfinal class Billing\n{\n",
        "    /**\n     * The total of order {i}, tax included.\n     */\n"
        "    public function total{i}(array $items, float $rate = 0.2): float\n    {{\n        $sum = 0.0;\n"
        "        foreach ($items as $item) {{\n            $sum += $item['price'] * $item['qty'];\n        }}\n"
        "        return round($sum * (1 + $rate) + {i}, 2);\n    }}\n\n",
        "}\n", "        return round($sum * (1 + $rate) + {i}, 2);", "        return round($sum * (1 + $rate) + {i}, 3);"),
    "ruby": Spec(
        "lib/billing.rb", "# frozen_string_literal: true\n\nmodule Shop\n  class Billing\n",
        "    # The total of order {i}, tax included.\n    def total_{i}(items, rate = 0.2)\n"
        "      sum = items.sum {{ |item| item[:price] * item[:qty] }}\n      (sum * (1 + rate) + {i}).round(2)\n"
        "    end\n\n",
        "  end\nend\n", "      (sum * (1 + rate) + {i}).round(2)", "      (sum * (1 + rate) + {i}).round(3)"),
    "csharp": Spec(
        "src/Billing.cs", "using System.Linq;\n\nnamespace Shop.Billing\n{\n    public sealed class Billing\n    {\n",
        "        /// <summary>The total of order {i}, tax included.</summary>\n"
        "        public decimal Total{i}(Item[] items, decimal rate = 0.2m)\n        {{\n"
        "            var sum = items.Sum(item => item.Price * item.Qty);\n"
        "            return decimal.Round(sum * (1 + rate) + {i}, 2);\n        }}\n\n",
        "    }\n}\n", "            return decimal.Round(sum * (1 + rate) + {i}, 2);",
        "            return decimal.Round(sum * (1 + rate) + {i}, 3);"),
    "kotlin": Spec(
        "src/main/kotlin/Billing.kt", "package shop.billing\n\nimport kotlin.math.round\n\nclass Billing {\n",
        "    /** The total of order {i}, tax included. */\n    fun total{i}(items: List<Item>, rate: Double = 0.2): Double {{\n"
        "        val sum = items.sumOf {{ it.price * it.qty }}\n        return round((sum * (1 + rate) + {i}) * 100) / 100\n"
        "    }}\n\n",
        "}\n", "        return round((sum * (1 + rate) + {i}) * 100) / 100",
        "        return round((sum * (1 + rate) + {i}) * 1000) / 1000"),
    "swift": Spec(
        "Sources/Billing.swift", "import Foundation\n\nstruct Billing {\n",
        "    /// The total of order {i}, tax included.\n    func total{i}(_ items: [Item], rate: Double = 0.2) -> Double {{\n"
        "        let sum = items.reduce(0) {{ $0 + $1.price * Double($1.qty) }}\n"
        "        return (sum * (1 + rate) + {i}).rounded()\n    }}\n\n",
        "}\n", "        return (sum * (1 + rate) + {i}).rounded()", "        return (sum * (1 + rate) + {i}).rounded(.up)"),
    "scala": Spec(
        "src/main/scala/Billing.scala", "package shop.billing\n\nobject Billing {\n",
        "  /** The total of order {i}, tax included. */\n  def total{i}(items: Seq[Item], rate: Double = 0.2): Double = {{\n"
        "    val sum = items.map(item => item.price * item.qty).sum\n    math.round((sum * (1 + rate) + {i}) * 100) / 100.0\n"
        "  }}\n\n",
        "}\n", "    math.round((sum * (1 + rate) + {i}) * 100) / 100.0", "    math.round((sum * (1 + rate) + {i}) * 1000) / 1000.0"),
    "lua": Spec(
        "lua/billing.lua", "local M = {}\n\n",
        "-- The total of order {i}, tax included.\nfunction M.total_{i}(items, rate)\n  rate = rate or 0.2\n  local sum = 0\n"
        "  for _, item in ipairs(items) do\n    sum = sum + item.price * item.qty\n  end\n"
        "  return math.floor((sum * (1 + rate) + {i}) * 100 + 0.5) / 100\nend\n\n",
        "return M\n", "  return math.floor((sum * (1 + rate) + {i}) * 100 + 0.5) / 100",
        "  return math.floor((sum * (1 + rate) + {i}) * 1000 + 0.5) / 1000"),
    "elixir": Spec(
        "lib/shop/billing.ex", "defmodule Shop.Billing do\n  @moduledoc \"Order totals.\"\n\n",
        "  @doc \"The total of order {i}, tax included.\"\n  def total_{i}(items, rate \\\\ 0.2) do\n"
        "    sum = Enum.reduce(items, 0, fn item, acc -> acc + item.price * item.qty end)\n"
        "    Float.round(sum * (1 + rate) + {i}, 2)\n  end\n\n",
        "end\n", "    Float.round(sum * (1 + rate) + {i}, 2)", "    Float.round(sum * (1 + rate) + {i}, 3)"),
    "bash": Spec(
        "scripts/deploy.sh", "#!/usr/bin/env bash\nset -euo pipefail\n\n",
        "# Deploy service {i}.\ndeploy_{i}() {{\n  local host=\"app-{i}.internal\"\n  if ! ssh \"$host\" true; then\n"
        "    echo \"cannot reach $host\" >&2\n    return 1\n  fi\n  rsync -a dist/ \"$host:/srv/app-{i}\"\n}}\n\n",
        "deploy_1\n", "  rsync -a dist/ \"$host:/srv/app-{i}\"", "  rsync -az --delete dist/ \"$host:/srv/app-{i}\""),
    "yaml": Spec(
        ".github/workflows/ci.yml", "name: ci\non:\n  push:\n    branches: [main]\n  pull_request:\njobs:\n",
        "  test-{i}:\n    runs-on: ubuntu-latest\n    timeout-minutes: 15\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - uses: actions/setup-python@v5\n        with:\n          python-version: \"3.12\"\n"
        "      - run: make test SHARD={i}\n",
        "", "      - run: make test SHARD={i}", "      - run: make test SHARD={i} VERBOSE=1"),
    "json": Spec(
        "config/services.json", "{\n  \"services\": {\n",
        "    \"service-{i}\": {{\n      \"image\": \"registry.local/service-{i}:1.0.{i}\",\n      \"replicas\": 2,\n"
        "      \"ports\": [80{i:02d}],\n      \"env\": {{\"LOG_LEVEL\": \"info\"}}\n    }},\n",
        "    \"last\": {}\n  }\n}\n", "      \"replicas\": 2,", "      \"replicas\": 3,"),
    "jsonc": Spec(
        ".vscode/settings.json", "{\n  // workspace settings\n",
        "  // language {i}\n  \"[lang{i}]\": {{\n    \"editor.tabSize\": 4,\n    \"editor.formatOnSave\": true,\n  }},\n",
        "  \"files.eol\": \"\\n\",\n}\n", "    \"editor.tabSize\": 4,", "    \"editor.tabSize\": 2,"),
    "toml": Spec(
        "config/services.toml", "# services\n\n",
        "[services.s{i}]\nimage = \"registry.local/service-{i}:1.0.{i}\"\nreplicas = 2\nports = [80{i:02d}]\n\n"
        "[services.s{i}.env]\nLOG_LEVEL = \"info\"\n\n",
        "", "replicas = 2", "replicas = 3"),
    "markdown": Spec(
        "docs/services.md", "# Services\n\nOne section per service.\n\n",
        "## Service {i}\n\nService {i} serves the orders of region {i}.\n\n```bash\nmake deploy SERVICE={i}\n```\n\n"
        "- owner: team-{i}\n- replicas: 2\n\n",
        "", "- replicas: 2", "- replicas: 3"),
    "html": Spec(
        "public/index.html", "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <title>Shop</title>\n"
        "</head>\n<body>\n  <main>\n",
        "    <section class=\"card\" id=\"item-{i}\">\n      <h2>Item {i}</h2>\n      <p class=\"price\">{i}.99</p>\n"
        "      <button data-id=\"{i}\">Add</button>\n    </section>\n",
        "  </main>\n</body>\n</html>\n", "      <p class=\"price\">{i}.99</p>", "      <p class=\"price sale\">{i}.49</p>"),
    "css": Spec(
        "public/app.css", ":root {\n  --pad: 8px;\n}\n\n",
        ".card-{i} {{\n  padding: var(--pad);\n  margin: {i}px auto;\n  color: #333;\n}}\n\n"
        ".card-{i}:hover {{\n  color: #000;\n}}\n\n",
        "", "  margin: {i}px auto;", "  margin: {i}px 4px;"),
    "scss": Spec(
        "src/app.scss", "$pad: 8px;\n\n@mixin shadow($d) {\n  box-shadow: 0 $d $d rgba(0, 0, 0, 0.2);\n}\n\n",
        ".card-{i} {{\n  padding: $pad;\n  margin: {i}px auto;\n  &:hover {{\n    @include shadow(2px);\n  }}\n"
        "  .title {{\n    font-weight: 600;\n  }}\n}}\n\n",
        "", "  margin: {i}px auto;", "  margin: {i}px 4px;"),
    "sql": Spec(
        "migrations/001_init.sql", "-- schema\n\n",
        "CREATE TABLE orders_{i} (\n  id BIGINT PRIMARY KEY,\n  customer_id BIGINT NOT NULL,\n  total NUMERIC(10, 2) NOT NULL,\n"
        "  created_at TIMESTAMP NOT NULL\n);\n\nCREATE INDEX idx_orders_{i}_customer ON orders_{i} (customer_id);\n\n",
        "", "  total NUMERIC(10, 2) NOT NULL,", "  total NUMERIC(12, 2) NOT NULL,"),
    "dockerfile": Spec(
        "Dockerfile", "# syntax=docker/dockerfile:1\nFROM python:3.12-slim AS base\nWORKDIR /app\n\n",
        "FROM base AS stage{i}\nARG STAGE={i}\nENV STAGE=${{STAGE}}\nCOPY requirements-{i}.txt .\n"
        "RUN pip install --no-cache-dir -r requirements-{i}.txt \\\n    && rm -rf /root/.cache\n\n",
        "CMD [\"python\", \"-m\", \"app\"]\n", "COPY requirements-{i}.txt .", "COPY requirements-{i}.lock ."),
    "make": Spec(
        "Makefile", ".PHONY: all clean\n\nGO ?= go\n\nall: build\n\n",
        "# Service {i}.\nbuild-{i}:\n\t$(GO) build -o bin/service-{i} ./cmd/service-{i}\n\ntest-{i}: build-{i}\n"
        "\t$(GO) test ./cmd/service-{i}/...\n\n",
        "clean:\n\trm -rf bin\n", "\t$(GO) test ./cmd/service-{i}/...", "\t$(GO) test -race ./cmd/service-{i}/..."),
    "hcl": Spec(
        "infra/main.tf", "terraform {\n  required_version = \">= 1.5\"\n}\n\n",
        "resource \"aws_s3_bucket\" \"data_{i}\" {{\n  bucket = \"shop-data-{i}\"\n\n  tags = {{\n    Team = \"team-{i}\"\n"
        "    Env  = \"prod\"\n  }}\n}}\n\n",
        "", "    Env  = \"prod\"", "    Env  = \"staging\""),
    "vue": Spec(
        "src/Orders.vue", "<template>\n  <ul class=\"orders\">\n",
        "    <li class=\"order\" data-id=\"{i}\">\n      <span class=\"total\">{{{{ totals[{i}] }}}}</span>\n    </li>\n",
        "  </ul>\n</template>\n\n<script setup lang=\"ts\">\nimport { ref } from \"vue\";\n\nconst totals = ref<number[]>([]);\n"
        "</script>\n\n<style scoped>\n.orders {\n  padding: 0;\n}\n</style>\n",
        "      <span class=\"total\">{{{{ totals[{i}] }}}}</span>", "      <strong class=\"total\">{{{{ totals[{i}] }}}}</strong>"),
    "svelte": Spec(
        "src/Orders.svelte", "<script>\n  export let totals = [];\n",
        "  function total{i}() {{\n    return totals[{i}] ?? 0;\n  }}\n",
        "</script>\n\n<ul class=\"orders\">\n  {#each totals as t}\n    <li>{t}</li>\n  {/each}\n</ul>\n\n<style>\n"
        "  .orders {\n    padding: 0;\n  }\n</style>\n",
        "    return totals[{i}] ?? 0;", "    return totals[{i}] ?? -1;"),
}


def build(spec: Spec) -> tuple[str, str, str]:
    """(original, snippet, expected) for a spec: units until the file has TARGET_LINES lines."""
    units, i = [], 0
    while (spec.head + "".join(units) + spec.tail).count("\n") < TARGET_LINES:
        units.append(spec.unit.format(i=i))
        i += 1
    mid = len(units) // 2
    original = spec.head + "".join(units) + spec.tail
    lines = original.splitlines()
    first = spec.head.count("\n") + sum(u.count("\n") for u in units[:mid])
    row = next(r for r in range(first, len(lines)) if lines[r] == spec.line.format(i=mid))
    new = spec.new.format(i=mid)
    marker = BY_NAME[detect_language(None, spec.path)].marker_templates[0]
    start, end = _context(lines, row, -1), _context(lines, row, 1)
    shown = lines[start:row] + [new] + lines[row + 1:end + 1]
    snippet = "\n".join([_indent(lines[start - 1]) + marker, *shown, _indent(lines[end + 1]) + marker]) + "\n"
    expected = "\n".join(lines[:row] + [new] + lines[row + 1:]) + "\n"
    return original, snippet, expected


def _context(lines: list[str], row: int, step: int) -> int:
    """How far the snippet shows around the edited row, as an agent would: up to the nearest
    non-blank line that occurs once in the file (the unit's header, its number), at most 8 lines."""
    counts = {x: lines.count(x) for x in set(lines)}
    r = row + step
    while 0 < r < len(lines) - 1 and abs(r - row) < 8 and (not lines[r].strip() or counts[lines[r]] > 1):
        r += step
    return r


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def measure(applier: Applier, spec: Spec, runs: int) -> dict:
    original, snippet, expected = build(spec)
    req = ApplyRequest(original, snippet, path=spec.path, engine="structural")
    times, merged, error = [], None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        try:
            merged = applier.apply(req).merged
        except ApplyError as e:
            error = e.message.splitlines()[-1][:160]
        times.append((time.perf_counter() - t0) * 1000)
    return {"language": detect_language(None, spec.path), "path": spec.path, "lines": original.count("\n"),
            "median_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2), "runs": runs,
            "exact": merged == expected, "refused": error}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20, help="timed requests per language (after one warm-up)")
    ap.add_argument("--json", default="evals/results/lang_speed.json")
    args = ap.parse_args(argv)
    applier = Applier()
    rows = []
    for name, spec in SPECS.items():
        measure(applier, spec, 1)  # warm-up: the grammar's first load and parse
        rows.append(measure(applier, spec, args.runs))
        r = rows[-1]
        print(f"{name:11s} {r['lines']:4d} lines  median {r['median_ms']:8.2f} ms  max {r['max_ms']:8.2f} ms  "
              f"exact={r['exact']}" + (f"  refused: {r['refused']}" if r["refused"] else ""), flush=True)
    write_json(args.json, {"runs": args.runs, "languages": rows})


if __name__ == "__main__":
    main()
