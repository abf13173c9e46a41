#!/usr/bin/env bash
# Compare skein's archive path with gzip -6 and the zstd CLI on the same JSONL input.
#
#   benches/compare_compression.sh [INPUT.jsonl] [RUNS]
#
# Without INPUT, a deterministic synthetic 100 MiB transcript is generated
# (crates/skein-archive/examples/common/synth.rs). RUNS (default 3) repeats every method;
# the median wall time is reported. All outputs go to files in a scratch directory on the same
# filesystem; input comes from the page cache (one warm-up read first). skein's figures include
# everything a real `skein archive` does: checkpoint, meta, index, and the fsyncs.
#
# Prints, per method: compressed size, ratio (input/output), compression MB/s (1 MB = 10^6 B),
# then skein's ratio and speed relative to gzip -6 and zstd -3, and the incremental Stop-time
# step (100 KiB appended to the archived input, median of 30 rounds).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
runs="${2:-3}"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/skein-compare.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT

cargo build --quiet --release --manifest-path "$here/Cargo.toml" -p skein-archive --example archive_bench
bench="$here/target/release/examples/archive_bench"

if [[ $# -ge 1 && -n "$1" ]]; then
    input="$1"
else
    input="$scratch/synthetic.jsonl"
    "$bench" gen "$input" 100
fi
size=$(stat -c %s "$input")
cat "$input" > /dev/null

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# run NAME OUTPUT COMMAND...: times COMMAND $runs times, records median seconds and output size.
declare -A secs bytes
run() {
    local name="$1" out="$2"
    shift 2
    local times=()
    for _ in $(seq "$runs"); do
        rm -rf "$out"
        local t0 t1
        t0=$(now)
        "$@" > /dev/null
        t1=$(now)
        times+=("$(echo "$t1 - $t0" | bc -l)")
    done
    secs[$name]=$(printf '%s\n' "${times[@]}" | median)
    if [[ -d "$out" ]]; then
        bytes[$name]=$(find "$out" -name '*.jsonl.zst' -printf '%s\n' | awk '{s+=$1} END {print s}')
    else
        bytes[$name]=$(stat -c %s "$out")
    fi
}

run "gzip -6" "$scratch/out.gz" sh -c "gzip -6 -c '$input' > '$scratch/out.gz'"
run "zstd -3 -T1" "$scratch/out1.zst" zstd -q -3 -T1 "$input" -o "$scratch/out1.zst"
run "zstd -3 -T0" "$scratch/out0.zst" zstd -q -3 -T0 "$input" -o "$scratch/out0.zst"
run "skein archive (redact)" "$scratch/arch-r" "$bench" archive "$input" "$scratch/arch-r"
run "skein archive (plain)" "$scratch/arch-p" "$bench" archive "$input" "$scratch/arch-p" --no-redact
run "skein archive -T1" "$scratch/arch-1" "$bench" archive "$input" "$scratch/arch-1" --no-redact --threads 1

printf '\ninput: %s (%d bytes), %s runs each, median\n\n' "$input" "$size" "$runs"
printf '%-24s %12s %8s %10s\n' method bytes ratio 'MB/s'
for m in "gzip -6" "zstd -3 -T1" "zstd -3 -T0" "skein archive (redact)" "skein archive (plain)" "skein archive -T1"; do
    printf '%-24s %12d %8.3f %10.1f\n' "$m" "${bytes[$m]}" \
        "$(echo "$size / ${bytes[$m]}" | bc -l)" "$(echo "$size / 1000000 / ${secs[$m]}" | bc -l)"
done

ratio() { echo "$size / ${bytes[$1]}" | bc -l; }
speed() { echo "$size / ${secs[$1]}" | bc -l; }
s="skein archive (redact)"
printf '\n%s vs gzip -6:     ratio x%.3f, speed x%.2f\n' "$s" \
    "$(echo "$(ratio "$s") / $(ratio "gzip -6")" | bc -l)" "$(echo "$(speed "$s") / $(speed "gzip -6")" | bc -l)"
printf '%s vs zstd -3 -T0: ratio x%.3f, speed x%.2f\n' "$s" \
    "$(echo "$(ratio "$s") / $(ratio "zstd -3 -T0")" | bc -l)" "$(echo "$(speed "$s") / $(speed "zstd -3 -T0")" | bc -l)"

cp "$input" "$scratch/live.jsonl"
printf '\nincremental Stop-time step: '
"$bench" append "$scratch/live.jsonl" "$scratch/arch-inc" 100 30
