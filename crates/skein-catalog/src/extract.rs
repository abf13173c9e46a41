//! What the catalog reads from one transcript line: the searchable text blocks (prompts,
//! assistant text, thinking, tool inputs, tool results), the session facts (timestamps, cwd,
//! branch, version, models, titles, counts) and the tool calls. One lenient parse per line
//! (simd-json, with the repair and serde_json fallback every skein reader uses).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use skein_core::lenient::{Flag, Obj, Str};

/// Where a piece of searchable text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocKind {
    /// Text the user wrote (a `user` record's string content or text blocks).
    Prompt,
    /// An assistant `text` block.
    Text,
    /// An assistant `thinking` block.
    Thinking,
    /// A `tool_use` block's input (its string values).
    ToolUse,
    /// A `tool_result` block's text (capped).
    ToolResult,
}

impl DocKind {
    /// Every kind, in the order of their codes.
    pub const ALL: [Self; 5] = [
        Self::Prompt,
        Self::Text,
        Self::Thinking,
        Self::ToolUse,
        Self::ToolResult,
    ];

    /// The name used on the command line and in output (`prompt`, `text`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Text => "text",
            Self::Thinking => "thinking",
            Self::ToolUse => "tool_use",
            Self::ToolResult => "tool_result",
        }
    }

    /// The kind named `s`.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The stored code.
    pub(crate) fn code(self) -> i64 {
        self as i64
    }

    pub(crate) fn from_code(c: i64) -> Option<Self> {
        Self::ALL.get(usize::try_from(c).ok()?).copied()
    }
}

/// One searchable block of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    pub kind: DocKind,
    /// Index of the block in `message.content`; `-1` for string content.
    pub block: i64,
    /// The tool's name (tool_use), or the id of the call a tool_result answers.
    pub tool: Option<String>,
    pub tool_use_id: Option<String>,
    pub text: String,
}

/// A `tool_use` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseFact {
    pub id: String,
    pub name: Option<String>,
    pub input_bytes: u64,
}

/// A `tool_result` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultFact {
    pub tool_use_id: String,
    pub is_error: bool,
    pub bytes: u64,
}

/// Everything the catalog keeps of one line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineFacts {
    pub kind: Option<String>,
    pub uuid: Option<String>,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub version: Option<String>,
    pub model: Option<String>,
    pub custom_title: Option<String>,
    pub ai_title: Option<String>,
    pub summary: Option<String>,
    /// The text of a human prompt (a non-meta user record with text).
    pub prompt: Option<String>,
    /// A user record that is a message (not meta, not a compact summary).
    pub user_message: bool,
    pub docs: Vec<Doc>,
    pub uses: Vec<UseFact>,
    pub results: Vec<ResultFact>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Rec<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    uuid: Str<'a>,
    #[serde(borrow)]
    timestamp: Str<'a>,
    #[serde(borrow)]
    cwd: Str<'a>,
    #[serde(rename = "gitBranch", borrow)]
    git_branch: Str<'a>,
    #[serde(borrow)]
    version: Str<'a>,
    #[serde(rename = "isMeta")]
    is_meta: Flag,
    #[serde(rename = "isCompactSummary")]
    is_compact_summary: Flag,
    #[serde(borrow)]
    message: Obj<Msg<'a>>,
    #[serde(rename = "aiTitle", borrow)]
    ai_title: Str<'a>,
    #[serde(rename = "customTitle", borrow)]
    custom_title: Str<'a>,
    #[serde(borrow)]
    summary: Str<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Msg<'a> {
    #[serde(borrow)]
    model: Str<'a>,
    #[serde(borrow)]
    content: Body<'a>,
}

/// `message.content`: a string or blocks.
#[derive(Default)]
enum Body<'a> {
    #[default]
    None,
    Text(Cow<'a, str>),
    Blocks(Vec<Blk<'a>>),
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Blk<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    text: Str<'a>,
    #[serde(borrow)]
    thinking: Str<'a>,
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    name: Str<'a>,
    input: Leaves,
    #[serde(borrow)]
    tool_use_id: Str<'a>,
    content: ResultText,
    is_error: Flag,
}

impl<'de: 'a, 'a> Deserialize<'de> for Body<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Body<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Body::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Body::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(Obj(b)) = seq.next_element::<Obj<Blk<'a>>>()? {
                    blocks.push(b.unwrap_or_default());
                }
                Ok(Body::Blocks(blocks))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Body::None)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Body::None)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Body::None)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Body::None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Body::None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Body::None)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Every string value inside a JSON value, joined by newlines (a tool input: a Bash command,
/// a file path, an edit's text).
#[derive(Default)]
struct Leaves(String);

impl<'de> Deserialize<'de> for Leaves {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = String::new();
        d.deserialize_any(LeafVisitor(&mut out))?;
        Ok(Leaves(out))
    }
}

struct LeafVisitor<'s>(&'s mut String);

impl<'de> de::DeserializeSeed<'de> for LeafVisitor<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LeafVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if !v.is_empty() {
            if !self.0.is_empty() {
                self.0.push('\n');
            }
            self.0.push_str(v);
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(LeafVisitor(self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(LeafVisitor(self.0))?;
        }
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A `tool_result`'s text: its string content, or the `text` of each element of its array
/// content, joined by newlines (images and other parts skipped).
#[derive(Default)]
struct ResultText(String);

#[derive(Deserialize, Default)]
#[serde(default)]
struct Part<'a> {
    #[serde(borrow)]
    text: Str<'a>,
}

impl<'de> Deserialize<'de> for ResultText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ResultText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ResultText(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = String::new();
                while let Some(Obj(p)) = seq.next_element::<Obj<Part<'_>>>()? {
                    if let Some(t) = p.as_ref().and_then(|p| p.text.get()) {
                        if !out.is_empty() {
                            out.push('\n');
                        }
                        out.push_str(t);
                    }
                }
                Ok(ResultText(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ResultText::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ResultText::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ResultText::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ResultText::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ResultText::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ResultText::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// At most `cap` bytes of `s`, cut at a character boundary.
pub(crate) fn capped(mut s: String, cap: usize) -> String {
    if s.len() > cap {
        let mut end = cap;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// What the catalog keeps of each line: how much tool text, and whether secrets are
/// redacted first.
#[derive(Debug, Clone, Default)]
pub struct ExtractOptions {
    /// Cap in bytes for tool results and tool inputs.
    pub cap: usize,
    /// When set, every line is redacted before anything is taken from it, so no secret reaches
    /// the catalog file (its full-text index, titles, prompts) or a search snippet.
    pub redactor: Option<std::sync::Arc<skein_redact::Redactor>>,
}

/// Parses lines; owns the parse buffers (one per thread).
#[derive(Default)]
pub struct Extractor {
    buf: Vec<u8>,
    buffers: simd_json::Buffers,
    /// Cap in bytes for tool results and tool inputs.
    cap: usize,
    redactor: Option<std::sync::Arc<skein_redact::Redactor>>,
    redacted: Vec<u8>,
}

impl fmt::Debug for Extractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extractor")
            .field("cap", &self.cap)
            .finish_non_exhaustive()
    }
}

fn own(s: &Str<'_>) -> Option<String> {
    s.get().filter(|s| !s.is_empty()).map(str::to_owned)
}

impl Extractor {
    /// An extractor capping tool results and inputs at `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    /// An extractor with `options` (cap and redaction).
    pub fn with_options(options: &ExtractOptions) -> Self {
        Self {
            cap: options.cap,
            redactor: options.redactor.clone(),
            ..Self::default()
        }
    }

    /// The facts of one line (its text without the terminator); `None` for a line that is not
    /// a JSON object.
    pub fn line(&mut self, text: &[u8]) -> Option<LineFacts> {
        let mut redacted = std::mem::take(&mut self.redacted);
        let text = match &self.redactor {
            Some(r) => {
                redacted.clear();
                r.redact_line(text, &mut redacted);
                &redacted[..]
            }
            None => text,
        };
        let facts = self.parse(text);
        self.redacted = redacted;
        facts
    }

    fn parse(&mut self, text: &[u8]) -> Option<LineFacts> {
        let text = text.trim_ascii();
        if text.first() != Some(&b'{') {
            return None;
        }
        self.buf.clear();
        self.buf.extend_from_slice(text);
        if let Ok(rec) =
            simd_json::serde::from_slice_with_buffers::<Rec<'_>>(&mut self.buf, &mut self.buffers)
        {
            return Some(facts(rec, self.cap));
        }
        let repaired = skein_core::repair::repair_line(text);
        let value: serde_json::Value = serde_json::from_slice(&repaired).ok()?;
        if !value.is_object() {
            return None;
        }
        Rec::deserialize(&value).ok().map(|r| facts(r, self.cap))
    }
}

fn facts(rec: Rec<'_>, cap: usize) -> LineFacts {
    let kind = rec.kind.get();
    let mut out = LineFacts {
        kind: own(&rec.kind),
        uuid: own(&rec.uuid),
        timestamp: own(&rec.timestamp),
        cwd: own(&rec.cwd),
        git_branch: own(&rec.git_branch),
        version: own(&rec.version),
        custom_title: own(&rec.custom_title),
        ai_title: own(&rec.ai_title),
        summary: if kind == Some("summary") {
            own(&rec.summary)
        } else {
            None
        },
        ..LineFacts::default()
    };
    let Some(msg) = rec.message.0 else {
        return out;
    };
    let assistant = match kind {
        Some("assistant") => true,
        Some("user") => false,
        _ => return out,
    };
    if assistant {
        out.model = own(&msg.model).filter(|m| m != "<synthetic>");
    }
    let injected = rec.is_meta.0 || rec.is_compact_summary.0;
    let prompt = |text: &str, block: i64, out: &mut LineFacts| {
        if text.trim().is_empty() {
            return;
        }
        out.docs.push(Doc {
            kind: DocKind::Prompt,
            block,
            tool: None,
            tool_use_id: None,
            text: text.to_owned(),
        });
        if out.prompt.is_none() {
            out.prompt = Some(text.to_owned());
        }
    };
    match msg.content {
        Body::None => {}
        Body::Text(t) => {
            if !assistant && !injected {
                prompt(&t, -1, &mut out);
            } else if assistant && !t.trim().is_empty() {
                out.docs.push(Doc {
                    kind: DocKind::Text,
                    block: -1,
                    tool: None,
                    tool_use_id: None,
                    text: t.into_owned(),
                });
            }
        }
        Body::Blocks(blocks) => {
            for (i, b) in blocks.into_iter().enumerate() {
                let block = i64::try_from(i).unwrap_or(i64::MAX);
                let doc = |kind, text: String, tool, id| Doc {
                    kind,
                    block,
                    tool,
                    tool_use_id: id,
                    text,
                };
                match (assistant, b.kind.get()) {
                    (false, Some("text")) if !injected => {
                        if let Some(t) = b.text.get() {
                            prompt(t, block, &mut out);
                        }
                    }
                    (true, Some("text")) => {
                        if let Some(t) = b.text.get().filter(|t| !t.trim().is_empty()) {
                            out.docs.push(doc(DocKind::Text, t.to_owned(), None, None));
                        }
                    }
                    (true, Some("thinking")) => {
                        if let Some(t) = b.thinking.get().filter(|t| !t.trim().is_empty()) {
                            out.docs
                                .push(doc(DocKind::Thinking, t.to_owned(), None, None));
                        }
                    }
                    (true, Some("tool_use")) => {
                        let Some(id) = own(&b.id) else { continue };
                        let name = own(&b.name);
                        let input = b.input.0;
                        out.uses.push(UseFact {
                            id: id.clone(),
                            name: name.clone(),
                            input_bytes: input.len() as u64,
                        });
                        if !input.is_empty() {
                            out.docs.push(doc(
                                DocKind::ToolUse,
                                capped(input, cap),
                                name,
                                Some(id),
                            ));
                        }
                    }
                    (false, Some("tool_result")) => {
                        let Some(id) = own(&b.tool_use_id) else {
                            continue;
                        };
                        let text = b.content.0;
                        out.results.push(ResultFact {
                            tool_use_id: id.clone(),
                            is_error: b.is_error.0,
                            bytes: text.len() as u64,
                        });
                        if !text.trim().is_empty() {
                            out.docs.push(doc(
                                DocKind::ToolResult,
                                capped(text, cap),
                                None,
                                Some(id),
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    if !assistant && !injected && (out.prompt.is_some() || out.results.is_empty()) {
        out.user_message = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_text() {
        let mut x = Extractor::new(8);
        let f = x
            .line(br#"{"type":"user","uuid":"u1","timestamp":"2026-01-01T00:00:00Z","message":{"content":"fix the auth bug"}}"#)
            .expect("object");
        assert_eq!(f.docs.len(), 1);
        assert_eq!(f.docs[0].kind, DocKind::Prompt);
        assert_eq!(f.prompt.as_deref(), Some("fix the auth bug"));
        assert!(f.user_message);
        let f = x
            .line(br#"{"type":"assistant","message":{"model":"m","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls -la","n":3,"x":["a",{"b":"c"}]}}]}}"#)
            .expect("object");
        let kinds: Vec<_> = f.docs.iter().map(|d| (d.kind, d.text.as_str())).collect();
        assert_eq!(
            kinds,
            [
                (DocKind::Thinking, "hmm"),
                (DocKind::Text, "ok"),
                (DocKind::ToolUse, "ls -la\na")
            ]
        );
        assert_eq!(f.uses[0].input_bytes, "ls -la\na\nc".len() as u64);
        let f = x
            .line(br#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"caf\u00e9 au lait"},{"type":"image","source":{"data":"AAAA"}}]}]}}"#)
            .expect("object");
        assert_eq!(f.docs[0].text, "café au"); // capped at 8 bytes, on a char boundary
        assert!(f.results[0].is_error);
        assert!(!f.user_message);
        // Meta user records are not prompts; not JSON is None.
        let f = x
            .line(br#"{"type":"user","isMeta":true,"message":{"content":"injected"}}"#)
            .expect("object");
        assert!(f.docs.is_empty() && !f.user_message);
        assert!(x.line(b"not json").is_none());
        // A lone surrogate goes through the repairing fallback.
        let f = x
            .line(br#"{"type":"ai-title","aiTitle":"T \ud83d x"}"#)
            .expect("repaired");
        assert!(f.ai_title.is_some());
    }
}
