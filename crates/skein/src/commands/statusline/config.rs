//! The `[statusline]` table of the user config (`$XDG_CONFIG_HOME/skein/config.toml`, else
//! `~/.config/skein/config.toml`, the file the hook reads too). A small reader of that one
//! table until skein has one config loader for every command (issue 12), which should absorb
//! it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use skein_layout::Env;

/// What the status line takes from the config.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatuslineConfig {
    /// The format string (see `skein_reports::statusline::template`).
    pub(crate) format: Option<String>,
    /// The zone of "today".
    pub(crate) timezone: Option<String>,
    /// `false` turns colour off (as `NO_COLOR` does).
    pub(crate) color: Option<bool>,
    /// Not the status line's: `[catalog] path`, read from the same file.
    #[serde(skip)]
    pub(crate) catalog_path: Option<PathBuf>,
    /// Not the status line's either: the rules the catalog redacts with (`redact` and
    /// `[redaction]` of the same file, as the hook reads them: on unless `redact = false`).
    #[serde(skip)]
    pub(crate) catalog_redact: Option<skein_redact::RedactOptions>,
}

impl StatuslineConfig {
    /// The configuration without a config file: the catalog redacts with the default rules.
    pub(crate) fn defaults() -> Self {
        Self {
            catalog_redact: Some(skein_redact::RedactOptions::default()),
            ..Self::default()
        }
    }
}

#[derive(Deserialize, Default)]
struct File {
    #[serde(default)]
    statusline: Option<StatuslineConfig>,
    #[serde(default)]
    catalog: Option<CatalogTable>,
    #[serde(default)]
    redact: Option<bool>,
    #[serde(default)]
    redaction: Option<skein_redact::RedactOptions>,
}

#[derive(Deserialize, Default)]
struct CatalogTable {
    path: Option<PathBuf>,
}

/// The user config's `[statusline]` table (empty when the file does not exist).
pub(crate) fn load(env: &Env) -> Result<StatuslineConfig> {
    match env.user_config() {
        Some(path) => read(&path, env.home.as_deref()),
        None => Ok(StatuslineConfig::defaults()),
    }
}

fn read(path: &Path, home: Option<&Path>) -> Result<StatuslineConfig> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(StatuslineConfig::defaults());
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    // Other tables are other commands' business: only these two are read.
    let value: toml::Table =
        toml::from_str(&text).with_context(|| format!("{} is not TOML", path.display()))?;
    let mut picked = toml::Table::new();
    for key in ["statusline", "catalog", "redact", "redaction"] {
        if let Some(v) = value.get(key) {
            picked.insert(key.into(), v.clone());
        }
    }
    let file: File = picked
        .try_into()
        .with_context(|| format!("{}: [statusline]", path.display()))?;
    let mut config = file.statusline.unwrap_or_default();
    config.catalog_redact = file
        .redact
        .unwrap_or(true)
        .then(|| file.redaction.unwrap_or_default());
    if let Some(p) = file.catalog.and_then(|c| c.path) {
        config.catalog_path = Some(expand(&p, path, home)?);
    }
    Ok(config)
}

/// `~/x` against `home`, a relative path against the config file's directory.
fn expand(p: &Path, config: &Path, home: Option<&Path>) -> Result<PathBuf> {
    if let Ok(rest) = p.strip_prefix("~") {
        let Some(home) = home else {
            bail!("{}: HOME is not set", p.display());
        };
        return Ok(home.join(rest));
    }
    Ok(config.parent().unwrap_or(Path::new(".")).join(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_its_tables() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "redact = true\n[log]\nkeep = 3\n[catalog]\npath = \"~/c.db\"\n[statusline]\nformat = \"{model} {today}\"\ncolor = false\n",
        )
        .expect("write");
        let c = read(&path, Some(Path::new("/home/me"))).expect("config");
        assert_eq!(c.format.as_deref(), Some("{model} {today}"));
        assert_eq!(c.color, Some(false));
        assert_eq!(c.catalog_path, Some(PathBuf::from("/home/me/c.db")));
        std::fs::write(&path, "[statusline]\nformat = 1\n").expect("write");
        assert!(read(&path, None).is_err());
        std::fs::write(&path, "[statusline]\nfromat = \"x\"\n").expect("write");
        let e = read(&path, None).expect_err("unknown key");
        assert!(format!("{e:#}").contains("fromat"), "{e:#}");
        assert_eq!(
            read(&dir.path().join("none.toml"), None).expect("missing"),
            StatuslineConfig::defaults()
        );
    }

    #[test]
    fn the_catalog_redacts_unless_the_config_says_no() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[statusline]\ncolor = false\n").expect("write");
        let on = read(&path, None).expect("config").catalog_redact;
        assert_eq!(on, Some(skein_redact::RedactOptions::default()));
        std::fs::write(&path, "redact = true\n[redaction]\ndisable = [\"email\"]\n")
            .expect("write");
        let custom = read(&path, None)
            .expect("config")
            .catalog_redact
            .expect("on");
        assert_eq!(custom.disable, vec!["email".to_owned()]);
        std::fs::write(&path, "redact = false\n").expect("write");
        assert_eq!(read(&path, None).expect("config").catalog_redact, None);
        assert!(
            read(&dir.path().join("none.toml"), None)
                .expect("missing")
                .catalog_redact
                .is_some()
        );
    }
}
