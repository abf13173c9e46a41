//! What the hook needs from the environment ([`Env`], built in `main`): its config layers and
//! its runtime context.

use std::path::{Path, PathBuf};

use skein_hook::{Config, ConfigFiles, HookContext, ProjectLookup};
use skein_layout::Env;

/// The config layers `skein hook` reads.
pub(crate) fn config_files(env: &Env, explicit: Option<PathBuf>) -> ConfigFiles {
    ConfigFiles {
        user: env.user_config(),
        project: ProjectLookup::EventCwd,
        explicit,
    }
}

/// The runtime context, or `None` when no state directory can be derived.
pub(crate) fn context(env: &Env, explicit_config: Option<PathBuf>) -> Option<HookContext> {
    Some(HookContext {
        state_root: env.state_root()?,
        projects_dirs: env.transcript_roots(),
        config_files: config_files(env, explicit_config),
        base_config: Config::default(),
        home: env.home.clone(),
    })
}

/// `path` made absolute against the current directory (for messages and settings paths).
pub(crate) fn absolute_from_cwd(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir().map_or_else(|_| path.to_path_buf(), |cwd| cwd.join(path))
}
