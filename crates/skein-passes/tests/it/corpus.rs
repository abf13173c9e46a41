//! The shared corpus of real transcripts (`SKEIN_CORPUS`, default `../shared/corpus` beside
//! the checkout), through `prune --preset lean` and `prune --preset safe`: every output line
//! is valid JSON (or an invalid input line passed through), untouched lines are byte-equal,
//! the DAG keeps no new dangling parent, tool pairs stay together, the active leaf stays (or
//! moves to a kept ancestor), no user or assistant text of the active branch is lost, and a
//! second run changes nothing. Prints the shrink figures with `SKEIN_PASSES_FIGURES=1`.

use crate::common;

use std::path::Path;

use skein_passes::{Preset, PruneOptions, prune};

/// Codex rollouts are not Claude Code transcripts (no uuid graph); they pass through.
fn is_codex(data: &[u8]) -> bool {
    let head = &data[..data.len().min(8192)];
    [
        &b"\"type\":\"session_meta\""[..],
        b"\"type\":\"response_item\"",
    ]
    .iter()
    .any(|pat| head.windows(pat.len()).any(|w| w == *pat))
}

#[test]
#[allow(clippy::print_stderr, reason = "figures for docs/passes.md")]
fn lean_and_safe_keep_every_invariant_on_the_corpus() {
    let Some((dir, files)) = skein_testkit::corpus_files() else {
        return;
    };
    let figures = std::env::var_os("SKEIN_PASSES_FIGURES").is_some();
    for preset in [Preset::Lean, Preset::Safe] {
        let options = PruneOptions::preset(preset);
        let (mut total_in, mut total_out) = (0u64, 0u64);
        let mut ratios: Vec<(f64, u64, String)> = Vec::new();
        // Small files (< 100 KB): count, bytes in, bytes out; bytes saved per rule.
        let mut small = (0u64, 0u64, 0u64);
        let mut saved: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
        for path in &files {
            let data = std::fs::read(path).expect("read corpus file");
            let name = path
                .strip_prefix(&dir)
                .unwrap_or(path)
                .display()
                .to_string();
            let (out, report) = prune(&data, &options);
            if let Some(d) = std::env::var_os("SKEIN_PASSES_DUMP") {
                let p = Path::new(&d).join(format!("{preset:?}")).join(&name);
                std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
                std::fs::write(p, &out).expect("dump");
            }
            common::check(&data, &out);
            common::check_leaf(&data, &out);
            common::check_branch_text(&data, &out);
            assert_eq!(report.unrewritable_lines, 0, "{name}");
            let (again, _) = prune(&out, &options);
            assert!(
                again == out,
                "{name}: a second {preset:?} run changed the output"
            );
            if !is_codex(&data) {
                total_in += data.len() as u64;
                total_out += out.len() as u64;
                if data.len() < 100_000 {
                    small.0 += 1;
                    small.1 += data.len() as u64;
                    small.2 += out.len() as u64;
                }
                if figures {
                    let rules = serde_json::to_value(report.rules).expect("report");
                    for (rule, stats) in rules.as_object().expect("rules") {
                        *saved.entry(rule.clone()).or_default() +=
                            stats["bytes"].as_u64().expect("bytes");
                    }
                }
                ratios.push((
                    data.len() as f64 / out.len().max(1) as f64,
                    data.len() as u64,
                    name,
                ));
            }
        }
        // Every invariant above also holds for a pass that does nothing: the corpus must shrink
        // (docs/passes.md: `lean` meets its ≥ 3× goal on the corpus as a whole).
        assert!(
            total_out < total_in,
            "{preset:?}: {total_in} -> {total_out} bytes"
        );
        if preset == Preset::Lean {
            assert!(
                total_out * 3 <= total_in,
                "lean below 3x on the corpus: {total_in} -> {total_out} bytes"
            );
        }
        if figures {
            ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
            let median = ratios[ratios.len() / 2].0;
            let big: Vec<&(f64, u64, String)> = ratios.iter().filter(|r| r.1 >= 100_000).collect();
            let big_median = big.get(big.len() / 2).map_or(0.0, |r| r.0);
            let big_min = big.first().map_or(0.0, |r| r.0);
            eprintln!(
                "{preset:?}: {} files, {total_in} -> {total_out} bytes ({:.2}x overall), median {median:.2}x; {} files >= 100 KB: median {big_median:.2}x, min {big_min:.2}x",
                ratios.len(),
                total_in as f64 / total_out.max(1) as f64,
                big.len()
            );
            let is_main = |r: &&&(f64, u64, String)| {
                !Path::new(&r.2)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
            };
            let mains: Vec<&&(f64, u64, String)> = big.iter().filter(is_main).collect();
            if let (Some(first), Some(mid)) = (mains.first(), mains.get(mains.len() / 2)) {
                eprintln!(
                    "  main sessions >= 100 KB: {}, median {:.2}x, 25th pct {:.2}x, min {:.2}x, >= 3x: {}",
                    mains.len(),
                    mid.0,
                    mains[mains.len() / 4].0,
                    first.0,
                    mains.iter().filter(|r| r.0 >= 3.0).count()
                );
            }
            eprintln!(
                "  files < 100 KB: {}, {} -> {} bytes ({:.1} % of the input)",
                small.0,
                small.1,
                small.2,
                small.1 as f64 * 100.0 / total_in.max(1) as f64
            );
            for (rule, bytes) in &saved {
                eprintln!(
                    "  saved by {rule}: {:.1} % of the input",
                    *bytes as f64 * 100.0 / total_in.max(1) as f64
                );
            }
            for r in big
                .iter()
                .take(if std::env::var_os("SKEIN_PASSES_ALL").is_some() {
                    1000
                } else {
                    5
                })
            {
                eprintln!("  lowest: {:.2}x {} ({} bytes)", r.0, r.2, r.1);
            }
        }
    }
}
