//! `skein show` run for real: the Markdown of the hand-made session in
//! `testdata/reports/show` against the reviewed expectation, every option, session lookup,
//! the bundled sample, and every session of the shared corpus (skipped with a note when
//! absent).

use std::path::PathBuf;
use std::process::Output;

use crate::common;
use common::{corpus, in_order, jsonl_files, note, root, skein};

fn fixture_dir() -> PathBuf {
    root().join("testdata/reports/show")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf8")
}

fn show(args: &[&str]) -> String {
    let mut all = vec!["show", "--in", "projects"];
    all.extend_from_slice(args);
    ok(&skein(&all, &fixture_dir()))
}

#[test]
fn markdown_matches_the_reviewed_document() {
    let got = show(&["33333333-a", "--max-result", "20"]);
    let want = std::fs::read_to_string(fixture_dir().join("expected/session_a_max20.md"))
        .expect("expected");
    assert_eq!(got, want);
}

#[test]
fn active_conversation_in_order_without_the_abandoned_branch() {
    let md = show(&["33333333-aaaa-4000-8000-000000000001"]);
    in_order(
        &md,
        &[
            "# Files chat",
            "- **Shown:** 3 prompts · 3 tool calls · 1 subagent",
            "## User\n\nPlease list the files.",
            "## Assistant",
            "<summary>Thinking</summary>",
            "<summary><b>Bash</b> ls</summary>",
            "a.txt\nb.txt",
            // the parallel call put back by the repair, its result cut with a size note
            "<summary><b>Read</b> /w/big.txt</summary>",
            "*(result truncated: 4,000 of 5,000 bytes shown)*",
            "Vec&lt;u8> stays escaped.",
            "## User\n\nSummarize &lt;b.txt> please",
            "<summary><b>Task</b> Summarize</summary>",
            "<summary>Subagent <code>sub1</code> · general-purpose · 2 records</summary>",
            "#### User\n\nSummarize b.txt",
            "#### Assistant\n\nb.txt is empty.",
            "</details>",
            "**Result:**",
            "*[Request interrupted by user]*",
            "*Conversation compacted (auto, 1,234 tokens before).*",
            "<summary>Compaction summary</summary>",
            "## User\n\nWhat next?",
            "*No response requested.* (synthetic message)",
            "Result of <code>toolu_GONE</code> (its call is not on this branch)",
        ],
    );
    assert!(!md.contains("Delete them."), "abandoned branch shown");
    assert!(!md.contains("Deleted."), "abandoned branch shown");
    assert!(
        !md.contains("Injected skill body"),
        "meta records are skipped"
    );
}

#[test]
fn options_change_what_is_shown() {
    let md = show(&["33333333-a", "--no-thinking"]);
    assert!(!md.contains("Thinking") && !md.contains("I should run ls."));
    let md = show(&["33333333-a", "--meta"]);
    in_order(
        &md,
        &[
            "<summary>Injected context</summary>\n\nInjected skill body",
            "There are two files",
        ],
    );
    let md = show(&["33333333-a", "--no-agents"]);
    assert!(!md.contains("Subagent"));
    assert!(md.contains("- **Shown:** 3 prompts · 3 tool calls · 0 subagents"));
    let md = show(&["33333333-a", "--max-result", "0"]);
    assert!(!md.contains("truncated"));
    assert_eq!(md.matches("\nline").count(), 1000);
    // another branch, by a uuid prefix
    let md = show(&["33333333-a", "--leaf", "a5"]);
    in_order(
        &md,
        &[
            "- **Branch:** ending at record `a5`",
            "Please list the files.",
            "## User\n\nDelete them.",
            "## Assistant\n\nDeleted.",
        ],
    );
    assert!(!md.contains("Summarize &lt;b.txt>"));
    let md = show(&["33333333-a", "--since-compaction"]);
    assert!(!md.contains("Please list the files."));
    in_order(
        &md,
        &[
            "- **Branch:** since the last compaction",
            "*Conversation compacted",
            "What next?",
        ],
    );
    let out = skein(
        &["show", "--in", "projects", "33333333-a", "--leaf", "nope"],
        &fixture_dir(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn lookup_output_file_and_errors() {
    let out = skein(&["show", "--in", "projects", "33333333"], &fixture_dir());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ambiguous (2 matches)"), "{err}");

    let md = show(&["33333333-b"]);
    assert!(md.starts_with("# Hello\n"), "{md}");
    in_order(&md, &["## User\n\nHello", "## Assistant\n\nHi!"]);

    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("out.md");
    let out = skein(
        &[
            "show",
            "projects/-home-t-show/33333333-bbbb-4000-8000-000000000002.jsonl",
            "-o",
            file.to_str().expect("utf8"),
        ],
        &fixture_dir(),
    );
    assert!(ok(&out).is_empty());
    assert_eq!(std::fs::read_to_string(&file).expect("written"), md);
}

#[test]
fn an_agent_transcript_alone_is_shown_at_the_top_level() {
    let dir = root().join("testdata/reports/tree");
    let md = ok(&skein(
        &[
            "show",
            "projects/-home-t-tree/11111111-0000-4000-8000-000000000001/subagents/agent-agent01.jsonl",
        ],
        &dir,
    ));
    in_order(
        &md,
        &[
            "# Find the config file",
            "Subagent <code>agent01</code> · Explore · 4 records",
            "## User\n\nFind the config file",
            "<summary><b>Agent</b> Nested lookup</summary>",
            "</details>\n\nConfig is in cfg.toml.",
        ],
    );
}

#[test]
fn sample_session_shows_the_active_branch() {
    let sample = root().join("testdata/sample/projects/-home-dev-widgets");
    let md = ok(&skein(
        &["show", "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b.jsonl"],
        &sample,
    ));
    in_order(
        &md,
        &[
            "# Add --json flag to widgets CLI",
            "Add a `--json` flag to the widgets CLI and test it.",
            "<summary><b>Read</b>",
            "<summary><b>Grep</b>",
            "<summary><b>Task</b> Find flag parsing</summary>",
            "Subagent <code>a1b2c3d4e5f60718</code> · Explore",
            "Flags are parsed in src/cli.rs with clap derive.",
            "Actually, make `--json` print one object per line.",
            "<summary><b>Bash</b> cargo test · <i>no result</i></summary>",
            "*Conversation compacted (auto, 167,393 tokens before).*",
            "Continuing: `--json` now writes JSON Lines.",
        ],
    );
    assert!(!md.contains("Now make it print pretty JSON."));
    assert!(!md.contains("Base directory for this skill"));
}

/// The `<details>` nesting left open at the end, outside fenced code (`None`: closed more
/// than opened).
fn details_depth(md: &str) -> Option<i64> {
    let mut fence: Option<usize> = None;
    let mut depth = 0i64;
    for line in md.lines() {
        let ticks = line.chars().take_while(|&c| c == '`').count();
        match fence {
            Some(n) if ticks >= n && line.trim_end().len() == ticks => fence = None,
            None if ticks >= 3 => fence = Some(ticks),
            None if line == "<details>" => depth += 1,
            None if line == "</details>" => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            Some(_) | None => {}
        }
    }
    Some(depth)
}

#[test]
fn corpus_every_session_renders() {
    let Some(corpus) = corpus() else { return };
    let cwd = std::env::temp_dir();
    let mut shown = 0;
    for f in &jsonl_files(&corpus) {
        // every main transcript, and agent transcripts as sessions of their own
        let path = f.to_str().expect("utf8");
        let md = ok(&skein(&["show", "-q", path], &cwd));
        assert!(md.starts_with("# "), "{path}");
        assert!(md.contains("- **Shown:** "), "{path}");
        assert_eq!(details_depth(&md), Some(0), "{path}: <details> balanced");
        shown += 1;
    }
    note(&format!("show: {shown} corpus transcripts rendered"));
}
