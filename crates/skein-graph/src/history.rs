//! The whole history of a branch: the walk up from a leaf that does not stop where the
//! `parentUuid` chain breaks.
//!
//! Claude Code's own walk (the SDK's, [`Dag::path_to_root`]) stops at the first record without
//! a parent in the file. Real files break the chain in three ways, each leaving the earlier
//! conversation unreachable from the active leaf:
//!
//! * a **dangling parent**: the record's `parentUuid` names no record of the file (a hook
//!   `progress` record written under a parent that was never persisted);
//! * a **compaction boundary whose logical parent is missing**: a `compact_boundary` (its
//!   `parentUuid` is null by design) whose `logicalParentUuid` is not in the file;
//! * a **new root**: a record with a null `parentUuid` that is not the first root of the file
//!   (the conversation continued after "clear context").
//!
//! The rule ([`Dag::history`]): walk up from the leaf through `parentUuid`, and through
//! `logicalParentUuid` at a compaction boundary whose logical parent is in the file. At a
//! record with no usable parent that is not the file's first root, continue from the **last
//! chain record before it in file order** that is not already on the path (sidechain and team
//! records, which never belong to the main conversation, are skipped), and record a [`Seam`].
//! Rewound branches (subtrees forking off the path) stay off it; [`Dag::rewound_branches`]
//! lists them.

use rustc_hash::FxHashSet;

use crate::dag::{Dag, NodeId, NodeSet, Parent};

/// Which link was missing where the walk bridged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SeamKind {
    /// The record's `parentUuid` names no record of the file.
    DanglingParent,
    /// A compaction boundary whose `logicalParentUuid` is absent (or names no record).
    MissingLogicalParent,
    /// A record with a null `parentUuid` that is not the first root of the file.
    NewRoot,
}

impl SeamKind {
    /// A stable snake-case name (`dangling_parent`, `missing_logical_parent`, `new_root`).
    pub fn name(self) -> &'static str {
        match self {
            Self::DanglingParent => "dangling_parent",
            Self::MissingLogicalParent => "missing_logical_parent",
            Self::NewRoot => "new_root",
        }
    }
}

/// A place where the whole-history walk bridged a broken chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seam {
    /// The record without a usable parent: the first record after the seam.
    pub node: NodeId,
    /// The record the walk continued from: the last record before the seam on the path.
    pub continues: NodeId,
    pub kind: SeamKind,
}

/// A branch followed to the start of the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History {
    /// The records, root first.
    pub path: Vec<NodeId>,
    /// The seams, in path order (earliest first).
    pub seams: Vec<Seam>,
}

impl History {
    /// The seam starting at `n`, if any.
    pub fn seam_at(&self, n: NodeId) -> Option<&Seam> {
        self.seams.iter().find(|s| s.node == n)
    }
}

impl Dag {
    /// The whole history ending at `leaf`, across compaction boundaries and broken chains
    /// (see the [module documentation](self) for the rule).
    pub fn history(&self, leaf: NodeId) -> History {
        let mut on_path = NodeSet::new(self.len());
        let mut path = Vec::new();
        let mut seams = Vec::new();
        let mut first_root: Option<Option<NodeId>> = None;
        let mut cur = Some(leaf);
        while let Some(n) = cur {
            if !on_path.insert(n) {
                break;
            }
            path.push(n);
            cur = match self.parent(n) {
                Parent::Node(p) => Some(p),
                parent => {
                    let logical = self
                        .is_compact_boundary(n)
                        .then(|| self.logical_parent(n))
                        .flatten();
                    if logical.is_some() {
                        logical
                    } else {
                        let first = *first_root.get_or_insert_with(|| self.first_root());
                        let kind = if self.is_compact_boundary(n) {
                            SeamKind::MissingLogicalParent
                        } else if parent == Parent::Dangling {
                            SeamKind::DanglingParent
                        } else {
                            SeamKind::NewRoot
                        };
                        let before = (first != Some(n))
                            .then(|| self.chain_record_before(n, &on_path))
                            .flatten();
                        if let Some(b) = before {
                            seams.push(Seam {
                                node: n,
                                continues: b,
                                kind,
                            });
                        }
                        before
                    }
                }
            };
        }
        path.reverse();
        seams.reverse();
        History { path, seams }
    }

    /// The first record of the file (in file order) without a usable parent: no parent node,
    /// and not a compaction boundary whose logical parent is in the file. Sidechain and team
    /// records are not considered.
    pub fn first_root(&self) -> Option<NodeId> {
        self.nodes().find(|&n| {
            self.kind(n).is_chain()
                && !self.is_sidechain(n)
                && !self.meta_of(n).team
                && self.parent_node(n).is_none()
                && !(self.is_compact_boundary(n) && self.logical_parent(n).is_some())
        })
    }

    /// The last chain record before `n` in file order that is not on the path and not a
    /// sidechain or team record.
    fn chain_record_before(&self, n: NodeId, on_path: &NodeSet) -> Option<NodeId> {
        (0..n.0).rev().map(NodeId).find(|&c| {
            self.kind(c).is_chain()
                && !self.is_sidechain(c)
                && !self.meta_of(c).team
                && !on_path.contains(c)
        })
    }

    /// Rewound branches of a rendered branch: the children of nodes in `on` that are not in
    /// `on` themselves and whose subtree holds a `user` or `assistant` record that is not a
    /// sidechain record (rewinds, edited prompts, retries, compaction replays), in file
    /// order. Subtrees of only progress, system or attachment records are not branches.
    pub fn rewound_branches(&self, on: &dyn Fn(NodeId) -> bool) -> Vec<NodeId> {
        let holds = self.holds_message();
        self.nodes()
            .filter(|&n| !on(n) && holds[n.0 as usize] && self.parent_node(n).is_some_and(on))
            .collect()
    }

    /// For each node, whether its subtree (itself included) holds a `user` or `assistant`
    /// record that is not a sidechain record.
    pub fn holds_message(&self) -> Vec<bool> {
        let mut holds = vec![false; self.len()];
        for n in self.nodes() {
            if !self.kind(n).is_message() || self.is_sidechain(n) {
                continue;
            }
            let mut seen = FxHashSet::default();
            let mut cur = Some(n);
            while let Some(c) = cur {
                if holds[c.0 as usize] || !seen.insert(c) {
                    break;
                }
                holds[c.0 as usize] = true;
                cur = self.parent_node(c);
            }
        }
        holds
    }
}
