//! Deterministic synthetic Claude Code transcript for benchmarks (shared by
//! `examples/archive_bench.rs` and `benches/benches/archive.rs` via `#[path]`).
//!
//! Mimics the mix in `performance.md`: short user/assistant records with usage objects and
//! uuids, thinking blocks with incompressible base64 signatures, `Read` results in `cat -n`
//! form (`→`) duplicated in `toolUseResult`, `Edit` records carrying the whole original file,
//! and files re-read within the session (repeated source text). A few lines carry fake API keys
//! for the redaction stand-in. Line sizes: median ~1–2 KB, a tail of 10–100 KB lines.

#![allow(dead_code, clippy::format_push_string)]

/// xorshift64*: deterministic and fast.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const WORDS: &[&str] = &[
    "let", "mut", "fn", "pub", "impl", "struct", "enum", "match", "return", "self", "Self", "if",
    "else", "for", "while", "in", "use", "crate", "mod", "where", "async", "await", "Result",
    "Option", "Some", "None", "Ok", "Err", "Vec", "String", "usize", "u64", "&str", "clone()",
    "unwrap()", "iter()", "map", "filter", "collect", "config", "buffer", "reader", "writer",
    "parse", "index", "session", "record", "message", "content", "offset", "len", "path", "file",
    "error", "value", "key", "line", "=", "==", "->", "=>", "{", "}", "(", ")", ";", ",", "::",
    "0", "1", "42", "\"text\"", "// note:", "# TODO", "def", "class", "import", "from", "None:",
];

/// A pseudo source file of about `size` bytes.
fn source_file(rng: &mut Rng, size: usize) -> String {
    let mut s = String::with_capacity(size + 100);
    while s.len() < size {
        let indent = rng.below(4) as usize * 4;
        s.extend(std::iter::repeat_n(' ', indent));
        for _ in 0..3 + rng.below(9) {
            s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            s.push(' ');
        }
        s.push('\n');
    }
    s
}

/// JSON string escaping (the generator only emits ASCII, `→`, newlines and tabs).
fn esc(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
}

fn b64(rng: &mut Rng, n: usize) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..n).map(|_| A[rng.below(64) as usize] as char).collect()
}

/// Generates about `target` bytes of transcript lines (complete lines only).
pub(crate) fn transcript(seed: u64, target: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let files: Vec<(String, String)> = (0..160)
        .map(|i| {
            let size = 1_000 + (rng.below(1000) * rng.below(1000) / 20) as usize; // skewed, ≤ 50 KB
            (
                format!("/home/me/proj/src/module_{i}.rs"),
                source_file(&mut rng, size),
            )
        })
        .collect();
    let mut out = String::with_capacity(target + (1 << 20));
    let mut n: u64 = 0;
    let mut parent = String::from("null");
    while out.len() < target {
        n += 1;
        let uuid = format!(
            "\"{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}\"",
            rng.next() as u32,
            n & 0xffff,
            n & 0xfff,
            rng.below(4096),
            rng.next() >> 16
        );
        let ts = format!(
            "2026-01-05T{:02}:{:02}:{:02}.{:03}Z",
            10 + n / 3600 % 12,
            n / 60 % 60,
            n % 60,
            n % 1000
        );
        let head = format!(
            "{{\"parentUuid\":{parent},\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/home/me/proj\",\"sessionId\":\"0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b\",\"version\":\"2.1.239\",\"gitBranch\":\"main\","
        );
        let usage = format!(
            "\"usage\":{{\"input_tokens\":{},\"cache_creation_input_tokens\":{},\"cache_read_input_tokens\":{},\"output_tokens\":{},\"service_tier\":\"standard\"}}",
            rng.below(50),
            rng.below(5000),
            rng.below(200_000),
            rng.below(2000)
        );
        match rng.below(10) {
            0 | 1 => {
                let mut text = String::new();
                let words = 10 + rng.below(80) as usize;
                for _ in 0..words {
                    text.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
                    text.push(' ');
                }
                if rng.below(40) == 0 {
                    text.push_str(&format!(
                        "export ANTHROPIC_API_KEY=sk-ant-api03-{} ",
                        b64(&mut rng, 40).replace(['+', '/'], "x")
                    ));
                }
                let mut e = String::new();
                esc(&text, &mut e);
                out.push_str(&format!("{head}\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{e}\"}},\"uuid\":{uuid},\"timestamp\":\"{ts}\"}}\n"));
            }
            2 | 3 => {
                let sig_len = 300 + rng.below(600) as usize;
                let sig = b64(&mut rng, sig_len);
                let think_len = 200 + rng.below(1500) as usize;
                let think = source_file(&mut rng, think_len);
                let mut e = String::new();
                esc(&think, &mut e);
                out.push_str(&format!("{head}\"message\":{{\"model\":\"claude-opus-4-5\",\"id\":\"msg_{n:08}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"thinking\",\"thinking\":\"{e}\",\"signature\":\"{sig}\"}}],\"stop_reason\":null,{usage}}},\"requestId\":\"req_{n:08}\",\"type\":\"assistant\",\"uuid\":{uuid},\"timestamp\":\"{ts}\"}}\n"));
            }
            4..=7 => {
                // Read: tool_use, then a tool_result with cat -n content duplicated in toolUseResult.
                let (path, body) = &files[(rng.below(40) * rng.below(4)) as usize % files.len()];
                out.push_str(&format!("{head}\"message\":{{\"model\":\"claude-opus-4-5\",\"id\":\"msg_{n:08}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"toolu_{n:010}\",\"name\":\"Read\",\"input\":{{\"file_path\":\"{path}\"}}}}],{usage}}},\"type\":\"assistant\",\"uuid\":{uuid},\"timestamp\":\"{ts}\"}}\n"));
                let mut numbered = String::with_capacity(body.len() + body.len() / 8);
                for (i, l) in body.lines().enumerate() {
                    numbered.push_str(&format!("{:>6}→{l}\n", i + 1));
                }
                let mut e = String::new();
                esc(&numbered, &mut e);
                let mut raw = String::new();
                esc(body, &mut raw);
                out.push_str(&format!("{head}\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"tool_use_id\":\"toolu_{n:010}\",\"type\":\"tool_result\",\"content\":\"{e}\"}}]}},\"uuid\":{uuid},\"timestamp\":\"{ts}\",\"toolUseResult\":{{\"type\":\"text\",\"file\":{{\"filePath\":\"{path}\",\"content\":\"{raw}\",\"numLines\":{},\"startLine\":1}}}}}}\n", body.lines().count()));
            }
            8 => {
                let (path, body) = &files[rng.below(files.len() as u64) as usize];
                let mut orig = String::new();
                esc(body, &mut orig);
                out.push_str(&format!("{head}\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"tool_use_id\":\"toolu_{n:010}\",\"type\":\"tool_result\",\"content\":\"The file {path} has been updated.\"}}]}},\"uuid\":{uuid},\"timestamp\":\"{ts}\",\"toolUseResult\":{{\"filePath\":\"{path}\",\"oldString\":\"let x = 1;\",\"newString\":\"let x = 2;\",\"originalFile\":\"{orig}\",\"structuredPatch\":[],\"userModified\":false}}}}\n"));
            }
            _ => {
                out.push_str(&format!("{head}\"type\":\"progress\",\"data\":{{\"type\":\"hook_progress\",\"hookEvent\":\"PostToolUse\",\"hookName\":\"PostToolUse:Read\",\"command\":\"skein hook\"}},\"toolUseID\":\"toolu_{n:010}\",\"parentToolUseID\":\"toolu_{n:010}\",\"uuid\":{uuid},\"timestamp\":\"{ts}\"}}\n"));
            }
        }
        parent = uuid;
    }
    out.into_bytes()
}

/// Stand-in for the redaction pass: a multi-anchor prefilter over every line (what a real
/// redactor runs first), and a rewrite of the lines that contain an Anthropic key.
pub(crate) fn redact(line: &[u8], out: &mut Vec<u8>) {
    const ANCHORS: [&str; 6] = ["sk-ant-", "ghp_", "AKIA", "AIza", "xoxb-", "-----BEGIN"];
    let Ok(s) = std::str::from_utf8(line) else {
        out.extend_from_slice(line);
        return;
    };
    if !ANCHORS.iter().any(|a| s.contains(a)) {
        out.extend_from_slice(line);
        return;
    }
    let mut rest = s;
    while let Some(i) = rest.find("sk-ant-") {
        out.extend_from_slice(&rest.as_bytes()[..i]);
        out.extend_from_slice(b"[REDACTED:anthropic-key]");
        let tail = &rest[i + 7..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.extend_from_slice(rest.as_bytes());
}
