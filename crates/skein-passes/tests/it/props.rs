//! Property tests over random transcripts (turns with thinking, parallel tool calls and their
//! results, progress records, images, long results, rewinds, compactions, inline sidechains,
//! metadata, duplicates, dangling parents, invalid lines): after any pass every line is valid
//! JSON (or an invalid input line passed through), untouched lines are byte-equal, no parent
//! dangles that did not before, tool calls and results stay together, the active leaf stays
//! (or moves to a kept ancestor), and running the pass again changes nothing.

use crate::common;

use std::fmt::Write as _;

use proptest::prelude::*;
use serde_json::{Value, json};
use skein_passes::{
    Pass, Pipeline, Preset, PruneOptions, RedactOptions, RedactPass, SnapshotOptions,
    ToolUseResultMode, prune, snapshot,
};

/// A small deterministic generator so a failing seed reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

struct Gen {
    rng: Rng,
    lines: Vec<String>,
    /// Message nodes written so far (rewind targets).
    messages: Vec<String>,
    last: Option<String>,
    n: u64,
    t: u64,
}

impl Gen {
    fn id(&mut self, prefix: &str) -> String {
        self.n += 1;
        format!("{prefix}{}", self.n)
    }

    fn ts(&mut self) -> String {
        self.t += 1 + self.rng.below(5);
        format!(
            "2026-05-01T{:02}:{:02}:{:02}.000Z",
            10 + self.t / 3600,
            (self.t / 60) % 60,
            self.t % 60
        )
    }

    fn record(&mut self, kind: &str, parent: Option<&str>, body: Value) -> String {
        let uuid = self.id("n");
        let mut v = json!({
            "parentUuid": parent,
            "isSidechain": false,
            "sessionId": "S",
            "type": kind,
        });
        let obj = v.as_object_mut().expect("object");
        if let Value::Object(b) = body {
            for (k, x) in b {
                obj.insert(k, x);
            }
        }
        obj.insert("uuid".into(), Value::String(uuid.clone()));
        let ts = self.ts();
        obj.insert("timestamp".into(), Value::String(ts));
        self.lines.push(serde_json::to_string(&v).expect("json"));
        if matches!(kind, "user" | "assistant") {
            self.messages.push(uuid.clone());
        }
        uuid
    }

    fn text(&mut self, bytes: usize) -> String {
        let words = [
            "widget",
            "parse",
            "error",
            "fn",
            "let",
            "ok",
            "päth",
            "emoji 🦀",
            "tab\there",
        ];
        let mut s = String::new();
        let mut line = 1;
        while s.len() < bytes {
            write!(s, "{line:>6}\u{2192}").expect("string write");
            for _ in 0..=self.rng.below(8) {
                s.push_str(words[self.rng.below(words.len() as u64) as usize]);
                s.push(' ');
            }
            s.push('\n');
            line += 1;
        }
        s
    }

    fn turn(&mut self) {
        let parent = self.last.clone();
        if self.rng.chance(30) {
            let fhs = json!({"type":"file-history-snapshot","messageId":format!("n{}", self.n + 1),"snapshot":{"trackedFileBackups":{}},"isSnapshotUpdate":false});
            self.lines.push(fhs.to_string());
        }
        let mut content = json!(format!("request {}", self.n));
        if self.rng.chance(15) {
            content = json!([{"type":"text","text":"see image"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD".repeat(50)}}]);
        }
        let prompt = self.record(
            "user",
            parent.as_deref(),
            json!({"message":{"role":"user","content":content}}),
        );
        let mut cur = prompt;
        if self.rng.chance(40) {
            let p = self.record(
                "progress",
                Some(&cur),
                json!({"data":{"type":"hook_progress"}}),
            );
            if self.rng.chance(50) {
                cur = p;
            }
        }
        let mid = self.id("msg_");
        if self.rng.chance(50) {
            cur = self.record("assistant", Some(&cur), json!({"message":{"id":mid,"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"c2ln"}]}}));
        }
        let calls = self.rng.below(4);
        let mut uses = Vec::new();
        for _ in 0..calls {
            let tid = self.id("toolu_");
            cur = self.record("assistant", Some(&cur), json!({"message":{"id":mid,"role":"assistant","content":[{"type":"tool_use","id":tid,"name":"Read","input":{"file_path":"/x"}}]}}));
            uses.push((cur.clone(), tid));
        }
        if let Some((u, _)) = uses.last()
            && self.rng.chance(40)
        {
            self.record(
                "progress",
                Some(&u.clone()),
                json!({"data":{"type":"bash_progress","output":"…"}}),
            );
        }
        let swap = self.rng.chance(10);
        for (u, tid) in uses {
            let size = [10, 200, 3000, 6000][self.rng.below(4) as usize];
            let text = self.text(size);
            let body = if self.rng.chance(20) {
                json!({"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":tid,"content":[{"type":"text","text":text},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD".repeat(40)}}]}]},"toolUseResult":[{"type":"text","text":text}]})
            } else {
                let plain: String = text
                    .lines()
                    .map(|l| l.split_once('\u{2192}').map_or(l, |(_, r)| r))
                    .collect::<Vec<_>>()
                    .join("\n");
                json!({"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":tid,"content":text}]},"toolUseResult":{"type":"text","file":{"filePath":"/x","content":plain,"originalFile":"x".repeat(size)}},"sourceToolAssistantUUID":u})
            };
            cur = self.record("user", Some(&u), body);
            if swap {
                let n = self.lines.len();
                self.lines.swap(n - 1, n - 2);
            }
        }
        let blocks = if self.rng.chance(30) {
            json!([{"type":"thinking","thinking":"so","signature":"c2ln"},{"type":"text","text":"answer"}])
        } else {
            json!([{"type":"text","text":format!("answer {}", self.n)}])
        };
        let mid2 = self.id("msg_");
        cur = self.record(
            "assistant",
            Some(&cur),
            json!({"message":{"id":mid2,"role":"assistant","content":blocks}}),
        );
        if self.rng.chance(10) {
            self.record(
                "user",
                Some(&cur),
                json!({"isMeta":true,"message":{"role":"user","content":"Stop hook feedback: lint"}}),
            );
        }
        if self.rng.chance(40) {
            let s = self.record(
                "system",
                Some(&cur),
                json!({"subtype":"turn_duration","durationMs":10}),
            );
            if self.rng.chance(50) {
                cur = s;
            }
        }
        self.last = Some(cur);
    }

    fn step(&mut self) {
        match self.rng.below(20) {
            0..=10 => self.turn(),
            11 | 12 => {
                // rewind to an earlier message
                if !self.messages.is_empty() {
                    let i = self.rng.below(self.messages.len() as u64) as usize;
                    self.last = Some(self.messages[i].clone());
                }
                self.turn();
            }
            13 => {
                let logical = self.last.clone();
                let b = self.record("system", None, json!({"subtype":"compact_boundary","logicalParentUuid":logical,"compactMetadata":{"trigger":"auto"}}));
                let s = self.record("user", Some(&b), json!({"isCompactSummary":true,"message":{"role":"user","content":"This session is being continued from a previous conversation."}}));
                self.last = Some(s);
            }
            14 => {
                let ops = ["enqueue", "dequeue", "remove"];
                let op = ops[self.rng.below(3) as usize];
                self.lines.push(json!({"type":"queue-operation","operation":op,"content":"typed ahead","sessionId":"S"}).to_string());
            }
            15 => {
                let leaf = self.last.clone();
                self.lines
                    .push(json!({"type":"summary","summary":"t","leafUuid":leaf}).to_string());
            }
            16 => {
                if let Some(l) = self.lines.last().cloned() {
                    self.lines.push(l);
                }
            }
            17 => {
                let r = self.record(
                    "user",
                    None,
                    json!({"isSidechain":true,"message":{"role":"user","content":"side task"}}),
                );
                self.record("assistant", Some(&r), json!({"isSidechain":true,"message":{"id":"msg_side","role":"assistant","content":[{"type":"text","text":"side answer"}]}}));
            }
            18 => {
                self.record(
                    "user",
                    Some("ghost-parent"),
                    json!({"message":{"role":"user","content":"from elsewhere"}}),
                );
            }
            _ => self.lines.push("{\"broken\": ".to_owned()),
        }
    }
}

fn transcript(seed: u64, steps: usize) -> Vec<u8> {
    let mut g = Gen {
        rng: Rng(seed),
        lines: Vec::new(),
        messages: Vec::new(),
        last: None,
        n: 0,
        t: 0,
    };
    g.turn();
    for _ in 0..steps {
        g.step();
    }
    let mut out = g.lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

fn options() -> impl Strategy<Value = PruneOptions> {
    (
        any::<[bool; 7]>(),
        prop_oneof![Just(None), (1u64..8000).prop_map(Some)],
        prop_oneof![
            Just(ToolUseResultMode::Keep),
            Just(ToolUseResultMode::Dedupe),
            Just(ToolUseResultMode::Slim),
            Just(ToolUseResultMode::Drop)
        ],
    )
        .prop_map(|(b, max, tur)| PruneOptions {
            progress: b[0],
            file_history_snapshots: b[1],
            queue_operations: b[2],
            thinking: b[3],
            images: b[4],
            max_tool_result_bytes: max,
            tool_use_result: tur,
            off_branch: b[5],
            before_last_compaction: b[6],
        })
}

/// Compiling the rules takes a while in debug builds: once per test binary.
fn redactor() -> &'static RedactPass {
    static PASS: std::sync::OnceLock<RedactPass> = std::sync::OnceLock::new();
    PASS.get_or_init(|| RedactPass::new(&RedactOptions::default()).expect("rules"))
}

proptest! {
    // PROPTEST_CASES=2000 for a longer run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96),
        ..ProptestConfig::default()
    })]

    #[test]
    fn prune_keeps_invariants(seed in any::<u64>(), steps in 0usize..40, o in options()) {
        let data = transcript(seed, steps);
        let (out, report) = prune(&data, &o);
        common::check(&data, &out);
        common::check_leaf(&data, &out);
        if !o.before_last_compaction {
            common::check_branch_text(&data, &out);
        }
        prop_assert_eq!(report.unrewritable_lines, 0);
        let (again, _) = prune(&out, &o);
        prop_assert!(again == out, "not idempotent");
    }

    #[test]
    fn presets_keep_invariants(seed in any::<u64>(), steps in 0usize..40) {
        let data = transcript(seed, steps);
        for p in [Preset::Lean, Preset::Safe] {
            let o = PruneOptions::preset(p);
            let (out, _) = prune(&data, &o);
            common::check(&data, &out);
            common::check_leaf(&data, &out);
            common::check_branch_text(&data, &out);
            let (again, _) = prune(&out, &o);
            prop_assert!(again == out, "{p:?} not idempotent");
        }
    }

    #[test]
    fn snapshot_is_self_contained(seed in any::<u64>(), steps in 0usize..40) {
        let data = transcript(seed, steps);
        let (out, _) = snapshot(&data, &SnapshotOptions::default()).expect("every transcript here has a prompt");
        common::check(&data, &out);
        let ls = common::lines(&out);
        prop_assert!(ls.iter().all(|l| l.value.is_some()), "snapshot wrote a line that is not JSON");
        prop_assert!(common::dangling(&ls).is_empty(), "snapshot has a dangling parent");
        let (again, _) = snapshot(&out, &SnapshotOptions::default()).expect("again");
        prop_assert!(again == out, "not idempotent");
    }

    #[test]
    fn pipelines_keep_invariants(seed in any::<u64>(), steps in 0usize..30, o in options()) {
        let data = transcript(seed, steps);
        let pipeline = Pipeline::new(vec![Pass::Prune(o), Pass::Redact(redactor().clone())]);
        let out = pipeline.run(&data).expect("run");
        common::check(&data, &out.bytes);
        let again = pipeline.run(&out.bytes).expect("run");
        prop_assert!(again.bytes == out.bytes, "not idempotent");
    }
}

#[test]
fn generator_covers_the_shapes() {
    let mut seen = [false; 6];
    for seed in 0..50 {
        let data = String::from_utf8(transcript(seed, 40)).expect("utf8");
        seen[0] |= data.contains("compact_boundary");
        seen[1] |= data.contains("\"progress\"");
        seen[2] |= data.contains("ghost-parent");
        seen[3] |= data.contains("\"image\"");
        seen[4] |= data.contains("isSidechain\":true");
        seen[5] |= data.contains("{\"broken\": ");
    }
    assert!(seen.iter().all(|&s| s), "{seen:?}");
}
