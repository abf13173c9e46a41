//! Secret redaction (`skein-redact`), throughput in bytes of JSONL, one thread.
//!
//! Inputs: a deterministic synthetic transcript generated here (Claude-Code-shaped records:
//! mostly clean code, prose and tool output; one code line in ten has a word that trips the
//! secret prefilter — `token`, `password`, `api_key`, a URL, `Authorization` — about the
//! density of the real corpus; a planted secret on about one record in 150; a few base64
//! images), a keyword-dense stress variant (every code line trips the prefilter), and the
//! shared corpus when present.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use skein_bench::corpus_contents;
use skein_redact::{Level, RedactOptions, Redactor};

/// SplitMix64, so the input is identical on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    fn chars(&mut self, set: &[u8], n: usize) -> String {
        (0..n).map(|_| set[self.below(set.len())] as char).collect()
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Code without anything a secret rule anchors on.
const PLAIN: &[&str] = &[
    "use std::collections::BTreeMap;",
    "    pub fn len(&self) -> usize { self.items.len() }",
    "        for (i, item) in items.iter().enumerate() {",
    "            total += item.weight * factor;",
    "    }",
    "}",
    "#[derive(Debug, Clone, PartialEq, Eq)]",
    "pub enum Shape { Circle(f64), Rect { w: f64, h: f64 } }",
    "impl fmt::Display for Shape {",
    "def area(self) -> float:",
    "        return math.pi * self.radius ** 2",
    "class Widget(Base):",
    "    def __init__(self, name, size=3):",
    "import numpy as np",
    "df = pd.read_csv(path).dropna()",
    "const items = data.filter((x) => x.enabled).map((x) => x.id);",
    "export function sum(xs: number[]): number {",
    "  return xs.reduce((a, b) => a + b, 0);",
    "func (s *Server) Start(ctx context.Context) error {",
    "\tdefer wg.Done()",
    "if [ -z \"$1\" ]; then echo usage; exit 1; fi",
    "cargo build --release 2>&1 | tail -20",
    "    let mut buf = Vec::with_capacity(4096);",
    "    assert!(matches!(result, Ok(_)));",
    "SELECT count(*) FROM orders WHERE created_at > now() - interval '1 day';",
    "  \"name\": \"widgets\", \"version\": \"1.4.2\", \"private\": true,",
    "test result: ok. 214 passed; 0 failed; 0 ignored; finished in 3.21s",
    "   Compiling widgets v0.1.0 (/home/dev/widgets)",
    "error[E0308]: mismatched types",
    "  --> src/parser.rs:118:24",
    "// Split the input on blank lines and parse each block.",
    "    match ch { '\\n' => line += 1, _ => col += 1 }",
];

/// Code with the words secret prefilters anchor on (but no secret).
const TRIGGER: &[&str] = &[
    "let token = lexer.next_token()?;",
    "    fn parse_config(path: &Path) -> Result<Config, Error> {",
    "        let api_key = std::env::var(\"API_KEY\").map_err(Error::MissingKey)?;",
    "def get_password(self):\n        return self._password",
    "const apiKey = process.env.OPENAI_API_KEY ?? '';",
    "headers = {\"Authorization\": f\"Bearer {token}\", \"Content-Type\": \"application/json\"}",
    "    url = \"https://api.example.com/v1/users?page=2\"",
    "    \"input_tokens\": 1234, \"output_tokens\": 87,",
    "# TODO: rotate the secret keys before the release",
    "if err := validateToken(ctx, tok); err != nil {",
    "curl -fsSL https://example.org/install.sh | sh",
    "git clone https://github.com/acme/widgets.git && cd widgets",
    "SELECT id, name, password_hash FROM users WHERE email = $1;",
    "    max_tokens: 4096,",
    "        self.cache_key = f\"{prefix}:{user_id}\"",
    "import { createClient } from '@supabase/supabase-js';",
    "export default function Login({ onSubmit }: Props) {",
    "      <input type=\"password\" name=\"password\" autoComplete=\"current-password\" />",
    "    assert_eq!(tokens.len(), 3, \"expected three tokens\");",
    "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: ${DB_PASSWORD}",
    "    match self.peek() { Some(b'\"') => self.string(), _ => self.number() }",
    "for (i, line) in reader.lines().enumerate() {",
    "  - run: cargo test --workspace --all-targets",
    "        secret_name: ${{ secrets.DEPLOY_KEY }}",
    "pub struct Credentials { pub user: String, pub token: Option<String> }",
];

const PROSE: &[&str] = &[
    "The function parses the configuration file and returns an error when a key is missing.",
    "I'll update the token refresh logic so that expired credentials are rotated automatically.",
    "Let me run the test suite again to confirm the fix works across all platforms.",
    "The password field should never be logged; I've added a redaction step to the logger.",
    "This change keeps the public API stable while moving the parsing into its own module.",
    "Next, I'll check the CI configuration and the hooks that run before each commit.",
    "All 214 tests pass now, including the two regression tests for the empty-input case.",
    "I found the bug: the loop exits one element early when the buffer is exactly full.",
    "Let me read the parser module first to understand how blocks are split.",
    "The build warning comes from an unused import in the widgets crate; removing it.",
    "Here is a summary of the changes and the reasoning behind each of them.",
    "I'll refactor the helper into a small struct so the state is explicit.",
];

/// One planted secret in a realistic context.
fn secret(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => format!(
            "GITHUB_TOKEN=ghp_{}\nDATABASE_URL=postgres://app:{}@db:5432/app",
            rng.chars(ALNUM, 36),
            rng.chars(ALNUM, 16)
        ),
        1 => format!(
            "export ANTHROPIC_API_KEY=sk-ant-api03-{}AA",
            rng.chars(ALNUM, 93)
        ),
        2 => format!(
            "[default]\naws_access_key_id = AKIA{}\naws_secret_access_key = Q{}",
            rng.chars(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
            rng.chars(B64, 39)
        ),
        3 => format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{}\n{}\n-----END RSA PRIVATE KEY-----",
            rng.chars(B64, 64),
            rng.chars(B64, 64)
        ),
        4 => format!(
            "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}'",
            rng.chars(ALNUM, 80),
            rng.chars(ALNUM, 43)
        ),
        _ => format!(
            "DB_PASSWORD={}7\nSTRIPE_KEY=sk_live_{}",
            rng.chars(ALNUM, 15),
            rng.chars(ALNUM, 24)
        ),
    }
}

fn code(rng: &mut Rng, bytes: usize, dense: bool) -> String {
    let mut s = String::with_capacity(bytes + 128);
    let mut n = 1;
    while s.len() < bytes {
        let pool = if dense || rng.below(10) == 0 {
            TRIGGER
        } else {
            PLAIN
        };
        let _ = writeln!(s, "{n:>6}\u{2192}{}", rng.pick(pool));
        n += 1;
    }
    s
}

/// A synthetic transcript of about `target` bytes; `dense`: every code line has a trigger.
fn transcript(target: usize, seed: u64, dense: bool) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = String::with_capacity(target + (1 << 20));
    let mut n = 0u64;
    while out.len() < target {
        n += 1;
        let uuid = format!(
            "{:08x}-0000-4000-8000-{:012x}",
            n,
            rng.next() & 0xFFFF_FFFF_FFFF
        );
        let usage = json!({"input_tokens": 4, "output_tokens": rng.below(900), "cache_creation_input_tokens": 2054, "cache_read_input_tokens": 51230});
        let kind = rng.below(8);
        let size = [300 + rng.below(6000), 20_000 + rng.below(30_000)];
        let mut text = match kind {
            0 | 1 => code(&mut rng, size[0], dense),
            2 => code(&mut rng, size[1], dense),
            _ => (0..=rng.below(6))
                .map(|_| rng.pick(PROSE))
                .collect::<Vec<_>>()
                .join(" "),
        };
        if rng.below(150) == 0 {
            let s = secret(&mut rng);
            text.push_str("\n$ cat .env\n");
            text.push_str(&s);
        }
        let rec = match rng.below(6) {
            0 => {
                json!({"parentUuid": null, "type": "user", "message": {"role": "user", "content": text}, "uuid": uuid, "timestamp": "2026-05-01T10:00:00.000Z", "sessionId": "9f1c2d3e-0000-4000-8000-000000000001", "cwd": "/home/dev/widgets", "version": "2.1.200"})
            }
            1 => {
                json!({"type": "assistant", "requestId": "req_011X", "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-opus-4-7", "content": [{"type": "thinking", "thinking": text, "signature": rng.chars(B64, 600)}], "usage": usage}, "uuid": uuid})
            }
            2 => {
                json!({"type": "assistant", "message": {"id": "msg_02", "role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": text, "description": "Run it"}}], "usage": usage}, "uuid": uuid})
            }
            3 if rng.below(60) == 0 => {
                json!({"type": "user", "message": {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": rng.chars(B64, 200_000)}}]}, "uuid": uuid})
            }
            _ => {
                json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": text}]}, "toolUseResult": {"stdout": text, "stderr": "", "interrupted": false}, "uuid": uuid, "sourceToolAssistantUUID": uuid})
            }
        };
        out.push_str(&rec.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

/// Redacts every line into one output buffer, as a file rewrite would.
fn run(r: &Redactor, lines: &[&[u8]], out: &mut Vec<u8>) -> usize {
    out.clear();
    let mut findings = 0;
    for l in lines {
        findings += r.redact_line(l, out).findings.len();
        out.push(b'\n');
    }
    black_box(findings)
}

fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

fn redact(c: &mut Criterion) {
    let data = transcript(32 << 20, 42, false);
    let lines = split(&data);
    let strict = Redactor::new(&RedactOptions::default()).expect("built-in rules");
    let standard = Redactor::new(&RedactOptions {
        level: Level::Standard,
        ..RedactOptions::default()
    })
    .expect("rules");
    let paranoid = Redactor::new(&RedactOptions {
        decode_all: true,
        ..RedactOptions::default()
    })
    .expect("rules");
    let mut out = Vec::with_capacity(data.len() + (1 << 20));
    let mut group = c.benchmark_group("redact");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("synthetic_32MiB_strict", |b| {
        b.iter(|| run(&strict, &lines, &mut out));
    });
    group.bench_function("synthetic_32MiB_standard", |b| {
        b.iter(|| run(&standard, &lines, &mut out));
    });
    group.bench_function("synthetic_32MiB_decode_all", |b| {
        b.iter(|| run(&paranoid, &lines, &mut out));
    });
    let dense = transcript(8 << 20, 43, true);
    let dense_lines = split(&dense);
    group.throughput(Throughput::Bytes(dense.len() as u64));
    group.bench_function("keyword_dense_8MiB_strict", |b| {
        b.iter(|| run(&strict, &dense_lines, &mut out));
    });
    if let Some(files) = corpus_contents() {
        let total: usize = files.iter().map(Vec::len).sum();
        let lines: Vec<&[u8]> = files.iter().flat_map(|f| split(f)).collect();
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("corpus_strict", |b| {
            b.iter(|| run(&strict, &lines, &mut out));
        });
    }
    group.finish();
}

criterion_group!(benches, redact);
criterion_main!(benches);
