//! Agent-team configs: Claude Code keeps one per team in `<config dir>/teams/<team>/config.json`
//! (`name` or `team_name`, `description`, `members[]` with `name`, `agentId`, `agentType`).
//! [`read_team_configs`] reads every one under a `teams` directory; the caller says where that
//! is ([`crate::Env::teams_dir`], [`teams_dirs_of`]); no environment is read here.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One member of a team.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TeamMember {
    pub name: Option<String>,
    /// `name@team` in current builds.
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
}

/// One team's config.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TeamConfig {
    /// The team's name: `team_name`, else `name`, else the directory's name.
    pub team_name: String,
    pub description: Option<String>,
    pub members: Vec<TeamMember>,
    /// The file read.
    pub path: PathBuf,
}

impl TeamConfig {
    /// The member with this name.
    pub fn member(&self, name: &str) -> Option<&TeamMember> {
        self.members
            .iter()
            .find(|m| m.name.as_deref() == Some(name))
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawConfig {
    team_name: Option<String>,
    name: Option<String>,
    description: Option<String>,
    members: Vec<TeamMember>,
}

/// A team config that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a team config: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// Every `<dir>/<team>/config.json`, sorted by team directory. `dir` is the `teams`
/// directory (`<config dir>/teams`); a missing `dir` gives no teams. Configs that cannot be
/// read or parsed are returned as errors beside the others.
pub fn read_team_configs(dir: &Path) -> (Vec<TeamConfig>, Vec<TeamError>) {
    let mut teams = Vec::new();
    let mut errors = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (teams, errors);
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        let path = d.join("config.json");
        if !path.is_file() {
            continue;
        }
        match read_team_config(&path) {
            Ok(t) => teams.push(t),
            Err(e) => errors.push(e),
        }
    }
    (teams, errors)
}

/// The `teams` directories that belong with some inputs: `env`'s (`<claude dir>/teams`) when
/// no path is given; else, for each path, the `teams` beside the nearest `projects` directory
/// at or above it. Only existing directories, each once.
pub fn teams_dirs_of(env: &crate::Env, paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |d: PathBuf| {
        if d.is_dir() && !out.contains(&d) {
            out.push(d);
        }
    };
    if paths.is_empty() {
        if let Some(dir) = env.teams_dir() {
            push(dir);
        }
        return out;
    }
    for p in paths {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.clone());
        if let Some(projects) = abs
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "projects"))
            && let Some(config) = projects.parent()
        {
            push(config.join(TEAMS_DIR));
        }
    }
    out
}

/// The directory of team configs inside a Claude config directory.
pub const TEAMS_DIR: &str = "teams";

/// One team config file.
pub fn read_team_config(path: &Path) -> Result<TeamConfig, TeamError> {
    let bytes = std::fs::read(path).map_err(|source| TeamError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let raw: RawConfig = serde_json::from_slice(&bytes).map_err(|source| TeamError::Parse {
        path: path.to_path_buf(),
        source,
    })?;
    let dir_name = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(TeamConfig {
        team_name: raw.team_name.or(raw.name).unwrap_or(dir_name),
        description: raw.description,
        members: raw.members,
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_of_both_spellings_and_bad_ones() {
        let tmp = tempfile::tempdir().expect("tmp");
        let teams = tmp.path().join("teams");
        for (team, body) in [
            (
                "research",
                r##"{"team_name":"research","description":"Three researchers","members":[{"name":"alice","agentId":"alice@research","agentType":"general-purpose","color":"#fff"},{"name":"team-lead","agentId":"team-lead@research","agentType":"team-lead"}]}"##,
            ),
            (
                "build",
                r#"{"name":"build","leadAgentId":"x","members":[{"name":"bob","agentId":"bob@build","agentType":"Explore"}]}"#,
            ),
            ("unnamed", r#"{"members":[]}"#),
            ("broken", "{not json"),
        ] {
            std::fs::create_dir_all(teams.join(team)).expect("dir");
            std::fs::write(teams.join(team).join("config.json"), body).expect("write");
        }
        std::fs::create_dir_all(teams.join("empty")).expect("dir");
        std::fs::create_dir_all(teams.join("research/inboxes")).expect("dir");
        let (found, errors) = read_team_configs(&teams);
        let names: Vec<&str> = found.iter().map(|t| t.team_name.as_str()).collect();
        assert_eq!(names, ["build", "research", "unnamed"]);
        assert_eq!(
            found[1]
                .member("alice")
                .and_then(|m| m.agent_type.as_deref()),
            Some("general-purpose")
        );
        assert_eq!(found[1].description.as_deref(), Some("Three researchers"));
        assert_eq!(
            found[0].member("bob").and_then(|m| m.agent_id.as_deref()),
            Some("bob@build")
        );
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("broken"), "{}", errors[0]);
        let (none, errs) = read_team_configs(&tmp.path().join("absent"));
        assert!(none.is_empty() && errs.is_empty());
    }
}
