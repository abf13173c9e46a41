//! The resolved graph.

/// Index of a node (the first record with a given uuid), in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    fn ix(self) -> usize {
        self.0 as usize
    }
}

pub use skein_core::record::RecordType;

/// A set of the nodes of one graph, a bit each: for the walks up a whole branch, which meet
/// every node of it once (a hash set grew and rehashed all the way up, ~1 % of `skein stats`).
#[derive(Debug)]
pub(crate) struct NodeSet(Vec<u64>);

impl NodeSet {
    /// An empty set for the nodes of a graph of `len` nodes.
    pub(crate) fn new(len: usize) -> Self {
        Self(vec![0; len.div_ceil(64)])
    }

    /// Adds `n`; false when it was there already.
    pub(crate) fn insert(&mut self, n: NodeId) -> bool {
        let (word, bit) = (n.ix() / 64, 1u64 << (n.ix() % 64));
        let fresh = self.0[word] & bit == 0;
        self.0[word] |= bit;
        fresh
    }

    /// Whether `n` is in the set.
    pub(crate) fn contains(&self, n: NodeId) -> bool {
        self.0[n.ix() / 64] & (1u64 << (n.ix() % 64)) != 0
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NodeMeta {
    pub(crate) kind: RecordType,
    pub(crate) compact_boundary: bool,
    pub(crate) sidechain: bool,
    pub(crate) meta: bool,
    pub(crate) team: bool,
    pub(crate) line: u64,
}

/// Counts over the graph, as `skein stats` reports them under `chain`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChainSummary {
    pub nodes: u64,
    pub duplicate_uuids: u64,
    /// Nodes without a (string) parent.
    pub roots: u64,
    /// Nodes whose parent names no node.
    pub dangling: u64,
    /// Nodes with at least two distinct children.
    pub branch_points: u64,
    /// Nodes without children.
    pub leaves: u64,
    /// `system`/`compact_boundary` nodes.
    pub compactions: u64,
    /// Nodes with `isSidechain: true`.
    pub sidechain: u64,
    /// Distinct cycles in the parent links.
    pub cycles: u64,
}

/// Parent state of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// `parentUuid` absent, null or not a string.
    Root,
    /// `parentUuid` names no node.
    Dangling,
    Node(NodeId),
}

/// The graph: nodes in file order, parent links, children, cycles.
#[derive(Debug, Clone)]
pub struct Dag {
    uuids: skein_core::Interner,
    parent: Vec<Parent>,
    logical: Vec<Option<NodeId>>,
    meta: Vec<NodeMeta>,
    child_start: Vec<u32>,
    child_list: Vec<NodeId>,
    cycles: Vec<Vec<NodeId>>,
    duplicates: u64,
    /// The `parentUuid` of each dangling node, by node.
    dangling_parents: Vec<(NodeId, Box<str>)>,
}

impl Dag {
    pub(crate) fn new(
        uuids: skein_core::Interner,
        parent: Vec<Parent>,
        logical: Vec<Option<NodeId>>,
        meta: Vec<NodeMeta>,
        duplicates: u64,
    ) -> Self {
        // Children in compressed form, each list in file order.
        let n = uuids.len();
        let mut counts = vec![0u32; n + 1];
        for p in &parent {
            if let Parent::Node(id) = p {
                counts[id.ix() + 1] += 1;
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut child_list = vec![NodeId(0); counts[n] as usize];
        for (child, p) in parent.iter().enumerate() {
            if let Parent::Node(id) = p {
                child_list[fill[id.ix()] as usize] = NodeId(child as u32);
                fill[id.ix()] += 1;
            }
        }
        let mut dag = Self {
            uuids,
            parent,
            logical,
            meta,
            child_start: counts,
            child_list,
            cycles: Vec::new(),
            duplicates,
            dangling_parents: Vec::new(),
        };
        dag.cycles = dag.find_cycles();
        dag
    }

    /// Every node has at most one parent, so the cycles are disjoint: walk each unvisited
    /// node's parent chain, colouring it; meeting the current walk's colour closes a cycle.
    fn find_cycles(&self) -> Vec<Vec<NodeId>> {
        let n = self.len();
        let mut walk_of = vec![u32::MAX; n];
        let mut cycles = Vec::new();
        for start in 0..n {
            if walk_of[start] != u32::MAX {
                continue;
            }
            let mut cur = start;
            loop {
                if walk_of[cur] == start as u32 {
                    let mut cycle = vec![NodeId(cur as u32)];
                    let mut c = cur;
                    while let Parent::Node(p) = self.parent[c] {
                        if p.ix() == cur {
                            break;
                        }
                        cycle.push(p);
                        c = p.ix();
                    }
                    cycles.push(cycle);
                    break;
                }
                if walk_of[cur] != u32::MAX {
                    break;
                }
                walk_of[cur] = start as u32;
                match self.parent[cur] {
                    Parent::Node(p) => cur = p.ix(),
                    _ => break,
                }
            }
        }
        cycles
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.uuids.len()
    }

    /// True when there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.uuids.is_empty()
    }

    /// All nodes in file order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.len() as u32).map(NodeId)
    }

    /// The node's uuid.
    pub fn uuid(&self, id: NodeId) -> &str {
        self.uuids.name(id.0)
    }

    /// The node with this uuid.
    pub fn find(&self, uuid: &str) -> Option<NodeId> {
        self.uuids.get(uuid).map(NodeId)
    }

    /// The node's parent link.
    pub fn parent(&self, id: NodeId) -> Parent {
        self.parent[id.ix()]
    }

    /// The parent node, if it exists in the graph.
    pub fn parent_node(&self, id: NodeId) -> Option<NodeId> {
        match self.parent[id.ix()] {
            Parent::Node(p) => Some(p),
            _ => None,
        }
    }

    /// For a compaction boundary, the node its `logicalParentUuid` names (if present).
    pub fn logical_parent(&self, id: NodeId) -> Option<NodeId> {
        self.logical[id.ix()]
    }

    /// Children in file order (a self-parenting node is its own child).
    pub fn children(&self, id: NodeId) -> &[NodeId] {
        let (a, b) = (self.child_start[id.ix()], self.child_start[id.ix() + 1]);
        &self.child_list[a as usize..b as usize]
    }

    /// The node's record type.
    pub fn kind(&self, id: NodeId) -> RecordType {
        self.meta[id.ix()].kind
    }

    /// Whether the node is a `system`/`compact_boundary`.
    pub fn is_compact_boundary(&self, id: NodeId) -> bool {
        self.meta[id.ix()].compact_boundary
    }

    /// Whether the node has `isSidechain: true`.
    pub fn is_sidechain(&self, id: NodeId) -> bool {
        self.meta[id.ix()].sidechain
    }

    /// The node's physical line.
    pub fn line(&self, id: NodeId) -> u64 {
        self.meta[id.ix()].line
    }

    pub(crate) fn meta_of(&self, id: NodeId) -> NodeMeta {
        self.meta[id.ix()]
    }

    pub(crate) fn excluded_from_main(&self, id: NodeId) -> bool {
        let m = self.meta[id.ix()];
        m.sidechain || m.meta || m.team
    }

    /// The cycles found, each as its nodes following parent links.
    pub fn cycles(&self) -> &[Vec<NodeId>] {
        &self.cycles
    }

    /// The interner and per-node vectors a [`crate::GraphBuilder`] filled, for reuse.
    pub(crate) fn into_parts(
        self,
    ) -> (
        skein_core::Interner,
        Vec<Parent>,
        Vec<Option<NodeId>>,
        Vec<NodeMeta>,
    ) {
        (self.uuids, self.parent, self.logical, self.meta)
    }

    pub(crate) fn set_dangling_parents(&mut self, parents: Vec<(NodeId, Box<str>)>) {
        self.dangling_parents = parents;
    }

    /// The `parentUuid` a dangling node names (no node has it).
    pub fn dangling_parent(&self, id: NodeId) -> Option<&str> {
        self.dangling_parents
            .binary_search_by_key(&id, |(n, _)| *n)
            .ok()
            .map(|i| &*self.dangling_parents[i].1)
    }

    /// Nodes whose parent names no node.
    pub fn dangling(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes()
            .filter(|&n| self.parent[n.ix()] == Parent::Dangling)
    }

    /// Counts for `skein stats`.
    pub fn summary(&self) -> ChainSummary {
        let mut s = ChainSummary {
            nodes: self.len() as u64,
            duplicate_uuids: self.duplicates,
            cycles: self.cycles.len() as u64,
            ..ChainSummary::default()
        };
        for n in self.nodes() {
            match self.parent(n) {
                Parent::Root => s.roots += 1,
                Parent::Dangling => s.dangling += 1,
                Parent::Node(_) => {}
            }
            match self.children(n).len() {
                0 => s.leaves += 1,
                1 => {}
                _ => s.branch_points += 1,
            }
            let m = self.meta[n.ix()];
            s.compactions += u64::from(m.compact_boundary);
            s.sidechain += u64::from(m.sidechain);
        }
        s
    }
}
