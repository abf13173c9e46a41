//! Redaction on the command line: the level flag, the `--redact` flags that `archive` and
//! `export` share, and the one place where flags are laid over the config's `[redaction]`.

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use skein_layout::Env;
use skein_passes::{RedactLevel, RedactOptions};
use skein_redact::Redactor;

/// A redaction level on the command line (`skein redact --level`, `--redact-level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LevelArg {
    /// Provider tokens and structured secrets.
    Standard,
    /// Also the generic rules (`PASSWORD=…`, …). The default.
    Strict,
}

impl LevelArg {
    pub(crate) fn level(self) -> RedactLevel {
        match self {
            Self::Standard => RedactLevel::Standard,
            Self::Strict => RedactLevel::Strict,
        }
    }
}

/// `base` (the config's rules) with the command line's level, disabled rules and allowlist on
/// top: the flags win, and add to the config's lists.
pub(crate) fn with_flags(
    mut base: RedactOptions,
    level: Option<LevelArg>,
    disable: &[String],
    allow: &[String],
) -> RedactOptions {
    if let Some(l) = level {
        base.level = l.level();
    }
    base.disable.extend(disable.iter().cloned());
    base.allowlist.extend(allow.iter().cloned());
    base
}

/// `--redact` and the rules of `skein redact` (on top of the config's `[redaction]`), for the
/// commands that redact on the way (`archive`, `export`).
#[derive(Debug, Default, Args)]
pub(crate) struct RedactFlags {
    /// Replace secrets by `[REDACTED:<rule>]` on the way (the sources are not changed), with
    /// the config's `[redaction]` rules (the hook's).
    #[arg(long)]
    pub(crate) redact: bool,
    /// Redaction level: `strict` (default) adds the generic rules (`PASSWORD=…`, …) to the
    /// provider tokens and structured secrets of `standard`.
    #[arg(long, value_enum, value_name = "LEVEL", requires = "redact")]
    pub(crate) redact_level: Option<LevelArg>,
    /// Switch off a redaction rule by id (repeatable).
    #[arg(long, value_name = "RULE", requires = "redact")]
    pub(crate) redact_disable: Vec<String>,
    /// Keep findings whose text matches this regex (repeatable).
    #[arg(long, value_name = "REGEX", requires = "redact")]
    pub(crate) redact_allow: Vec<String>,
}

impl RedactFlags {
    /// The redactor `--redact` asks for: the config's rules with the flags on top, as
    /// `skein redact` builds its own; `None` without `--redact`.
    pub(crate) fn redactor(&self, env: &Env) -> Result<Option<Redactor>> {
        if !self.redact {
            return Ok(None);
        }
        let rules = with_flags(
            super::config::load(env)?.redaction.clone(),
            self.redact_level,
            &self.redact_disable,
            &self.redact_allow,
        );
        Ok(Some(Redactor::new(&rules).context("redaction rules")?))
    }
}
