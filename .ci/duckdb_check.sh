#!/usr/bin/env bash
# DuckDB reads `skein export parquet`'s dataset: Hive partitions, typed timestamps, and usage
# totals equal to `skein usage`'s. Installs duckdb itself in a venv under the target dir; when
# pip cannot (offline), says "skipped" and succeeds.
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

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cargo run -q --bin skein -- export parquet --to "$out/dataset" testdata/sample 2> /dev/null
cargo run -q --bin skein -- usage --format jsonl --no-catalog testdata/sample > "$out/usage.jsonl" 2> /dev/null

"$venv/bin/python" - "$out/dataset" "$out/usage.jsonl" <<'PY'
import json, sys
import duckdb

dataset, usage_file = sys.argv[1], sys.argv[2]
totals = [json.loads(l) for l in open(usage_file) if l.strip()][-1]
assert totals.get("totals"), totals

def table(name):
    return f"read_parquet('{dataset}/{name}/**/*.parquet', hive_partitioning = true)"

cols = "input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens"
row = duckdb.execute(
    f"select count(*), {', '.join(f'sum({c})' for c in cols.split(', '))}, sum(cost_usd) "
    f"from {table('usage')}"
).fetchone()
n, tin, tout, tcc, tcr, cost = row
want = (totals["input_tokens"], totals["output_tokens"],
        totals["cache_creation_input_tokens"], totals["cache_read_input_tokens"])
assert (tin, tout, tcc, tcr) == want, ((tin, tout, tcc, tcr), want)
assert abs(cost - totals["cost_usd"]) < 1e-6, (cost, totals["cost_usd"])
assert n == totals["scan"]["requests"], (n, totals["scan"]["requests"])

kind = duckdb.execute(f"select typeof(timestamp) from {table('usage')} limit 1").fetchone()[0]
assert kind.startswith("TIMESTAMP"), kind
months = duckdb.execute(f"select distinct month from {table('messages')}").fetchall()
assert months and all(len(m[0]) == 7 for m in months), months
sessions = duckdb.execute(f"select count(*) from {table('sessions')} where agent_id is null").fetchone()[0]
assert sessions >= 1, sessions
print(f"DuckDB {duckdb.__version__}: {n} usage rows, ${cost:.6f}, tokens equal to skein usage; "
      f"{sessions} main sessions; timestamps {kind}")
PY
