//! The terminal: whether to colour stdout and stderr, and how wide tables may be. Decided once
//! in `main` from `--color`, `NO_COLOR`, `CLICOLOR_FORCE`, `TERM` and `COLUMNS`, then read
//! wherever output is made.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::OnceLock;

use clap::ValueEnum;

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour on a terminal, unless `NO_COLOR` is set (`CLICOLOR_FORCE` forces it on).
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// The environment variables that steer colour and width.
#[derive(Debug, Default, Clone)]
pub(crate) struct TermVars {
    pub(crate) no_color: Option<OsString>,
    pub(crate) clicolor_force: Option<OsString>,
    pub(crate) term: Option<OsString>,
    pub(crate) columns: Option<OsString>,
}

impl TermVars {
    pub(crate) fn read(var: impl Fn(&str) -> Option<OsString>) -> Self {
        Self {
            no_color: var("NO_COLOR"),
            clicolor_force: var("CLICOLOR_FORCE"),
            term: var("TERM"),
            columns: var("COLUMNS"),
        }
    }
}

/// What was decided.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Term {
    /// Colour what goes to stdout.
    pub(crate) color_out: bool,
    /// Colour diagnostics on stderr.
    pub(crate) color_err: bool,
    /// Colour for output that is shown even though it is not written to a terminal (the
    /// status line Claude Code displays): the same rules, as if on a terminal.
    pub(crate) color_shown: bool,
    /// The width tables must fit: the terminal's, else `COLUMNS`; `None` when stdout is not a
    /// terminal and `COLUMNS` is unset (a table piped to a file is not cut).
    pub(crate) width: Option<usize>,
    /// `--compact`: tables without their optional columns.
    pub(crate) compact: bool,
}

static TERM: OnceLock<Term> = OnceLock::new();

/// Decides once, at start-up.
pub(crate) fn init(choice: ColorChoice, compact: bool, vars: &TermVars) {
    let stdout_tty = std::io::stdout().is_terminal();
    let stderr_tty = std::io::stderr().is_terminal();
    let measured = stdout_tty
        .then(|| terminal_size::terminal_size_of(std::io::stdout()))
        .flatten()
        .map(|(w, _)| usize::from(w.0));
    let _ = TERM.set(Term {
        color_out: use_color(choice, vars, stdout_tty),
        color_err: use_color(choice, vars, stderr_tty),
        color_shown: use_color(choice, vars, true),
        width: table_width(measured, stdout_tty, vars),
        compact,
    });
}

/// The decision (no colour, no width limit before `init`).
pub(crate) fn get() -> Term {
    TERM.get().copied().unwrap_or_default()
}

/// The colour rule: `--color always|never` wins; with `auto`, a non-empty `NO_COLOR` turns
/// colour off, a `CLICOLOR_FORCE` other than empty or `0` turns it on, and otherwise colour is
/// used on a terminal whose `TERM` is not `dumb` (see no-color.org and bixense.com/clicolors).
pub(crate) fn use_color(choice: ColorChoice, vars: &TermVars, is_tty: bool) -> bool {
    let set = |v: &Option<OsString>| v.as_ref().is_some_and(|s| !s.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set(&vars.no_color) => false,
        ColorChoice::Auto
            if set(&vars.clicolor_force)
                && vars.clicolor_force.as_deref() != Some("0".as_ref()) =>
        {
            true
        }
        ColorChoice::Auto => is_tty && vars.term.as_deref() != Some("dumb".as_ref()),
    }
}

/// The width of tables: the terminal's when known, else a numeric `COLUMNS`, else 80 on a
/// terminal and no limit off one.
pub(crate) fn table_width(measured: Option<usize>, is_tty: bool, vars: &TermVars) -> Option<usize> {
    let columns = vars
        .columns
        .as_ref()
        .and_then(|c| c.to_str()?.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    measured
        .filter(|&w| w > 0)
        .or(columns)
        .or(is_tty.then_some(80))
}

/// SGR styles used by skein.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Bold,
    Dim,
    Red,
    Yellow,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Bold => "1",
            Self::Dim => "2",
            Self::Red => "1;31",
            Self::Yellow => "33",
        }
    }
}

/// `text` in `style` when `on`, else unchanged.
pub(crate) fn paint(on: bool, style: Style, text: &str) -> String {
    if on && !text.is_empty() {
        format!("\x1b[{}m{text}\x1b[0m", style.code())
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(no_color: Option<&str>, force: Option<&str>, term: Option<&str>) -> TermVars {
        TermVars {
            no_color: no_color.map(Into::into),
            clicolor_force: force.map(Into::into),
            term: term.map(Into::into),
            columns: None,
        }
    }

    #[test]
    fn colour_follows_the_conventions() {
        let plain = vars(None, None, Some("xterm"));
        assert!(use_color(ColorChoice::Auto, &plain, true));
        assert!(!use_color(ColorChoice::Auto, &plain, false));
        assert!(use_color(ColorChoice::Always, &plain, false));
        assert!(!use_color(ColorChoice::Never, &plain, true));
        // NO_COLOR wins over a terminal and over CLICOLOR_FORCE; an empty one is unset.
        assert!(!use_color(
            ColorChoice::Auto,
            &vars(Some("1"), Some("1"), None),
            true
        ));
        assert!(use_color(
            ColorChoice::Auto,
            &vars(Some(""), None, None),
            true
        ));
        // --color always wins over NO_COLOR.
        assert!(use_color(
            ColorChoice::Always,
            &vars(Some("1"), None, None),
            false
        ));
        assert!(use_color(
            ColorChoice::Auto,
            &vars(None, Some("1"), None),
            false
        ));
        assert!(!use_color(
            ColorChoice::Auto,
            &vars(None, Some("0"), None),
            false
        ));
        assert!(!use_color(
            ColorChoice::Auto,
            &vars(None, None, Some("dumb")),
            true
        ));
    }

    #[test]
    fn width_from_terminal_then_columns() {
        let mut v = TermVars::default();
        assert_eq!(table_width(Some(120), true, &v), Some(120));
        assert_eq!(table_width(None, true, &v), Some(80));
        assert_eq!(table_width(None, false, &v), None);
        v.columns = Some("100".into());
        assert_eq!(table_width(None, false, &v), Some(100));
        assert_eq!(table_width(Some(60), true, &v), Some(60));
        v.columns = Some("wide".into());
        assert_eq!(table_width(None, false, &v), None);
    }

    #[test]
    fn paint_only_when_on() {
        assert_eq!(paint(false, Style::Bold, "x"), "x");
        assert_eq!(paint(true, Style::Bold, "x"), "\x1b[1mx\x1b[0m");
        assert_eq!(paint(true, Style::Red, ""), "");
    }
}
