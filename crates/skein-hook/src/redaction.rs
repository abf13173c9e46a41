//! Redaction of everything the hook writes: the runtime's own files (the prompt in
//! `request.json`, `context.md`, `work/` files, audit and log lines) and the passes' (the
//! archive, the snapshot, `session-logs/`). One cache of compiled rule sets per process,
//! shared by the runtime and the passes ([`crate::PassRunner::redactors`]), so a hook run
//! compiles each option set once; the default one can be started on another thread before
//! the runtime reads its state ([`Redactors::prepare_default`]).

use std::sync::Arc;
use std::thread::JoinHandle;

use skein_redact::{RedactOptions, Redactor};

use crate::security::Counts;

/// A redactor being built on another thread.
type Pending = JoinHandle<Result<Redactor, skein_redact::Error>>;

/// Compiled redactors by options, built on first use.
#[derive(Default)]
pub struct Redactors {
    built: Vec<(RedactOptions, Arc<Redactor>)>,
    /// The default redactor, started early by [`Redactors::prepare_default`].
    pending: Option<Pending>,
}

impl std::fmt::Debug for Redactors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactors")
            .field("built", &self.built.len())
            .field("pending", &self.pending.is_some())
            .finish()
    }
}

impl Redactors {
    /// Starts building the default redactor on another thread (about 1.3 ms since the rule
    /// regexes compile lazily); started before the runtime reads its state, the work overlaps
    /// with it. If nothing asks for it, the thread dies with the process.
    pub fn prepare_default(&mut self) {
        if self.pending.is_none() && self.built.is_empty() {
            self.pending = std::thread::Builder::new()
                .name("redactor".into())
                .spawn(|| Redactor::new(&RedactOptions::default()))
                .ok();
        }
    }

    /// The redactor for `opts`, built once per process.
    pub fn get(&mut self, opts: &RedactOptions) -> Result<Arc<Redactor>, skein_redact::Error> {
        if let Some(i) = self.built.iter().position(|(o, _)| o == opts) {
            return Ok(Arc::clone(&self.built[i].1));
        }
        let prepared = match self.pending.take() {
            Some(h) if *opts == RedactOptions::default() => h.join().ok(),
            other => {
                self.pending = other;
                None
            }
        };
        let r = match prepared {
            Some(r) => r?,
            None => Redactor::new(opts)?,
        };
        self.built.push((opts.clone(), Arc::new(r)));
        let at = self.built.len() - 1;
        Ok(Arc::clone(&self.built[at].1))
    }
}

/// `text` with every secret replaced by `[REDACTED:<rule>]`, and what was replaced (counted by
/// rule id). Invalid UTF-8 cannot come out of a `&str` input: the redactor only replaces whole
/// characters.
pub fn redact_str(redactor: &Redactor, text: &str, counts: &mut Counts) -> String {
    let mut out = Vec::with_capacity(text.len());
    let findings = redactor.redact_text(text.as_bytes(), &mut out);
    counts.add(&findings);
    if findings.is_empty() {
        return text.to_owned();
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// [`redact_str`] for an optional redactor (redaction off: the text as it is).
pub fn maybe_redact(redactor: Option<&Redactor>, text: &str, counts: &mut Counts) -> String {
    match redactor {
        Some(r) => redact_str(r, text, counts),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_and_counts_and_caches() {
        let mut rs = Redactors::default();
        rs.prepare_default();
        let r = rs.get(&RedactOptions::default()).expect("redactor");
        let mut counts = Counts::new();
        let text = "use ghp_R8x2Lk9QwZt4Vb7Nc1Md5Pf3Hs6Jg0Ya2Xe8 please";
        let out = redact_str(&r, text, &mut counts);
        assert!(!out.contains("ghp_R8x2"), "{out}");
        assert!(out.contains("[REDACTED:"), "{out}");
        assert_eq!(counts.total(), 1, "{counts:?}");
        assert_eq!(redact_str(&r, "nothing here", &mut counts), "nothing here");
        assert_eq!(rs.built.len(), 1);
        rs.get(&RedactOptions::default()).expect("again");
        assert_eq!(rs.built.len(), 1);
    }
}
