#!/usr/bin/env bash
# Runs skein and its peers on the same input and prints wall times and ratios.
#
#   benches/compare.sh [INPUT_DIR] [COPIES]
#
# INPUT_DIR defaults to the shared corpus ($SKEIN_CORPUS or ../shared/corpus); it is copied
# COPIES times (default 21, about 1 GB for the 48 MB corpus) into a temp dir so every tool
# reads the same ~1 GB from the page cache. Peers are run only where installed: jq (always
# expected), ccusage and claude-code-log (optional). Uses hyperfine when present.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
src="${1:-${SKEIN_CORPUS:-$here/../shared/corpus}}"
copies="${2:-21}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for i in $(seq 1 "$copies"); do
  mkdir -p "$work/c$i"
  cp -r "$src"/. "$work/c$i/"
done
chmod -R u+w "$work"
find "$work" -name '*.jsonl' -print0 | sort -z > "$work/files.list"
bytes=$(xargs -0 cat < "$work/files.list" | wc -c)
files=$(tr -cd '\0' < "$work/files.list" | wc -c)
echo "input: $files files, $bytes bytes ($copies copies of $src)"
xargs -0 cat < "$work/files.list" > /dev/null   # warm the page cache

(cd "$here" && cargo build --release --quiet -p skein)
skein="$here/target/release/skein"

time_cmd() { # name, command...: prints seconds (median of 3)
  local name="$1"; shift
  local best=()
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s.%N)
    best+=("$(echo "$e - $s" | bc -l)")
  done
  printf '%s\n' "${best[@]}" | sort -n | sed -n 2p
}

declare -A secs
secs[skein_stats]=$(time_cmd skein "$skein" stats -q "$work")
secs[skein_stats_1thread]=$(time_cmd skein1 "$skein" stats -q -j 1 "$work")
if command -v jq > /dev/null; then
  secs[jq_type_uuid_parent]=$(time_cmd jq sh -c "xargs -0 cat < '$work/files.list' | jq -c '{type,uuid,parentUuid}'")
fi
if command -v ccusage > /dev/null; then
  secs[ccusage_daily]=$(time_cmd ccusage env CLAUDE_CONFIG_DIR="$work" ccusage daily --json --offline)
fi
if command -v claude-code-log > /dev/null; then
  secs[claude_code_log]=$(time_cmd ccl claude-code-log "$work" --no-individual-sessions)
fi

printf '\n%-24s %10s %12s %12s\n' tool seconds MB/s "x skein"
for k in "${!secs[@]}"; do
  s=${secs[$k]}
  printf '%-24s %10.3f %12.0f %12.1f\n' "$k" "$s" "$(echo "$bytes / $s / 1000000" | bc -l)" "$(echo "$s / ${secs[skein_stats]}" | bc -l)"
done | sort -k2 -n
