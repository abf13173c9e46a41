#!/usr/bin/env bash
# Every command's output on testdata/ and the shared corpus, one file per run, so that two
# builds can be compared with `diff -r` (a refactor must not change a byte):
#
#   benches/compare_outputs.sh OLD_BINARY /tmp/out-old
#   benches/compare_outputs.sh target/release/skein /tmp/out-new
#   diff -r /tmp/out-old /tmp/out-new
#
# Runs stats, usage (every report, jsonl and table), tools, skills, check, tree and show (per
# session file, per agent file, per session id), prune/snapshot/redact (per file, and
# snapshot --out-dir), archive (twice), verify, restore, and usage on the archive and on the
# restored tree. Exit statuses and stderr are kept beside each output. Set SKEIN_CORPUS to the
# corpus (default ../shared/corpus); a private HOME and TZ=UTC keep the runs reproducible.
set -u
B=$(realpath "$1"); OUT=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$ROOT/testdata; C=${SKEIN_CORPUS:-$ROOT/../shared/corpus}
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
rm -rf "$OUT"; mkdir -p "$OUT"
export HOME=$WORK/home TZ=UTC; unset CLAUDE_CONFIG_DIR; mkdir -p "$HOME"
run() { local name=$1; shift; "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"; echo "rc=$?" >> "$OUT/$name.err"; }
for src in T C; do
  D=${!src}
  [ -d "$D" ] || { echo "no $D; skipped"; continue; }
  run $src.stats.jsonl $B stats -q $D --format jsonl
  run $src.stats.table $B stats -q $D --format table
  for k in daily weekly monthly session model; do
    run $src.usage.$k.jsonl $B usage $k $D --format jsonl
    run $src.usage.$k.table $B usage $k $D --format table --breakdown
  done
  run $src.tools.jsonl $B tools $D --format jsonl
  run $src.tools.name $B tools $D --format table --by name
  run $src.tools.loops $B tools $D --format jsonl --loops
  run $src.skills.jsonl $B skills $D --format jsonl
  run $src.skills.table $B skills $D --format table --slash-commands
  run $src.check.jsonl $B check $D --format jsonl
  i=0
  find $D -name '*.jsonl' -not -path '*/subagents/*' | sort | while read -r f; do
    i=$((i+1)); n=$src.f$i
    echo "$f" > "$OUT/$n.name"
    run $n.tree $B tree "$f" --format table
    run $n.treej $B tree "$f" --format jsonl
    run $n.show $B show "$f"
    run $n.prune $B prune --preset lean "$f" -o -
    run $n.snap $B snapshot "$f" -o -
    run $n.redact $B redact "$f" -o -
    O=$WORK/snap; rm -rf $O
    run $n.snapdir $B snapshot "$f" --out-dir $O
    [ -d $O ] && (cd $O && find . -type f | sort | xargs -r md5sum) > "$OUT/$n.snapdir.md5"
  done
  find $D -name 'agent-*.jsonl' | sort | head -40 | while read -r f; do
    n=$src.a$(echo "$f" | md5sum | cut -c1-8)
    run $n.tree $B tree "$f" --format table
    run $n.show $B show "$f"
  done
  for id in $(find $D -name '*.jsonl' -not -path '*/subagents/*' -not -name 'agent-*' | xargs -n1 basename | sed 's/.jsonl$//' | sort | head -30); do
    run $src.id.$id.tree $B tree "$id" --in $D --format jsonl
    run $src.id.$id.show $B show "${id:0:8}" --in $D
  done
  A=$WORK/arch-$src; R=$WORK/rest-$src
  run $src.archive $B archive -q $D --to $A
  run $src.archive2 $B archive -q $D --to $A
  run $src.verify $B archive verify $A
  run $src.restore $B archive restore $A --to $R -q
  (cd $R 2>/dev/null && find . -type f | sort | xargs -r md5sum) > "$OUT/$src.restored.md5"
  (cd $A && find . -type f -name '*.zst' | sort) > "$OUT/$src.archfiles"
  run $src.usage.arch $B usage session $A --format jsonl
  run $src.usage.rest $B usage session $R --format jsonl
  # Paths under the temporary directory differ between runs.
  sed -i "s|$WORK|WORK|g" "$OUT"/$src.* 2>/dev/null
done
