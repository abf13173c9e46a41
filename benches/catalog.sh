#!/usr/bin/env bash
# The catalog's goals on ~1 GB (the corpus copied 20 times with unique ids), end to end through
# the command line, each figure with its command:
#
#   benches/catalog.sh /path/to/skein [TREE] [runs=15]
#
# TREE is a tree built by `python3 ../shared/tools/make_bench_tree.py TREE 20` (default
# $SKEIN_BENCH_TREE, else /work/bench/tree20). It is copied to a temp dir as `cfg/projects`
# (appends are made to the copy; ccusage reads `$CLAUDE_CONFIG_DIR/projects`). HOME,
# XDG_STATE_HOME and CLAUDE_CONFIG_DIR point into the temp dir: nothing real is touched.
#
#  1. `skein index` cold: MB/s of transcript (goal >= 100 on 2 cores), catalog size (<= 30 %).
#  2. refresh with nothing changed (goal < 50 ms), and after appending 1 MB to one session
#     (goal < 30 ms): `skein index -q --catalog DB TREE`, p50 of `runs`.
#  3. `skein search WORD` p50 (goal < 30 ms) against `rg -l WORD TREE` in the same run (goal:
#     >= 10x faster).
#  4. `skein usage daily` from the catalog against the scan path (same bytes) and ccusage
#     (CCUSAGE=path, default /work/bench/ccusage/node_modules/.bin/ccusage; goal >= 30x), and
#     from the catalog with the tree named by a relative path.
#  5. The first `skein usage daily` with no catalog yet: it scans (the catalog is further behind
#     than `[catalog] inline_max_bytes`) and starts `skein index` in the background; the
#     script waits for that index, then times the next run.
# Needs bash >= 5, python3; rg and ccusage are timed when installed.
set -euo pipefail
skein=${1:?usage: catalog.sh /path/to/skein [TREE] [runs]}
tree=${2:-${SKEIN_BENCH_TREE:-/work/bench/tree20}}
runs=${3:-15}
skein=$(cd "$(dirname "$skein")" && pwd)/$(basename "$skein")
[[ -d $tree ]] || { echo "no tree at $tree (build it with make_bench_tree.py)" >&2; exit 64; }
ccusage=${CCUSAGE:-/work/bench/ccusage/node_modules/.bin/ccusage}
work=$(mktemp -d "${TMPDIR:-/tmp}/skein-catalog-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_STATE_HOME=$work/state
unset CLAUDE_CONFIG_DIR
mkdir -p "$HOME" "$work/cfg"
cp -r "$tree" "$work/cfg/projects"
projects=$work/cfg/projects
db=$work/catalog.db
bytes=$(find "$projects" -name '*.jsonl' -print0 | xargs -0 cat | wc -c)
files=$(find "$projects" -name '*.jsonl' | wc -l)
echo "tree: $files files, $bytes bytes ($tree); cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"

ms() { # ms CMD... -> wall milliseconds of one run (output discarded)
  local s=$EPOCHREALTIME
  "$@" > /dev/null 2>&1 || true
  echo "($EPOCHREALTIME - $s) * 1000" | bc -l
}
p50() { sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]}'; }
p90() { sort -n | awk '{a[NR]=$1} END {i=int(NR*0.9+0.5); if(i<1)i=1; printf "%.1f", a[i]}'; }

echo
echo "== 1. cold index: $skein index -q --catalog DB TREE"
for i in 1 2; do
  rm -f "$db" "$db-wal" "$db-shm"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$skein" index -q --catalog "$db" "$projects"
  read -r wall user sys rss < "$work/time"
  size=$(( $(stat -c %s "$db") + $(stat -c %s "$db-wal" 2>/dev/null || echo 0) ))
  printf 'run %d: %.2f s wall (%.2f user + %.2f sys), %.0f MB/s, max RSS %d MB; catalog %d bytes = %.1f %% of the transcripts\n' \
    "$i" "$wall" "$user" "$sys" "$(echo "$bytes / $wall / 1000000" | bc -l)" $((rss / 1024)) "$size" \
    "$(echo "$size * 100 / $bytes" | bc -l)"
done

echo
echo "== 2. refresh: $skein index -q --catalog DB TREE ($runs runs)"
for _ in $(seq "$runs"); do ms "$skein" index -q --catalog "$db" "$projects"; done > "$work/r0"
printf 'nothing changed: p50 %s ms, p90 %s ms (goal < 50)\n' "$(p50 < "$work/r0")" "$(p90 < "$work/r0")"
target=$(find "$projects" -name '*.jsonl' -size +2M | sort | sed -n 1p)
donor=$(find "$projects" -name '*.jsonl' -size +3M | sort | tail -1)
python3 - "$donor" "$work/chunk" <<'PY'
import sys
src, dst = sys.argv[1:3]
out, n = [], 0
for line in open(src, "rb"):
    if n + len(line) > 1 << 20:
        break
    out.append(line); n += len(line)
open(dst, "wb").write(b"".join(out))
PY
for _ in $(seq "$runs"); do
  cat "$work/chunk" >> "$target"
  ms "$skein" index -q --catalog "$db" "$projects"
done > "$work/r1"
printf 'after appending %d bytes to one session: p50 %s ms, p90 %s ms (goal < 30)\n' \
  "$(stat -c %s "$work/chunk")" "$(p50 < "$work/r1")" "$(p90 < "$work/r1")"

echo
echo "== 3. search: $skein search -q -n 20 --format jsonl --catalog DB WORD, against rg -l WORD TREE"
words=(authentication deadlock refactor "migrat*" '"cargo test"' tokio serde README sqlite websocket)
: > "$work/s"; : > "$work/rg"
printf '%-18s %8s %8s %8s %8s\n' word hits skein_ms rg_ms ratio
for w in "${words[@]}"; do
  hits=$("$skein" search -q -n 20 --format jsonl --catalog "$db" "$w" | wc -l)
  for _ in $(seq 5); do ms "$skein" search -q -n 20 --format jsonl --catalog "$db" "$w"; done > "$work/one"
  s=$(p50 < "$work/one"); cat "$work/one" >> "$work/s"
  if command -v rg > /dev/null; then
    plain=${w//\"/}; plain=${plain%\*}
    for _ in 1 2 3; do ms rg -l -i -F "$plain" "$projects"; done > "$work/one"
    r=$(p50 < "$work/one"); cat "$work/one" >> "$work/rg"
    printf '%-18s %8s %8s %8s %8.1f\n' "$w" "$hits" "$s" "$r" "$(echo "$r / $s" | bc -l)"
  else
    printf '%-18s %8s %8s\n' "$w" "$hits" "$s"
  fi
done
printf 'search p50 %s ms, p90 %s ms (goal < 30)\n' "$(p50 < "$work/s")" "$(p90 < "$work/s")"
if [[ -s $work/rg ]]; then
  printf 'rg -l p50 %s ms: search is %.1fx faster (goal >= 10x)\n' "$(p50 < "$work/rg")" \
    "$(echo "$(p50 < "$work/rg") / $(p50 < "$work/s")" | bc -l)"
fi
for _ in $(seq 5); do ms "$skein" search -q -n 20 --format jsonl --catalog "$db" deadlock "$projects"; done > "$work/one"
printf 'with the tree as PATHS (refresh of every file first): p50 %s ms\n' "$(p50 < "$work/one")"

echo
echo "== 4. usage daily: catalog vs scan vs ccusage"
"$skein" usage daily -q --format jsonl --catalog "$db" "$projects" > "$work/u-cat"
"$skein" usage daily -q --format jsonl --no-catalog "$projects" > "$work/u-scan"
if cmp -s "$work/u-cat" "$work/u-scan"; then echo "catalog and scan output: identical ($(wc -c < "$work/u-cat") bytes)"; else echo "catalog and scan output DIFFER"; fi
for _ in $(seq "$runs"); do ms "$skein" usage daily -q --format jsonl --catalog "$db" "$projects"; done > "$work/uc"
for _ in 1 2 3; do ms "$skein" usage daily -q --format jsonl --no-catalog "$projects"; done > "$work/us"
printf 'skein usage daily, catalog: p50 %s ms; scan: p50 %s ms\n' "$(p50 < "$work/uc")" "$(p50 < "$work/us")"
# The same tree named relatively (`cd cfg && skein usage daily projects`): same sessions, named
# from the root as given.
(cd "$work/cfg" && for _ in $(seq "$runs"); do ms "$skein" usage daily -q --format jsonl --catalog "$db" projects; done) > "$work/ur"
printf 'skein usage daily, catalog, the tree named relatively: p50 %s ms\n' "$(p50 < "$work/ur")"
if [[ -x $ccusage ]]; then
  env CLAUDE_CONFIG_DIR="$work/cfg" "$ccusage" claude daily --json --offline --timezone UTC > "$work/u-ccu" 2> /dev/null || true
  python3 - "$work/u-cat" "$work/u-ccu" <<'PY'
import json, sys
t = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print("skein  : input %d output %d cache write %d cache read %d cost $%.2f" % (t["input_tokens"], t["output_tokens"], t["cache_creation_input_tokens"], t["cache_read_input_tokens"], t["cost_usd"]))
try:
    c = json.load(open(sys.argv[2]))["totals"]
    print("ccusage: input %d output %d cache write %d cache read %d cost $%.2f" % (c["inputTokens"], c["outputTokens"], c["cacheCreationTokens"], c["cacheReadTokens"], c["totalCost"]))
except Exception as e:
    print("ccusage: no totals (%s)" % e)
PY
  for _ in 1 2 3; do ms env CLAUDE_CONFIG_DIR="$work/cfg" "$ccusage" claude daily --json --offline --timezone UTC; done > "$work/ucc"
  printf 'ccusage daily: p50 %s ms: the catalog is %.1fx faster (goal >= 30x)\n' "$(p50 < "$work/ucc")" \
    "$(echo "$(p50 < "$work/ucc") / $(p50 < "$work/uc")" | bc -l)"
fi

echo
echo "== 5. first run with an empty catalog: $skein usage daily -q --format jsonl --catalog NEW TREE"
fresh=$work/fresh.db
first=$(ms "$skein" usage daily -q --format jsonl --catalog "$fresh" "$projects")
printf 'first run (scans, indexes in the background): %.1f ms' "$first"
if [[ -s $work/ucc ]]; then
  printf ': %.1fx faster than ccusage' "$(echo "$(p50 < "$work/ucc") / $first" | bc -l)"
fi
echo
python3 - "$fresh.index-lock" <<'PY'
import fcntl, sys, time
# The background index holds this lock while it runs; wait until it is free.
time.sleep(0.5)
for _ in range(1200):
    try:
        with open(sys.argv[1], "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        break
    except BlockingIOError:
        time.sleep(0.1)
PY
for _ in 1 2 3; do ms "$skein" usage daily -q --format jsonl --catalog "$fresh" "$projects"; done > "$work/uf"
printf 'after the background index: p50 %s ms\n' "$(p50 < "$work/uf")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
