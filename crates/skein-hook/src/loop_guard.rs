//! The `loop-guard` pass (PreToolUse, opt-in): refuses a tool call when the same tool with the
//! same normalized input was called `repeats` times within the last `window` calls of the
//! same agent (defaults 5 in 8), answering Claude Code with PreToolUse's documented JSON
//! (`permissionDecision: "deny"` and a short reason, exit 0). Otherwise it prints nothing.
//!
//! Its state is the last calls of each agent of the session (the main agent is `main`), as
//! hashes of `(tool, normalized input)`, in `requests/<session>/loop-guard.json`, read and
//! replaced under `requests/<session>/loop-guard.lock`. Any failure lets the call through
//! (fail open): the error is logged, nothing is printed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skein_store::{Durability, FileLock, write_atomic_with};

use crate::checkpoint::fnv1a;
use crate::dispatch::Ctx;
use crate::runtime::HookError;
use crate::state::{create_dir_all, io_at, read_json};

const STATE_FILE: &str = "loop-guard.json";
const LOCK_FILE: &str = "loop-guard.lock";
/// Calls remembered per agent, whatever the window (so a larger window applies at once).
const KEEP: usize = 256;

/// `[pass.loop-guard]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GuardOptions {
    /// How many identical calls within the window refuse the next one (2..=window).
    pub repeats: usize,
    /// How many of the last calls are looked at (at most 256).
    pub window: usize,
}

impl Default for GuardOptions {
    fn default() -> Self {
        Self {
            repeats: 5,
            window: 8,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct GuardState {
    /// Agent (`main` or the agent id) → hashes of its last calls, oldest first.
    #[serde(default)]
    calls: BTreeMap<String, Vec<u64>>,
}

/// The options from the config, checked.
fn options(c: &Ctx<'_>) -> Result<GuardOptions, String> {
    let opts: GuardOptions = match c.config.pass_options.get(crate::config::PASS_LOOP_GUARD) {
        None => GuardOptions::default(),
        Some(t) => toml::Value::Table(t.clone())
            .try_into()
            .map_err(|e: toml::de::Error| format!("[pass.loop-guard]: {}", e.message().trim()))?,
    };
    if opts.window > KEEP || opts.repeats < 2 || opts.repeats > opts.window {
        return Err(format!(
            "[pass.loop-guard]: need 2 <= repeats <= window <= {KEEP} (got repeats = {}, window = {})",
            opts.repeats, opts.window
        ));
    }
    Ok(opts)
}

/// Records the call and, when it repeats too often, returns the JSON that refuses it.
pub(crate) fn check(c: &Ctx<'_>) -> Result<Option<String>, HookError> {
    let Some(tool) = c.ev.tool_name.as_deref() else {
        return Ok(None);
    };
    let opts = options(c).map_err(HookError::Options)?;
    let call = call_hash(tool, c.ev.tool_input());
    let dir = c.state.session_dir(&c.valid.session)?;
    create_dir_all(&dir)?;
    let _lock = FileLock::acquire(dir.join(LOCK_FILE), c.state.lock_timeout())
        .map_err(crate::state::StateError::from)?;
    let path = dir.join(STATE_FILE);
    // A corrupt state is started over: the guard must never be the reason a call fails.
    let mut state: GuardState = read_json(&path).ok().flatten().unwrap_or_default();
    let agent = c
        .valid
        .agent_id
        .clone()
        .unwrap_or_else(|| "main".to_owned());
    let calls = state.calls.entry(agent).or_default();
    calls.push(call);
    if calls.len() > KEEP {
        calls.drain(..calls.len() - KEEP);
    }
    let seen = calls
        .iter()
        .rev()
        .take(opts.window)
        .filter(|h| **h == call)
        .count();
    let bytes = serde_json::to_vec(&state).unwrap_or_default();
    write_atomic_with(&path, &bytes, Durability::RenameOnly).map_err(io_at(&path))?;
    if seen < opts.repeats {
        return Ok(None);
    }
    let tool = tool.chars().take(64).collect::<String>();
    let reason = format!(
        "skein loop-guard: {tool} was called with the same input {seen} times in the last {} \
         tool calls, so this call was not run. Do not repeat it: check its last result, \
         change the input, or take another approach.",
        opts.window
    );
    let out = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    });
    Ok(Some(out.to_string()))
}

/// A hash of the tool and its input with object keys sorted (key order and a JSON-encoded
/// string input, as older Claude Code builds wrote, do not make two calls different).
fn call_hash(tool: &str, input: Option<&Value>) -> u64 {
    let mut text = String::from(tool);
    text.push('\0');
    let decoded;
    let input = match input {
        Some(Value::String(s)) if s.trim_start().starts_with('{') => {
            decoded = serde_json::from_str::<Value>(s).ok();
            decoded.as_ref().or(input)
        }
        other => other,
    };
    canonical(input.unwrap_or(&Value::Null), &mut text);
    fnv1a(text.as_bytes())
}

fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for k in keys {
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for x in a {
                canonical(x, out);
                out.push(',');
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_string_inputs_do_not_matter() {
        let a = call_hash("Bash", Some(&json!({"command": "ls", "timeout": 5})));
        let b = call_hash("Bash", Some(&json!({"timeout": 5, "command": "ls"})));
        let s = call_hash("Bash", Some(&json!("{\"command\":\"ls\",\"timeout\":5}")));
        assert_eq!(a, b);
        assert_eq!(a, s);
        assert_ne!(
            a,
            call_hash("Read", Some(&json!({"command": "ls", "timeout": 5})))
        );
        assert_ne!(
            a,
            call_hash("Bash", Some(&json!({"command": "ls -l", "timeout": 5})))
        );
    }
}
