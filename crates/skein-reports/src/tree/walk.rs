//! The traversal shared by the drawing and the node list: every line in drawing order, with
//! side branches, subagents under their calls, and the `--max-depth` / `--collapse` caps.

use rustc_hash::{FxHashMap, FxHashSet};
use skein_graph::{NodeId, Parent};

use super::view::FileView;
use super::{Hung, SessionLinks, Source, TreeOptions, TreeVisitor};
use crate::session::LoadedSession;

/// One line of the drawing (or one node of the list).
#[derive(Debug, Clone)]
pub(super) enum What {
    Node { src: Source, node: NodeId },
    Agent(usize, bool),
    More(u64),
    Run(u64),
    Title(String),
}

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) prefix: String,
    pub(super) depth: usize,
    pub(super) what: What,
}

/// A side branch of a node: a subagent, or a chain starting at a node.
#[derive(Debug, Clone, Copy)]
enum Side {
    Agent(usize),
    Chain(Source, NodeId),
}

enum Task {
    Chain {
        src: Source,
        node: NodeId,
        first: String,
        rest: String,
        depth: usize,
    },
    Agent {
        i: usize,
        first: String,
        rest: String,
        depth: usize,
    },
    /// A line emitted as is (a `… N nodes` cap).
    Line(Entry),
}

struct Walker<'a, V> {
    s: &'a LoadedSession<V>,
    links: &'a SessionLinks,
    files: FxHashMap<Source, FileView<'a>>,
    options: &'a TreeOptions,
    visited: FxHashSet<(Source, NodeId)>,
    drawn_agents: FxHashSet<usize>,
    expanded: Vec<Source>,
    out: Vec<Entry>,
}

impl<'a, V> Walker<'a, V> {
    fn file(&self, src: Source) -> Option<&FileView<'a>> {
        self.files.get(&src)
    }

    /// Nodes below a side item (for `… N nodes`), subagents included; marks them drawn.
    fn take_subtree(&mut self, src: Source, node: NodeId) -> u64 {
        let mut stack = vec![(src, node)];
        let mut n = 0;
        while let Some((s, c)) = stack.pop() {
            if !self.visited.insert((s, c)) {
                continue;
            }
            n += 1;
            let Some(f) = self.file(s) else { continue };
            stack.extend(f.kids(c).into_iter().map(|k| (s, k)));
            for h in self.links.hung_at(s, c) {
                match *h {
                    Hung::Agent(i) => n += self.take_agent(i),
                    Hung::Inline(r) => stack.push((Source::Main, r)),
                }
            }
        }
        n
    }

    fn take_agent(&mut self, i: usize) -> u64 {
        if !self.drawn_agents.insert(i) {
            return 0;
        }
        let src = Source::Agent(i);
        let mut n = 0;
        for r in self.roots(src) {
            n += self.take_subtree(src, r);
        }
        // records only reachable through a parent cycle
        for c in self.s.agents[i].analysis.dag.nodes() {
            n += u64::from(self.visited.insert((src, c)));
        }
        n
    }

    fn roots(&self, src: Source) -> Vec<NodeId> {
        let Some(f) = self.file(src) else {
            return Vec::new();
        };
        let dag = f.dag();
        dag.nodes()
            .filter(|&n| !matches!(dag.parent(n), Parent::Node(_)))
            .filter(|n| !f.attached.contains(n))
            .filter(|&n| !(src == Source::Main && self.links.inline_linked(n)))
            .collect()
    }

    fn run(&mut self, stack: &mut Vec<Task>) {
        while let Some(task) = stack.pop() {
            match task {
                Task::Line(e) => self.out.push(e),
                Task::Agent {
                    i,
                    first,
                    rest,
                    depth,
                } => {
                    if !self.drawn_agents.insert(i) {
                        continue;
                    }
                    let internal = self.s.agents[i].file.internal;
                    let expand = !internal || self.options.internal;
                    self.out.push(Entry {
                        prefix: first,
                        depth,
                        what: What::Agent(i, expand),
                    });
                    if !expand {
                        continue;
                    }
                    let src = Source::Agent(i);
                    self.expanded.push(src);
                    for r in self.roots(src).into_iter().rev() {
                        stack.push(Task::Chain {
                            src,
                            node: r,
                            first: rest.clone(),
                            rest: rest.clone(),
                            depth,
                        });
                    }
                }
                Task::Chain {
                    src,
                    node,
                    first,
                    rest,
                    depth,
                } => self.chain(stack, src, node, first, &rest, depth),
            }
        }
    }

    fn chain(
        &mut self,
        stack: &mut Vec<Task>,
        src: Source,
        node: NodeId,
        first: String,
        rest: &str,
        depth: usize,
    ) {
        let mut cur = node;
        let mut prefix = first;
        let mut run_start = 0usize;
        let mut run_len = 0usize;
        loop {
            if !self.visited.insert((src, cur)) {
                break;
            }
            let Some(f) = self.file(src) else { break };
            let kids: Vec<NodeId> = f
                .kids(cur)
                .into_iter()
                .filter(|k| !self.visited.contains(&(src, *k)))
                .collect();
            let hung = self.links.hung_at(src, cur);
            // The active child continues the line; else the heaviest (the last among equals),
            // so that side branches stay short and indentation shallow.
            let cont = kids
                .iter()
                .copied()
                .find(|k| f.active.contains(k))
                .or_else(|| {
                    kids.iter()
                        .copied()
                        .rev()
                        .max_by_key(|k| f.weight[k.0 as usize])
                });
            let plain = hung.is_empty()
                && kids.len() == 1
                && !f.dag().is_compact_boundary(cur)
                && !f.is_prompt(cur)
                && matches!(f.dag().parent(cur), Parent::Node(_));
            let mut sides: Vec<Side> = hung
                .iter()
                .map(|h| match *h {
                    Hung::Agent(i) => Side::Agent(i),
                    Hung::Inline(r) => Side::Chain(Source::Main, r),
                })
                .collect();
            sides.extend(
                kids.iter()
                    .copied()
                    .filter(|&k| Some(k) != cont)
                    .map(|k| Side::Chain(src, k)),
            );
            if plain {
                if run_len == 0 {
                    run_start = self.out.len();
                }
                run_len += 1;
            } else {
                self.close_run(run_start, run_len, depth, rest);
                run_len = 0;
            }
            self.out.push(Entry {
                prefix: std::mem::replace(&mut prefix, rest.to_owned()),
                depth,
                what: What::Node { src, node: cur },
            });
            if sides.is_empty() {
                match cont {
                    Some(c) => {
                        cur = c;
                        continue;
                    }
                    None => break,
                }
            }
            if let Some(c) = cont {
                stack.push(Task::Chain {
                    src,
                    node: c,
                    first: rest.to_owned(),
                    rest: rest.to_owned(),
                    depth,
                });
            }
            let n = sides.len();
            let too_deep = self.options.max_depth.is_some_and(|m| depth + 1 > m);
            let mut tasks = Vec::with_capacity(n);
            for (k, side) in sides.into_iter().enumerate() {
                let last = cont.is_none() && k + 1 == n;
                let first = format!("{rest}{}", if last { "└─ " } else { "├─ " });
                let next = format!("{rest}{}", if last { "   " } else { "│  " });
                let task = match side {
                    Side::Agent(i) if too_deep => {
                        let count = self.take_agent(i);
                        if count == 0 {
                            continue;
                        }
                        Task::Line(Entry {
                            prefix: first,
                            depth: depth + 1,
                            what: What::More(count),
                        })
                    }
                    Side::Agent(i) => Task::Agent {
                        i,
                        first,
                        rest: next,
                        depth: depth + 1,
                    },
                    Side::Chain(s, node) if too_deep => Task::Line(Entry {
                        prefix: first,
                        depth: depth + 1,
                        what: What::More(self.take_subtree(s, node)),
                    }),
                    Side::Chain(s, node) => Task::Chain {
                        src: s,
                        node,
                        first,
                        rest: next,
                        depth: depth + 1,
                    },
                };
                tasks.push(task);
            }
            stack.extend(tasks.into_iter().rev());
            return;
        }
        self.close_run(run_start, run_len, depth, rest);
    }

    /// Replaces the middle of a long linear run by one `┆ … N nodes` line.
    fn close_run(&mut self, start: usize, len: usize, depth: usize, rest: &str) {
        let Some(max) = self.options.collapse else {
            return;
        };
        if len <= max.max(2) {
            return;
        }
        let hidden = len - 2;
        self.out.splice(
            start + 1..start + 1 + hidden,
            std::iter::once(Entry {
                prefix: rest.to_owned(),
                depth,
                what: What::Run(hidden as u64),
            }),
        );
    }

    /// Whether agent `i`'s attachment chain reaches the main transcript.
    fn reaches_main(&self, i: usize) -> bool {
        let mut cur = i;
        for _ in 0..=self.s.agents.len() {
            match self.links.agents[cur].at {
                Some((Source::Main, _)) => return true,
                Some((Source::Agent(j), _)) => cur = j,
                None => return false,
            }
        }
        false
    }
}

/// The traversal: every entry in drawing order.
pub(super) fn walk<'a>(
    s: &'a LoadedSession<TreeVisitor>,
    links: &'a SessionLinks,
    options: &'a TreeOptions,
) -> Vec<Entry> {
    let mut files = FxHashMap::default();
    if let Some((a, v)) = &s.main {
        files.insert(Source::Main, FileView::new(a, &v.nodes));
    }
    for (i, a) in s.agents.iter().enumerate() {
        files.insert(
            Source::Agent(i),
            FileView::new(&a.analysis, &a.visitor.nodes),
        );
    }
    let mut w = Walker {
        s,
        links,
        files,
        options,
        visited: FxHashSet::default(),
        drawn_agents: FxHashSet::default(),
        expanded: Vec::new(),
        out: Vec::new(),
    };
    let mut stack = Vec::new();
    if s.main.is_some() {
        w.expanded.push(Source::Main);
        for r in w.roots(Source::Main).into_iter().rev() {
            stack.push(Task::Chain {
                src: Source::Main,
                node: r,
                first: String::new(),
                rest: String::new(),
                depth: 0,
            });
        }
        w.run(&mut stack);
    }
    let mut titled = false;
    for pass in 0..2 {
        for i in 0..s.agents.len() {
            if w.drawn_agents.contains(&i) || (pass == 0 && w.reaches_main(i)) {
                continue;
            }
            if s.main.is_some() && !titled {
                w.out.push(Entry {
                    prefix: String::new(),
                    depth: 0,
                    what: What::Title("subagents not hung under a call".into()),
                });
                titled = true;
            }
            stack.push(Task::Agent {
                i,
                first: String::new(),
                rest: String::new(),
                depth: 0,
            });
            w.run(&mut stack);
        }
    }
    // Records only reachable through a parent cycle.
    let mut k = 0;
    while k < w.expanded.len() {
        let src = w.expanded[k];
        k += 1;
        let Some(f) = w.file(src) else { continue };
        let left: Vec<NodeId> = f
            .dag()
            .nodes()
            .filter(|&n| !w.visited.contains(&(src, n)))
            .collect();
        let mut titled = false;
        for n in left {
            if w.visited.contains(&(src, n)) {
                continue;
            }
            if !titled {
                w.out.push(Entry {
                    prefix: String::new(),
                    depth: 0,
                    what: What::Title("records in a parent cycle".into()),
                });
                titled = true;
            }
            stack.push(Task::Chain {
                src,
                node: n,
                first: String::new(),
                rest: String::new(),
                depth: 0,
            });
            w.run(&mut stack);
        }
    }
    w.out
}
