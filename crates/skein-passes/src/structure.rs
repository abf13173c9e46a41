//! Graph questions the passes share: the main line (the active branch, its parallel tool calls
//! and everything they hang from), abandoned branches, descendants, and re-parenting the
//! children of removed records onto their nearest kept ancestor.

use rustc_hash::FxHashMap;
use skein_graph::{NodeId, NodeTools, Parent, repair_parallel_tools};

use crate::edit::{IdEdits, IdValue, LinePlan};
use skein_core::record::RecordType;

use crate::transcript::Transcript;

/// Per-node flags.
pub(crate) type NodeSet = Vec<bool>;

/// The transcript's tool ids, with the `message.id` of some nodes hidden.
struct Hiding<'t> {
    t: &'t Transcript,
    hidden: Option<&'t NodeSet>,
}

impl NodeTools for Hiding<'_> {
    fn message_id(&self, n: NodeId) -> Option<u32> {
        if self.hidden.is_some_and(|h| h[n.0 as usize]) {
            return None;
        }
        self.t.message_id(n)
    }
    fn tool_uses(&self, n: NodeId) -> &[u32] {
        self.t.tool_uses(n)
    }
    fn tool_results(&self, n: NodeId) -> &[u32] {
        self.t.tool_results(n)
    }
}

/// The main line: the active branch (across compactions through `logicalParentUuid` when
/// `bridge`) of both the SDK's active leaf and [`main_leaf`], with the parallel tool calls and
/// results Claude Code splices back in, closed upward so every node's ancestors are in it.
/// Empty when there is no leaf.
///
/// Nodes in `leaving` (records another rule removes) do not pull in the lines that share
/// their `message.id`: once they are gone nothing would, and the result must not depend on
/// whether the pass runs once or twice.
pub(crate) fn main_line(
    t: &Transcript,
    bridge: bool,
    leaving: Option<&NodeSet>,
    removed: &NodeSet,
) -> NodeSet {
    let dag = t.dag();
    let mut keep = vec![false; dag.len()];
    let tools = Hiding { t, hidden: leaving };
    for leaf in leaves(t, removed) {
        let mut path = if bridge {
            dag.history_to_root(leaf)
        } else {
            dag.path_to_root(leaf)
        };
        path.reverse();
        for n in repair_parallel_tools(dag, &path, &tools) {
            mark_ancestors(t, n, &mut keep);
        }
    }
    keep
}

/// The leaf of the conversation: like the SDK's active leaf, but walking up from each
/// terminal *through* injected (`isMeta`), sidechain and team records to the nearest
/// main-conversation message. The SDK stops at the first user/assistant record and then
/// prefers non-meta candidates, so a hook-feedback record at the end of a session hides the
/// last answer and an older record wins; this one finds the last answer. Falls back to the
/// SDK's leaf when no terminal reaches a main message. Both as they will be once the nodes in
/// `removed` are gone.
pub(crate) fn main_leaf(t: &Transcript, removed: &NodeSet) -> Option<NodeId> {
    let dag = t.dag();
    let gone = |n: NodeId| removed.get(n.0 as usize).copied().unwrap_or(false);
    let mut best: Option<NodeId> = None;
    for n in dag.terminals_without(&gone) {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut cur = Some(n);
        while let Some(c) = cur {
            if !seen.insert(c) {
                break;
            }
            if t.is_main_message(c) && !gone(c) {
                if best.is_none_or(|b| dag.line(c) > dag.line(b)) {
                    best = Some(c);
                }
                break;
            }
            cur = dag.parent_node(c);
        }
    }
    best.or_else(|| dag.active_leaf_without(&gone))
}

/// The SDK's active leaf and [`main_leaf`] (once when they agree), both as they will be once
/// the nodes in `removed` are gone, so that a pass keeps the branches its output calls active.
pub(crate) fn leaves(t: &Transcript, removed: &NodeSet) -> Vec<NodeId> {
    let gone = |n: NodeId| removed.get(n.0 as usize).copied().unwrap_or(false);
    let mut v: Vec<NodeId> = t.dag().active_leaf_without(&gone).into_iter().collect();
    if let Some(m) = main_leaf(t, removed)
        && !v.contains(&m)
    {
        v.push(m);
    }
    v
}

/// Marks `n` and its ancestors (stopping at marked nodes, so cycles end).
pub(crate) fn mark_ancestors(t: &Transcript, n: NodeId, set: &mut NodeSet) {
    let mut cur = Some(n);
    while let Some(c) = cur {
        if set[c.0 as usize] {
            break;
        }
        set[c.0 as usize] = true;
        cur = t.dag().parent_node(c);
    }
}

/// Whether each node's subtree (itself included) holds a main-conversation message.
fn holds_message(t: &Transcript) -> NodeSet {
    let dag = t.dag();
    let mut has = vec![false; dag.len()];
    for n in dag.nodes().filter(|&n| t.is_main_message(n)) {
        mark_ancestors(t, n, &mut has);
    }
    has
}

/// Abandoned branches: subtrees that fork off the main line `keep` and hold at least one
/// main-conversation message (rewinds, edits, retries, compaction replays). Subtrees that
/// hold only progress, system, attachment or sidechain records are not abandoned.
pub(crate) fn abandoned(t: &Transcript, keep: &NodeSet) -> NodeSet {
    let dag = t.dag();
    let has = holds_message(t);
    let forks = dag
        .nodes()
        .filter(|&n| {
            !keep[n.0 as usize]
                && has[n.0 as usize]
                && dag.parent_node(n).is_some_and(|p| keep[p.0 as usize])
        })
        .collect();
    subtrees(t, forks)
}

/// `root` and everything below it.
pub(crate) fn descendants(t: &Transcript, root: NodeId) -> NodeSet {
    subtrees(t, vec![root])
}

/// The nodes in `roots` and everything below them.
pub(crate) fn subtrees(t: &Transcript, roots: Vec<NodeId>) -> NodeSet {
    let mut stack = roots;
    let dag = t.dag();
    let mut out = vec![false; dag.len()];
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut out[n.0 as usize], true) {
            continue;
        }
        stack.extend(dag.children(n).iter().copied());
    }
    out
}

/// Where a reference to a removed node should point instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Kept(NodeId),
    /// No kept ancestor (a root, a dangling parent or a cycle above).
    None,
}

struct Nearest<'t> {
    t: &'t Transcript,
    kept: &'t NodeSet,
    memo: FxHashMap<NodeId, Target>,
}

impl Nearest<'_> {
    /// The nearest kept node at or above `n`.
    fn of(&mut self, n: NodeId) -> Target {
        let mut walked = Vec::new();
        let mut on_walk = rustc_hash::FxHashSet::default();
        let mut cur = n;
        let found = loop {
            if self.kept[cur.0 as usize] {
                break Target::Kept(cur);
            }
            if let Some(&m) = self.memo.get(&cur) {
                break m;
            }
            if !on_walk.insert(cur) {
                break Target::None;
            }
            walked.push(cur);
            match self.t.dag().parent(cur) {
                Parent::Node(p) => cur = p,
                Parent::Root | Parent::Dangling => break Target::None,
            }
        };
        for w in walked {
            self.memo.insert(w, found);
        }
        found
    }
}

/// Whether each node keeps at least one of its lines.
pub(crate) fn kept_nodes(t: &Transcript, plan: &LinePlan) -> NodeSet {
    t.dag()
        .nodes()
        .map(|n| t.node_lines(n).any(|l| !plan.removed[l]))
        .collect()
}

/// Points every kept line whose `parentUuid` names a removed record at the nearest kept
/// ancestor (or `null` when there is none), and does the same for `logicalParentUuid` and
/// `leafUuid` when a kept ancestor exists. Returns the number of re-parented lines.
pub(crate) fn reparent(t: &Transcript, plan: &mut LinePlan) -> u64 {
    let kept = kept_nodes(t, plan);
    let mut nearest = Nearest {
        t,
        kept: &kept,
        memo: FxHashMap::default(),
    };
    let mut count = 0;
    for i in 0..t.len() {
        if plan.removed[i] {
            continue;
        }
        let Some(rec) = t.record(i) else { continue };
        let mut edits = IdEdits::default();
        let mut redirect = |target: Option<NodeId>, always: bool| -> Option<IdValue> {
            let node = target?;
            if kept[node.0 as usize] {
                return None;
            }
            match nearest.of(node) {
                Target::Kept(k) => Some(IdValue::Node(k)),
                Target::None => always.then_some(IdValue::Null),
            }
        };
        if t.node(i).is_some() {
            let parent = match t.line_parent(i) {
                Parent::Node(p) => Some(p),
                Parent::Root | Parent::Dangling => None,
            };
            edits.parent = redirect(parent, true);
        }
        if rec.compact_boundary() {
            edits.logical_parent = redirect(t.line_logical_parent(i), false);
        }
        if matches!(rec.kind, RecordType::Summary | RecordType::LastPrompt) {
            edits.leaf = redirect(rec.leaf, false);
        }
        if edits.parent.is_some() {
            count += 1;
        }
        if !edits.is_empty() {
            let slot = plan.ids.entry(i).or_default();
            if edits.parent.is_some() {
                slot.parent = edits.parent;
            }
            if edits.logical_parent.is_some() {
                slot.logical_parent = edits.logical_parent;
            }
            if edits.leaf.is_some() {
                slot.leaf = edits.leaf;
            }
        }
    }
    count
}

/// Keeps tool calls and their results together: while a kept line holds a `tool_use` or
/// `tool_result` id that a removed line (removed for a reason `restorable` accepts) also
/// holds, the removed line's whole node comes back. Returns the number of lines restored.
pub(crate) fn restore_tool_pairs(
    t: &Transcript,
    plan: &mut LinePlan,
    restorable: &dyn Fn(usize) -> bool,
) -> u64 {
    let n_ids = t.ids.len();
    let mut lines_of: Vec<Vec<usize>> = vec![Vec::new(); n_ids];
    for i in 0..t.len() {
        let Some(rec) = t.record(i) else { continue };
        for &id in t.tool_uses_of(rec).iter().chain(t.tool_results_of(rec)) {
            let l = &mut lines_of[id as usize];
            if l.last() != Some(&i) {
                l.push(i);
            }
        }
    }
    let mut restored = 0;
    loop {
        let mut changed = false;
        for lines in &lines_of {
            if lines.len() < 2 || !lines.iter().any(|&l| !plan.removed[l]) {
                continue;
            }
            for &l in lines {
                if !plan.removed[l] || !restorable(l) {
                    continue;
                }
                let node_lines: Vec<usize> = match t.node(l) {
                    Some(n) => t.node_lines(n).collect(),
                    None => vec![l],
                };
                for nl in node_lines {
                    if plan.removed[nl] && restorable(nl) {
                        plan.removed[nl] = false;
                        restored += 1;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return restored;
        }
    }
}
