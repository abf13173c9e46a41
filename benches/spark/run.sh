#!/usr/bin/env bash
# The PySpark check (`just spark-check [PATH]`): exports PATH (default: the corpus at
# SKEIN_CORPUS, else ../shared/corpus, else testdata/sample) with `skein export parquet`, runs
# daily_totals.py on it with Spark in local mode (local[2]), and compares the daily totals with
# `skein usage daily` (UTC days). Installs pyspark from pip into a venv under the target dir;
# Java (17) comes from the system packages (apt-get install openjdk-17-jre-headless). Not in
# CI: Spark takes a minute to start and half a gigabyte of disk.
set -euo pipefail
cd "$(dirname "$0")/../.."

target="${CARGO_TARGET_DIR:-target}"
venv="$target/spark-venv"
if ! command -v java > /dev/null; then
  echo "spark-check: no java on PATH (install openjdk-17-jre-headless)" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pyspark' 2> /dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q pyspark
fi

corpus="${SKEIN_CORPUS:-../shared/corpus}"
input="${1:-}"
if [ -z "$input" ]; then
  if [ -d "$corpus" ]; then input="$corpus"; else input=testdata/sample; fi
fi

cargo build -q --release --bin skein
skein="$target/release/skein"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export HOME="$out/home"
unset CLAUDE_CONFIG_DIR
mkdir -p "$HOME"

"$skein" export parquet --to "$out/dataset" "$input"
"$skein" usage daily --format jsonl --no-catalog --timezone UTC -q "$input" > "$out/skein.jsonl"
start=$(date +%s)
PYSPARK_PYTHON="$venv/bin/python" "$venv/bin/python" benches/spark/daily_totals.py "$out/dataset" \
  > "$out/spark.jsonl"
echo "Spark (local[2]) read the dataset and summed it in $(($(date +%s) - start)) s"
"$venv/bin/python" benches/spark/compare.py "$out/spark.jsonl" "$out/skein.jsonl"
