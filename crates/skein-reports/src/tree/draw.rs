//! The drawing of `skein tree` (the table format).

use std::fmt::Write as _;

use skein_analysis::Analysis;
use skein_graph::NodeId;

use super::rows::Ctx;
use super::walk::{What, walk};
use super::{SessionLinks, SpawnInput, TreeNode, TreeOptions, TreeVisitor, nodes, short};
use crate::session::LoadedSession;

impl Ctx<'_> {
    /// The input of the call that spawned agent `i`, when it was read.
    fn spawn_input(&self, i: usize) -> Option<&SpawnInput> {
        let id = self.links.agents[i].tool_use_id.as_deref()?;
        self.s
            .main
            .iter()
            .map(|(_, v)| v)
            .chain(self.s.agents.iter().map(|a| &a.visitor))
            .flat_map(|v| v.links.spawn_inputs.iter())
            .find(|sp| sp.tool_use_id == id)
    }
}

fn agent_header(ctx: &Ctx<'_>, i: usize, expanded: bool) -> String {
    let a = &ctx.s.agents[i];
    let link = &ctx.links.agents[i];
    let spawn = ctx.spawn_input(i);
    let meta = a.file.meta.as_ref();
    let mut parts = vec![format!("agent {}", a.file.agent_id)];
    match ctx.labels.get(i) {
        Some(label) => parts.extend(label.parts()),
        None => {
            if let Some(t) = meta
                .and_then(|m| m.agent_type.as_deref())
                .or_else(|| spawn.and_then(|sp| sp.subagent_type.as_deref()))
            {
                parts.push(t.to_owned());
            }
        }
    }
    if let Some(d) = meta
        .and_then(|m| m.description.as_deref())
        .or_else(|| spawn.and_then(|sp| sp.description.as_deref()))
    {
        parts.push(format!("\"{}\"", crate::tools::clip(d, 60)));
    }
    parts.push(nodes(a.analysis.dag.len() as u64));
    if a.file.internal {
        parts.push("internal: replays the parent context".into());
        if !expanded {
            parts.push("--internal to draw".into());
        }
    } else if link.at.is_none() {
        match &link.tool_use_id {
            Some(id) => parts.push(format!("unlinked: call {id} not found")),
            None => parts.push("unlinked".into()),
        }
    }
    if a.file.legacy {
        parts.push("legacy file".into());
    }
    let marker = if a.file.internal { '◇' } else { '◆' };
    format!("{marker} {}", parts.join(" · "))
}

fn node_line(row: &TreeNode, a: &Analysis, n: NodeId) -> String {
    let dag = &a.dag;
    let mut line = String::new();
    line.push(if row.active { '*' } else { '·' });
    line.push(' ');
    line.push_str(short(&row.uuid));
    line.push_str("  ");
    line.push_str(&row.kind);
    if let Some(sub) = &row.subtype {
        line.push('/');
        line.push_str(sub);
    }
    let mut notes: Vec<String> = Vec::new();
    if row.dangling {
        notes.push(format!(
            "parent {} missing",
            short(row.parent.as_deref().unwrap_or("?"))
        ));
    }
    if let Some(lp) = &row.logical_parent {
        let found = dag.logical_parent(n).is_some();
        notes.push(if found {
            format!("continues {}", short(lp))
        } else {
            format!("continues {} (not in file)", short(lp))
        });
    }
    if row.seam.is_some()
        && let Some(after) = &row.attached_to
    {
        notes.push(format!("seam: history continues from {}", short(after)));
    }
    if row.sidechain && row.agent_id.is_none() {
        notes.push("sidechain".into());
    }
    if row.meta && row.subtype.as_deref() != Some("meta") {
        notes.push("meta".into());
    }
    if !notes.is_empty() {
        let _ = write!(line, "  [{}]", notes.join(", "));
    }
    if !row.preview.is_empty() {
        line.push_str("  ");
        line.push_str(&row.preview);
    }
    line
}

/// The drawing of `skein tree` (the table format): a header, then one line per node.
pub fn draw_tree(
    s: &LoadedSession<TreeVisitor>,
    links: &SessionLinks,
    options: &TreeOptions,
) -> String {
    let ctx = Ctx::new(s, links, options);
    let mut out = String::new();
    let _ = writeln!(out, "session {}", s.files.session_id);
    match &s.files.main {
        Some(p) => {
            let _ = writeln!(out, "{}", p.display());
        }
        None => out.push_str("(no main transcript)\n"),
    }
    if let Some((a, _)) = &s.main {
        let sum = a.dag.summary();
        let leaf = a
            .dag
            .active_leaf()
            .map_or_else(|| "-".to_owned(), |l| short(a.dag.uuid(l)).to_owned());
        let _ = write!(
            out,
            "nodes {} · branch points {} · compactions {} · subagents {} · active leaf {leaf}",
            sum.nodes,
            sum.branch_points,
            sum.compactions,
            s.agents.len()
        );
        let seams = ctx
            .seams
            .keys()
            .filter(|(src, _)| *src == super::Source::Main)
            .count();
        if seams > 0 {
            let _ = write!(out, " · seams {seams}");
        }
        out.push('\n');
    }
    out.push('\n');
    for e in walk(s, links, options) {
        out.push_str(&e.prefix);
        match e.what {
            What::Node { src, node } => {
                let row = ctx.node(src, node, e.depth, ctx.is_active(src, node));
                let a = ctx.analysis(src).expect("drawn sources are loaded");
                out.push_str(&node_line(&row, a, node));
            }
            What::Agent(i, expanded) => out.push_str(&agent_header(&ctx, i, expanded)),
            What::More(n) => {
                let _ = write!(out, "… {} (--max-depth)", nodes(n));
            }
            What::Run(n) => {
                let _ = write!(out, "┆ … {}", nodes(n));
            }
            What::Title(t) => {
                let _ = write!(out, "── {t} ──");
            }
        }
        out.push('\n');
    }
    out
}
