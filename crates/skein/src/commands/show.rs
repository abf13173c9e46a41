//! `skein show SESSION`: the active conversation as Markdown. See `docs/reports/show.md`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use skein_analysis::AnalysisOptions;
use skein_reports::show::{ShowOptions, ShowVisitor, render_session};
use skein_reports::tree::link_session;

use super::tree::SessionArgs;

#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) session: SessionArgs,
    /// Write the Markdown to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Leave thinking blocks out (they are folded by default).
    #[arg(long)]
    pub(crate) no_thinking: bool,
    /// Include injected context (`isMeta` records: skill bodies, hook feedback), folded.
    #[arg(long)]
    pub(crate) meta: bool,
    /// Do not nest subagent transcripts under their spawning calls.
    #[arg(long)]
    pub(crate) no_agents: bool,
    /// Longest tool result or tool input shown, in bytes; longer ones are cut with a note
    /// (0: no limit).
    #[arg(long, value_name = "BYTES", default_value_t = 4000)]
    pub(crate) max_result: usize,
    /// Render the branch ending at this record (uuid or unique prefix, see `skein tree`)
    /// instead of the active branch.
    #[arg(long, value_name = "UUID")]
    pub(crate) leaf: Option<String>,
    /// Start at the last compaction boundary (Claude Code's own walk) instead of following
    /// the whole history back to the start of the file, across compactions and broken
    /// chains.
    #[arg(long)]
    pub(crate) since_compaction: bool,
    /// Also render rewound branches (abandoned by a rewind or an edited prompt), folded
    /// where they fork off the rendered branch.
    #[arg(long)]
    pub(crate) all_branches: bool,
}

pub(crate) fn run(args: &Args, env: &skein_layout::Env) -> Result<ExitCode> {
    let analysis = AnalysisOptions {
        node_tools: true,
        ..AnalysisOptions::default()
    };
    if let Some(out) = &args.output {
        // `-o` naming a transcript of the session would replace it with Markdown.
        let files = args.session.resolve(env)?;
        let inputs: Vec<&Path> = files
            .main
            .iter()
            .map(PathBuf::as_path)
            .chain(files.agents.iter().map(|a| a.path.as_path()))
            .collect();
        skein_store::ensure_not_input(out, &inputs)?;
    }
    let loaded = args.session.load::<ShowVisitor>(env, &analysis)?;
    let links = link_session(&loaded, |v| &v.links);
    let options = ShowOptions {
        thinking: !args.no_thinking,
        meta: args.meta,
        agents: !args.no_agents,
        max_result: args.max_result,
        leaf: args.leaf.clone(),
        bridge: !args.since_compaction,
        all_branches: args.all_branches,
        mmap: args.session.mmap,
        teams: args.session.teams(env),
    };
    let markdown = render_session(&loaded, &links, &options)?;
    if let Some(path) = &args.output {
        crate::output::write_output(path, markdown.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    } else {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        out.write_all(markdown.as_bytes())?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
