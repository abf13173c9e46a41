//! The config file's schema: every section typed, unknown keys rejected (serde's
//! `deny_unknown_fields`, so the parse error carries the offending key's span and becomes
//! `file:line`). One `Layer` is what one file says; [`super::Config`] is what they add up to.

use std::collections::BTreeMap;

use serde::Deserialize;
use skein_passes::{PruneConfig, SnapshotConfig};
use skein_redact::RedactOptions;

use super::sections::{ReportFormat, StatuslineConfig};
use crate::log::LogLevel;

/// One file. The hook's keys may sit at the top (how files were written before `[hook]`
/// existed) or in `[hook]`; one file may not set the same key in both places.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Layer {
    pub(super) blocking: Option<bool>,
    pub(super) goal_reminder: Option<bool>,
    pub(super) redact: Option<bool>,
    pub(super) compress: Option<bool>,
    pub(super) lock_timeout_ms: Option<u64>,
    /// Older name of `[archive] dir`.
    pub(super) archive_dir: Option<String>,
    pub(super) hook: Option<HookLayer>,
    pub(super) archive: Option<ArchiveLayer>,
    pub(super) catalog: Option<CatalogLayer>,
    pub(super) log: Option<LogLayer>,
    pub(super) events: Option<BTreeMap<EventName, Vec<PassName>>>,
    pub(super) pass: Option<BTreeMap<PassName, toml::Table>>,
    pub(super) redaction: Option<RedactOptions>,
    pub(super) passes: Option<PassesLayer>,
    pub(super) reports: Option<ReportsLayer>,
    pub(super) statusline: Option<StatuslineConfig>,
}

impl Layer {
    /// The hook keys set at the top of the file (serde's `flatten` would lose the spans that
    /// make `file:line`, so they are listed here and gathered after).
    pub(super) fn top_hook_keys(&mut self) -> HookLayer {
        HookLayer {
            blocking: self.blocking.take(),
            goal_reminder: self.goal_reminder.take(),
            redact: self.redact.take(),
            compress: self.compress.take(),
            lock_timeout_ms: self.lock_timeout_ms.take(),
        }
    }
}

/// The hook's own switches (`[hook]`, or the top of the file).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HookLayer {
    pub(super) blocking: Option<bool>,
    pub(super) goal_reminder: Option<bool>,
    pub(super) redact: Option<bool>,
    pub(super) compress: Option<bool>,
    pub(super) lock_timeout_ms: Option<u64>,
}

impl HookLayer {
    /// The keys set, by name (to refuse one set twice).
    pub(super) fn keys(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut add = |set: bool, k| {
            if set {
                out.push(k);
            }
        };
        add(self.blocking.is_some(), "blocking");
        add(self.goal_reminder.is_some(), "goal_reminder");
        add(self.redact.is_some(), "redact");
        add(self.compress.is_some(), "compress");
        add(self.lock_timeout_ms.is_some(), "lock_timeout_ms");
        out
    }

    /// `self` with every key `over` sets replaced.
    pub(super) fn or(self, over: HookLayer) -> HookLayer {
        HookLayer {
            blocking: over.blocking.or(self.blocking),
            goal_reminder: over.goal_reminder.or(self.goal_reminder),
            redact: over.redact.or(self.redact),
            compress: over.compress.or(self.compress),
            lock_timeout_ms: over.lock_timeout_ms.or(self.lock_timeout_ms),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ArchiveLayer {
    pub(super) dir: Option<String>,
    pub(super) level: Option<ZstdLevel>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CatalogLayer {
    pub(super) path: Option<String>,
    pub(super) inline_max_bytes: Option<u64>,
    pub(super) background: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LogLayer {
    pub(super) dir: Option<String>,
    pub(super) max_bytes: Option<u64>,
    pub(super) keep: Option<u32>,
    pub(super) level: Option<LogLevel>,
}

/// `[passes.*]`: the presets of `skein prune`, `skein redact` and `skein snapshot`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PassesLayer {
    pub(super) prune: Option<PruneConfig>,
    pub(super) redact: Option<RedactOptions>,
    pub(super) snapshot: Option<SnapshotConfig>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReportsLayer {
    pub(super) timezone: Option<String>,
    pub(super) format: Option<ReportFormat>,
    pub(super) pricing: Option<String>,
}

/// A zstd level skein's encoders accept: 1..=22, or the fast levels -7..=-1.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(try_from = "i64")]
pub(super) struct ZstdLevel(pub(super) i32);

impl TryFrom<i64> for ZstdLevel {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        match i32::try_from(n) {
            Ok(l) if (1..=22).contains(&l) || (-7..=-1).contains(&l) => Ok(Self(l)),
            _ => Err(format!(
                "zstd level {n} is out of range (1..=22, or -7..=-1)"
            )),
        }
    }
}

/// An event name: ASCII letters only (`Stop`, `SubagentStop`, …).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(try_from = "String")]
pub(super) struct EventName(pub(super) String);

impl TryFrom<String> for EventName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic()) {
            Ok(Self(s))
        } else {
            Err(format!("invalid event name {s:?} (expected e.g. \"Stop\")"))
        }
    }
}

/// A pass name: lowercase ASCII letters, digits, `-` and `_` (it becomes part of file names).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(try_from = "String")]
pub(super) struct PassName(pub(super) String);

impl TryFrom<String> for PassName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let ok = !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if ok {
            Ok(Self(s))
        } else {
            Err(format!(
                "invalid pass name {s:?} (lowercase letters, digits, '-', '_')"
            ))
        }
    }
}
