#!/usr/bin/env bash
# skein beside its yardsticks, in one run, with the ratios the speed goals are stated in
# (docs/performance.md, issue 16):
#
#   benches/compare.sh [TREE] [RUNS]        (`just compare`)
#
# TREE is a projects tree with unique ids, built by `python3 ../shared/tools/make_bench_tree.py
# TREE 20` (the corpus copied 20 times, ~940 MB; default $SKEIN_BENCH_TREE, else
# /work/bench/tree20). It is only read; archives, the 462 MB single file and ccusage's config
# directory go to a scratch directory ($TMPDIR) that is removed at the end. SKEIN=path uses that
# binary instead of building target/release/skein. Each figure is the median wall time of RUNS
# (default 3), page cache warm. Yardsticks that are not installed are skipped.
#
#   row                        skein command                          yardstick            goal
#   archive                    skein archive -q TREE --to A           tar -c TREE | zstd -3 -T0   <= 2x
#   archive --redact           skein archive -q --redact TREE --to A  same                  <= 2.5x
#   archive one file           skein archive -q BIG --to A            zstd -3 -T0 BIG       <= 1.25x (>= 80 % speed)
#   archive one file --redact  skein archive -q --redact BIG --to A   zstd -3 -T0 BIG
#   stats                      skein stats -q TREE                    cat of the files      <= 1.5x
#   jq-style                   skein stats -q TREE (every record's type, uuid, parentUuid, the graph)
#                                                                     jq -c '{type,uuid,parentUuid}'  >= 25x faster
#   usage                      skein usage daily --no-catalog TREE    ccusage daily --offline (cold)  >= 5x faster
#
# ROWS="stats usage" runs only the named groups (archive, stats, jq, usage; default all).
#
# Then the floors: what a program that only lists the tree, reads it and parses it (the part of
# the work no implementation skips; `benches/examples/floor.rs`, on as many threads as skein)
# takes, beside the same yardsticks: how far each goal is from what this machine allows.
#   floor read      every file read, lines split                 against cat
#   floor parse     + simd-json's tape of every line            against jq (the jq-style goal)
#   floor usage     + the tape of the lines mentioning "usage"  against ccusage (the usage goal)
# FLOOR=path uses that build of the example; FLOOR=none skips the floors.
#
# Needs bash, GNU coreutils, bc; tar and zstd for the archive rows, jq and ccusage (CCUSAGE=path,
# default /work/bench/ccusage/node_modules/.bin/ccusage) for theirs.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tree=${1:-${SKEIN_BENCH_TREE:-/work/bench/tree20}}
runs=${2:-3}
[[ -d $tree ]] || { echo "no tree at $tree (build it with make_bench_tree.py)" >&2; exit 64; }
tree=$(cd "$tree" && pwd)
ccusage=${CCUSAGE:-/work/bench/ccusage/node_modules/.bin/ccusage}
work=$(mktemp -d "${TMPDIR:-/tmp}/skein-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_STATE_HOME=$work/state
unset CLAUDE_CONFIG_DIR
mkdir -p "$HOME"

if [[ -n ${SKEIN:-} ]]; then
  skein=$SKEIN
else
  (cd "$here" && cargo build --release --quiet -p skein)
  skein="$here/target/release/skein"
fi
floor=${FLOOR:-}
if [[ -z $floor ]]; then
  (cd "$here" && cargo build --release --quiet -p skein-bench --example floor)
  floor="$here/target/release/examples/floor"
fi
have() { command -v "$1" > /dev/null; }
# want GROUP: whether ROWS (space-separated; empty = all) names this group of rows.
want() { [[ -z ${ROWS:-} || " $ROWS " == *" $1 "* ]]; }

find "$tree" -name '*.jsonl' -print0 | sort -z > "$work/files.list"
bytes=$(xargs -0 cat < "$work/files.list" | wc -c)
files=$(tr -cd '\0' < "$work/files.list" | wc -c)
# One big session: whole transcripts of the tree concatenated up to 462 MB (complete lines).
big="$work/big/projects/-bench/0badc0de-0000-4000-8000-000000000462.jsonl"
mkdir -p "$(dirname "$big")"
if want archive; then
  { xargs -0 cat < "$work/files.list" 2> /dev/null || true; } | head -c 462000000 | sed '$d' > "$big"
else
  : > "$big"
fi
big_bytes=$(stat -c %s "$big")
echo "tree: $files files, $bytes bytes ($tree); one file: $big_bytes bytes; cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"

# secs CMD...: median wall seconds of $runs runs (output discarded; `fresh` is called before each).
fresh() { :; }
secs() {
  local t=()
  for _ in $(seq "$runs"); do
    fresh
    local s=$EPOCHREALTIME
    "$@" > /dev/null 2>&1 || true
    t+=("$(echo "$EPOCHREALTIME - $s" | bc -l)")
  done
  printf '%s\n' "${t[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
rows=()
# row NAME SKEIN_SECS PEER NAME PEER_SECS GOAL: ratio = skein / peer (below 1: skein faster).
row() {
  rows+=("$(printf '%-26s %8.3f s   %-28s %8.3f s   %6.2fx   %s' "$1" "$2" "$3" "$4" \
    "$(echo "$2 / $4" | bc -l)" "$5")")
}

xargs -0 cat < "$work/files.list" > /dev/null # warm the page cache
cat "$big" > /dev/null

if want archive && have tar && have zstd; then
  tarzstd=$(secs sh -c "tar -cf - -C '$tree' . | zstd -q -3 -T0 > /dev/null")
  # A new archive directory per run, all removed at the end: ext4 skips inodes deleted in the
  # last ~30 s when it allocates new ones, so deleting the previous run's 10,000 files just
  # before a run makes every file creation scan (4x the system time, measured). And the earlier
  # runs' archives are written out before each run (`sync`, untimed): skein's commit syncs the
  # file system, which would otherwise also write what the runs before it left in the page
  # cache (0.25 s for 800 MB, measured), a cost of those runs, not of this one.
  fresh() {
    sync
    A=$(mktemp -d "$work/A.XXXXXX")
  }
  arch() { "$skein" archive -q "$@" --to "$A"; }
  row "archive" "$(secs arch "$tree")" "tar | zstd -3 -T0" "$tarzstd" "<= 2x"
  row "archive --redact" "$(secs arch --redact "$tree")" "tar | zstd -3 -T0" "$tarzstd" "<= 2.5x"
  zstd1=$(secs zstd -q -3 -T0 -c "$big")
  row "archive one 462 MB file" "$(secs arch "$big")" "zstd -3 -T0" "$zstd1" "<= 1.25x"
  row "  --redact" "$(secs arch --redact "$big")" "zstd -3 -T0" "$zstd1" ""
  fresh() { :; }
fi
if want stats || want jq; then
  stats=$(secs "$skein" stats -q "$tree")
fi
cat_s='' jq_s='' ccusage_s=''
if want stats; then
  cat_s=$(secs sh -c "xargs -0 cat < '$work/files.list'")
  row "stats" "$stats" "cat" "$cat_s" "<= 1.5x"
fi
if want jq && have jq; then
  jq_s=$(secs sh -c "xargs -0 cat < '$work/files.list' | jq -c '{type,uuid,parentUuid}'")
  row "jq-style (stats)" "$stats" "jq -c '{type,uuid,parentUuid}'" "$jq_s" "<= 0.04x (25x faster)"
fi
if want usage && [[ -x $ccusage ]]; then
  mkdir -p "$work/cfg"
  ln -s "$tree" "$work/cfg/projects"
  ccusage_s=$(secs env CLAUDE_CONFIG_DIR="$work/cfg" "$ccusage" claude daily --json --offline)
  row "usage daily" "$(secs "$skein" usage daily -q --format jsonl --no-catalog "$tree")" \
    "ccusage daily --offline" "$ccusage_s" "<= 0.2x (5x faster)"
fi
# The floors, on as many threads as skein uses by default (one per core).
threads=$(nproc)
if [[ $floor != none && -n $cat_s ]]; then
  row "floor read" "$(secs "$floor" read "$threads" "$tree")" "cat" "$cat_s" ""
fi
if [[ $floor != none && -n $jq_s ]]; then
  row "floor parse" "$(secs "$floor" parse "$threads" "$tree")" "jq -c '{type,uuid,parentUuid}'" \
    "$jq_s" "(jq-style goal 0.04x)"
fi
if [[ $floor != none && -n $ccusage_s ]]; then
  row "floor usage" "$(secs "$floor" usage "$threads" "$tree")" "ccusage daily --offline" \
    "$ccusage_s" "(usage goal 0.2x)"
fi

printf '\n%-26s %10s   %-28s %10s   %7s   %s\n' "skein" "wall" "yardstick" "wall" "ratio" "goal"
printf '%s\n' "${rows[@]}"
