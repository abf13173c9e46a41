//! The record visitor of `skein tree`: subagent links plus one [`NodeInfo`] per node, with
//! a fast preview path for `progress` records.

use serde::de::IgnoredAny;
use skein_analysis::RecordVisitor;
use skein_core::{Envelope, Line};
use skein_graph::NodeId;

use super::LinkVisitor;
use crate::show::text::{PREVIEW_CHARS, Preview, parse_line, preview};

/// What `skein tree` keeps about each node.
#[derive(Debug, Clone, Default)]
pub struct NodeInfo {
    pub kind: Box<str>,
    /// The raw `parentUuid` string.
    pub parent: Option<Box<str>>,
    pub logical_parent: Option<Box<str>>,
    pub subtype: Option<Box<str>>,
    pub preview: Box<str>,
    /// For tool results: the `tool_use_id` of the first `tool_result` block.
    pub result_of: Option<Box<str>>,
    pub timestamp: Option<Box<str>>,
    pub meta: bool,
}

/// The record visitor of `skein tree`: links plus one [`NodeInfo`] per node.
#[derive(Debug, Default)]
pub struct TreeVisitor {
    pub links: LinkVisitor,
    /// Indexed by `NodeId`.
    pub nodes: Vec<NodeInfo>,
}

impl RecordVisitor<IgnoredAny> for TreeVisitor {
    fn record(&mut self, line: &Line<'_>, env: &Envelope<'_>, node: Option<(NodeId, bool)>) {
        self.links.record(line, env, node);
        let Some((id, true)) = node else { return };
        let progress = || {
            (env.kind.get() == Some("progress"))
                .then(|| progress_preview(line.text))
                .flatten()
        };
        let p = progress().unwrap_or_else(|| {
            parse_line(line.text).map_or_else(
                || Preview {
                    text: "(unreadable record)".into(),
                    ..Preview::default()
                },
                |v| preview(&v),
            )
        });
        let boxed = |s: Option<&str>| s.map(Box::<str>::from);
        let info = NodeInfo {
            kind: env.kind.get().unwrap_or("<none>").into(),
            parent: boxed(env.parent_uuid.get()),
            logical_parent: boxed(env.logical_parent_uuid.get()),
            subtype: p.subtype.map(Into::into),
            preview: p.text.into(),
            result_of: p.result_of.map(Into::into),
            timestamp: boxed(env.timestamp.get()),
            meta: env.is_meta.0,
        };
        let i = id.0 as usize;
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, NodeInfo::default());
        }
        self.nodes[i] = info;
    }
}

/// The fields of a `progress` record a preview shows; everything else (`normalizedMessages`
/// can be megabytes) is skipped without being built.
#[derive(serde::Deserialize)]
struct ProgressRecord<'a> {
    #[serde(borrow)]
    data: Option<ProgressData<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProgressData<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    hook_event: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    hook_name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    agent_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    output: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    prompt: Option<std::borrow::Cow<'a, str>>,
}

/// The preview of a `progress` record, like [`preview`] gives it; `None` when a field has an
/// unexpected shape (the caller falls back to [`preview`]).
fn progress_preview(text: &[u8]) -> Option<Preview> {
    let r: ProgressRecord<'_> = serde_json::from_slice(text).ok()?;
    let Some(d) = r.data else {
        return Some(Preview::default());
    };
    let parts: Vec<&str> = [
        &d.hook_event,
        &d.hook_name,
        &d.agent_id,
        &d.output,
        &d.prompt,
    ]
    .into_iter()
    .filter_map(|f| f.as_deref())
    .take(2)
    .map(|s| match s.char_indices().nth(PREVIEW_CHARS * 4) {
        Some((i, _)) => &s[..i],
        None => s,
    })
    .collect();
    Some(Preview {
        subtype: d.kind.map(std::borrow::Cow::into_owned),
        text: crate::tools::clip(&parts.join(" "), PREVIEW_CHARS),
        result_of: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_previews_agree_with_the_generic_path() {
        let lines = [
            r#"{"type":"progress","uuid":"p","data":{"type":"hook_progress","hookEvent":"PreToolUse","hookName":"PreToolUse:Bash","command":"x"}}"#,
            r#"{"type":"progress","uuid":"p","data":{"type":"agent_progress","agentId":"a1","prompt":"Find   the\nconfig","normalizedMessages":[{"a":[1,2,{"b":"c"}]}]}}"#,
            r#"{"type":"progress","uuid":"p","data":{"type":"bash_progress","output":"line\n","elapsedTimeSeconds":3}}"#,
            r#"{"type":"progress","uuid":"p"}"#,
        ];
        for l in lines {
            let fast = progress_preview(l.as_bytes()).expect("fast path");
            let slow = preview(&parse_line(l.as_bytes()).expect("json"));
            assert_eq!(fast, slow, "{l}");
        }
        // a non-string field falls back to the generic path
        assert!(
            progress_preview(br#"{"type":"progress","data":{"type":"x","output":7}}"#).is_none()
        );
    }
}
