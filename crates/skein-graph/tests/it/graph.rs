//! Graph behaviour from small fixture strings: `"a u; b a <-a; c s <-b"` means node `a` of
//! type user, `b` of type assistant with parent `a`, … Type letters: u user, a assistant,
//! s system, p progress, t attachment, o other, c compact boundary (system). Flags after the
//! type: `!` sidechain, `m` meta, `T` team, `~x` logical parent x.

use skein_graph::{ChainSummary, Dag, GraphBuilder, NodeInput, RecordType};

pub(crate) fn build(spec: &str) -> Dag {
    let mut g = GraphBuilder::new();
    for (line, item) in spec
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .enumerate()
    {
        let mut parts = item.split_whitespace();
        let uuid = parts.next().expect("uuid");
        let flags = parts.next().expect("type");
        let parent = parts.next().map(|p| p.trim_start_matches("<-"));
        let kind = match &flags[..1] {
            "u" => RecordType::User,
            "a" => RecordType::Assistant,
            "s" | "c" => RecordType::System,
            "p" => RecordType::Progress,
            "t" => RecordType::Attachment,
            _ => RecordType::Other,
        };
        let logical = flags.split_once('~').map(|(_, l)| l);
        g.add(&NodeInput {
            uuid,
            parent,
            logical_parent: logical,
            kind,
            compact_boundary: flags.starts_with('c'),
            sidechain: flags.contains('!'),
            meta: flags.contains('m'),
            team: flags.contains('T'),
            line: line as u64 + 1,
        });
    }
    g.finish()
}

fn leaf(spec: &str) -> Option<String> {
    let d = build(spec);
    d.active_leaf().map(|l| d.uuid(l).to_owned())
}

fn branch(spec: &str) -> Vec<String> {
    let d = build(spec);
    d.active_branch()
        .iter()
        .map(|&n| d.uuid(n).to_owned())
        .collect()
}

#[test]
fn linear_chain() {
    assert_eq!(branch("a u; b a <-a; c s <-b"), ["a", "b"]);
    let s = build("a u; b a <-a; c s <-b").summary();
    assert_eq!(
        s,
        ChainSummary {
            nodes: 3,
            roots: 1,
            leaves: 1,
            ..ChainSummary::default()
        }
    );
}

#[test]
fn rewind_prefers_the_latest_leaf_in_file_order() {
    let spec = "a u; b a <-a; c u <-b; d a <-c; e u <-b; f a <-e";
    assert_eq!(leaf(spec), Some("f".into()));
    assert_eq!(branch(spec), ["a", "b", "e", "f"]);
    assert_eq!(build(spec).summary().branch_points, 1);
}

#[test]
fn sidechain_meta_and_team_leaves_are_avoided_unless_all_are() {
    assert_eq!(leaf("a u; b a <-a; x u! ; y a! <-x"), Some("b".into()));
    assert_eq!(leaf("a u; b a <-a; m um <-a"), Some("b".into()));
    assert_eq!(leaf("a u; b a <-a; t uT <-a"), Some("b".into()));
    assert_eq!(leaf("x u!; y a! <-x; z u! <-x"), Some("z".into()));
}

#[test]
fn terminal_system_and_progress_walk_up_to_a_message() {
    assert_eq!(leaf("a u; b a <-a; c s <-b; d p <-c"), Some("b".into()));
    // A progress-only tail with no message above gives no candidate from that terminal.
    assert_eq!(leaf("p1 p; a u; b a <-a"), Some("b".into()));
    assert_eq!(leaf("p1 p; p2 p <-p1"), None);
}

#[test]
fn compaction_starts_a_root_and_history_bridges_it() {
    let spec = "a u; b a <-a; cb c~b; s u <-cb; r a <-s";
    let d = build(spec);
    assert_eq!(branch(spec), ["cb", "s", "r"]);
    let l = d.active_leaf().expect("leaf");
    let hist: Vec<&str> = d.history_to_root(l).iter().map(|&n| d.uuid(n)).collect();
    assert_eq!(hist, ["r", "s", "cb", "b", "a"]);
    let s = d.summary();
    assert_eq!((s.roots, s.compactions), (2, 1));
}

#[test]
fn duplicates_dangling_self_loops_and_cycles_terminate() {
    let d = build("a u; b a <-a; a u <-b; c u <-zz; s u <-s; x a <-y; y u <-x; q u <-x");
    let s = d.summary();
    assert_eq!(s.duplicate_uuids, 1);
    assert_eq!(s.dangling, 1);
    assert_eq!(s.cycles, 2, "self loop s and x<->y");
    assert_eq!(s.branch_points, 1, "x has children y and q");
    // s is its own child, so it is neither a leaf nor a terminal.
    assert_eq!(s.leaves, 3, "b, c and q");
    let node = |u: &str| {
        (0..d.len() as u32)
            .map(skein_graph::NodeId)
            .find(|&n| d.uuid(n) == u)
            .expect("node")
    };
    // q is the latest terminal; its walk enters the x<->y cycle and stops before revisiting.
    let l = d.active_leaf().expect("leaf");
    assert_eq!(d.uuid(l), "q");
    assert_eq!(d.path_to_root(l).len(), 3);
    assert_eq!(d.path_to_root(node("c")).len(), 1);
}

#[test]
fn parallel_tool_repair_reattaches_siblings_and_results() {
    use skein_graph::{NodeId, NodeTools, repair_parallel_tools};
    struct T;
    impl NodeTools for T {
        fn message_id(&self, n: NodeId) -> Option<u32> {
            [None, Some(1), Some(1), None, None, Some(2)][n.0 as usize]
        }
        fn tool_uses(&self, n: NodeId) -> &[u32] {
            match n.0 {
                1 => &[10],
                2 => &[11],
                _ => &[],
            }
        }
        fn tool_results(&self, n: NodeId) -> &[u32] {
            match n.0 {
                3 => &[10],
                4 => &[11],
                _ => &[],
            }
        }
    }
    // a1/a2 are one API message (id 1) with tool uses 10 and 11; r1 answers 10 under a1,
    // r2 answers 11 under a2; the chain continues from r2 only.
    let d = build("u u; a1 a <-u; a2 a <-a1; r1 u <-a1; r2 u <-a2; n a <-r2");
    let branch = d.active_branch();
    let plain: Vec<&str> = branch.iter().map(|&n| d.uuid(n)).collect();
    assert_eq!(plain, ["u", "a1", "a2", "r2", "n"]);
    let fixed: Vec<&str> = repair_parallel_tools(&d, &branch, &T)
        .iter()
        .map(|&n| d.uuid(n))
        .collect();
    assert_eq!(fixed, ["u", "a1", "r1", "a2", "r2", "n"]);
}

/// With nodes taken out, the leaf is the one the remaining graph has: a trailing progress
/// record that made its parent a terminal no longer does, and a removed message is never a
/// candidate (the walk goes on to the next kept one).
#[test]
fn active_leaf_without_removed_nodes() {
    // `b` is the latest terminal's message only through progress `p`; once `p` is gone, the
    // rewound branch ending at `y` (earlier) and `d` (whose only child is meta) compete.
    let spec = "a u; x u <-a; y a <-x; b u <-a; p p <-b; c a <-b; d um <-c";
    let d = build(spec);
    let name = |n: Option<skein_graph::NodeId>| n.map(|l| d.uuid(l).to_owned());
    assert_eq!(name(d.active_leaf()), Some("b".to_owned()));
    let p = d.nodes().find(|&n| d.uuid(n) == "p").expect("p");
    assert_eq!(
        name(d.active_leaf_without(&|n| n == p)),
        Some("y".to_owned())
    );
    let y = d.nodes().find(|&n| d.uuid(n) == "y").expect("y");
    // Removing `y` as well: its parent `x` becomes the terminal message.
    assert_eq!(
        name(d.active_leaf_without(&|n| n == p || n == y)),
        Some("x".to_owned())
    );
    assert_eq!(d.active_leaf_without(&|_| false), d.active_leaf());
}
