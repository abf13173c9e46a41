//! Checks of the names in a configuration's `[events]`: an event Claude Code never sends, or a
//! pass no runner knows, is accepted by the loader (a newer Claude Code may add events; passes
//! are resolved by the binary) but means work that never happens, so `hooks doctor` reports
//! them. Kept apart from the doctor so any config checker (`skein config check`) can reuse it.

use crate::config::{BUILTIN_PASSES, Config, KNOWN_EVENTS};

/// One unknown name in `[events]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameProblem {
    /// The `[events]` key.
    pub event: String,
    /// The unknown pass, or `None` when the event name itself is unknown.
    pub pass: Option<String>,
    /// A known name close to the unknown one.
    pub suggestion: Option<String>,
}

impl std::fmt::Display for NameProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.pass {
            Some(p) => write!(
                f,
                "[events] {} = […, {p:?}, …]: unknown pass {p:?}",
                self.event
            )?,
            None => write!(
                f,
                "[events] {:?}: not a Claude Code hook event (it would never run)",
                self.event
            )?,
        }
        if let Some(s) = &self.suggestion {
            write!(f, "; did you mean {s:?}?")?;
        }
        Ok(())
    }
}

/// Unknown event names and pass names in `config.events`, in key order. `runner_passes` are
/// the names the pass runner resolves (the built-in passes are always known).
pub fn check_names(config: &Config, runner_passes: &[&str]) -> Vec<NameProblem> {
    let passes: Vec<&str> = BUILTIN_PASSES
        .iter()
        .copied()
        .chain(runner_passes.iter().copied())
        .collect();
    let mut out = Vec::new();
    for (event, list) in &config.events {
        if !KNOWN_EVENTS.contains(&event.as_str()) {
            out.push(NameProblem {
                event: event.clone(),
                pass: None,
                suggestion: closest(event, &KNOWN_EVENTS),
            });
        }
        for pass in list {
            if !passes.contains(&pass.as_str()) {
                out.push(NameProblem {
                    event: event.clone(),
                    pass: Some(pass.clone()),
                    suggestion: closest(pass, &passes),
                });
            }
        }
    }
    out
}

/// The candidate within edit distance 2 (ASCII case ignored) of `name`, the nearest first.
fn closest(name: &str, candidates: &[&str]) -> Option<String> {
    candidates
        .iter()
        .map(|c| {
            (
                distance(&name.to_ascii_lowercase(), &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| (*c).to_owned())
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn typos_are_found_with_a_suggestion() {
        let mut c = Config::default();
        c.apply_toml(
            "[events]\nStop = [\"snapshot\", \"archiv\"]\nStopp = [\"archive\"]\nPreToolUse = [\"loop-guard\"]\n",
            Path::new("c.toml"),
            None,
        )
        .expect("parse");
        let found = check_names(&c, &["snapshot", "archive", "index"]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].event, "Stop");
        assert_eq!(found[0].pass.as_deref(), Some("archiv"));
        assert_eq!(found[0].suggestion.as_deref(), Some("archive"));
        assert_eq!(found[1].event, "Stopp");
        assert_eq!(found[1].pass, None);
        assert_eq!(found[1].suggestion.as_deref(), Some("Stop"));
        assert!(found[0].to_string().contains("did you mean \"archive\""));
        assert!(check_names(&Config::default(), &["snapshot", "archive", "index"]).is_empty());
    }
}
