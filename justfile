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

# skein against jq (and ccusage / claude-code-log where installed) on ~1 GB
compare:
    benches/compare.sh

# Everything CI checks
ci:
    .ci/run

# skein usage against ccusage (installed with npm) on ~1 GB: totals and speed ratio
compare-ccusage:
    benches/ccusage_compare.sh

# skein archive against gzip -6 and the zstd CLI (ratio and MB/s)
compare-compression:
    benches/compare_compression.sh

# Incremental Stop hook latency on a 100 MB session (process start to exit)
hook-latency:
    cargo build --release -p skein
    benches/hook_latency.sh target/release/skein
