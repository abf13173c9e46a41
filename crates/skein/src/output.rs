//! Where output goes: data on stdout, diagnostics on stderr, and the choice of format.

use std::io::{IsTerminal, Write};

use crate::cli::Format;

/// The format to use: the one asked for, else a table on a terminal and JSONL otherwise.
pub(crate) fn choose_format(asked: Option<Format>) -> Format {
    asked.unwrap_or_else(|| {
        if std::io::stdout().is_terminal() {
            Format::Table
        } else {
            Format::Jsonl
        }
    })
}

/// Writes one diagnostic line to stderr (never fails).
pub(crate) fn error_line(msg: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "skein: {msg}");
}

/// True when the error chain holds a broken pipe (the reader of stdout went away).
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Renders rows as an aligned text table.
pub(crate) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let parts: Vec<String> = cells
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, &w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(&mut headers.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}
