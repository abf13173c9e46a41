//! Names that come from input (session ids, agent ids, file names in `<work>` tags) must never
//! steer a path out of its directory. [`safe_component`] refuses anything that is not a plain id;
//! [`sanitize_file_name`] turns arbitrary text into a harmless single file name.

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("empty name")]
    Empty,
    #[error("name longer than {max} bytes")]
    TooLong { max: usize },
    #[error(
        "name {name:?} contains {bad:?}, only ASCII letters, digits, '-', '_' and '.' are allowed"
    )]
    BadChar { name: String, bad: char },
    #[error("name {0:?} is reserved")]
    Reserved(String),
}

/// Longest id accepted as a path component.
pub const MAX_COMPONENT: usize = 128;

/// Accepts `name` only if it is a plain path component: ASCII letters, digits, `-`, `_`, `.`,
/// not starting with `.`, at most [`MAX_COMPONENT`] bytes. Session ids (UUIDs) and agent ids
/// (`a1b2c3d`, `acompact-…`, `aprompt_suggestion-…`) pass; `../x`, `a/b`, `.hidden` do not.
pub fn safe_component(name: &str) -> Result<&str, NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_COMPONENT {
        return Err(NameError::TooLong { max: MAX_COMPONENT });
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(NameError::BadChar {
            name: name.to_owned(),
            bad,
        });
    }
    if name.starts_with('.') {
        return Err(NameError::Reserved(name.to_owned()));
    }
    Ok(name)
}

/// Turns arbitrary text into one safe file name: path separators, control characters and
/// anything outside `[A-Za-z0-9._-]` become `_`, leading dots are stripped, the length is capped,
/// and an empty result becomes `unnamed`. Only the last path segment of `raw` is kept.
pub fn sanitize_file_name(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let mut out: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = out.trim_start_matches('.').len();
    out.drain(..out.len() - trimmed);
    out.truncate(MAX_COMPONENT);
    if out.is_empty() || out.chars().all(|c| c == '_') {
        "unnamed".to_owned()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ids_pass_and_traversal_fails() {
        for ok in [
            "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b",
            "a1b2c3d",
            "acompact-e1f845",
            "aprompt_suggestion-12ab",
        ] {
            assert_eq!(safe_component(ok), Ok(ok));
        }
        for bad in ["", "..", "../etc", "a/b", "a\\b", ".hidden", "x\0y", "é"] {
            assert!(safe_component(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn sanitized_names_stay_in_directory() {
        assert_eq!(sanitize_file_name("../../etc/passwd"), "passwd");
        assert_eq!(sanitize_file_name("..\\..\\boot.ini"), "boot.ini");
        assert_eq!(sanitize_file_name("..."), "unnamed");
        assert_eq!(sanitize_file_name("notes v2.md"), "notes_v2.md");
        assert_eq!(sanitize_file_name(""), "unnamed");
        assert_eq!(sanitize_file_name(&"x".repeat(500)).len(), MAX_COMPONENT);
    }
}
