//! The whole history, run for real: `show`, `tree`, `stats`, `tools` and `usage` on the
//! hand-written fixtures of `testdata/history` (one session per kind of broken chain, and a
//! session of named agents in a team). The corpus is checked in `history_corpus`.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::common;
use common::{in_order, jsonl, ok, skein, skein_env, stdout, testdata};

const DANGLING: &str = "11111111-0000-4000-8000-00000000da01";
const COMPACTION: &str = "11111111-0000-4000-8000-00000000c0c1";
const NEW_ROOT: &str = "11111111-0000-4000-8000-0000000000e3";
const TEAM: &str = "22222222-0000-4000-8000-0000000007ea";

fn dir() -> PathBuf {
    testdata("history")
}

fn session(id: &str) -> String {
    format!("projects/-w/{id}.jsonl")
}

/// `skein ARGS` in `testdata/history` with its Claude config dir (the team config).
fn run(args: &[&str]) -> String {
    let config = dir().join("claude");
    stdout(ok(&skein_env(
        args,
        &dir(),
        &[("CLAUDE_CONFIG_DIR", &config)],
    )))
}

#[test]
fn show_bridges_each_kind_of_break_with_a_note() {
    let md = run(&["show", &session(DANGLING)]);
    in_order(
        &md,
        &[
            "- **Shown:** 2 prompts · 2 tool calls · 0 subagents",
            "- **History:** bridged across 1 seam",
            "First prompt: list the files",
            "Second prompt: read the README",
            "> ⚠ **Seam:** record `p1` (progress/hook_progress) names parent `0f0f0f0f`, which is not in this file; the history before it is joined at `a3`",
            "The README says it manages widgets.",
        ],
    );
    let md = run(&["show", &session(COMPACTION)]);
    in_order(
        &md,
        &[
            "- **Shown:** 2 prompts · 1 tool call · 1 subagent",
            "First prompt: where are flags parsed?",
            // The subagent spawned before the seam is nested under its call.
            "<summary>Subagent <code>a0c0ffee</code> · Explore · 2 records</summary>",
            "> ⚠ **Seam:** record `cb` (system/compact_boundary) is a compaction boundary continuing `0e0e0e0e`, which is not in this file",
            "*Conversation compacted (auto, 150,000 tokens before).*",
            "Second prompt: add a --json flag",
        ],
    );
    let md = run(&["show", &session(NEW_ROOT)]);
    in_order(
        &md,
        &[
            "# First prompt: plan the release",
            "- **Shown:** 2 prompts · 2 tool calls · 0 subagents",
            "First prompt: plan the release",
            "*[Request interrupted by user for tool use]*",
            "> ⚠ **Seam:** record `h2` (progress/hook_progress) starts a new chain (no parent; the context was cleared)",
            "Second prompt: implement the following plan",
            "## Tasks",
            "- [x] Tag the release",
            "- [ ] Publish · *in progress*",
        ],
    );
    assert!(
        !md.contains("relase"),
        "the rewound prompt stays out:\n{md}"
    );
}

#[test]
fn claude_codes_own_walk_and_all_branches_are_options() {
    // --since-compaction keeps Claude Code's walk: the part after the seam only.
    let md = run(&["show", &session(DANGLING), "--since-compaction"]);
    assert!(md.contains("- **Shown:** 0 prompts"), "{md}");
    assert!(!md.contains("First prompt") && !md.contains("Seam"), "{md}");
    // --all-branches folds the rewound prompt in where it forks.
    let md = run(&["show", &session(NEW_ROOT), "--all-branches"]);
    in_order(
        &md,
        &[
            "# First prompt: plan the release",
            "- **Rewound branches:** 1 (folded where they fork)",
            "<summary>Rewound branch from <code>x1</code> · 2 records (not on the active branch)</summary>",
            "Plan the relase (typo, rewound)",
            "</details>",
            "First prompt: plan the release",
        ],
    );
}

#[test]
fn stats_keep_claude_codes_path_and_add_the_bridged_one() {
    let rows = jsonl(ok(&skein(&["stats", &session(DANGLING)], &dir())));
    let chain = &rows[0]["chain"];
    assert_eq!(chain["active_leaf"], "a4");
    assert_eq!(chain["active_path_len"], 3);
    assert_eq!(chain["bridged_path_len"], 10);
    assert_eq!(
        chain["seams"],
        serde_json::json!([{"uuid":"p1","line":9,"kind":"dangling_parent","continues":"a3"}])
    );
    let rows = jsonl(ok(&skein(&["stats", &session(NEW_ROOT)], &dir())));
    assert_eq!(rows[0]["chain"]["seams"][0]["kind"], "new_root");
    let rows = jsonl(ok(&skein(&["stats", &session(TEAM)], &dir())));
    assert_eq!(rows[0]["chain"]["seams"], serde_json::json!([]));
    assert_eq!(
        rows[0]["chain"]["bridged_path_len"],
        rows[0]["chain"]["active_path_len"]
    );
}

#[test]
fn tree_draws_the_seam_under_the_record_the_history_continues_from() {
    let table = run(&["tree", "--format", "table", &session(NEW_ROOT)]);
    in_order(
        &table,
        &[
            "active leaf a3 · seams 1",
            "* h1  progress/hook_progress",
            "├─ · x1  user/prompt  Plan the relase",
            "* i1  user/interrupt",
            "* h2  progress/hook_progress  [seam: history continues from i1]",
            "* u2  user/prompt",
        ],
    );
    let rows = jsonl(ok(&skein(
        &["tree", "--format", "jsonl", &session(DANGLING)],
        &dir(),
    )));
    let p1 = rows.iter().find(|r| r["uuid"] == "p1").expect("p1");
    assert_eq!(p1["seam"], "dangling_parent");
    assert_eq!(p1["attached_to"], "a3");
    assert_eq!(p1["dangling"], true);
    assert!(
        rows.iter().all(|r| r["active"] == true),
        "the whole file is one history"
    );
    let u1 = rows.iter().position(|r| r["uuid"] == "u1").expect("u1");
    let p1 = rows.iter().position(|r| r["uuid"] == "p1").expect("p1");
    assert!(u1 < p1, "drawing order follows the history");
}

#[test]
fn named_agents_messages_and_tasks() {
    let md = run(&["show", &session(TEAM)]);
    in_order(
        &md,
        &[
            "<summary>Subagent <code>aa11aa11aa11aa11</code> · name alice · general-purpose · team research · worktree /w/.claude/worktrees/agent-aa11aa11 · 6 records</summary>",
            "✉ **alice → team-lead** · done",
            "> Notes are in notes.md.",
            // bob has no .meta.json: his type is his team config entry's.
            "<summary>Subagent <code>bb22bb22bb22bb22</code> · name bob · reviewer · team research · 4 records</summary>",
            "✉ **team-lead → alice** · round 2",
            "> Round 2: add a comparison section.",
            "✉ **team-lead → bob** (shutdown request)",
            "## Tasks",
            "*Latest task list (`TaskCreate` / `TaskUpdate`): 1 of 2 done",
            "- [x] **#1** Research plan mode · owner alice",
            "- [ ] **#2** Review the notes",
        ],
    );
    // Without the team config, bob has no type.
    let bare = stdout(ok(&skein(&["show", &session(TEAM)], &dir())));
    assert!(
        bare.contains("· name bob · team research · 4 records"),
        "{bare}"
    );

    let table = run(&["tree", "--format", "table", &session(TEAM)]);
    assert!(table.contains("◆ agent aa11aa11aa11aa11 · name alice · general-purpose · team research · worktree /w/.claude/worktrees/agent-aa11aa11 · \"Research plan mode\" · 6 nodes"), "{table}");
    let rows: Vec<Value> = run(&["tree", "--format", "jsonl", &session(TEAM)])
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let edges: Vec<(&str, &str, &str)> = rows
        .iter()
        .filter(|r| r["edge"] == "message")
        .map(|r| {
            (
                r["from"].as_str().expect("from"),
                r["to"].as_str().expect("to"),
                r["kind"].as_str().expect("kind"),
            )
        })
        .collect();
    assert_eq!(
        edges,
        [
            ("team-lead", "alice", "message"),
            ("team-lead", "bob", "shutdown_request"),
            ("alice", "team-lead", "message"),
        ]
    );
    assert!(
        rows.iter()
            .filter(|r| r["agent_id"] == "aa11aa11aa11aa11")
            .all(|r| r["agent_name"] == "alice")
    );
}

#[test]
fn tools_and_usage_by_agent_and_media_apart_from_text() {
    let rows: Vec<Value> = run(&["tools", "--by", "agent", "projects"])
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let by: HashMap<&str, &Value> = rows
        .iter()
        .map(|r| (r["agent"].as_str().expect("agent"), r))
        .collect();
    assert_eq!(by["alice"]["calls"], 2);
    assert_eq!(by["bob"]["calls"], 1);
    assert_eq!(by["main"]["transcripts"], 4);
    // The diagram's 440 base64 bytes are media, not text.
    assert_eq!(by["main"]["media_bytes"], 440);
    assert_eq!(by["main"]["images"], 1);
    let calls = jsonl(ok(&skein(
        &["tools", "--tool", "Read", &session(TEAM)],
        &dir(),
    )));
    let image = calls
        .iter()
        .find(|c| c["id"] == "toolu_i1")
        .expect("image read");
    assert_eq!(
        (
            &image["result_bytes"],
            &image["media_bytes"],
            &image["images"]
        ),
        (&Value::from(11), &Value::from(440), &Value::from(1))
    );

    let usage: Vec<Value> = run(&["usage", "--by", "agent", "projects"])
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let agents: Vec<&str> = usage.iter().filter_map(|r| r["agent"].as_str()).collect();
    assert_eq!(agents, ["(Explore)", "alice", "bob", "main"]);
    let last = usage.last().expect("totals");
    assert_eq!(last["report"], "agent");
    let sum: u64 = usage
        .iter()
        .filter(|r| r["totals"] == false)
        .map(|r| r["messages"].as_u64().expect("messages"))
        .sum();
    assert_eq!(last["messages"].as_u64(), Some(sum));
    // Without --by the report is unchanged: no agent key.
    let daily = stdout(ok(&skein(&["usage", "projects"], &dir())));
    assert!(!daily.contains("\"agent\""), "{daily}");
    let refused = skein(&["usage", "monthly", "--by", "agent", "projects"], &dir());
    assert!(!refused.status.success());
}
