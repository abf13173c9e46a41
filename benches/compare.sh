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
# (default 5: a median of five holds steadier than one of three), page cache warm; the rows whose
# commands take a second or two at most (stats, the one 462 MB file) take QUICK_RUNS rounds
# (default three times RUNS): on a 2-vCPU host whose neighbours come and go, a burst of their
# load lands on two of five such runs (and on skein's two threads more than on cat's one), and
# their ratio moved by 30 % between runs of five (docs/performance.md, stop 46). A row's
# commands take turns (yardstick, skein, floor, then again), so that the machine's speed, which
# drifts by 5-10 % within minutes here and by 10-30 % between runs, weighs on both sides of a
# ratio alike.
# Yardsticks that are not installed are skipped. Check that $TMPDIR creates files at normal
# speed: where tens of gigabytes were just deleted, ext4 took 33x longer to create a file than
# elsewhere on the same file system (measured), and the bulk archive rows measure that. A run
# deletes its archives at its end, so the next run wants another $TMPDIR.
#
#   row                        skein command                          yardstick            goal
#   archive                    skein archive -q TREE --to A           tar -c TREE | zstd -3 -T0   <= 2x
#   archive --redact           skein archive -q --redact TREE --to A  same                  <= 2.5x
#   archive one file           skein archive -q BIG --to A            zstd -3 -T0 BIG       <= 1.25x (>= 80 % speed)
#   archive one file --redact  skein archive -q --redact BIG --to A   zstd -3 -T0 BIG
#   stats                      skein stats -q TREE                    cat of the files      <= 1.5x
#   jq-style (records)         skein records -q -f type,uuid,parentUuid TREE (jq's lines, docs/records.md)
#                                                                     jq -c '{type,uuid,parentUuid}'  >= 25x faster
#   jq-style (stats)           skein stats -q TREE (every record's type, uuid, parentUuid, and the
#                              graph, pairing, usage: more than jq does)           same jq
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
runs=${2:-5}
quick_runs=${QUICK_RUNS:-$((runs * 3))}
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
echo "tree: $files files, $bytes bytes ($tree); one file: $big_bytes bytes; cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg); rounds: $runs ($quick_runs for stats and the one file)"

# medians FN...: runs the functions in turns, FN1 FN2 ... then FN1 FN2 ... again, $runs rounds
# (output discarded; `fresh` is called before each run), and prints each one's median wall
# seconds on one line, in the order given.
fresh() { :; }
medians() {
  local -A t=()
  local f s
  for _ in $(seq "$runs"); do
    for f in "$@"; do
      fresh
      s=$EPOCHREALTIME
      "$f" > /dev/null 2>&1 || true
      t[$f]+="$(echo "$EPOCHREALTIME - $s" | bc -l) "
    done
  done
  for f in "$@"; do
    # shellcheck disable=SC2086 # the word splitting is wanted: one time per word
    printf '%s\n' ${t[$f]} | sort -g | awk '{a[NR]=$1} END {printf "%s ", a[int((NR+1)/2)]}'
  done
  echo
}
rows=()
# row NAME SKEIN_SECS PEER NAME PEER_SECS GOAL: ratio = skein / peer (below 1: skein faster),
# and then how many times faster skein is.
row() {
  local faster=""
  if (($(echo "$2 < $4" | bc -l))); then
    faster=$(printf '%.1fx' "$(echo "$4 / $2" | bc -l)")
  fi
  rows+=("$(printf '%-26s %8.3f s   %-28s %8.3f s   %6.3fx %7s   %s' "$1" "$2" "$3" "$4" \
    "$(echo "$2 / $4" | bc -l)" "$faster" "$5")")
}

xargs -0 cat < "$work/files.list" > /dev/null # warm the page cache
cat "$big" > /dev/null
# The floors, on as many threads as skein uses by default (one per core).
threads=$(nproc)
floors() { [[ $floor != none ]]; }

if want archive && have tar && have zstd; then
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
  tar_zstd() { tar -cf - -C "$tree" . | zstd -q -3 -T0 > /dev/null; }
  archive_tree() { "$skein" archive -q "$tree" --to "$A"; }
  archive_tree_redact() { "$skein" archive -q --redact "$tree" --to "$A"; }
  zstd_big() { zstd -q -3 -T0 -c "$big"; }
  archive_big() { "$skein" archive -q "$big" --to "$A"; }
  archive_big_redact() { "$skein" archive -q --redact "$big" --to "$A"; }
  read -r tarzstd tree_s tree_redact_s < <(medians tar_zstd archive_tree archive_tree_redact)
  row "archive" "$tree_s" "tar | zstd -3 -T0" "$tarzstd" "<= 2x"
  row "archive --redact" "$tree_redact_s" "tar | zstd -3 -T0" "$tarzstd" "<= 2.5x"
  read -r zstd1 big_s big_redact_s < <(runs=$quick_runs medians zstd_big archive_big archive_big_redact)
  row "archive one 462 MB file" "$big_s" "zstd -3 -T0" "$zstd1" "<= 1.25x"
  row "  --redact" "$big_redact_s" "zstd -3 -T0" "$zstd1" ""
  fresh() { :; }
fi
floor_rows=()
# pair_row NAME PEER GOAL PEER_FN SKEIN_FN FLOOR_NAME FLOOR_FN FLOOR_GOAL: the row of SKEIN_FN
# against PEER_FN, and unless FLOOR=none the row of FLOOR_FN against the same yardstick (printed
# after skein's rows), the three commands taking turns.
pair_row() {
  local peer_s skein_s floor_s
  if floors; then
    read -r peer_s skein_s floor_s < <(medians "$4" "$5" "$7")
    floor_rows+=("$6|$floor_s|$2|$peer_s|$8")
  else
    read -r peer_s skein_s < <(medians "$4" "$5")
  fi
  row "$1" "$skein_s" "$2" "$peer_s" "$3"
}
cat_files() { xargs -0 cat < "$work/files.list"; }
skein_stats() { "$skein" stats -q "$tree"; }
floor_read() { "$floor" read "$threads" "$tree"; }
floor_parse() { "$floor" parse "$threads" "$tree"; }
floor_usage() { "$floor" usage "$threads" "$tree"; }
if want stats; then
  runs=$quick_runs pair_row "stats" "cat" "<= 1.5x" cat_files skein_stats "floor read" floor_read ""
fi
if want jq && have jq; then
  jq_tree() { xargs -0 cat < "$work/files.list" | jq -c '{type,uuid,parentUuid}'; }
  skein_records() { "$skein" records -q -f type,uuid,parentUuid "$tree"; }
  # Untimed: skein's lines are jq's, in the same order, less those of the lines jq reads as
  # two objects and skein names invalid (docs/records.md).
  jq_tree > "$work/jq.out"
  skein_records > "$work/records.out"
  extra=$(diff "$work/records.out" "$work/jq.out" | grep -c '^<' || true)
  echo "records: $(wc -l < "$work/records.out") lines, $(wc -l < "$work/jq.out") from jq, $extra not in jq's output"
  rm -f "$work/jq.out" "$work/records.out"
  jq_peer="jq -c '{type,uuid,parentUuid}'"
  if floors; then
    read -r jq_s records_s stats_s floor_s < <(medians jq_tree skein_records skein_stats floor_parse)
    floor_rows+=("floor parse|$floor_s|$jq_peer|$jq_s|(jq-style goal 0.04x)")
  else
    read -r jq_s records_s stats_s < <(medians jq_tree skein_records skein_stats)
  fi
  row "jq-style (records)" "$records_s" "$jq_peer" "$jq_s" "<= 0.04x (25x faster)"
  row "jq-style (stats)" "$stats_s" "$jq_peer" "$jq_s" "(does more than jq)"
fi
if want usage && [[ -x $ccusage ]]; then
  mkdir -p "$work/cfg"
  ln -s "$tree" "$work/cfg/projects"
  ccusage_daily() { CLAUDE_CONFIG_DIR="$work/cfg" "$ccusage" claude daily --json --offline; }
  skein_usage() { "$skein" usage daily -q --format jsonl --no-catalog "$tree"; }
  pair_row "usage daily" "ccusage daily --offline" "<= 0.2x (5x faster)" \
    ccusage_daily skein_usage "floor usage" floor_usage "(usage goal 0.2x)"
fi
for r in "${floor_rows[@]}"; do
  IFS='|' read -r name secs peer peer_secs goal <<< "$r"
  row "$name" "$secs" "$peer" "$peer_secs" "$goal"
done

printf '\n%-26s %10s   %-28s %10s   %7s %7s   %s\n' "skein" "wall" "yardstick" "wall" "ratio" "faster" "goal"
printf '%s\n' "${rows[@]}"
