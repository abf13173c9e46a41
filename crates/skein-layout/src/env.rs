//! The process environment as a value. The binary builds one [`Env`] in `main` from the real
//! environment; libraries take it as a parameter and never read variables themselves, so tests
//! can give every path.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variables that locate Claude Code's and skein's files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    pub home: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR`, split on commas (ccusage's list syntax) and on the platform's
    /// path-list separator (`:` on Unix); empty entries dropped.
    pub claude_config_dirs: Vec<PathBuf>,
    pub xdg_state_home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub path: Option<OsString>,
}

impl Env {
    /// Builds the value from a variable lookup (`std::env::var_os` in the binary; a map in
    /// tests). `HOME` and the XDG variables are ignored unless absolute, as the XDG spec asks.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Self {
        let abs = |k: &str| var(k).map(PathBuf::from).filter(|p| p.is_absolute());
        let claude_config_dirs = var("CLAUDE_CONFIG_DIR")
            .map(|v| {
                let v = v.to_string_lossy().replace(',', ":");
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Self {
            home: abs("HOME"),
            claude_config_dirs,
            xdg_state_home: abs("XDG_STATE_HOME"),
            xdg_config_home: abs("XDG_CONFIG_HOME"),
            path: var("PATH"),
        }
    }

    /// The Claude projects directories the reports read when no path is given: every
    /// `$CLAUDE_CONFIG_DIR/projects`, else those of `~/.claude/projects` and
    /// `~/.config/claude/projects` that exist.
    pub fn projects_roots(&self) -> Vec<PathBuf> {
        if !self.claude_config_dirs.is_empty() {
            return self
                .claude_config_dirs
                .iter()
                .map(|d| d.join("projects"))
                .collect();
        }
        let Some(home) = &self.home else {
            return Vec::new();
        };
        [
            home.join(".claude/projects"),
            home.join(".config/claude/projects"),
        ]
        .into_iter()
        .filter(|p| p.is_dir())
        .collect()
    }

    /// Claude Code's configuration directory: the first absolute `$CLAUDE_CONFIG_DIR` entry,
    /// else `~/.claude`.
    pub fn claude_dir(&self) -> Option<PathBuf> {
        self.claude_config_dirs
            .iter()
            .find(|d| d.is_absolute())
            .cloned()
            .or_else(|| self.home.as_ref().map(|h| h.join(".claude")))
    }

    /// The directories a transcript path from a hook event must lie in: `projects/` of every
    /// absolute `$CLAUDE_CONFIG_DIR` entry (else `~/.claude/projects`), plus
    /// `~/.config/claude/projects`. Relative entries are left out: what they name would depend
    /// on the hook's working directory.
    pub fn transcript_roots(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .claude_config_dirs
            .iter()
            .filter(|d| d.is_absolute())
            .map(|d| d.join("projects"))
            .collect();
        if dirs.is_empty()
            && let Some(home) = &self.home
        {
            dirs.push(home.join(".claude/projects"));
        }
        if let Some(home) = &self.home {
            let xdg = home.join(".config/claude/projects");
            if !dirs.contains(&xdg) {
                dirs.push(xdg);
            }
        }
        dirs
    }

    /// `<claude dir>/teams`: the agent-team configs.
    pub fn teams_dir(&self) -> Option<PathBuf> {
        self.claude_dir().map(|d| d.join(crate::teams::TEAMS_DIR))
    }

    /// `<claude dir>/settings.json`.
    pub fn user_settings(&self) -> Option<PathBuf> {
        self.claude_dir().map(|d| d.join("settings.json"))
    }

    /// The default archive: [`archive_dir`] of [`Env::state_root`].
    pub fn default_archive(&self) -> Option<PathBuf> {
        self.state_root().map(|s| archive_dir(&s))
    }

    /// The default hook log directory: [`log_dir`] of [`Env::state_root`].
    pub fn default_log_dir(&self) -> Option<PathBuf> {
        self.state_root().map(|s| log_dir(&s))
    }

    /// skein's state directory: `$XDG_STATE_HOME/skein`, else `~/.local/state/skein`.
    pub fn state_root(&self) -> Option<PathBuf> {
        self.xdg_state_home
            .as_ref()
            .map(|d| d.join("skein"))
            .or_else(|| self.home.as_ref().map(|h| h.join(".local/state/skein")))
    }

    /// skein's user config: `$XDG_CONFIG_HOME/skein/config.toml`, else
    /// `~/.config/skein/config.toml`.
    pub fn user_config(&self) -> Option<PathBuf> {
        self.xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))
            .map(|d| d.join("skein").join("config.toml"))
    }
}

/// The archive under skein's state directory `state_root` (where the hook archives and the
/// archive's maintenance commands and the catalog look when no directory is given).
pub fn archive_dir(state_root: &Path) -> PathBuf {
    state_root.join("archive")
}

/// The hook's log directory under skein's state directory `state_root`.
pub fn log_dir(state_root: &Path) -> PathBuf {
    state_root.join("logs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> Env {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        Env::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn config_dir_is_a_comma_separated_list() {
        let e = env(&[("CLAUDE_CONFIG_DIR", "/a,/b,,rel"), ("HOME", "/h")]);
        assert_eq!(
            e.projects_roots(),
            [
                PathBuf::from("/a/projects"),
                PathBuf::from("/b/projects"),
                PathBuf::from("rel/projects")
            ]
        );
        assert_eq!(e.claude_dir(), Some(PathBuf::from("/a")));
        assert_eq!(
            e.transcript_roots(),
            [
                PathBuf::from("/a/projects"),
                PathBuf::from("/b/projects"),
                PathBuf::from("/h/.config/claude/projects")
            ]
        );
        assert_eq!(e.user_settings(), Some(PathBuf::from("/a/settings.json")));
    }

    #[test]
    fn home_defaults_and_relative_values() {
        let e = env(&[("HOME", "/h"), ("XDG_STATE_HOME", "rel")]);
        assert_eq!(e.claude_dir(), Some(PathBuf::from("/h/.claude")));
        assert_eq!(
            e.transcript_roots(),
            [
                PathBuf::from("/h/.claude/projects"),
                PathBuf::from("/h/.config/claude/projects")
            ]
        );
        // Relative XDG values are ignored.
        assert_eq!(e.state_root(), Some(PathBuf::from("/h/.local/state/skein")));
        assert_eq!(
            e.user_config(),
            Some(PathBuf::from("/h/.config/skein/config.toml"))
        );
        // Default roots only list directories that exist.
        assert!(e.projects_roots().is_empty());
        let none = env(&[]);
        assert!(none.state_root().is_none() && none.projects_roots().is_empty());
    }
}
