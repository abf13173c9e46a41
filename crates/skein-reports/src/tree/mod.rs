//! The `skein tree` report: a session's graph, drawn in the terminal or listed node by node.
//! Also home of the subagent linking that `skein show` and `skein check` share
//! ([`LinkVisitor`], [`link_session`]).
//!
//! Drawing rules (documented in `docs/reports/tree.md`):
//! * every transcript's nodes are drawn from its roots in file order; a compaction boundary
//!   whose `logicalParentUuid` names a node of the file is drawn as a child of that node, and
//!   the first record after a seam of the whole history (a broken chain bridged by
//!   [`skein_graph::Dag::history`]) as a child of the record the history continues from;
//! * along a chain, the child on the active branch (else the last child in file order)
//!   continues at the same indentation; other children, subagents spawned by the node and
//!   inline sidechains linked to it are drawn first as indented side branches;
//! * subagent transcripts hang under the record holding their spawning `tool_use`; agents
//!   that cannot be linked are drawn after the main transcript.
//!
//! Files: `links` (subagent ↔ spawning call), `visitor` (what is kept per record while
//! reading), `view` (one transcript prepared for the traversal), `walk` (the traversal: drawing
//! order, side branches, caps), `rows` (the node list), `draw` (the text drawing).

mod draw;
mod links;
mod rows;
mod view;
mod visitor;
mod walk;

pub use draw::draw_tree;
pub use links::{AgentLink, Hung, LinkKey, LinkVisitor, SessionLinks, SpawnInput, link_session};
pub use rows::{TreeNode, TreeRow, tree_nodes, tree_rows};
pub use visitor::{NodeInfo, TreeVisitor};

/// Which transcript of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Main,
    /// Index into [`LoadedSession::agents`](crate::LoadedSession::agents).
    Agent(usize),
}

/// How the drawing is capped, and what labels agents.
#[derive(Debug, Clone, Default)]
pub struct TreeOptions {
    /// Side branches and subagents nested deeper than this are drawn as one `… N nodes` line.
    pub max_depth: Option<usize>,
    /// Linear runs of more than this many nodes (no forks, subagents, compaction boundaries
    /// or user prompts) are drawn as their first and last node around a `┆ … N nodes` line.
    pub collapse: Option<usize>,
    /// Draw internal agents (`acompact-`, …) in full instead of one line.
    pub internal: bool,
    /// Agent-team configs, for agent names and types.
    pub teams: Vec<skein_layout::TeamConfig>,
}

/// `1 node`, `N nodes`.
fn nodes(n: u64) -> String {
    if n == 1 {
        "1 node".to_owned()
    } else {
        format!("{n} nodes")
    }
}

/// The first 8 characters of an id.
fn short(id: &str) -> &str {
    match id.char_indices().nth(8) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_and_counts() {
        assert_eq!(short("0123456789abcdef"), "01234567");
        assert_eq!(short("u1"), "u1");
        assert_eq!(nodes(1), "1 node");
        assert_eq!(nodes(3), "3 nodes");
    }
}
