//! One transcript prepared for the traversal: its active branch (the whole history), the
//! compaction boundaries drawn under their logical parent and the seams under the record the
//! history continues from, drawing children and subtree weights.

use rustc_hash::{FxHashMap, FxHashSet};
use skein_analysis::Analysis;
use skein_graph::{Dag, NodeId};

use super::NodeInfo;

/// Per transcript: the pieces the traversal needs.
pub(super) struct FileView<'a> {
    pub(super) analysis: &'a Analysis,
    pub(super) info: &'a [NodeInfo],
    pub(super) active: FxHashSet<NodeId>,
    /// Compaction boundaries drawn under their logical parent, and records after a seam
    /// under the record the history continues from: drawing parent → nodes.
    pub(super) boundaries: FxHashMap<NodeId, Vec<NodeId>>,
    pub(super) attached: FxHashSet<NodeId>,
    /// Nodes in each node's drawing subtree (itself included).
    pub(super) weight: Vec<u32>,
}

impl<'a> FileView<'a> {
    pub(super) fn new(analysis: &'a Analysis, info: &'a [NodeInfo]) -> Self {
        let dag = &analysis.dag;
        let history = dag
            .active_leaf()
            .map(|l| dag.history(l))
            .unwrap_or_default();
        let active = history.path.iter().copied().collect();
        let mut boundaries: FxHashMap<NodeId, Vec<NodeId>> = FxHashMap::default();
        let mut attached = FxHashSet::default();
        for s in &history.seams {
            boundaries.entry(s.continues).or_default().push(s.node);
            attached.insert(s.node);
        }
        for n in dag.nodes() {
            if dag.is_compact_boundary(n)
                && dag.parent_node(n).is_none()
                && let Some(lp) = dag.logical_parent(n)
                && lp != n
            {
                boundaries.entry(lp).or_default().push(n);
                attached.insert(n);
            }
        }
        let mut view = Self {
            analysis,
            info,
            active,
            boundaries,
            attached,
            weight: Vec::new(),
        };
        view.weight = view.weights();
        view
    }

    /// Subtree sizes, by an iterative post-order walk from every drawing root.
    fn weights(&self) -> Vec<u32> {
        let dag = self.dag();
        let mut weight = vec![1u32; dag.len()];
        let mut state = vec![0u8; dag.len()];
        let mut stack: Vec<(NodeId, bool)> = Vec::new();
        let roots = dag
            .nodes()
            .filter(|&n| dag.parent_node(n).is_none() && !self.attached.contains(&n));
        for root in roots {
            stack.push((root, false));
            while let Some((v, done)) = stack.pop() {
                let i = v.0 as usize;
                if done {
                    let sum: u32 = self
                        .kids(v)
                        .iter()
                        .filter(|k| state[k.0 as usize] == 2)
                        .map(|k| weight[k.0 as usize])
                        .fold(0u32, u32::saturating_add);
                    weight[i] = sum.saturating_add(1);
                    state[i] = 2;
                    continue;
                }
                if state[i] != 0 {
                    continue;
                }
                state[i] = 1;
                stack.push((v, true));
                for k in self.kids(v) {
                    if state[k.0 as usize] == 0 {
                        stack.push((k, false));
                    }
                }
            }
        }
        weight
    }

    pub(super) fn dag(&self) -> &Dag {
        &self.analysis.dag
    }

    /// Children for drawing: graph children plus attached compaction boundaries, by line.
    pub(super) fn kids(&self, n: NodeId) -> Vec<NodeId> {
        let mut out: Vec<NodeId> = self
            .dag()
            .children(n)
            .iter()
            .copied()
            .filter(|&c| c != n)
            .collect();
        if let Some(b) = self.boundaries.get(&n) {
            out.extend(b.iter().copied());
            out.sort_by_key(|&c| self.dag().line(c));
        }
        out
    }

    pub(super) fn info(&self, n: NodeId) -> Option<&NodeInfo> {
        self.info.get(n.0 as usize)
    }

    pub(super) fn is_prompt(&self, n: NodeId) -> bool {
        self.info(n)
            .is_some_and(|i| &*i.kind == "user" && i.subtype.as_deref() == Some("prompt"))
    }
}
