//! Collecting nodes in file order.

use skein_core::Interner;

use crate::dag::{Dag, NodeId, NodeMeta, Parent, RecordType};

/// One chain record as the graph needs it.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeInput<'a> {
    pub uuid: &'a str,
    /// `parentUuid` when it is a string.
    pub parent: Option<&'a str>,
    /// `logicalParentUuid` when it is a string.
    pub logical_parent: Option<&'a str>,
    pub kind: RecordType,
    pub compact_boundary: bool,
    pub sidechain: bool,
    pub meta: bool,
    /// A non-empty `teamName`.
    pub team: bool,
    /// 1-based physical line of the record (file order).
    pub line: u64,
}

/// A parent link that named no node yet when its record was added (a parent later in the
/// file, or one that never comes: dangling).
#[derive(Debug)]
struct Pending {
    node: NodeId,
    uuid: Box<str>,
    logical: bool,
}

/// Builds a [`Dag`] from records in file order. The first record with a uuid is the node; a
/// later record with the same uuid is a duplicate: counted, otherwise ignored.
///
/// Links are resolved as records arrive (a parent almost always comes before its children),
/// so the builder keeps each uuid once, in an [`Interner`] whose numbers are the node ids;
/// only the rare link to a uuid not seen yet is kept as text until [`GraphBuilder::finish`].
#[derive(Debug, Default)]
pub struct GraphBuilder {
    uuids: Interner,
    parent: Vec<Parent>,
    logical: Vec<Option<NodeId>>,
    pending: Vec<Pending>,
    meta: Vec<NodeMeta>,
    duplicates: u64,
}

impl GraphBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder that keeps the memory of `dag`'s interner and per-node vectors: a
    /// pass over thousands of files grows them once, not once per file.
    pub fn recycle(dag: Dag) -> Self {
        let (mut uuids, mut parent, mut logical, mut meta) = dag.into_parts();
        uuids.clear();
        parent.clear();
        logical.clear();
        meta.clear();
        Self {
            uuids,
            parent,
            logical,
            meta,
            ..Self::default()
        }
    }

    /// Adds a record; returns its node and whether it was new (`false` for a duplicate uuid,
    /// whose node is the first copy's).
    pub fn add(&mut self, input: &NodeInput<'_>) -> (NodeId, bool) {
        let (i, fresh) = self.uuids.insert(input.uuid);
        let id = NodeId(i);
        if !fresh {
            self.duplicates += 1;
            return (id, false);
        }
        let parent = match input.parent {
            None => Parent::Root,
            Some(p) => {
                if let Some(n) = self.uuids.get(p) {
                    Parent::Node(NodeId(n))
                } else {
                    self.pending.push(Pending {
                        node: id,
                        uuid: p.into(),
                        logical: false,
                    });
                    Parent::Dangling
                }
            }
        };
        let logical = input.logical_parent.and_then(|p| {
            let found = self.uuids.get(p).map(NodeId);
            if found.is_none() {
                self.pending.push(Pending {
                    node: id,
                    uuid: p.into(),
                    logical: true,
                });
            }
            found
        });
        self.parent.push(parent);
        self.logical.push(logical);
        self.meta.push(NodeMeta {
            kind: input.kind,
            compact_boundary: input.compact_boundary,
            sidechain: input.sidechain,
            meta: input.meta,
            team: input.team,
            line: input.line,
        });
        (id, true)
    }

    /// The node of `uuid`, if added.
    pub fn get(&self, uuid: &str) -> Option<NodeId> {
        self.uuids.get(uuid).map(NodeId)
    }

    /// Resolves the remaining parent links and computes children and cycles.
    pub fn finish(mut self) -> Dag {
        // In node order, as they were added.
        let mut dangling = Vec::new();
        for p in std::mem::take(&mut self.pending) {
            let found = self.uuids.get(&p.uuid).map(NodeId);
            let i = p.node.0 as usize;
            if p.logical {
                self.logical[i] = found;
            } else if let Some(n) = found {
                self.parent[i] = Parent::Node(n);
            } else {
                dangling.push((p.node, p.uuid));
            }
        }
        let mut dag = Dag::new(
            self.uuids,
            self.parent,
            self.logical,
            self.meta,
            self.duplicates,
        );
        dag.set_dangling_parents(dangling);
        dag
    }
}
