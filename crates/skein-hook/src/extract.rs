//! `<context>…</context>` and `<work filename="…">…</work>` tags in a subagent's final text.
//! File names are sanitised to one harmless component, files are created inside `work/` only
//! (never following a symlink, never overwriting: a taken name gets `-2`, `-3`, … before the
//! extension).

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use skein_store::names::MAX_COMPONENT;
use skein_store::{AtomicFile, Durability, sanitize_file_name};

/// At most this many `<work>` files are written per subagent message.
pub const MAX_WORK_FILES: usize = 256;

/// One `<work>` tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkItem {
    /// The `filename` attribute as written (entities decoded), if any.
    pub raw_name: Option<String>,
    /// The sanitised file name (before de-duplication).
    pub file_name: String,
    pub content: String,
}

/// Everything found in one text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// Bodies of `<context>` tags, trimmed, empty ones dropped.
    pub contexts: Vec<String>,
    pub works: Vec<WorkItem>,
}

impl Extracted {
    pub fn is_empty(&self) -> bool {
        self.contexts.is_empty() && self.works.is_empty()
    }
}

/// Finds the tags in `text`. Unclosed tags are ignored; tags do not nest.
pub fn extract_tags(text: &str) -> Extracted {
    let mut out = Extracted::default();
    for (_, body) in tags(text, "context") {
        let body = body.trim();
        if !body.is_empty() {
            out.contexts.push(body.to_owned());
        }
    }
    for (attrs, body) in tags(text, "work").take(MAX_WORK_FILES) {
        let raw_name = attribute(attrs, "filename").map(|v| decode_entities(&v));
        let file_name = sanitize_file_name(raw_name.as_deref().unwrap_or(""));
        let content = body
            .strip_prefix("\r\n")
            .or_else(|| body.strip_prefix('\n'))
            .unwrap_or(body)
            .to_owned();
        out.works.push(WorkItem {
            raw_name,
            file_name,
            content,
        });
    }
    out
}

/// Iterates `(attributes, body)` of `<name …>body</name>` occurrences.
fn tags<'t>(text: &'t str, name: &'t str) -> impl Iterator<Item = (&'t str, &'t str)> + 't {
    let open = format!("<{name}");
    let close = format!("</{name}>");
    let mut rest = text;
    std::iter::from_fn(move || {
        loop {
            let at = rest.find(&open)?;
            let after = &rest[at + open.len()..];
            // `<contextual>` is not `<context>`.
            if !after.starts_with(|c: char| c == '>' || c.is_whitespace() || c == '/') {
                rest = after;
                continue;
            }
            let gt = after.find('>')?;
            let attrs = &after[..gt];
            let body_start = &after[gt + 1..];
            if attrs.trim_end().ends_with('/') {
                rest = body_start; // self-closing: no body
                continue;
            }
            let end = body_start.find(&close)?;
            rest = &body_start[end + close.len()..];
            return Some((attrs, &body_start[..end]));
        }
    })
}

/// Value of `key=` in a tag's attribute text: double-quoted, single-quoted or bare.
fn attribute(attrs: &str, key: &str) -> Option<String> {
    let mut rest = attrs;
    while let Some(at) = rest.find(key) {
        let before_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace);
        let after = rest[at + key.len()..].trim_start();
        if before_ok && let Some(v) = after.strip_prefix('=') {
            let v = v.trim_start();
            return Some(match v.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let inner = &v[1..];
                    inner[..inner.find(q).unwrap_or(inner.len())].to_owned()
                }
                _ => v
                    .split(|c: char| c.is_whitespace() || c == '/')
                    .next()
                    .unwrap_or("")
                    .to_owned(),
            });
        }
        rest = &rest[at + key.len()..];
    }
    None
}

fn decode_entities(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Writes each item into `work_dir` (created if missing; refused if it is a symlink or not a
/// directory). Returns the names used, in order.
pub fn write_work_files(work_dir: &Path, items: &[WorkItem]) -> io::Result<Vec<String>> {
    match fs::symlink_metadata(work_dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(io::Error::other(format!(
                "{} is not a plain directory",
                work_dir.display()
            )));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match skein_store::private::create_dir(work_dir) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
        Err(e) => return Err(e),
    }
    let mut names = Vec::with_capacity(items.len());
    for item in items {
        names.push(write_unique(
            work_dir,
            &item.file_name,
            item.content.as_bytes(),
        )?);
    }
    Ok(names)
}

/// Creates `dir/name` (or `name-2`, `name-3`, …) without ever replacing an existing entry:
/// the content goes to a temp file that is then linked in with no-clobber semantics.
fn write_unique(dir: &Path, name: &str, content: &[u8]) -> io::Result<String> {
    let name = sanitize_file_name(name); // defence in depth: one plain component
    let mut tmp = AtomicFile::create(dir.join(&name))?;
    tmp.write_all(content)?;
    for n in 1..=10_000u32 {
        let candidate = numbered(&name, n);
        match tmp.commit_new(&dir.join(&candidate), Durability::NoDirSync)? {
            None => return Ok(candidate),
            Some(back) => tmp = back,
        }
    }
    Err(io::Error::other(format!("no free name for {name}")))
}

/// `notes.md`, `notes-2.md`, `notes-3.md`, … kept within the component length limit.
pub fn numbered(name: &str, n: u32) -> String {
    if n <= 1 {
        return name.to_owned();
    }
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= 32 => name.split_at(i),
        _ => (name, ""),
    };
    let suffix = format!("-{n}");
    let room = MAX_COMPONENT.saturating_sub(suffix.len() + ext.len());
    let stem: String = stem.chars().take(room).collect();
    format!("{stem}{suffix}{ext}")
}
