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

/// How a command that changes files reports what it did: a line for a person, or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReportFormat {
    /// One line per file or pass, for a person (the default on a terminal).
    Summary,
    /// One JSON object per line (the default when not on a terminal).
    Jsonl,
}

impl ReportFormat {
    /// True when the summary is wanted: asked for, or nothing asked and `tty`.
    pub(crate) fn human(asked: Option<Self>, tty: bool) -> bool {
        asked.map_or(tty, |f| f == Self::Summary)
    }
}

/// Writes `bytes` where `path` says (`skein_store::OutputTarget`): `-` and `/dev/stdout` through
/// this process's standard output, `/dev/stderr` through its standard error (so what they point
/// to is never truncated or reopened), devices and FIFOs as they are, a regular file (or the
/// target of a symlink to one) replaced atomically keeping its permissions, a new file with
/// mode 0600.
pub(crate) fn write_output(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    stream_output(path, |out| Ok(out.write_all(bytes)?))
}

/// Like [`write_output`], for output produced in pieces: `produce` writes it to a buffered
/// writer; a replaced file changes only once `produce` succeeded.
pub(crate) fn stream_output<T>(
    path: &std::path::Path,
    produce: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    use skein_store::{OutputTarget, TargetWriter};
    let target = OutputTarget::of(path)?;
    let value = match target {
        OutputTarget::Stdout => {
            let mut out = std::io::BufWriter::with_capacity(256 << 10, std::io::stdout().lock());
            let v = produce(&mut out)?;
            out.flush()?;
            v
        }
        OutputTarget::Stderr => {
            let mut err = std::io::BufWriter::new(std::io::stderr().lock());
            let v = produce(&mut err)?;
            err.flush()?;
            v
        }
        other => {
            let mut w = TargetWriter::open(&other)?;
            let v = produce(&mut w)?;
            w.commit()?;
            v
        }
    };
    Ok(value)
}

/// Writes one diagnostic line to stderr (never fails): `skein: msg`, the prefix in red when
/// stderr is coloured.
/// Names a file's invalid lines on stderr, `PATH:LINE:BYTE: error` each (line, byte offset,
/// error), then how many `more` there were.
pub(crate) fn warn_invalid_lines<E: std::fmt::Display>(
    path: &std::path::Path,
    named: impl IntoIterator<Item = (u64, u64, E)>,
    more: u64,
) {
    for (line, offset, error) in named {
        error_line(&format!("{}:{line}:{offset}: {error}", path.display()));
    }
    if more > 0 {
        warning_line(&format!("{}: {more} more invalid lines", path.display()));
    }
}

pub(crate) fn error_line(msg: &str) {
    diagnostic(crate::term::Style::Red, msg);
}

/// Like [`error_line`], for something the command went on after (the prefix in yellow).
pub(crate) fn warning_line(msg: &str) {
    diagnostic(crate::term::Style::Yellow, msg);
}

fn diagnostic(style: crate::term::Style, msg: &str) {
    let prefix = crate::term::paint(crate::term::get().color_err, style, "skein:");
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{prefix} {msg}");
}

/// An error and its causes on one line, `outer: cause: cause`, each reason once: a cause whose
/// text already ends the line (a typed error that prints its source and also returns it from
/// `source()`) is not repeated.
pub(crate) fn error_text(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// True when the error chain holds a broken pipe (the reader of stdout went away). A
/// `serde_json::Error` from a writer is looked into as well: its `source()` skips the
/// `io::Error` it wraps, so a plain downcast of the chain would not find it.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == BrokenPipe)
            || e.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(BrokenPipe))
    })
}

/// Column alignment in a text table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
    /// Left-aligned prose (a title, a prompt): cut at its end when the table is too wide, not
    /// in the middle as names and paths are, so it still reads from its start.
    Text,
}

/// Renders rows as a text table with per-column alignment.
/// Fitted to the terminal and coloured as [`crate::table`] says.
pub(crate) fn aligned_table(headers: &[&str], align: &[Align], rows: &[Vec<String>]) -> String {
    crate::table::Table::new(headers, align, rows.to_vec()).render()
}

/// Renders rows as a text table: the first column left-aligned, the others right-aligned.
pub(crate) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let align: Vec<Align> = (0..headers.len())
        .map(|i| if i == 0 { Align::Left } else { Align::Right })
        .collect();
    aligned_table(headers, &align, rows)
}

/// A table cell for an optional value: the value, or `-`.
pub(crate) fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// A table cell for an optional fraction: `12.5%`, or `-`.
pub(crate) fn percent(fraction: Option<f64>) -> String {
    or_dash(fraction.map(|r| format!("{:.1}%", r * 100.0)))
}

/// The first 8 characters of an id, for a table.
pub(crate) fn short_id(id: &str) -> String {
    id.chars().take(8).collect()
}

/// The command that resumes a session. Claude Code looks `--resume <id>` up in the project
/// of the current directory only, so unless that is the session's directory (`cwd`, when
/// known) the command first changes to it; a session read from the archive (`archived`: the
/// file it was read from) is first restored into the Claude projects directory.
pub(crate) fn resume_command(
    session_id: &str,
    cwd: Option<&str>,
    archived: Option<&std::path::Path>,
    env: &skein_layout::Env,
) -> String {
    let here = std::env::current_dir().ok();
    let root = archived.and_then(skein_archive::describe).map(|f| f.root);
    let projects = env.projects_roots().into_iter().next();
    let restore = root.as_deref().zip(projects.as_deref());
    resume_command_from(session_id, cwd, here.as_deref(), restore)
}

/// [`resume_command`] with the current directory and, for an archived session, its archive
/// and the projects directory to restore it into.
fn resume_command_from(
    session_id: &str,
    cwd: Option<&str>,
    here: Option<&std::path::Path>,
    restore: Option<(&std::path::Path, &std::path::Path)>,
) -> String {
    let id = shell_word(session_id);
    let mut steps = Vec::new();
    if let Some((archive, projects)) = restore {
        steps.push(format!(
            "skein archive restore --session {id} --to {} {}",
            shell_word(&projects.to_string_lossy()),
            shell_word(&archive.to_string_lossy())
        ));
    }
    match cwd {
        Some(dir) if !dir.is_empty() && here != Some(std::path::Path::new(dir)) => {
            // `--`: a directory starting with `-` is not an option of `cd`.
            let end = if dir.starts_with('-') { "-- " } else { "" };
            steps.push(format!("cd {end}{}", shell_word(dir)));
        }
        _ => {}
    }
    steps.push(format!("claude --resume {id}"));
    steps.join(" && ")
}

/// `s` as one word for a POSIX shell: as it is when every character is plain, else in single
/// quotes (a quote inside written `'\''`).
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=~".contains(c);
    if !s.is_empty() && s.chars().all(plain) && !s.starts_with('~') {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn resume_changes_to_the_sessions_directory_unless_there() {
        let id = "11111111-1111-4111-8111-111111111111";
        let widgets = Some("/home/me/widgets");
        let at = |here: Option<&str>| resume_command_from(id, widgets, here.map(Path::new), None);
        assert_eq!(
            at(Some("/tmp")),
            format!("cd /home/me/widgets && claude --resume {id}")
        );
        assert_eq!(
            at(Some("/home/me/widgets")),
            format!("claude --resume {id}")
        );
        assert_eq!(
            resume_command_from(id, None, None, None),
            format!("claude --resume {id}")
        );
        assert_eq!(
            resume_command_from(id, Some("/home/me/it's mine"), None, None),
            format!(r"cd '/home/me/it'\''s mine' && claude --resume {id}")
        );
        assert_eq!(
            resume_command_from(id, Some("-odd/dir"), None, None),
            format!("cd -- -odd/dir && claude --resume {id}")
        );
        // Archived: restored into the projects directory first.
        let restore = (
            Path::new("/st/archive"),
            Path::new("/home/me/.claude/projects"),
        );
        assert_eq!(
            resume_command_from(id, widgets, None, Some(restore)),
            format!(
                "skein archive restore --session {id} --to /home/me/.claude/projects \
                 /st/archive && cd /home/me/widgets && claude --resume {id}"
            )
        );
        assert_eq!(shell_word("~/x"), "'~/x'");
        assert_eq!(shell_word("$(rm -rf /)"), "'$(rm -rf /)'");
    }
}
