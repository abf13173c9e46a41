//! Applying one file's layer over the configuration: the keys it sets replace the current
//! values, paths are resolved against the file and the home directory, and the few rules the
//! types cannot say (a key set twice, a project redirecting files) are errors with the line.

use std::path::{Path, PathBuf};

use super::file::{HookLayer, Layer};
use super::{Config, ConfigError, Origin, lines};

impl Config {
    /// Applies one file's text; returns whether it had a `[redaction]` table.
    pub(super) fn apply_text(
        &mut self,
        text: &str,
        path: &Path,
        origin: Origin,
        home: Option<&Path>,
    ) -> Result<bool, ConfigError> {
        let mut layer: Layer = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            line: e.span().map_or(1, |s| line_at(text, s.start)),
            message: e.message().trim().to_owned(),
        })?;
        let value_error = |key: &str, message: String| ConfigError::Value {
            path: path.to_owned(),
            line: lines::key_line(text, key).unwrap_or(1),
            message,
        };
        let resolve = |key: &'static str, raw: String| -> Result<PathBuf, ConfigError> {
            if origin == Origin::Project {
                return Err(ConfigError::NotAllowed {
                    path: path.to_owned(),
                    key,
                });
            }
            resolve_path(&raw, path, home).ok_or_else(|| ConfigError::NoHome {
                path: path.to_owned(),
                key,
            })
        };
        let top = layer.top_hook_keys();
        let in_table = layer.hook.take().unwrap_or_default();
        if let Some(k) = top.keys().into_iter().find(|k| in_table.keys().contains(k)) {
            return Err(value_error(
                &format!("hook.{k}"),
                format!("`{k}` is set both at the top and in [hook]; keep the one in [hook]"),
            ));
        }
        let hook: HookLayer = top.or(in_table);
        set(&mut self.blocking, hook.blocking);
        set(&mut self.goal_reminder, hook.goal_reminder);
        set(&mut self.redact, hook.redact);
        set(&mut self.compress, hook.compress);
        set(&mut self.lock_timeout_ms, hook.lock_timeout_ms);
        let archive = layer.archive.unwrap_or_default();
        if layer.archive_dir.is_some() && archive.dir.is_some() {
            return Err(value_error(
                "archive.dir",
                "`archive_dir` and [archive] `dir` are both set; keep [archive] `dir`".into(),
            ));
        }
        if let Some(dir) = archive.dir.or(layer.archive_dir) {
            self.archive_dir = Some(resolve("archive.dir", dir)?);
        }
        if let Some(level) = archive.level {
            self.archive_level = Some(level.0);
        }
        let catalog = layer.catalog.unwrap_or_default();
        if let Some(path) = catalog.path {
            self.catalog_path = Some(resolve("catalog.path", path)?);
        }
        set(&mut self.catalog_inline_max_bytes, catalog.inline_max_bytes);
        set(&mut self.catalog_background, catalog.background);
        if let Some(log) = layer.log {
            if let Some(dir) = log.dir {
                self.log.dir = Some(resolve("log.dir", dir)?);
            }
            set(&mut self.log.max_bytes, log.max_bytes);
            set(&mut self.log.keep, log.keep);
            set(&mut self.log.level, log.level);
        }
        for (event, passes) in layer.events.unwrap_or_default() {
            self.events
                .insert(event.0, passes.into_iter().map(|p| p.0).collect());
        }
        for (pass, table) in layer.pass.unwrap_or_default() {
            self.pass_options.insert(pass.0, table);
        }
        let redaction_set = layer.redaction.is_some();
        if let Some(r) = layer.redaction {
            self.redaction = r;
        }
        if let Some(p) = layer.passes {
            if let Some(prune) = p.prune {
                let base = self.passes.prune.take().unwrap_or_default();
                self.passes.prune = Some(base.merge(&prune));
            }
            if let Some(snapshot) = p.snapshot {
                skein_passes::SnapshotOptions::try_from(snapshot.clone())
                    .map_err(|e| value_error("passes.snapshot", e.to_string()))?;
                self.passes.snapshot = Some(snapshot);
            }
            if p.redact.is_some() {
                self.passes.redact = p.redact;
            }
        }
        if let Some(r) = layer.reports {
            if r.timezone.is_some() {
                self.reports.timezone = r.timezone;
            }
            set(&mut self.reports.format, r.format.map(Some));
            if let Some(p) = r.pricing {
                // A price file changes costs, not where skein writes: a project may set it.
                let p = resolve_path(&p, path, home).ok_or_else(|| ConfigError::NoHome {
                    path: path.to_owned(),
                    key: "reports.pricing",
                })?;
                self.reports.pricing = Some(p);
            }
        }
        if let Some(s) = layer.statusline {
            set(&mut self.statusline.format, s.format.map(Some));
            set(&mut self.statusline.timezone, s.timezone.map(Some));
            set(&mut self.statusline.color, s.color.map(Some));
        }
        Ok(redaction_set)
    }
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count() + 1
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// `~/x` → `home/x`; relative paths are taken relative to the config file's directory.
fn resolve_path(raw: &str, config_file: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if raw == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = raw.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    let p = Path::new(raw);
    if p.is_absolute() {
        Some(p.to_path_buf())
    } else {
        let base = config_file.parent().unwrap_or(Path::new("."));
        Some(base.join(p))
    }
}
