//! Inputs shared by the benchmarks: a deterministic synthetic transcript and the shared corpus
//! (found by `skein-testkit`, which notes on stderr when it is absent).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "benches write their synthetic inputs"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A small deterministic generator (64-bit LCG), so inputs are identical on every run.
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 11
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

const WORDS: &[&str] = &[
    "fn",
    "let",
    "match",
    "self",
    "impl",
    "struct",
    "widget",
    "parse",
    "error",
    "return",
    "Ok",
    "Some",
    "None",
    "path",
    "config",
    "value",
    "iter",
    "map",
    "collect",
    "String",
    "Vec",
    "&str",
    "pub",
    "use",
    "mod",
    "test",
    "assert_eq!",
    "unwrap",
    "file",
    "line",
    "offset",
    "buffer",
];

fn code(rng: &mut Lcg, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 64);
    let mut n = 1;
    while s.len() < bytes {
        let _ = write!(s, "{n:>6}\u{2192}");
        for _ in 0..rng.below(12) + 2 {
            s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            s.push(' ');
        }
        s.push('\n');
        n += 1;
    }
    s
}

fn uuid(rng: &mut Lcg) -> String {
    let a = rng.next_u64();
    let b = rng.next_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        a & 0xFFFF_FFFF,
        (a >> 32) & 0xFFFF,
        b & 0xFFF,
        (b >> 12) & 0xFFF,
        (b >> 24) & 0xFFFF_FFFF_FFFF
    )
}

/// A synthetic transcript of about `target` bytes that mimics Claude Code: sessions of turns
/// with thinking, parallel tool calls whose results repeat source text (and `toolUseResult`
/// copies), progress records, usage on every assistant line, and a few huge lines.
pub fn synthetic_transcript(target: usize, seed: u64) -> Vec<u8> {
    let mut rng = Lcg::new(seed);
    let mut out = String::with_capacity(target + (1 << 20));
    let mut session = 0;
    while out.len() < target {
        session += 1;
        let sid = uuid(&mut rng);
        let mut parent: Option<String> = None;
        let mut t = 0u64;
        for turn in 0..rng.below(30) + 5 {
            t += 1 + rng.below(20);
            let ts = |t: u64| {
                format!(
                    "2026-05-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                    1 + session % 28,
                    (t / 3600) % 24,
                    (t / 60) % 60,
                    t % 60,
                    (t * 7) % 1000
                )
            };
            let p = parent
                .as_deref()
                .map_or("null".into(), |p| format!("\"{p}\""));
            let u = uuid(&mut rng);
            let _ = writeln!(
                out,
                r#"{{"parentUuid":{p},"isSidechain":false,"userType":"external","cwd":"/home/dev/proj{session}","sessionId":"{sid}","version":"2.1.200","gitBranch":"main","type":"user","message":{{"role":"user","content":"Please fix the failing test number {turn} in the parser module"}},"uuid":"{u}","timestamp":"{}"}}"#,
                ts(t)
            );
            parent = Some(u);
            let mid = format!("msg_{:016x}", rng.next_u64());
            let req = format!("req_{:016x}", rng.next_u64());
            let calls = rng.below(3) + 1;
            let mut uses = Vec::new();
            let a = uuid(&mut rng);
            let _ = writeln!(
                out,
                r#"{{"parentUuid":"{}","isSidechain":false,"sessionId":"{sid}","type":"assistant","requestId":"{req}","message":{{"id":"{mid}","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{{"type":"thinking","thinking":"{}","signature":"{}"}}],"stop_reason":null,"usage":{{"input_tokens":4,"output_tokens":12,"cache_creation_input_tokens":2054,"cache_read_input_tokens":51230}}}},"uuid":"{a}","timestamp":"{}"}}"#,
                parent.as_deref().unwrap_or(""),
                "Let me look at the code. ".repeat(rng.below(20) as usize + 1),
                "c2ln".repeat(40),
                ts(t)
            );
            parent = Some(a);
            for c in 0..calls {
                let a = uuid(&mut rng);
                let id = format!("toolu_{:016x}", rng.next_u64());
                let _ = writeln!(
                    out,
                    r#"{{"parentUuid":"{}","isSidechain":false,"sessionId":"{sid}","type":"assistant","requestId":"{req}","message":{{"id":"{mid}","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{{"type":"tool_use","id":"{id}","name":"Read","input":{{"file_path":"/home/dev/proj{session}/src/file{c}.rs"}}}}],"stop_reason":"tool_use","usage":{{"input_tokens":4,"output_tokens":{},"cache_creation_input_tokens":2054,"cache_read_input_tokens":51230}}}},"uuid":"{a}","timestamp":"{}"}}"#,
                    parent.as_deref().unwrap_or(""),
                    50 + c * 30,
                    ts(t)
                );
                uses.push((a.clone(), id));
                parent = Some(a);
            }
            for (au, id) in uses {
                let size = match rng.below(100) {
                    0 => 400_000,
                    1..=9 => 40_000,
                    _ => 3_000,
                };
                let text = serde_escape(&code(&mut rng, size));
                let r = uuid(&mut rng);
                let _ = writeln!(
                    out,
                    r#"{{"parentUuid":"{au}","isSidechain":false,"sessionId":"{sid}","type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{id}","type":"tool_result","content":"{text}"}}]}},"uuid":"{r}","timestamp":"{}","sourceToolAssistantUUID":"{au}","toolUseResult":{{"type":"text","file":{{"filePath":"/x.rs","content":"{text}","numLines":10,"startLine":1,"totalLines":10}}}}}}"#,
                    ts(t + 1)
                );
                parent = Some(r);
            }
            if rng.below(4) == 0 {
                let pr = uuid(&mut rng);
                let _ = writeln!(
                    out,
                    r#"{{"parentUuid":"{}","isSidechain":false,"sessionId":"{sid}","type":"progress","data":{{"type":"bash_progress","output":"{}","elapsedTimeSeconds":3}},"toolUseID":"toolu_x","uuid":"{pr}","timestamp":"{}"}}"#,
                    parent.as_deref().unwrap_or(""),
                    serde_escape(&code(&mut rng, 1500)),
                    ts(t + 1)
                );
                parent = Some(pr);
            }
        }
        let _ = writeln!(
            out,
            r#"{{"type":"ai-title","aiTitle":"Fix parser tests","sessionId":"{sid}"}}"#
        );
    }
    out.into_bytes()
}

fn serde_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + s.len() / 16);
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c => o.push(c),
        }
    }
    o
}

pub use skein_testkit::{corpus_dir, jsonl_files};

/// The corpus files' contents, sorted by path, if the corpus is present.
pub fn corpus_contents() -> Option<Vec<Vec<u8>>> {
    let (_, files) = skein_testkit::corpus_files()?;
    Some(
        files
            .iter()
            .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
            .collect(),
    )
}

/// Writes [`synthetic_transcript`] as session `session_id` of project `-bench` under `root`
/// (`root/projects/-bench/SESSION_ID.jsonl`, a layout session discovery understands) and
/// returns the file.
pub fn write_synthetic_session(root: &Path, session_id: &str, target: usize, seed: u64) -> PathBuf {
    let project = root.join("projects/-bench");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join(format!("{session_id}.jsonl"));
    std::fs::write(&file, synthetic_transcript(target, seed)).expect("write synthetic session");
    file
}

/// The total size of `files`, for throughput.
pub fn bytes_of<'a>(files: impl IntoIterator<Item = &'a Path>) -> u64 {
    files
        .into_iter()
        .map(|p| {
            std::fs::metadata(p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .len()
        })
        .sum()
}
