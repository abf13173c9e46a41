//! The envelope read off a line's structural index ([`crate::lazy`]'s `Doc`, a
//! [`crate::source::Source`] the envelope's reader, [`crate::envelope_read`], reads as it reads
//! simd-json's tape), for a reader that skips tool inputs.
//!
//! `envelope_lazy::tests`, the corpus test in `skein-analysis` and the `lazy` fuzz target hold
//! the envelope read off the index to the one serde reads.

use crate::envelope::Envelope;
use crate::source::FromSource;

/// The envelope of `line` off its index, as `Debug` text, or `None` where the index does not
/// vouch for the line or the reader gives up; what the tests and the `lazy` fuzz target hold
/// to the envelope serde reads ([`crate::Parser::parse_into`]).
pub fn off_index(line: &[u8]) -> Option<String> {
    let mut lazy = crate::lazy::Lazy::new();
    let doc = lazy.document(line)?;
    Envelope::<serde::de::IgnoredAny>::from_source(&doc).map(|e| format!("{e:?} false"))
}

#[cfg(test)]
mod tests {
    use serde::de::IgnoredAny;

    use super::*;
    use crate::Parser;

    /// The envelope serde reads (`both_ways`' second half).
    fn by_serde(line: &[u8]) -> String {
        crate::envelope_tape::both_ways::<IgnoredAny>(&mut Parser::new(), line).1
    }

    /// Lines with every kind of field the envelope reads, texts among them.
    const LINES: [&str; 9] = [
        r#"{"type":"assistant","uuid":"a1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","isSidechain":true,"isMeta":false,"isCompactSummary":1,"message":{"id":"m","role":"assistant","model":"claude-x","stop_reason":"end_turn","usage":{"input_tokens":1.9,"output_tokens":-2,"cache_creation_input_tokens":"3","cache_read_input_tokens":12},"content":[{"type":"text","text":"say \"hi\"\n"},{"type":"tool_use","id":"t1","name":"Task","input":{"o":{"k":"v","k":"w"}}},{"type":"tool_use","id":"t2","name":"Bash","input":null},7,"s",null,[1]]}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"a\tb\\c"},{"type":"image","source":{"type":"base64","data":"AA\/A","x":"yy"}},{"type":"document","source":"raw","text":"t"},"loose",["n",{"type":"q","k":"v\"v"}],5,null]}]},"toolUseResult":{"agentId":"a9","other":[1,2]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"plain \"quoted\" text"}]}}"#,
        r#"{"message":"just text","toolUseResult":[1]}"#,
        r#"{"message":{"content":"a prompt with a \\ backslash"},"cwd":"C:\\work"}"#,
        r#"{"type":"user","x":1,"x":2,"message":{"zz":1,"zz":2}}"#,
        "{ \"type\" : \"user\" ,\t\"message\" : { \"content\" : [ ] } }",
        "{}",
        r#"{"type":"assistant","agentId":"ag","cwd":"/w","gitBranch":"main","message":{"role":"assistant","stop_reason":null,"content":[{"type":"tool_use","id":"t3","name":"Read","input":{}}]}}"#,
    ];

    #[test]
    fn the_index_reads_what_serde_reads() {
        for line in LINES {
            let lazy = off_index(line.as_bytes()).unwrap_or_else(|| panic!("not taken: {line}"));
            assert_eq!(lazy, by_serde(line.as_bytes()), "{line}");
        }
        // Where serde's derived readers refuse a record (a field written twice), the index's
        // reader gives up too, and the line takes serde's path.
        for line in [
            r#"{"type":"user","type":"assistant"}"#,
            r#"{"message":{"usage":{"input_tokens":1,"input_tokens":2}}}"#,
            r#"{"message":{"content":[{"type":"text","type":"tool_use"}]}}"#,
            r#"{"toolUseResult":{"agentId":"a","agentId":"b"}}"#,
        ] {
            assert_eq!(off_index(line.as_bytes()), None, "{line}");
        }
    }

    /// With texts off, an envelope read off the index is the one read with them, less the
    /// texts: a string `message.content` is still text, but empty, and blocks keep everything
    /// but their `text`.
    #[test]
    fn texts_off_leaves_out_only_the_texts() {
        use crate::envelope::Content;
        use crate::lenient::Str;
        let (mut with, mut without) = (Parser::new(), Parser::new());
        assert!(without.set_texts(false), "on by default");
        let mut dropped = 0;
        for line in LINES {
            let off = without.parse(line.as_bytes()).expect("a record").envelope;
            let mut on = with.parse(line.as_bytes()).expect("a record").envelope;
            if let Some(m) = on.message.0.as_mut() {
                match &mut m.content {
                    Content::Text(t) => dropped += usize::from(t.0.take().is_some()),
                    Content::Blocks(blocks) => {
                        for b in blocks {
                            dropped += usize::from(b.text.0.take().is_some());
                        }
                    }
                    Content::None => {}
                }
            }
            assert_eq!(format!("{off:?}"), format!("{on:?}"), "{line}");
        }
        assert_eq!(dropped, 2, "texts in the lines");
        // On again, the texts are read.
        assert!(!without.set_texts(true));
        let env = without
            .parse(LINES[4].as_bytes())
            .expect("a record")
            .envelope;
        let text = env.message.0.map(|m| m.content);
        assert!(
            matches!(&text, Some(Content::Text(Str(Some(t)))) if t == "a prompt with a \\ backslash"),
            "{text:?}"
        );
    }

    /// With details off, an envelope read off the index is the one read with them, less the
    /// details: `agentId`, `cwd`, `gitBranch`, `message.role`, `message.stop_reason`,
    /// `toolUseResult.agentId`, blocks' `name` and tool results' sizes.
    #[test]
    fn details_off_leaves_out_only_the_details() {
        use crate::lenient::{ResultSize, Str};
        let (mut with, mut without) = (Parser::new(), Parser::new());
        assert!(without.set_details(false), "on by default");
        let mut dropped = 0;
        let mut take = |s: &mut Str<'_>| dropped += usize::from(s.0.take().is_some());
        let mut sizes = 0;
        for line in LINES {
            let off = without.parse(line.as_bytes()).expect("a record").envelope;
            let mut on = with.parse(line.as_bytes()).expect("a record").envelope;
            take(&mut on.agent_id);
            take(&mut on.cwd);
            take(&mut on.git_branch);
            if let Some(r) = on.tool_use_result.0.as_mut() {
                take(&mut r.agent_id);
            }
            if let Some(m) = on.message.0.as_mut() {
                take(&mut m.role);
                take(&mut m.stop_reason);
                if let crate::envelope::Content::Blocks(blocks) = &mut m.content {
                    for b in blocks {
                        take(&mut b.name);
                        let size = std::mem::take(&mut b.content);
                        sizes += usize::from(size != ResultSize::default());
                    }
                }
            }
            assert_eq!(format!("{off:?}"), format!("{on:?}"), "{line}");
        }
        // agentId ×2 (one in toolUseResult), cwd ×2, gitBranch, role ×3, stop_reason, name ×3.
        assert_eq!(dropped, 12, "details in the lines");
        assert_eq!(sizes, 2, "tool results with content");
        // On again, the details are read.
        assert!(!without.set_details(true));
        let env = without
            .parse(LINES[8].as_bytes())
            .expect("a record")
            .envelope;
        assert_eq!(env.git_branch.get(), Some("main"));
    }
}
