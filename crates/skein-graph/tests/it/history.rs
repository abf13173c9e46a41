//! The whole-history walk: one fixture per kind of broken chain, the first-root rule, what
//! the bridge skips, and rewound branches. Fixture strings as in `graph.rs`.

use skein_graph::{Dag, NodeId, SeamKind};

use crate::graph::build;

fn node(d: &Dag, u: &str) -> NodeId {
    d.nodes().find(|&n| d.uuid(n) == u).expect("node")
}

/// The whole history of the active leaf, as uuids, and its seams as (node, continues, kind).
fn history(spec: &str) -> (Vec<String>, Vec<(String, String, SeamKind)>) {
    let d = build(spec);
    let h = d.history(d.active_leaf().expect("leaf"));
    let path = h.path.iter().map(|&n| d.uuid(n).to_owned()).collect();
    let seams = h
        .seams
        .iter()
        .map(|s| {
            (
                d.uuid(s.node).to_owned(),
                d.uuid(s.continues).to_owned(),
                s.kind,
            )
        })
        .collect();
    (path, seams)
}

fn seam(node: &str, continues: &str, kind: SeamKind) -> (String, String, SeamKind) {
    (node.to_owned(), continues.to_owned(), kind)
}

#[test]
fn a_dangling_parent_is_bridged_to_the_record_before_it() {
    // A hook progress record whose parent was never written starts the latest part.
    let spec = "a u; b a <-a; p p <-gone; u2 u <-p; r a <-u2";
    let d = build(spec);
    let leaf = d.active_leaf().expect("leaf");
    assert_eq!(
        d.path_to_root(leaf).len(),
        3,
        "Claude Code's walk stops at p"
    );
    let (path, seams) = history(spec);
    assert_eq!(path, ["a", "b", "p", "u2", "r"]);
    assert_eq!(seams, [seam("p", "b", SeamKind::DanglingParent)]);
    assert_eq!(d.history_to_root(leaf).len(), 5);
}

#[test]
fn a_compaction_boundary_without_its_logical_parent_is_bridged() {
    let (path, seams) = history("a u; b a <-a; cb c~gone; s u <-cb; r a <-s");
    assert_eq!(path, ["a", "b", "cb", "s", "r"]);
    assert_eq!(seams, [seam("cb", "b", SeamKind::MissingLogicalParent)]);
    // No logicalParentUuid at all: the same.
    let (path, seams) = history("a u; b a <-a; cb c; s u <-cb; r a <-s");
    assert_eq!(path, ["a", "b", "cb", "s", "r"]);
    assert_eq!(seams, [seam("cb", "b", SeamKind::MissingLogicalParent)]);
    // A logical parent in the file is followed as before, without a seam.
    let (path, seams) = history("a u; b a <-a; cb c~a; s u <-cb; r a <-s");
    assert_eq!(path, ["a", "cb", "s", "r"]);
    assert!(seams.is_empty());
}

#[test]
fn a_new_root_after_clearing_the_context_is_bridged() {
    let spec = "h p; a u <-h; b a <-a; h2 p; u2 u <-h2; r a <-u2";
    let (path, seams) = history(spec);
    assert_eq!(path, ["h", "a", "b", "h2", "u2", "r"]);
    assert_eq!(seams, [seam("h2", "b", SeamKind::NewRoot)]);
}

#[test]
fn the_first_root_of_the_file_ends_the_walk() {
    // A file that starts mid-conversation: its first record's parent is not in the file.
    let (path, seams) = history("x u <-gone; y a <-x");
    assert_eq!(path, ["x", "y"]);
    assert!(seams.is_empty());
    // The first root need not be the first record: a dangling first record is a root too,
    // so a later null-parent root is bridged to it.
    let (path, seams) = history("x u <-gone; y a <-x; h p; u u <-h; r a <-u");
    assert_eq!(path, ["x", "y", "h", "u", "r"]);
    assert_eq!(seams, [seam("h", "y", SeamKind::NewRoot)]);
}

#[test]
fn several_seams_are_bridged_in_turn_and_listed_earliest_first() {
    let spec = "a u; b a <-a; cb c~gone; s u <-cb; t a <-s; p p <-lost; u u <-p; r a <-u";
    let (path, seams) = history(spec);
    assert_eq!(path, ["a", "b", "cb", "s", "t", "p", "u", "r"]);
    assert_eq!(
        seams,
        [
            seam("cb", "b", SeamKind::MissingLogicalParent),
            seam("p", "t", SeamKind::DanglingParent),
        ]
    );
    let d = build(spec);
    let h = d.history(d.active_leaf().expect("leaf"));
    assert_eq!(
        h.seam_at(node(&d, "p")).map(|s| s.kind),
        Some(SeamKind::DanglingParent)
    );
    assert!(h.seam_at(node(&d, "u")).is_none());
}

#[test]
fn the_bridge_skips_sidechain_team_and_other_records() {
    // An inline sidechain and a teammate record sit between the two parts; an `other`
    // record (not a chain type) too.
    let spec = "a u; b a <-a; s1 u!; s2 a! <-s1; tm uT <-b; o o; n u; m a <-n";
    let (path, seams) = history(spec);
    assert_eq!(path, ["a", "b", "n", "m"]);
    assert_eq!(seams, [seam("n", "b", SeamKind::NewRoot)]);
}

#[test]
fn rewound_branches_stay_off_the_history() {
    // Before the seam, the prompt x was rewound (edited into c); after it, v was rewound.
    let spec = "a u; b a <-a; x u <-a; y a <-x; c u <-b; d a <-c; \
                n u; m a <-n; v u <-m; w a <-v; q u <-m; z a <-q; pp p <-m";
    let (path, _) = history(spec);
    assert_eq!(path, ["a", "b", "c", "d", "n", "m", "q", "z"]);
    let d = build(spec);
    let h = d.history(d.active_leaf().expect("leaf"));
    let on: std::collections::HashSet<NodeId> = h.path.iter().copied().collect();
    let rewound: Vec<&str> = d
        .rewound_branches(&|n| on.contains(&n))
        .iter()
        .map(|&n| d.uuid(n))
        .collect();
    // `pp` (progress only) is not a branch.
    assert_eq!(rewound, ["x", "v"]);
}

#[test]
fn the_bridge_continues_from_the_latest_written_branch() {
    // The user rewound (c replaces x) and then cleared the context: the record written last
    // before the new root is on the branch that was active then.
    let spec = "a u; b a <-a; x u <-a; y a <-x; h p; u u <-h; r a <-u";
    let (path, seams) = history(spec);
    assert_eq!(path, ["a", "x", "y", "h", "u", "r"]);
    assert_eq!(seams, [seam("h", "y", SeamKind::NewRoot)]);
}

#[test]
fn cycles_and_self_parents_end_the_walk() {
    // x and y name each other; n is the first root, so nothing is bridged.
    let (path, seams) = history("x a <-y; y u <-x; n u; m a <-n");
    assert_eq!(path, ["n", "m"]);
    assert!(seams.is_empty());
    // A self-parented record reached through a bridge ends the walk there.
    let (path, _) = history("a u; s u <-s; h p; u u <-h; r a <-u");
    assert_eq!(path, ["s", "h", "u", "r"]);
}
