//! The node list of `skein tree --format jsonl`: one [`TreeNode`] per record, in drawing
//! order.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use skein_analysis::Analysis;
use skein_graph::{NodeId, Parent, Seam};

use super::walk::{What, walk};
use super::{NodeInfo, SessionLinks, Source, TreeOptions, TreeVisitor};
use crate::agents::{AgentLabel, MessageEdge, agent_labels, message_edges};
use crate::session::LoadedSession;

/// One node of the node list (`skein tree --format jsonl`), in drawing order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeNode {
    pub session_id: String,
    /// The transcript file holding the record.
    pub file: String,
    /// `None` in the main transcript.
    pub agent_id: Option<String>,
    /// The agent's name (`Agent` input `name`, or its team config entry); `None` in the main
    /// transcript and for unnamed agents.
    pub agent_name: Option<String>,
    /// The transcript is an internal agent's (`acompact-`, `aprompt_suggestion-`,
    /// `aside_question-`).
    pub internal: bool,
    pub line: u64,
    pub uuid: String,
    /// The record's `parentUuid`.
    pub parent: Option<String>,
    /// `parent` names no record of the file.
    pub dangling: bool,
    /// `logicalParentUuid` (compaction boundaries).
    pub logical_parent: Option<String>,
    /// The record starts a seam of the whole history (its chain broke and the history
    /// continues from `attached_to`): `dangling_parent`, `missing_logical_parent` or
    /// `new_root`.
    pub seam: Option<&'static str>,
    #[serde(rename = "type")]
    pub kind: String,
    pub subtype: Option<String>,
    pub timestamp: Option<String>,
    /// On the file's active branch (followed across compaction boundaries).
    pub active: bool,
    pub sidechain: bool,
    pub meta: bool,
    /// Nesting level in the drawing: 0 for the main line, +1 per side branch or subagent.
    pub depth: usize,
    /// Records naming this one as parent.
    pub children: usize,
    /// For a node drawn under a record that is not its parent: that record's uuid (an agent
    /// transcript's roots under the spawning call, a compaction boundary under its logical
    /// parent, a seam under the record the history continues from, an inline sidechain under
    /// its call).
    pub attached_to: Option<String>,
    /// In agent transcripts: the spawning call's `tool_use` id, when known.
    pub spawned_by: Option<String>,
    pub preview: String,
}

/// What rows and drawing lines are built from: the loaded session, its links, the agents'
/// labels, and each transcript's whole history (active set and seams).
pub(super) struct Ctx<'a> {
    pub(super) s: &'a LoadedSession<TreeVisitor>,
    pub(super) links: &'a SessionLinks,
    pub(super) labels: Vec<AgentLabel>,
    pub(super) active: FxHashMap<Source, FxHashSet<NodeId>>,
    pub(super) seams: FxHashMap<(Source, NodeId), Seam>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(
        s: &'a LoadedSession<TreeVisitor>,
        links: &'a SessionLinks,
        options: &TreeOptions,
    ) -> Self {
        let mut ctx = Self {
            s,
            links,
            labels: agent_labels(s, links, |v| &v.links, &options.teams),
            active: FxHashMap::default(),
            seams: FxHashMap::default(),
        };
        let sources: Vec<Source> = s
            .main
            .iter()
            .map(|_| Source::Main)
            .chain((0..s.agents.len()).map(Source::Agent))
            .collect();
        for src in sources {
            if let Some(a) = ctx.analysis(src) {
                let h = a
                    .dag
                    .active_leaf()
                    .map(|l| a.dag.history(l))
                    .unwrap_or_default();
                ctx.seams
                    .extend(h.seams.iter().map(|seam| ((src, seam.node), *seam)));
                ctx.active.insert(src, h.path.into_iter().collect());
            }
        }
        ctx
    }

    /// Whether a node is on its transcript's active history.
    pub(super) fn is_active(&self, src: Source, n: NodeId) -> bool {
        self.active.get(&src).is_some_and(|a| a.contains(&n))
    }

    pub(super) fn analysis(&self, src: Source) -> Option<&'a Analysis> {
        match src {
            Source::Main => self.s.main.as_ref().map(|(a, _)| a),
            Source::Agent(i) => self.s.agents.get(i).map(|a| &a.analysis),
        }
    }

    fn infos(&self, src: Source) -> &[NodeInfo] {
        match src {
            Source::Main => self
                .s
                .main
                .as_ref()
                .map_or(&[], |(_, v)| v.nodes.as_slice()),
            Source::Agent(i) => self
                .s
                .agents
                .get(i)
                .map_or(&[], |a| a.visitor.nodes.as_slice()),
        }
    }

    fn file_name(&self, src: Source) -> String {
        match src {
            Source::Main => self
                .s
                .files
                .main
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            Source::Agent(i) => self.s.agents[i].file.path.display().to_string(),
        }
    }

    /// The uuid of the record a node is drawn under when that is not its parent.
    fn attached_to(&self, src: Source, n: NodeId) -> Option<String> {
        let a = self.analysis(src)?;
        let dag = &a.dag;
        if dag.parent_node(n).is_some() {
            return None;
        }
        if let Some(seam) = self.seams.get(&(src, n)) {
            return Some(dag.uuid(seam.continues).to_owned());
        }
        if dag.is_compact_boundary(n)
            && let Some(lp) = dag.logical_parent(n)
        {
            return Some(dag.uuid(lp).to_owned());
        }
        let at = match src {
            Source::Main => self
                .links
                .inline
                .iter()
                .find(|(r, _)| *r == n)
                .and_then(|(_, l)| l.as_ref())
                .map(|(_, call)| (Source::Main, *call)),
            Source::Agent(i) => self.links.agents[i].at,
        }?;
        let host = self.analysis(at.0)?;
        Some(host.dag.uuid(at.1).to_owned())
    }

    pub(super) fn node(&self, src: Source, n: NodeId, depth: usize, active: bool) -> TreeNode {
        let a = self.analysis(src).expect("drawn sources are loaded");
        let dag = &a.dag;
        let info = self
            .infos(src)
            .get(n.0 as usize)
            .cloned()
            .unwrap_or_default();
        let (agent_id, internal, spawned_by) = match src {
            Source::Main => (None, false, None),
            Source::Agent(i) => (
                Some(self.s.agents[i].file.agent_id.clone()),
                self.s.agents[i].file.internal,
                self.links.agents[i].tool_use_id.clone(),
            ),
        };
        let agent_name = match src {
            Source::Main => None,
            Source::Agent(i) => self.labels.get(i).and_then(|l| l.name.clone()),
        };
        let mut preview = info.preview.to_string();
        if let Some(id) = &info.result_of
            && let Some(name) = a.tools.use_for(id).and_then(|u| u.name.as_deref())
        {
            preview = format!("{name} → {preview}");
        }
        TreeNode {
            session_id: self.s.files.session_id.clone(),
            file: self.file_name(src),
            agent_id,
            agent_name,
            internal,
            line: dag.line(n),
            uuid: dag.uuid(n).to_owned(),
            parent: info.parent.map(Into::into),
            dangling: dag.parent(n) == Parent::Dangling,
            logical_parent: info.logical_parent.map(Into::into),
            seam: self.seams.get(&(src, n)).map(|s| s.kind.name()),
            kind: info.kind.to_string(),
            subtype: info.subtype.map(Into::into),
            timestamp: info.timestamp.map(Into::into),
            active,
            sidechain: dag.is_sidechain(n),
            meta: info.meta,
            depth,
            children: dag.children(n).len(),
            attached_to: self.attached_to(src, n),
            spawned_by,
            preview,
        }
    }
}

/// The node list of `skein tree --format jsonl`: every node of every transcript of the
/// session, in drawing order (no caps apply; internal agents included).
pub fn tree_nodes(s: &LoadedSession<TreeVisitor>, links: &SessionLinks) -> Vec<TreeNode> {
    nodes_with(&Ctx::new(s, links, &TreeOptions::default()))
}

fn nodes_with(ctx: &Ctx<'_>) -> Vec<TreeNode> {
    let options = TreeOptions {
        internal: true,
        ..TreeOptions::default()
    };
    walk(ctx.s, ctx.links, &options)
        .into_iter()
        .filter_map(|e| match e.what {
            What::Node { src, node } => {
                Some(ctx.node(src, node, e.depth, ctx.is_active(src, node)))
            }
            _ => None,
        })
        .collect()
}

/// One row of `skein tree --format jsonl`: a node, or (after every node) a message between
/// agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum TreeRow {
    Node(TreeNode),
    Message(MessageEdge),
}

/// The rows of `skein tree --format jsonl`: the node list (agents labelled with the team
/// configs of `options`), then the `SendMessage` edges.
pub fn tree_rows(
    s: &LoadedSession<TreeVisitor>,
    links: &SessionLinks,
    options: &TreeOptions,
) -> Vec<TreeRow> {
    let ctx = Ctx::new(s, links, options);
    let mut rows: Vec<TreeRow> = nodes_with(&ctx).into_iter().map(TreeRow::Node).collect();
    rows.extend(
        message_edges(s, &ctx.labels)
            .into_iter()
            .map(TreeRow::Message),
    );
    rows
}
