//! What the whole history adds to a rendering: a note at each seam (where the record chain
//! breaks and the history was bridged), rewound branches folded at their fork point
//! (`--all-branches`), and the task list at the end.

use std::fmt::Write as _;

use serde_json::Value;
use skein_analysis::{TaskList, TaskSource};
use skein_graph::{Dag, NodeId, Seam, SeamKind};

use super::{Renderer, plural, rendered_lines, str_at};
use crate::show::text::{escape_markdown_html, thousands};
use crate::show::{ShowError, read_lines, subtree_branch};
use crate::tree::Source;

/// The first 8 characters of an id.
fn short(id: &str) -> &str {
    id.char_indices().nth(8).map_or(id, |(i, _)| &id[..i])
}

impl Renderer<'_> {
    pub(super) fn note_seams(&mut self, src: Source, seams: &[Seam]) {
        self.seams.extend(seams.iter().map(|s| ((src, s.node), *s)));
    }

    /// The one-line note before the first record after a seam: which link is missing.
    pub(super) fn seam_note(&mut self, dag: &Dag, seam: &Seam, v: Option<&Value>) {
        self.facts.seams += 1;
        let uuid = short(dag.uuid(seam.node));
        let kind = v.map_or_else(String::new, |v| {
            let t = str_at(v, "type").unwrap_or("record");
            let sub =
                str_at(v, "subtype").or_else(|| v.pointer("/data/type").and_then(Value::as_str));
            match sub {
                Some(s) => format!(" ({t}/{s})"),
                None => format!(" ({t})"),
            }
        });
        let field = |k: &str| v.and_then(|v| str_at(v, k)).map(short);
        let missing = match seam.kind {
            SeamKind::DanglingParent => match field("parentUuid") {
                Some(p) => format!("names parent `{p}`, which is not in this file"),
                None => "names a parent that is not in this file".to_owned(),
            },
            SeamKind::MissingLogicalParent => match field("logicalParentUuid") {
                Some(p) => {
                    format!("is a compaction boundary continuing `{p}`, which is not in this file")
                }
                None => "is a compaction boundary without a logical parent".to_owned(),
            },
            SeamKind::NewRoot => {
                "starts a new chain (no parent; the context was cleared)".to_owned()
            }
        };
        let _ = write!(
            self.out,
            "> ⚠ **Seam:** record `{uuid}`{kind} {missing}; the history before it is joined at \
             `{}`, the last record written before it.\n\n",
            short(dag.uuid(seam.continues))
        );
        self.role = None;
    }

    /// Notes the rewound branches forking off the main branch `nodes`.
    pub(super) fn note_forks(&mut self, nodes: &[NodeId]) {
        let Some((a, _)) = &self.s.main else { return };
        let dag = &a.dag;
        let holds = self.holds.get_or_insert_with(|| dag.holds_message());
        for &n in nodes {
            for &c in dag.children(n) {
                if !self.main_nodes.contains(&c) && holds[c.0 as usize] {
                    self.forks.entry(n).or_default().push(c);
                }
            }
        }
    }

    /// A rewound branch, folded: from its first record down to its latest message.
    pub(super) fn rewound(&mut self, root: NodeId, depth: usize) -> Result<(), ShowError> {
        let (Some(path), Some((a, _))) = (&self.s.files.main, &self.s.main) else {
            return Ok(());
        };
        let nodes: Vec<NodeId> = subtree_branch(a, root)
            .into_iter()
            .filter(|n| !self.main_nodes.contains(n))
            .collect();
        if nodes.is_empty() {
            return Ok(());
        }
        self.main_nodes.extend(nodes.iter().copied());
        self.note_forks(&nodes);
        let values = read_lines(path, &rendered_lines(&a.dag, &nodes), self.opts.mmap)?;
        self.facts.rewound += 1;
        let _ = write!(
            self.out,
            "<details>\n<summary>Rewound branch from <code>{}</code> · {} (not on the active branch)</summary>\n\n",
            short(a.dag.uuid(root)),
            plural(nodes.len() as u64, "record")
        );
        let saved = self.role.take();
        self.in_rewound += 1;
        self.branch(Source::Main, &nodes, &values, depth)?;
        self.in_rewound -= 1;
        self.role = saved;
        self.out.push_str("</details>\n\n");
        Ok(())
    }
}

/// The task list section at the end of the document.
pub(super) fn task_section(list: &TaskList) -> String {
    if list.items.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n---\n\n## Tasks\n\n");
    let source = match list.source {
        TaskSource::TodoWrite => "todo list (`TodoWrite`)",
        TaskSource::Tasks => "task list (`TaskCreate` / `TaskUpdate`)",
    };
    let done = list.items.len() - list.open();
    let _ = write!(
        out,
        "*Latest {source}: {} of {} done",
        thousands(done as u64),
        thousands(list.items.len() as u64)
    );
    if let Some(ts) = &list.timestamp {
        let _ = write!(out, ", as of {ts}");
    }
    out.push_str(".*\n\n");
    for t in &list.items {
        let check = if t.status == "completed" { 'x' } else { ' ' };
        let mut line = format!("- [{check}] ");
        if let Some(id) = &t.id {
            let _ = write!(line, "**#{}** ", escape_markdown_html(id));
        }
        line.push_str(&escape_markdown_html(t.subject.trim()));
        if !matches!(t.status.as_str(), "completed" | "pending" | "") {
            let _ = write!(
                line,
                " · *{}*",
                escape_markdown_html(&t.status.replace('_', " "))
            );
        }
        if let Some(o) = &t.owner {
            let _ = write!(line, " · owner {}", escape_markdown_html(o));
        }
        if !t.blocked_by.is_empty() {
            let deps: Vec<String> = t.blocked_by.iter().map(|d| format!("#{d}")).collect();
            let _ = write!(line, " · blocked by {}", deps.join(", "));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
