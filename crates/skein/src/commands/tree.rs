//! `skein tree SESSION`: a session's graph drawn in the terminal, or its node list. See
//! `docs/reports/tree.md`. Also home of the `SESSION` argument `skein show` shares.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args as ClapArgs;
use serde::de::IgnoredAny;
use skein_analysis::{AnalysisOptions, RecordVisitor};
use skein_core::Parser;
use skein_layout::{Env, SessionFiles, discover, session_of};
use skein_layout::{TeamConfig, read_team_configs};
use skein_reports::tree::{TreeOptions, TreeVisitor, draw_tree, link_session, tree_rows};
use skein_reports::{LoadedSession, load_session};

use crate::cli::Format;
use crate::output::{choose_format, error_line};
use crate::report::ReportArgs;

/// The session to read: a file, or an id looked up among the discovered sessions.
#[derive(Debug, Clone, ClapArgs)]
pub(crate) struct SessionArgs {
    /// A session transcript (`<id>.jsonl`, its subagents are found beside it; or an archive
    /// file, its subagents found in its archive), an agent transcript, or a session id (or a
    /// unique prefix of one) looked up under `--in`.
    #[arg(value_name = "SESSION")]
    pub(crate) session: String,
    /// Where to look a session id up: files, directories or skein archives (default:
    /// `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects` and `~/.config/claude/projects`).
    /// Repeatable.
    #[arg(long = "in", value_name = "PATH")]
    pub(crate) inputs: Vec<PathBuf>,
    /// Only look among sessions whose project directory name contains this text.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) project: Option<String>,
    /// Memory-map plain files (archived files only).
    #[arg(long)]
    pub(crate) mmap: bool,
    /// No warnings on stderr.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}

/// The agent-team configs under Claude Code's config dir (`<dir>/teams/*/config.json`), for
/// agent names and types; unreadable ones are reported on stderr unless `quiet`.
pub(crate) fn team_configs(env: &Env, quiet: bool) -> Vec<TeamConfig> {
    let Some(dir) = env.teams_dir() else {
        return Vec::new();
    };
    let (teams, errors) = read_team_configs(&dir);
    if !quiet {
        for e in errors {
            error_line(&format!("{e} (skipped)"));
        }
    }
    teams
}

impl SessionArgs {
    /// Resolves and reads the session; warns on stderr (unless `--quiet`) about each file's
    /// invalid lines, which the drawing or rendering skips.
    pub(crate) fn load<V>(&self, env: &Env, options: &AnalysisOptions) -> Result<LoadedSession<V>>
    where
        V: RecordVisitor<IgnoredAny> + Default,
    {
        let files = self.resolve(env)?;
        let loaded = load_session::<IgnoredAny, V>(&files, options, &mut Parser::new(), self.mmap)
            .context("cannot read the session")?;
        if !self.quiet {
            let analyses = loaded.main.iter().map(|(a, _)| a);
            for f in analyses.chain(loaded.agents.iter().map(|a| &a.analysis)) {
                let bad = f.stats.invalid_lines - u64::from(f.stats.torn_tail.is_some());
                if bad > 0 {
                    error_line(&format!(
                        "{}: {bad} invalid lines skipped (see skein check)",
                        f.stats.path
                    ));
                }
            }
        }
        Ok(loaded)
    }

    /// The agent-team configs (see [`team_configs`]).
    pub(crate) fn teams(&self, env: &Env) -> Vec<TeamConfig> {
        team_configs(env, self.quiet)
    }

    /// Resolves `SESSION` to its files.
    pub(crate) fn resolve(&self, env: &Env) -> Result<SessionFiles> {
        let path = Path::new(&self.session);
        if path.is_file() {
            return session_of(path)
                .with_context(|| format!("{}: not a transcript", path.display()));
        }
        if path.is_dir() {
            let found = discover(&[path.to_path_buf()]);
            return match found.sessions.len() {
                1 => Ok(found.sessions.into_iter().next().expect("one session")),
                0 => bail!("{}: no transcripts found", path.display()),
                n => bail!(
                    "{}: holds {n} sessions; give one file or a session id",
                    path.display()
                ),
            };
        }
        let report = ReportArgs {
            paths: self.inputs.clone(),
            project: self.project.clone(),
            quiet: self.quiet,
            mmap: self.mmap,
            ..ReportArgs::default()
        };
        let (sessions, _) = report.sessions(env)?;
        let id = self.session.as_str();
        if let Some(s) = sessions.iter().find(|s| s.session_id == id) {
            return Ok(s.clone());
        }
        let matches: Vec<&SessionFiles> = sessions
            .iter()
            .filter(|s| s.session_id.starts_with(id))
            .collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => bail!("no session {id:?} found (give a transcript path, or --in PATH)"),
            many => {
                let list: Vec<String> = many
                    .iter()
                    .take(10)
                    .map(|s| format!("{} ({})", s.session_id, s.project()))
                    .collect();
                bail!(
                    "session id {id:?} is ambiguous ({} matches): {}",
                    many.len(),
                    list.join(", ")
                )
            }
        }
    }
}

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) session: SessionArgs,
    /// Output format (default: the drawing on a terminal, the jsonl node list otherwise).
    #[arg(long, value_enum)]
    pub(crate) format: Option<Format>,
    /// Draw side branches and subagents at most this many levels deep; deeper ones become
    /// one `… N nodes` line (drawing only).
    #[arg(long, value_name = "N")]
    pub(crate) max_depth: Option<usize>,
    /// Draw linear runs of more than N nodes (no forks, subagents, compaction boundaries or
    /// user prompts) as their first and last node around a `┆ … K nodes` line (drawing only).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..))]
    pub(crate) collapse: Option<u64>,
    /// Draw internal agents (`acompact-`, `aprompt_suggestion-`, `aside_question-`) in full
    /// instead of one line.
    #[arg(long)]
    pub(crate) internal: bool,
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    let loaded = args
        .session
        .load::<TreeVisitor>(env, &AnalysisOptions::default())?;
    let links = link_session(&loaded, |v| &v.links);
    let tree = TreeOptions {
        max_depth: args.max_depth,
        collapse: args
            .collapse
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        internal: args.internal,
        teams: args.session.teams(env),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match choose_format(args.format) {
        Format::Table => {
            out.write_all(draw_tree(&loaded, &links, &tree).as_bytes())?;
        }
        Format::Jsonl => {
            for n in tree_rows(&loaded, &links, &tree) {
                serde_json::to_writer(&mut out, &n)?;
                out.write_all(b"\n")?;
            }
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &tree_rows(&loaded, &links, &tree))?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
