# skein: a menu of the commands developers and CI run.

default:
    @just --list

# Run skein stats on the bundled sample
sample:
    cargo run --release -- stats testdata/sample

# The test suite (what CI runs)
test:
    cargo test --workspace

fmt:
    cargo fmt --all

fmt-check:
    cargo fmt --all --check

lint:
    cargo clippy --workspace --all-targets -- -D warnings

# Criterion benchmarks (throughput in bytes); set SKEIN_CORPUS to include the corpus
bench:
    cargo bench -p skein-bench

# skein beside its yardsticks with ratios (archive vs tar|zstd and zstd, stats vs cat and jq,
# usage vs ccusage) on the ~1 GB bench tree, then the floors (list, read and parse only, the same
# yardsticks); skips what is not installed
compare:
    benches/compare.sh

# Everything CI checks
ci:
    .ci/run

# What this machine charges for the page-cache copy by read block and by where in its page a
# read lands, and for the final sync of a big file with and without syncing behind the writer
# (docs/performance.md, stops 33 and 34)
probe tree="/work/bench/tree20" file="":
    python3 benches/machine_probe.py blocks {{tree}}
    python3 benches/machine_probe.py align {{tree}}
    if [ -n "{{file}}" ]; then python3 benches/machine_probe.py flush {{file}}; fi

# skein usage against ccusage (installed with npm) on ~1 GB: totals and speed ratio
compare-ccusage:
    benches/ccusage_compare.sh

# skein archive against gzip -6 and the zstd CLI (ratio and MB/s)
compare-compression:
    benches/compare_compression.sh

# PySpark (local[2]) daily totals over `skein export parquet` of PATH (default: the corpus)
# against `skein usage daily`; installs pyspark in a venv under target/, needs Java 17
spark-check path="":
    benches/spark/run.sh {{path}}

# Incremental Stop hook latency on a 100 MB session (process start to exit)
hook-latency:
    cargo build --release -p skein
    benches/hook_latency.sh target/release/skein

# Every fuzz target (`cargo fuzz list`) for SECS seconds each, inputs up to MAX_LEN bytes, seeded
# from fuzz/seeds/<target>; needs `cargo install cargo-fuzz` (nightly features on stable through
# RUSTC_BOOTSTRAP=1). zstd may reserve the 2 GiB window a frame header asks for (skein reads
# --long=31 archives), untouched until used: hence the 4 GiB malloc limit.
fuzz secs="60" max_len="4096":
    #!/usr/bin/env bash
    set -euo pipefail
    cd fuzz
    export RUSTC_BOOTSTRAP=1
    for t in $(cargo fuzz list); do
        mkdir -p "corpus/$t"
        seeds=()
        if [ -d "seeds/$t" ]; then seeds=("seeds/$t"); fi
        echo "== fuzz $t: {{secs}} s, max_len {{max_len}}"
        cargo fuzz run "$t" "corpus/$t" ${seeds[@]+"${seeds[@]}"} -- \
            -max_total_time={{secs}} -max_len={{max_len}} -malloc_limit_mb=4096 -print_final_stats=1
    done
