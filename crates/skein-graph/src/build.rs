//! Collecting nodes in file order.

use rustc_hash::FxHashMap;

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

/// Builds a [`Dag`] from records in file order. The first record with a uuid is the node; a
/// later record with the same uuid is a duplicate: counted, otherwise ignored.
#[derive(Debug, Default)]
pub struct GraphBuilder {
    index: FxHashMap<Box<str>, NodeId>,
    uuids: Vec<Box<str>>,
    parents: Vec<Option<Box<str>>>,
    logical: Vec<Option<Box<str>>>,
    meta: Vec<NodeMeta>,
    duplicates: u64,
}

impl GraphBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a record; returns its node and whether it was new (`false` for a duplicate uuid,
    /// whose node is the first copy's).
    pub fn add(&mut self, input: &NodeInput<'_>) -> (NodeId, bool) {
        if let Some(&id) = self.index.get(input.uuid) {
            self.duplicates += 1;
            return (id, false);
        }
        let id = NodeId(u32::try_from(self.uuids.len()).expect("fewer than 2^32 nodes"));
        self.index.insert(input.uuid.into(), id);
        self.uuids.push(input.uuid.into());
        self.parents.push(input.parent.map(Into::into));
        self.logical.push(input.logical_parent.map(Into::into));
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
        self.index.get(uuid).copied()
    }

    /// Resolves parent links and computes children and cycles.
    pub fn finish(self) -> Dag {
        let parent: Vec<Parent> = self
            .parents
            .iter()
            .map(|p| match p.as_deref() {
                None => Parent::Root,
                Some(uuid) => self
                    .index
                    .get(uuid)
                    .map_or(Parent::Dangling, |&id| Parent::Node(id)),
            })
            .collect();
        let logical: Vec<Option<NodeId>> = self
            .logical
            .iter()
            .map(|p| p.as_deref().and_then(|uuid| self.index.get(uuid).copied()))
            .collect();
        Dag::new(self.uuids, parent, logical, self.meta, self.duplicates)
    }
}
