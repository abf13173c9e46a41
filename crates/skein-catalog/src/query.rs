//! The search syntax: words are ANDed, `"quoted phrases"` match as phrases, `word*` is a
//! prefix. Turned into an FTS5 expression in which every term is quoted (so no user text is
//! read as FTS5 syntax) and into the terms snippets highlight.

use crate::error::{Error, Result};

/// One term of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// A word (or a run of words a tokenizer splits, like `auth.rs`), with `*` a prefix.
    Word { text: String, prefix: bool },
    /// A quoted phrase.
    Phrase(String),
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub terms: Vec<Term>,
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Whether `s` has a character the index keeps (letters and digits; the rest separate words).
fn has_token(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

impl Query {
    /// Parses the user's query.
    pub fn parse(input: &str) -> Result<Self> {
        let mut terms = Vec::new();
        let mut rest = input.trim();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('"') {
                let end = after
                    .find('"')
                    .ok_or_else(|| Error::Query(format!("unclosed quote in {input:?}")))?;
                let phrase = &after[..end];
                if has_token(phrase) {
                    terms.push(Term::Phrase(phrase.to_owned()));
                }
                rest = after[end + 1..].trim_start();
                continue;
            }
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '"')
                .unwrap_or(rest.len());
            let word = &rest[..end];
            rest = rest[end..].trim_start();
            let (text, prefix) = match word.strip_suffix('*') {
                Some(w) => (w, true),
                None => (word, false),
            };
            if has_token(text) {
                terms.push(Term::Word {
                    text: text.to_owned(),
                    prefix,
                });
            }
        }
        if terms.is_empty() {
            return Err(Error::Query(format!(
                "nothing to search for in {input:?} (give words or \"phrases\")"
            )));
        }
        Ok(Self { terms })
    }

    /// The FTS5 MATCH expression.
    pub fn fts(&self) -> String {
        self.terms
            .iter()
            .map(|t| match t {
                Term::Word { text, prefix } => {
                    let q = quote(text);
                    if *prefix { format!("{q}*") } else { q }
                }
                Term::Phrase(p) => quote(p),
            })
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    /// The lowercase words to highlight, with whether each is a prefix.
    pub fn highlights(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for t in &self.terms {
            let (text, prefix) = match t {
                Term::Word { text, prefix } => (text.as_str(), *prefix),
                Term::Phrase(p) => (p.as_str(), false),
            };
            let words: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            let n = words.len();
            for (i, w) in words.into_iter().enumerate() {
                out.push((w.to_lowercase(), prefix && i + 1 == n));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_phrases_prefixes() {
        let q = Query::parse(r#"auth  "token refresh" migr* auth.rs"#).expect("parses");
        assert_eq!(
            q.fts(),
            r#""auth" AND "token refresh" AND "migr"* AND "auth.rs""#
        );
        assert_eq!(
            q.highlights(),
            [
                ("auth".into(), false),
                ("token".into(), false),
                ("refresh".into(), false),
                ("migr".into(), true),
                ("auth".into(), false),
                ("rs".into(), false)
            ]
        );
        // FTS5 syntax in user text is quoted, not interpreted.
        assert_eq!(
            Query::parse(r#"NEAR(a b) x "y""#).expect("parses").fts(),
            r#""NEAR(a" AND "b)" AND "x" AND "y""#
        );
        assert!(Query::parse("  * - ").is_err());
        assert!(Query::parse("\"open").is_err());
    }
}
