//! Where skein's hook files are, from the process environment: `HOME`, `CLAUDE_CONFIG_DIR`,
//! `XDG_STATE_HOME`, `XDG_CONFIG_HOME`. As the XDG spec asks, relative values are ignored.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use skein_hook::{Config, ConfigFiles, HookContext, ProjectLookup};

/// The environment variables that locate skein's and Claude Code's files.
#[derive(Debug, Clone, Default)]
pub(crate) struct HookEnv {
    pub(crate) home: Option<PathBuf>,
    pub(crate) claude_config_dir: Option<PathBuf>,
    pub(crate) xdg_state_home: Option<PathBuf>,
    pub(crate) xdg_config_home: Option<PathBuf>,
    pub(crate) path: Option<OsString>,
}

fn absolute(value: Option<OsString>) -> Option<PathBuf> {
    value.map(PathBuf::from).filter(|p| p.is_absolute())
}

impl HookEnv {
    pub(crate) fn from_process() -> Self {
        let var = std::env::var_os;
        Self {
            home: absolute(var("HOME")),
            claude_config_dir: absolute(var("CLAUDE_CONFIG_DIR")),
            xdg_state_home: absolute(var("XDG_STATE_HOME")),
            xdg_config_home: absolute(var("XDG_CONFIG_HOME")),
            path: var("PATH"),
        }
    }

    /// `$XDG_STATE_HOME/skein`, else `~/.local/state/skein`.
    pub(crate) fn state_root(&self) -> Option<PathBuf> {
        self.xdg_state_home
            .as_ref()
            .map(|d| d.join("skein"))
            .or_else(|| self.home.as_ref().map(|h| h.join(".local/state/skein")))
    }

    /// Claude Code's configuration directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub(crate) fn claude_dir(&self) -> Option<PathBuf> {
        self.claude_config_dir
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".claude")))
    }

    /// The directories transcript paths must lie in: `<claude dir>/projects`, plus
    /// `~/.config/claude/projects` (where newer Claude Code builds may keep them).
    pub(crate) fn projects_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .claude_dir()
            .map(|d| d.join("projects"))
            .into_iter()
            .collect();
        if let Some(home) = &self.home {
            let xdg = home.join(".config/claude/projects");
            if !dirs.contains(&xdg) {
                dirs.push(xdg);
            }
        }
        dirs
    }

    /// `$XDG_CONFIG_HOME/skein/config.toml`, else `~/.config/skein/config.toml`.
    pub(crate) fn user_config(&self) -> Option<PathBuf> {
        self.xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))
            .map(|d| d.join("skein").join("config.toml"))
    }

    /// The config layers `skein hook` reads.
    pub(crate) fn config_files(&self, explicit: Option<PathBuf>) -> ConfigFiles {
        ConfigFiles {
            user: self.user_config(),
            project: ProjectLookup::EventCwd,
            explicit,
        }
    }

    /// The runtime context, or `None` when no state directory can be derived.
    pub(crate) fn context(&self, explicit_config: Option<PathBuf>) -> Option<HookContext> {
        Some(HookContext {
            state_root: self.state_root()?,
            projects_dirs: self.projects_dirs(),
            config_files: self.config_files(explicit_config),
            base_config: Config::default(),
            home: self.home.clone(),
            clock: std::time::SystemTime::now,
        })
    }

    /// `<claude dir>/settings.json`.
    pub(crate) fn user_settings(&self) -> Option<PathBuf> {
        self.claude_dir().map(|d| d.join("settings.json"))
    }
}

/// `path` made absolute against the current directory (for messages and settings paths).
pub(crate) fn absolute_from_cwd(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir().map_or_else(|_| path.to_path_buf(), |cwd| cwd.join(path))
}
