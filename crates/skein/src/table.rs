//! Text tables for the terminal: columns aligned, numbers right-aligned, fitted to the width
//! the terminal allows, coloured when colour is on.
//!
//! Fitting, in order, until the table fits: drop the columns marked optional (in the order
//! given; all of them with `--compact`), shorten long text cells with `…` (in the middle,
//! prose columns (`Align::Text`) at their end; the widest first, never below 10 characters
//! or the header), then drop columns from the right (never the first). A table off a
//! terminal with no `COLUMNS` is never cut.

use crate::output::Align;
use crate::term::{Style, paint};

/// A cost at or above this many US dollars is highlighted.
pub(crate) const COST_HIGHLIGHT_USD: f64 = 10.0;

/// How to lay a table out.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Layout {
    pub(crate) width: Option<usize>,
    pub(crate) compact: bool,
    pub(crate) color: bool,
}

impl Layout {
    /// The terminal's layout, as decided at start-up.
    pub(crate) fn terminal() -> Self {
        let t = crate::term::get();
        Self {
            width: t.width,
            compact: t.compact,
            color: t.color_out,
        }
    }
}

/// A table: headers, alignments and rows, with an optional totals row.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
    totals: bool,
    optional: Vec<usize>,
    cost: Option<usize>,
}

impl Table {
    pub(crate) fn new(headers: &[&str], align: &[Align], rows: Vec<Vec<String>>) -> Self {
        Self {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            align: align.to_vec(),
            rows,
            totals: false,
            optional: Vec::new(),
            cost: None,
        }
    }

    /// The last row holds totals: it stands under a rule, in bold.
    pub(crate) fn with_totals(mut self) -> Self {
        self.totals = !self.rows.is_empty();
        self
    }

    /// Columns that may go when space is short (or with `--compact`), first to go first.
    pub(crate) fn optional(mut self, columns: &[usize]) -> Self {
        self.optional = columns.to_vec();
        self
    }

    /// The column that holds a cost in dollars, highlighted when large.
    pub(crate) fn cost_column(mut self, column: usize) -> Self {
        self.cost = Some(column);
        self
    }

    /// The table laid out for the terminal.
    pub(crate) fn render(&self) -> String {
        self.render_with(Layout::terminal())
    }

    pub(crate) fn render_with(&self, layout: Layout) -> String {
        let n = self.headers.len();
        let mut keep: Vec<bool> = vec![true; n];
        let mut widths: Vec<usize> = (0..n).map(|c| self.natural_width(c)).collect();
        let total = |keep: &[bool], widths: &[usize]| -> usize {
            let cols: Vec<usize> = (0..n).filter(|&c| keep[c]).map(|c| widths[c]).collect();
            cols.iter().sum::<usize>() + 2 * cols.len().saturating_sub(1)
        };
        let limit = layout.width.unwrap_or(usize::MAX);
        for &c in &self.optional {
            if c < n && (layout.compact || total(&keep, &widths) > limit) {
                keep[c] = false;
            }
        }
        while total(&keep, &widths) > limit {
            let shrinkable = (0..n)
                .filter(|&c| keep[c] && self.align[c] != Align::Right)
                .filter(|&c| widths[c] > self.min_width(c))
                .max_by_key(|&c| widths[c]);
            let Some(c) = shrinkable else { break };
            let excess = total(&keep, &widths) - limit;
            widths[c] = widths[c].saturating_sub(excess).max(self.min_width(c));
        }
        while total(&keep, &widths) > limit {
            match (1..n).rev().find(|&c| keep[c]) {
                Some(c) => keep[c] = false,
                None => break,
            }
        }
        self.lay_out(&keep, &widths, layout.color)
    }

    fn natural_width(&self, c: usize) -> usize {
        self.rows
            .iter()
            .filter_map(|r| r.get(c))
            .map(|cell| cell.chars().count())
            .chain(std::iter::once(self.headers[c].chars().count()))
            .max()
            .unwrap_or(0)
    }

    fn min_width(&self, c: usize) -> usize {
        self.headers[c].chars().count().max(10)
    }

    fn lay_out(&self, keep: &[bool], widths: &[usize], color: bool) -> String {
        let cols: Vec<usize> = (0..self.headers.len()).filter(|&c| keep[c]).collect();
        let line = |cells: &[String], style: Option<Style>, cost: bool| -> String {
            let parts: Vec<String> = cols
                .iter()
                .map(|&c| {
                    let w = widths[c];
                    let text = cells.get(c).map_or("", String::as_str);
                    let cell = match self.align[c] {
                        Align::Text => fit_end(text, w),
                        Align::Left | Align::Right => fit(text, w),
                    };
                    let padded = match self.align[c] {
                        Align::Left | Align::Text => format!("{cell:<w$}"),
                        Align::Right => format!("{cell:>w$}"),
                    };
                    let style = if cost && Some(c) == self.cost && is_large_cost(&cell) {
                        Some(Style::Yellow)
                    } else {
                        style
                    };
                    match style {
                        Some(s) => paint_inside(color, s, &padded),
                        None => padded,
                    }
                })
                .collect();
            let mut s = parts.join("  ").trim_end().to_owned();
            s.push('\n');
            s
        };
        let mut out = line(&self.headers, Some(Style::Bold), false);
        for (i, row) in self.rows.iter().enumerate() {
            let is_total = self.totals && i + 1 == self.rows.len();
            if is_total {
                let rule: Vec<String> = (0..self.headers.len())
                    .map(|c| "-".repeat(widths[c]))
                    .collect();
                out.push_str(&line(&rule, Some(Style::Dim), false));
            }
            out.push_str(&line(row, is_total.then_some(Style::Bold), true));
        }
        out
    }
}

/// `padded` painted without its padding, so that colour codes never hide trailing blanks.
fn paint_inside(color: bool, style: Style, padded: &str) -> String {
    let core = padded.trim();
    if core.is_empty() {
        return padded.to_owned();
    }
    let lead = padded.len() - padded.trim_start().len();
    let trail = padded.len() - padded.trim_end().len();
    format!(
        "{}{}{}",
        &padded[..lead],
        paint(color, style, core),
        &padded[padded.len() - trail..]
    )
}

/// `text` cut to `width` characters at its end, `…` last.
pub(crate) fn fit_end(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    if width > 0 {
        out.push('…');
    }
    out
}

/// `text` cut to `width` characters in the middle, with `…` where text was taken out.
fn fit(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let head = (width - 1) / 2;
    let tail = width - 1 - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(len - tail));
    out
}

fn is_large_cost(cell: &str) -> bool {
    cell.trim()
        .trim_start_matches('$')
        .replace(',', "")
        .parse::<f64>()
        .is_ok_and(|v| v >= COST_HIGHLIGHT_USD)
}

/// `1234567` → `1,234,567` (the one formatter, shared with `skein show`).
pub(crate) use skein_reports::show::text::thousands;

/// `12.3 MB`, `456 KB`, `789 B` (decimal units, as `ls -h --si` and disk vendors count).
pub(crate) fn human_bytes(n: u64) -> String {
    #[allow(clippy::cast_precision_loss, reason = "a rounded figure for display")]
    let f = n as f64;
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} KB", f / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", f / 1e6),
        _ => format!("{:.2} GB", f / 1e9),
    }
}

/// A model id as a table shows it: `claude-opus-4-5-20251101` → `opus-4-5`.
pub(crate) fn short_model(model: &str) -> String {
    let m = model.strip_prefix("claude-").unwrap_or(model);
    match m.rsplit_once('-') {
        Some((head, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => {
            head.to_owned()
        }
        _ => m.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let rows = vec![
            vec![
                "2026-05-01".into(),
                "1,234".into(),
                "opus-4-5, sonnet-4-5".into(),
            ],
            vec!["Total".into(), "12,345,678".into(), "opus-4-5".into()],
        ];
        Table::new(
            &["date", "tokens", "models"],
            &[Align::Left, Align::Right, Align::Left],
            rows,
        )
        .with_totals()
    }

    fn plain(width: Option<usize>, compact: bool) -> Layout {
        Layout {
            width,
            compact,
            color: false,
        }
    }

    #[test]
    fn aligned_with_totals_under_a_rule() {
        let out = sample().render_with(plain(None, false));
        assert_eq!(
            out,
            "date            tokens  models\n\
             2026-05-01       1,234  opus-4-5, sonnet-4-5\n\
             ----------  ----------  --------------------\n\
             Total       12,345,678  opus-4-5\n"
        );
    }

    #[test]
    fn fits_the_width() {
        for width in [10, 20, 25, 30, 40, 80] {
            let out = sample()
                .optional(&[2])
                .render_with(plain(Some(width), false));
            for line in out.lines() {
                assert!(line.chars().count() <= width.max(10), "{width}: {line:?}");
            }
            assert!(
                out.contains("2026-05-01"),
                "{width}: the key column stays whole"
            );
        }
        // The optional column goes first, before anything is shortened.
        let out = sample().optional(&[2]).render_with(plain(Some(30), false));
        assert!(
            !out.contains("models") && out.contains("12,345,678"),
            "{out}"
        );
        // Without optional columns the text column is shortened in the middle.
        let out = sample().render_with(plain(Some(36), false));
        assert!(out.contains("  opus-…et-4-5\n"), "{out}");
        // Prose is shortened at its end.
        let mut prose = sample();
        prose.align[2] = Align::Text;
        let out = prose.render_with(plain(Some(36), false));
        assert!(out.contains("  opus-4-5, s…\n"), "{out}");
        // Compact drops optional columns even when there is room.
        let out = sample().optional(&[2]).render_with(plain(None, true));
        assert!(!out.contains("models"), "{out}");
    }

    #[test]
    fn colour_marks_headers_totals_and_large_costs() {
        let rows = vec![
            vec!["a".into(), "9.99".into()],
            vec!["b".into(), "12.00".into()],
            vec!["Total".into(), "21.99".into()],
        ];
        let t = Table::new(&["k", "cost USD"], &[Align::Left, Align::Right], rows)
            .with_totals()
            .cost_column(1);
        let out = t.render_with(Layout {
            color: true,
            ..Layout::default()
        });
        assert!(
            out.starts_with("\x1b[1mk\x1b[0m      \x1b[1mcost USD"),
            "{out:?}"
        );
        assert!(out.contains("   \x1b[33m12.00\x1b[0m"), "{out:?}");
        assert!(!out.contains("\x1b[33m9.99"), "{out:?}");
        assert!(out.contains("\x1b[1mTotal\x1b[0m"), "{out:?}");
        let off = t.render_with(Layout::default());
        assert!(!off.contains('\x1b'));
    }

    #[test]
    fn helpers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(short_model("claude-opus-4-5-20251101"), "opus-4-5");
        assert_eq!(short_model("claude-sonnet-4-5"), "sonnet-4-5");
        assert_eq!(short_model("<synthetic>"), "<synthetic>");
        assert_eq!(fit("abcdefghij", 5), "ab…ij");
        assert_eq!(fit_end("abcdefghij", 5), "abcd…");
        assert_eq!(fit_end("abc", 5), "abc");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_500), "1.5 KB");
        assert_eq!(human_bytes(45_600_000), "45.6 MB");
        assert_eq!(human_bytes(2_500_000_000), "2.50 GB");
        assert_eq!(fit("abc", 5), "abc");
    }
}
