//! The agent-team configs `skein archive` keeps next to the sessions: for each Claude config
//! dir whose `projects` it archives (`skein_layout::teams::teams_dirs_of`), every
//! `teams/<team>/config.json`, stored as the latest version (`teams/<team>/config.json` in the
//! archive; see `docs/archive.md`).

use std::path::{Path, PathBuf};

use serde::Serialize;
use skein_archive::{Archive, TeamConfigStatus};
use skein_redact::Redactor;

/// One line of output for a team config.
#[derive(Debug, Serialize)]
pub struct TeamRow {
    pub source: String,
    /// Always `team-config`.
    pub kind: &'static str,
    pub team: String,
    /// The archived file, relative to DIR.
    pub file: Option<String>,
    /// `created`, `updated`, `unchanged`, `error`.
    pub status: &'static str,
    pub error: Option<String>,
}

/// The bytes to store: the file as it is, or with `--redact`, its JSON on one line with
/// secrets replaced (plain-text redaction when it is not JSON).
fn stored_bytes(raw: &[u8], redactor: Option<&Redactor>) -> Vec<u8> {
    let Some(r) = redactor else {
        return raw.to_vec();
    };
    let mut out = Vec::with_capacity(raw.len());
    match serde_json::from_slice::<serde_json::Value>(raw) {
        Ok(v) => {
            let line = serde_json::to_vec(&v).unwrap_or_default();
            r.redact_line(&line, &mut out);
            out.push(b'\n');
        }
        Err(_) => {
            r.redact_text(raw, &mut out);
        }
    }
    out
}

/// Archives every team config under `dirs`.
pub fn archive_teams(
    archive: &Archive,
    dirs: &[PathBuf],
    redactor: Option<&Redactor>,
) -> Vec<TeamRow> {
    let mut rows = Vec::new();
    for dir in dirs {
        let mut teams: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|e| e.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        teams.sort();
        for team_dir in teams {
            let source = team_dir.join("config.json");
            if !source.is_file() {
                continue;
            }
            rows.push(archive_one(archive, &team_dir, &source, redactor));
        }
    }
    rows
}

fn archive_one(
    archive: &Archive,
    team_dir: &Path,
    source: &Path,
    redactor: Option<&Redactor>,
) -> TeamRow {
    let team = team_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut row = TeamRow {
        source: source.display().to_string(),
        kind: "team-config",
        team: team.clone(),
        file: Archive::team_config_path(&team)
            .ok()
            .map(|p| p.display().to_string()),
        status: "error",
        error: None,
    };
    let stored = std::fs::read(source)
        .map_err(|e| e.to_string())
        .and_then(|raw| {
            archive
                .store_team_config(&team, &stored_bytes(&raw, redactor))
                .map_err(|e| e.to_string())
        });
    match stored {
        Ok(TeamConfigStatus::Created) => row.status = "created",
        Ok(TeamConfigStatus::Updated) => row.status = "updated",
        Ok(TeamConfigStatus::Unchanged) => row.status = "unchanged",
        Err(e) => row.error = Some(e),
    }
    row
}
