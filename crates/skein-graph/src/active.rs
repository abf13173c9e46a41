//! The active branch (what the user sees), the whole-history walk, and the parallel-tool
//! repair that puts sibling tool calls and their results back on a rendered branch.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::dag::{Dag, NodeId};

impl Dag {
    /// The active leaf, as the Claude Code SDK picks it: terminals are chain-type nodes without
    /// chain-type children (the SDK drops other record types before it looks, so a record of a
    /// type it does not know never hides the branch it hangs from); from each, walk up to the
    /// nearest `user`/`assistant` node; prefer candidates that are not sidechain, meta or team
    /// records (falling back to all); take the one latest in file order.
    pub fn active_leaf(&self) -> Option<NodeId> {
        self.active_leaf_without(&|_| false)
    }

    /// The active leaf the graph would have with the nodes `removed` says are taken out and
    /// their children re-attached to the nearest kept ancestor (what the passes write): a pass
    /// that keeps "the active branch" must keep the branch its own output will call active.
    pub fn active_leaf_without(&self, removed: &dyn Fn(NodeId) -> bool) -> Option<NodeId> {
        let mut seen = FxHashSet::default();
        let mut candidates = Vec::new();
        for n in self.terminals_without(removed) {
            if let Some(c) = self.nearest_message(n, removed)
                && seen.insert(c)
            {
                candidates.push(c);
            }
        }
        let preferred = candidates
            .iter()
            .copied()
            .filter(|&c| !self.excluded_from_main(c))
            .max_by_key(|&c| self.line(c));
        preferred.or_else(|| candidates.into_iter().max_by_key(|&c| self.line(c)))
    }

    /// Chain-type nodes without chain-type children, in file order, with the nodes `removed`
    /// says are taken out (a removed child's children count as children of its parent).
    pub fn terminals_without(&self, removed: &dyn Fn(NodeId) -> bool) -> Vec<NodeId> {
        self.nodes()
            .filter(|&n| {
                !removed(n) && self.kind(n).is_chain() && !self.kept_chain_below(n, removed)
            })
            .collect()
    }

    /// Whether a kept chain-type node hangs below `n`, looking through removed nodes only.
    fn kept_chain_below(&self, n: NodeId, removed: &dyn Fn(NodeId) -> bool) -> bool {
        let children = self.children(n);
        if !children.iter().any(|&c| removed(c)) {
            // The common case (and the only one when nothing is removed): no allocation.
            return children.iter().any(|&c| self.kind(c).is_chain());
        }
        let mut stack: Vec<NodeId> = children.to_vec();
        let mut through: FxHashSet<NodeId> = FxHashSet::default();
        while let Some(c) = stack.pop() {
            if !removed(c) {
                if self.kind(c).is_chain() {
                    return true;
                }
            } else if through.insert(c) {
                stack.extend_from_slice(self.children(c));
            }
        }
        false
    }

    /// From `n` (included) up to the first kept `user`/`assistant` node, guarding against
    /// cycles.
    fn nearest_message(&self, n: NodeId, removed: &dyn Fn(NodeId) -> bool) -> Option<NodeId> {
        let mut visited = FxHashSet::default();
        let mut cur = n;
        loop {
            if self.kind(cur).is_message() && !removed(cur) {
                return Some(cur);
            }
            if !visited.insert(cur) {
                return None;
            }
            cur = self.parent_node(cur)?;
        }
    }

    /// The path from `leaf` up through parent links, leaf first, stopping at a root, a
    /// dangling parent, or before a node already on the path (cycle).
    pub fn path_to_root(&self, leaf: NodeId) -> Vec<NodeId> {
        self.walk_up(leaf)
    }

    /// Like [`Dag::path_to_root`], but for views of the whole history: across compaction
    /// boundaries through `logicalParentUuid` and across broken chains, as
    /// [`Dag::history`] walks (leaf first).
    pub fn history_to_root(&self, leaf: NodeId) -> Vec<NodeId> {
        let mut path = self.history(leaf).path;
        path.reverse();
        path
    }

    fn walk_up(&self, leaf: NodeId) -> Vec<NodeId> {
        let mut visited = crate::dag::NodeSet::new(self.len());
        let mut path = Vec::new();
        let mut cur = Some(leaf);
        while let Some(n) = cur {
            if !visited.insert(n) {
                break;
            }
            path.push(n);
            cur = self.parent_node(n);
        }
        path
    }

    /// The active branch, root first (empty when there is no active leaf).
    pub fn active_branch(&self) -> Vec<NodeId> {
        let mut path = self
            .active_leaf()
            .map(|l| self.path_to_root(l))
            .unwrap_or_default();
        path.reverse();
        path
    }
}

/// What the parallel-tool repair needs to know about each node, with ids interned to numbers
/// by the caller.
pub trait NodeTools {
    /// The node's `message.id` (assistant records).
    fn message_id(&self, n: NodeId) -> Option<u32>;
    /// The `tool_use` ids in the node's content.
    fn tool_uses(&self, n: NodeId) -> &[u32];
    /// The `tool_use_id`s of `tool_result` blocks in the node's content.
    fn tool_results(&self, n: NodeId) -> &[u32];
}

/// Claude Code's `recoverOrphanedParallelToolResults`: a single-parent walk keeps only one of
/// N parallel tool calls. For a branch (root first), re-attach every off-branch assistant line
/// that shares a `message.id` with a branch line, and every off-branch record holding a
/// `tool_result` for a `tool_use` on the (extended) branch. Each re-attached node is placed
/// after its anchor, in file order. Returns the repaired branch.
pub fn repair_parallel_tools(dag: &Dag, branch: &[NodeId], tools: &impl NodeTools) -> Vec<NodeId> {
    let on_branch: FxHashSet<NodeId> = branch.iter().copied().collect();
    let mut by_message: FxHashMap<u32, Vec<NodeId>> = FxHashMap::default();
    let mut by_result: FxHashMap<u32, Vec<NodeId>> = FxHashMap::default();
    for n in dag.nodes().filter(|n| !on_branch.contains(n)) {
        if let Some(m) = tools.message_id(n) {
            by_message.entry(m).or_default().push(n);
        }
        for &r in tools.tool_results(n) {
            by_result.entry(r).or_default().push(n);
        }
    }
    let mut placed: FxHashSet<NodeId> = on_branch.clone();
    let mut out = Vec::with_capacity(branch.len());
    for &anchor in branch {
        out.push(anchor);
        let mut extra: Vec<NodeId> = Vec::new();
        if let Some(m) = tools.message_id(anchor) {
            for &s in by_message.get(&m).into_iter().flatten() {
                if placed.insert(s) {
                    extra.push(s);
                }
            }
        }
        let mut i = 0;
        let mut users: Vec<NodeId> = std::iter::once(anchor)
            .chain(extra.iter().copied())
            .collect();
        while i < users.len() {
            for &u in tools.tool_uses(users[i]) {
                for &r in by_result.get(&u).into_iter().flatten() {
                    if placed.insert(r) {
                        extra.push(r);
                        users.push(r);
                    }
                }
            }
            i += 1;
        }
        extra.sort_by_key(|&n| dag.line(n));
        out.extend(extra);
    }
    out
}
