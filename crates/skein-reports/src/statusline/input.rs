//! What Claude Code passes a `statusLine` command on stdin: one JSON object with `session_id`,
//! `transcript_path`, `cwd`, `model.{id,display_name}`, `workspace.{current_dir,project_dir}`,
//! `cost.total_cost_usd` and, in newer versions, `context_window`. Every field is optional and
//! a field of an unexpected type is ignored, so a newer or older Claude Code never breaks the
//! line.

use serde_json::Value;

/// The context window as Claude Code reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ContextWindow {
    /// `context_window_size`.
    pub size: Option<u64>,
    /// `used_percentage`.
    pub used_percent: Option<f64>,
    /// The prompt of the latest request: `current_usage.{input_tokens,
    /// cache_creation_input_tokens, cache_read_input_tokens}` summed, else
    /// `total_input_tokens`.
    pub used_tokens: Option<u64>,
}

/// The status-line input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusInput {
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub model_id: Option<String>,
    pub model_name: Option<String>,
    /// `workspace.current_dir`.
    pub current_dir: Option<String>,
    /// `workspace.project_dir`.
    pub project_dir: Option<String>,
    /// `cost.total_cost_usd`: Claude Code's own estimate of the session's cost.
    pub session_cost: Option<f64>,
    pub context: Option<ContextWindow>,
}

/// The input is not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the status-line input is not a JSON object: {0}")]
pub struct InputError(pub String);

fn text(v: &Value, path: &[&str]) -> Option<String> {
    let mut v = v;
    for k in path {
        v = v.get(k)?;
    }
    v.as_str()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
}

fn number(v: &Value, path: &[&str]) -> Option<f64> {
    let mut v = v;
    for k in path {
        v = v.get(k)?;
    }
    v.as_f64().filter(|x| x.is_finite() && *x >= 0.0)
}

fn count(v: &Value, path: &[&str]) -> Option<u64> {
    number(v, path).map(|x| x as u64)
}

impl StatusInput {
    /// Parses the input; only a document that is not a JSON object is an error.
    pub fn parse(bytes: &[u8]) -> Result<Self, InputError> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| InputError(e.to_string()))?;
        if !v.is_object() {
            return Err(InputError("not an object".into()));
        }
        let c = &v["context_window"];
        let context = c.is_object().then(|| {
            let usage = [
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
            ]
            .iter()
            .map(|k| count(c, &["current_usage", k]))
            .fold(None, |acc: Option<u64>, n| match (acc, n) {
                (a, None) => a,
                (a, Some(n)) => Some(a.unwrap_or(0) + n),
            });
            ContextWindow {
                size: count(c, &["context_window_size"]).filter(|&n| n > 0),
                used_percent: number(c, &["used_percentage"]),
                used_tokens: usage.or_else(|| count(c, &["total_input_tokens"])),
            }
        });
        Ok(Self {
            session_id: text(&v, &["session_id"]),
            transcript_path: text(&v, &["transcript_path"]),
            cwd: text(&v, &["cwd"]),
            model_id: text(&v, &["model", "id"]),
            model_name: text(&v, &["model", "display_name"]),
            current_dir: text(&v, &["workspace", "current_dir"]),
            project_dir: text(&v, &["workspace", "project_dir"]),
            session_cost: number(&v, &["cost", "total_cost_usd"]),
            context,
        })
    }

    /// The model to show: its display name, else its id.
    pub fn model(&self) -> Option<&str> {
        self.model_name.as_deref().or(self.model_id.as_deref())
    }

    /// The working directory: `workspace.current_dir`, else `cwd`.
    pub fn dir(&self) -> Option<&str> {
        self.current_dir.as_deref().or(self.cwd.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_optional_and_lenient() {
        let full = br#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","model":{"id":"claude-opus-4-7","display_name":"Opus 4.7"},"workspace":{"current_dir":"/w/sub","project_dir":"/w"},"cost":{"total_cost_usd":1.25},"context_window":{"context_window_size":200000,"used_percentage":42.5,"total_input_tokens":999,"current_usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30}},"extra":[1]}"#;
        let i = StatusInput::parse(full).expect("object");
        assert_eq!(i.model(), Some("Opus 4.7"));
        assert_eq!(i.dir(), Some("/w/sub"));
        assert_eq!(i.session_cost, Some(1.25));
        let c = i.context.expect("context");
        assert_eq!(
            (c.size, c.used_percent, c.used_tokens),
            (Some(200_000), Some(42.5), Some(60))
        );

        // Wrong types and blanks are ignored; total_input_tokens when there is no current_usage.
        let odd = br#"{"session_id":7,"model":{"id":"claude-x","display_name":"  "},"cost":{"total_cost_usd":"1"},"context_window":{"total_input_tokens":500,"context_window_size":0}}"#;
        let i = StatusInput::parse(odd).expect("object");
        assert_eq!(
            (i.session_id.as_deref(), i.model()),
            (None, Some("claude-x"))
        );
        assert_eq!(i.session_cost, None);
        let c = i.context.expect("context");
        assert_eq!((c.size, c.used_tokens), (None, Some(500)));
        assert_eq!(
            StatusInput::parse(b"{}").expect("empty"),
            StatusInput::default()
        );

        for bad in [&b""[..], b"[]", b"null", b"{\"a\":", b"\xff\xfe"] {
            assert!(StatusInput::parse(bad).is_err(), "{bad:?}");
        }
    }
}
