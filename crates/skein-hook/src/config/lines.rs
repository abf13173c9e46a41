//! Where each key of a config file is set: dotted key paths (`reports.timezone`,
//! `events.Stop`, `pass.archive.zstd_level`) to 1-based lines, from toml's spanned parse. The
//! older top-level hook keys are listed under their `[hook]` names too (`blocking` is also
//! `hook.blocking`, `archive_dir` also `archive.dir`), so origins read the same either way.

use std::collections::BTreeMap;

use toml::de::{DeTable, DeValue};

use super::line_at;

/// The hook keys that may sit at the top of the file.
const TOP_HOOK_KEYS: [&str; 5] = [
    "blocking",
    "goal_reminder",
    "redact",
    "compress",
    "lock_timeout_ms",
];

/// Every key path of `text` with the line it is set on (tables: their header or first key).
/// Empty when the text is not TOML (the parse error says where).
pub fn key_lines(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let Ok(root) = DeTable::parse(text) else {
        return out;
    };
    walk(text, root.get_ref(), "", &mut out);
    for k in TOP_HOOK_KEYS {
        if let Some(&line) = out.get(k) {
            out.entry(format!("hook.{k}")).or_insert(line);
        }
    }
    if let Some(&line) = out.get("archive_dir") {
        out.entry("archive.dir".into()).or_insert(line);
    }
    out
}

/// The line `key` (a dotted path) is set on, if it is.
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    key_lines(text).get(key).copied()
}

fn walk(text: &str, table: &DeTable<'_>, prefix: &str, out: &mut BTreeMap<String, usize>) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        out.insert(path.clone(), line_at(text, key.span().start));
        if let DeValue::Table(t) = value.get_ref() {
            walk(text, t, &path, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_their_lines() {
        let text = "blocking = true\narchive_dir = \"/a\"\n\n[reports]\ntimezone = \"UTC\"\n\
                    [events]\nStop = [\"archive\"]\n[pass.archive]\nzstd_level = 9\n";
        let lines = key_lines(text);
        assert_eq!(lines.get("blocking"), Some(&1));
        assert_eq!(lines.get("hook.blocking"), Some(&1));
        assert_eq!(lines.get("archive.dir"), Some(&2));
        assert_eq!(lines.get("reports"), Some(&4));
        assert_eq!(lines.get("reports.timezone"), Some(&5));
        assert_eq!(lines.get("events.Stop"), Some(&7));
        assert_eq!(lines.get("pass.archive.zstd_level"), Some(&9));
        assert!(key_lines("[x\n").is_empty());
    }
}
