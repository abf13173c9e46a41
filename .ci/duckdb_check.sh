#!/usr/bin/env bash
# DuckDB reads `skein export parquet`'s dataset: Hive partitions, typed timestamps, usage totals
# equal to `skein usage`'s (testdata/sample and the corpus), and on the corpus (SKEIN_CORPUS,
# default ../shared/corpus; skipped with a note when absent) every `skein sessions` row
# (messages, tool calls, cost) and every `skein tools --by name` row (calls, errors).
# Installs duckdb itself in a venv under the target dir; when pip cannot (offline), says
# "skipped" and succeeds. The comparison itself is .ci/duckdb_compare.py.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
venv="$target/duckdb-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import duckdb' 2> /dev/null; then
  rm -rf "$venv"
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q duckdb; } > /dev/null 2>&1; then
    echo "skipped: DuckDB check (cannot install the duckdb pip package here)"
    rm -rf "$venv"
    exit 0
  fi
fi

# SKEIN_BIN: a binary already built (.ci/run passes the one `cargo test` built).
if [ -n "${SKEIN_BIN:-}" ]; then
  skein="$SKEIN_BIN"
else
  cargo build -q --bin skein
  skein="$target/debug/skein"
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# A private HOME: no user config, no catalog or Claude directory of the machine's user.
export HOME="$out/home"
unset CLAUDE_CONFIG_DIR
mkdir -p "$HOME"

echo "-- testdata/sample"
"$skein" export parquet -q --to "$out/sample" testdata/sample
"$skein" usage --format jsonl --no-catalog testdata/sample > "$out/sample-usage.jsonl" 2> /dev/null
"$venv/bin/python" .ci/duckdb_compare.py "$out/sample" "$out/sample-usage.jsonl"

corpus="${SKEIN_CORPUS:-../shared/corpus}"
if [ ! -d "$corpus" ]; then
  echo "skipped: DuckDB corpus comparison (no corpus at $corpus; set SKEIN_CORPUS)"
  exit 0
fi
echo "-- corpus $corpus"
"$skein" export parquet -q --to "$out/corpus" "$corpus"
"$skein" usage --format jsonl --no-catalog -q "$corpus" > "$out/usage.jsonl"
"$skein" sessions --format jsonl -q --catalog "$out/catalog.db" "$corpus" > "$out/sessions.jsonl"
"$skein" tools --by name --format jsonl -q "$corpus" > "$out/tools.jsonl"
"$venv/bin/python" .ci/duckdb_compare.py "$out/corpus" "$out/usage.jsonl" \
  "$out/sessions.jsonl" "$out/tools.jsonl"
