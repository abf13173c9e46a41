#!/usr/bin/env bash
# `skein export parquet`'s goals on ~1 GB (the corpus copied 20 times with unique ids), end to
# end through the command line, each figure with its command:
#
#   benches/export.sh /path/to/skein [TREE] [runs=3]
#
# TREE is a tree built by `python3 ../shared/tools/make_bench_tree.py TREE 20` (default
# $SKEIN_BENCH_TREE, else /work/bench/tree20); its top directories c00..c19 are one corpus copy
# each. The dataset goes to a temp dir (TMPDIR) and is removed at the end.
#
#  1. throughput: MB/s of transcript on all cores and with -j 1 (goal >= 150 MB/s on 2 cores),
#     best of `runs`, with CPU seconds (the steadier figure on a shared machine) and the load;
#  2. peak RSS (/usr/bin/time %M) on 1, 5, 10 and 20 copies: bounded, not proportional;
#  3. dataset size with and without text against the transcript bytes (goal: <= 5 % without).
set -euo pipefail
skein=${1:?usage: export.sh /path/to/skein [TREE] [runs]}
tree=${2:-${SKEIN_BENCH_TREE:-/work/bench/tree20}}
runs=${3:-3}
[[ -d $tree ]] || { echo "no tree at $tree (build it with make_bench_tree.py)" >&2; exit 64; }
work=$(mktemp -d "${TMPDIR:-/tmp}/skein-export-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME=$work/home
unset CLAUDE_CONFIG_DIR
mkdir -p "$HOME"
bytes=$(find "$tree" -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
echo "tree $tree: $bytes bytes of transcript; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"

# run LABEL ARGS...: best wall time of `runs`, its CPU time and peak RSS.
run() {
  local label=$1 best="" line
  shift
  for _ in $(seq "$runs"); do
    rm -rf "$work/ds"
    line=$(/usr/bin/time -f '%e %U %S %M' "$skein" export parquet -q --to "$work/ds" "$@" 2>&1 > /dev/null | tail -1)
    if [[ -z $best ]] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN {exit !(a < b)}'; then
      best=$line
    fi
  done
  read -r wall user sys rss <<< "$best"
  awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v b="$bytes" 'BEGIN {
    printf "%-28s %6.2f s wall  %6.1f MB/s  CPU %5.2f s (%5.1f MB per CPU-s)  max RSS %4d MB\n",
      l, w, b / w / 1e6, u + s, b / (u + s) / 1e6, r / 1024 }'
}

echo "== 1. throughput (skein export parquet --to DIR TREE)"
run "all cores" "$tree"
run "-j 1" -j 1 "$tree"

echo "== 2. peak RSS by input size (copies of the corpus)"
for n in 1 5 10 20; do
  dirs=$(find "$tree" -mindepth 1 -maxdepth 1 -type d | sort | head -n "$n")
  # shellcheck disable=SC2086
  line=$(/usr/bin/time -f '%M' "$skein" export parquet -q --to "$work/ds$n" $dirs 2>&1 > /dev/null | tail -1)
  # shellcheck disable=SC2086
  in=$(find $dirs -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
  echo "$n copies: $((in / 1000000)) MB of transcript, max RSS $((line / 1024)) MB"
  rm -rf "$work/ds$n"
done

echo "== 3. dataset size"
for args in "" "--no-text"; do
  rm -rf "$work/ds"
  # shellcheck disable=SC2086
  "$skein" export parquet -q $args --to "$work/ds" "$tree"
  size=$(du -sb "$work/ds" | cut -f1)
  awk -v a="${args:-with text}" -v s="$size" -v b="$bytes" \
    'BEGIN {printf "%-10s %6.1f MB = %.2f %% of the transcript bytes\n", a, s / 1e6, 100 * s / b}'
done
