//! Snippets: a window of a block's text around its first match, matched words marked `«…»`.

/// Characters of context before the first match.
const BEFORE: usize = 60;
/// Characters in a snippet.
const WIDTH: usize = 200;

/// The snippet of `text` for the lowercase `words` (`true`: a prefix).
pub(crate) fn snippet(text: &str, words: &[(String, bool)]) -> String {
    let chars: Vec<char> = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect();
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
    let mut from = first.saturating_sub(BEFORE);
    // Start at a word boundary when the cut falls inside a word.
    while from > 0 && from < first && chars[from - 1].is_alphanumeric() {
        from += 1;
    }
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

    #[test]
    fn marks_words_and_prefixes() {
        let w = [("auth".to_owned(), false), ("migr".to_owned(), true)];
        assert_eq!(
            snippet("Fix the\n\n AUTH bug; migrate authors", &w),
            "Fix the «AUTH» bug; «migrate» authors"
        );
        let long = format!("{} needle {}", "x ".repeat(100), "y ".repeat(200));
        let s = snippet(&long, &[("needle".to_owned(), false)]);
        assert!(s.starts_with('…') && s.ends_with('…') && s.contains("«needle»"));
        assert!(s.chars().count() <= WIDTH + 6);
        assert_eq!(snippet("no match here", &w), "no match here");
    }
}
