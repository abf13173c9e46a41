//! Snippets: the fragment of a hit's text where the query matches best, matches marked `«…»`,
//! whitespace collapsed.
//!
//! The texts of a search's hits go into an in-memory FTS5 table with the index's tokenizer, and
//! FTS5's `snippet()` cuts each fragment. So a snippet marks exactly what the index matched
//! (case and diacritics folded, prefixes, a phrase only where its words follow each other, as
//! one span), and its fragment is the one holding the most distinct query terms, not the text
//! around the first word that matches (in a long tool result, the first `test` of a CI log
//! instead of the `cargo test` the query asked for). A text that no longer matches (its source
//! changed since it was indexed) gets the window around its first matching word.

use rusqlite::{Connection, params};

use crate::query::Query;

/// Characters of context before the first match when a snippet is cut to [`WIDTH`].
const BEFORE: usize = 60;
/// Characters in a snippet (plus its ellipses and marks).
const WIDTH: usize = 200;
/// Tokens in FTS5's fragment: about [`WIDTH`] characters of prose. Long tokens (paths, hashes)
/// can make it longer; [`fit`] then cuts it around its first match.
const TOKENS: i64 = 32;

/// The snippet of each text for `query` (empty for `None`), in order. A snippet is cosmetic:
/// if FTS5 cannot cut them (the temp table cannot be made, say), every text gets the window
/// around its first matching word and the search goes on.
pub(crate) fn snippets(conn: &Connection, query: &Query, texts: &[Option<String>]) -> Vec<String> {
    let mut out = vec![String::new(); texts.len()];
    if texts.iter().all(Option::is_none) {
        return out;
    }
    // Whatever FTS5 cut before an error is kept; the rest falls back below.
    let _ = cut_by_fts5(conn, query, texts, &mut out);
    let words = query.highlights();
    for (slot, text) in out.iter_mut().zip(texts) {
        if let (true, Some(t)) = (slot.is_empty(), text) {
            *slot = first_match(t, &words);
        }
    }
    out
}

/// Fills `out` with FTS5's fragment of each text that matches `query`.
fn cut_by_fts5(
    conn: &Connection,
    query: &Query,
    texts: &[Option<String>],
    out: &mut [String],
) -> rusqlite::Result<()> {
    // The temp schema lives in this connection's memory: nothing is written to the catalog,
    // and no lock of it is taken.
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hit_text USING fts5(body, tokenize = '{}');
         DELETE FROM temp.hit_text;",
        crate::db::TOKENIZER
    ))?;
    let mut insert =
        conn.prepare_cached("INSERT INTO temp.hit_text (rowid, body) VALUES (?1, ?2)")?;
    for (i, text) in (0_i64..).zip(texts) {
        if let Some(t) = text {
            insert.execute(params![i, t])?;
        }
    }
    let mut cut = conn.prepare_cached(
        "SELECT rowid, snippet(hit_text, 0, '«', '»', '…', ?2) FROM temp.hit_text \
         WHERE hit_text MATCH ?1",
    )?;
    let rows = cut.query_map(params![query.fts(), TOKENS], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (i, fragment) = row?;
        if let Some(slot) = usize::try_from(i).ok().and_then(|i| out.get_mut(i)) {
            *slot = fit(&fragment);
        }
    }
    conn.execute_batch("DELETE FROM temp.hit_text")
}

/// `fragment` with whitespace collapsed, cut to [`WIDTH`] characters from [`BEFORE`] before its
/// first mark when longer (a marked span is never cut).
fn fit(fragment: &str) -> String {
    let chars = collapsed(fragment);
    if chars.len() <= WIDTH + 2 {
        return chars.into_iter().collect();
    }
    let first = chars.iter().position(|&c| c == '«').unwrap_or(0);
    let from = window_start(&chars, first);
    let mut to = (from + WIDTH).min(chars.len());
    // Inside a marked span: up to its end.
    let opened = chars[from..to].iter().filter(|&&c| c == '«').count();
    let closed = chars[from..to].iter().filter(|&&c| c == '»').count();
    if opened > closed
        && let Some(end) = chars[to..].iter().position(|&c| c == '»')
    {
        to += end + 1;
    }
    let mut out = String::new();
    if from > 0 && chars[from] != '…' {
        out.push('…');
    }
    out.extend(&chars[from..to]);
    if to < chars.len() && !out.ends_with('…') {
        out.push('…');
    }
    out
}

/// Where a window of [`WIDTH`] characters showing the match at `first` starts: [`BEFORE`]
/// characters before it, moved to a word boundary when that falls inside a word.
fn window_start(chars: &[char], first: usize) -> usize {
    let mut from = first.saturating_sub(BEFORE);
    while from > 0 && from < first && chars[from - 1].is_alphanumeric() {
        from += 1;
    }
    from
}

/// The characters of `text` with each run of whitespace made one space, none at either end.
fn collapsed(text: &str) -> Vec<char> {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect()
}

/// The window of `text` around its first token among the lowercase `words` (`true`: a
/// prefix), matching tokens marked.
fn first_match(text: &str, words: &[(String, bool)]) -> String {
    let chars = collapsed(text);
    // Word tokens (runs of letters and digits) that match, as char ranges.
    let mut hits: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_alphanumeric() {
            i += 1;
        }
        let token: String = chars[start..i]
            .iter()
            .flat_map(|c| c.to_lowercase())
            .collect();
        if words.iter().any(|(w, prefix)| {
            if *prefix {
                token.starts_with(w.as_str())
            } else {
                token == *w
            }
        }) {
            hits.push((start, i));
        }
    }
    let first = hits.first().map_or(0, |h| h.0);
    let from = window_start(&chars, first);
    let to = (from + WIDTH).min(chars.len());
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut at = from;
    for &(a, b) in hits.iter().filter(|h| h.0 >= from && h.1 <= to) {
        out.extend(&chars[at..a]);
        out.push('«');
        out.extend(&chars[a..b]);
        out.push('»');
        at = b;
    }
    out.extend(&chars[at..to]);
    if to < chars.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snip(query: &str, texts: &[&str]) -> Vec<String> {
        let conn = Connection::open_in_memory().expect("open");
        let texts: Vec<Option<String>> = texts.iter().map(|t| Some((*t).to_owned())).collect();
        snippets(&conn, &Query::parse(query).expect("query"), &texts)
    }

    /// The marked spans of a snippet.
    fn marked(s: &str) -> Vec<&str> {
        s.split('«')
            .skip(1)
            .map(|p| p.split('»').next().expect("closed"))
            .collect()
    }

    #[test]
    fn the_fragment_with_every_term_wins_over_the_first_match() {
        let text = format!(
            "test {} then the auth bug: cargo test fails {}",
            "filler words here ".repeat(40),
            "more filler ".repeat(40)
        );
        let [s] = &snip("auth test", &[&text])[..] else {
            panic!("one snippet")
        };
        assert!(
            marked(s).contains(&"auth") && marked(s).contains(&"test"),
            "{s}"
        );
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
    }

    #[test]
    fn a_phrase_is_marked_where_its_words_follow_each_other() {
        let text = "test the build first; cargo build; then run cargo test again";
        let [s] = &snip("\"cargo test\"", &[text])[..] else {
            panic!("one snippet")
        };
        assert_eq!(marked(s), ["cargo test"], "{s}");
    }

    #[test]
    fn prefixes_case_and_diacritics_match_as_in_the_index() {
        let [s] = &snip("cafe migr*", &["Un CAFÉ noir, then Migrations ran"])[..] else {
            panic!("one snippet")
        };
        assert_eq!(marked(s), ["CAFÉ", "Migrations"], "{s}");
    }

    #[test]
    fn a_text_that_no_longer_matches_gets_the_first_word_window() {
        let out = snip("quokka", &["nothing to see", "a quokka smiles"]);
        // FTS5 finds the second; the first (a source rewritten since it was indexed) falls back.
        assert_eq!(out, ["nothing to see", "a «quokka» smiles"]);
        let conn = Connection::open_in_memory().expect("open");
        let q = Query::parse("x").expect("query");
        assert_eq!(snippets(&conn, &q, &[None]), [""]);
        // FTS5 cannot cut them (the temp name is taken by a plain table): the first-word
        // windows, not an error.
        conn.execute_batch("CREATE TEMP TABLE hit_text (body)")
            .expect("plain table");
        let q = Query::parse("quokka").expect("query");
        let out = snippets(&conn, &q, &[Some("a quokka smiles".into())]);
        assert_eq!(out, ["a «quokka» smiles"]);
    }

    #[test]
    fn long_tokens_are_cut_around_the_match_without_cutting_a_mark() {
        let hash = "f".repeat(500);
        let text = format!("{hash} needle {hash} {hash}");
        let [s] = &snip("needle", &[&text])[..] else {
            panic!("one snippet")
        };
        assert!(
            s.chars().count() <= WIDTH + 2,
            "{} chars",
            s.chars().count()
        );
        assert_eq!(marked(s), ["needle"], "{s}");
        let long = format!("{} words", "x".repeat(190));
        let cut = fit(&format!("a «{long}» b {}", "y ".repeat(200)));
        assert_eq!(marked(&cut), [long.as_str()]);
    }

    #[test]
    fn marks_words_and_prefixes() {
        let w = [("auth".to_owned(), false), ("migr".to_owned(), true)];
        assert_eq!(
            first_match("Fix the\n\n AUTH bug; migrate authors", &w),
            "Fix the «AUTH» bug; «migrate» authors"
        );
        let long = format!("{} needle {}", "x ".repeat(100), "y ".repeat(200));
        let s = first_match(&long, &[("needle".to_owned(), false)]);
        assert!(s.starts_with('…') && s.ends_with('…') && s.contains("«needle»"));
        assert!(s.chars().count() <= WIDTH + 6);
        assert_eq!(first_match("no match here", &w), "no match here");
    }
}
