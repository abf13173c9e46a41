//! The status line's format string (`[statusline] format`): text with `{field}` placeholders
//! and optional `[…]` groups. A group is left out when a field directly inside it has no
//! value (no active block, no context figure), so `[ · {block} block]` disappears instead of
//! printing an empty amount; groups nest. `\{`, `\}`, `\[`, `\]` and `\\` are the characters
//! themselves. A field with no value outside any group prints `-`.

use std::fmt;

/// The parts a status line can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// The model's display name (else its id).
    Model,
    /// The last component of the working directory.
    Dir,
    /// The session's cost (Claude Code's figure, else skein's).
    Session,
    /// Today's cost over all sessions (the local day).
    Today,
    /// The active 5-hour block's cost.
    Block,
    /// Time left in the active block.
    Left,
    /// The active block's burn rate in dollars per hour.
    Burn,
    /// The active block's projected cost at its end.
    Projected,
    /// Context used: tokens and percent of the window.
    Context,
}

impl Field {
    /// Every field with its name in format strings.
    pub const ALL: [(&'static str, Field); 9] = [
        ("model", Field::Model),
        ("dir", Field::Dir),
        ("session", Field::Session),
        ("today", Field::Today),
        ("block", Field::Block),
        ("left", Field::Left),
        ("burn", Field::Burn),
        ("projected", Field::Projected),
        ("context", Field::Context),
    ];

    fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }
}

/// How a value is coloured (when colour is on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    #[default]
    Plain,
    Bold,
    Cyan,
    Blue,
    Green,
    Yellow,
    Red,
    Dim,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Plain => "",
            Self::Bold => "\x1b[1m",
            Self::Cyan => "\x1b[36m",
            Self::Blue => "\x1b[34m",
            Self::Green => "\x1b[32m",
            Self::Yellow => "\x1b[33m",
            Self::Red => "\x1b[31m",
            Self::Dim => "\x1b[2m",
        }
    }
}

/// A field's text and colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub text: String,
    pub style: Style,
}

impl Value {
    pub fn new(text: impl Into<String>, style: Style) -> Self {
        Self {
            text: text.into(),
            style,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Field(Field),
    Group(Vec<Part>),
}

/// A parsed format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// What is wrong with a format string (the byte offset is where it was found).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TemplateError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "format string, byte {}: {}", self.offset, self.message)
    }
}

impl Template {
    /// Parses a format string.
    pub fn parse(s: &str) -> Result<Self, TemplateError> {
        let err = |offset, message: String| TemplateError { offset, message };
        // A stack of open groups; the bottom is the whole string.
        let mut stack: Vec<(usize, Vec<Part>)> = vec![(0, Vec::new())];
        let mut text = String::new();
        let mut chars = s.char_indices();
        let flush = |text: &mut String, parts: &mut Vec<Part>| {
            if !text.is_empty() {
                parts.push(Part::Text(std::mem::take(text)));
            }
        };
        while let Some((i, c)) = chars.next() {
            let parts = &mut stack.last_mut().expect("bottom").1;
            match c {
                '\\' => match chars.next() {
                    Some((_, e @ ('{' | '}' | '[' | ']' | '\\'))) => text.push(e),
                    _ => return Err(err(i, "`\\` escapes only { } [ ] and \\".into())),
                },
                '{' => {
                    flush(&mut text, parts);
                    let rest = &s[i + 1..];
                    let Some(end) = rest.find('}') else {
                        return Err(err(i, "`{` without `}`".into()));
                    };
                    let name = rest[..end].trim();
                    let Some(field) = Field::named(name) else {
                        let known: Vec<&str> = Field::ALL.iter().map(|(n, _)| *n).collect();
                        return Err(err(
                            i,
                            format!("unknown field {{{name}}} (known: {})", known.join(", ")),
                        ));
                    };
                    parts.push(Part::Field(field));
                    for _ in 0..=end {
                        chars.next();
                    }
                }
                '}' => return Err(err(i, "`}` without `{` (write `\\}`)".into())),
                '[' => {
                    flush(&mut text, parts);
                    stack.push((i, Vec::new()));
                }
                ']' => {
                    flush(&mut text, parts);
                    if stack.len() == 1 {
                        return Err(err(i, "`]` without `[` (write `\\]`)".into()));
                    }
                    let (_, group) = stack.pop().expect("a group");
                    stack.last_mut().expect("bottom").1.push(Part::Group(group));
                }
                c => text.push(c),
            }
        }
        if stack.len() > 1 {
            return Err(err(
                stack.last().expect("group").0,
                "`[` without `]`".into(),
            ));
        }
        let mut parts = stack.pop().expect("bottom").1;
        flush(&mut text, &mut parts);
        Ok(Self { parts })
    }

    /// The line, with each field's value from `value` (`None`: no value), coloured when
    /// `color` is on.
    pub fn render(&self, value: &dyn Fn(Field) -> Option<Value>, color: bool) -> String {
        let mut out = String::new();
        render_parts(&self.parts, value, color, true, &mut out);
        out
    }
}

/// Renders `parts` into `out`; in a group (`top` false), returns false (and writes nothing)
/// when a field directly inside has no value.
fn render_parts(
    parts: &[Part],
    value: &dyn Fn(Field) -> Option<Value>,
    color: bool,
    top: bool,
    out: &mut String,
) -> bool {
    let mut s = String::new();
    for p in parts {
        match p {
            Part::Text(t) => s.push_str(t),
            Part::Field(f) => match value(*f) {
                Some(v) if color && v.style != Style::Plain => {
                    s.push_str(v.style.code());
                    s.push_str(&v.text);
                    s.push_str("\x1b[0m");
                }
                Some(v) => s.push_str(&v.text),
                None if top => s.push('-'),
                None => return false,
            },
            Part::Group(g) => {
                render_parts(g, value, color, false, &mut s);
            }
        }
    }
    out.push_str(&s);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(f: Field) -> Option<Value> {
        match f {
            Field::Model => Some(Value::new("Opus", Style::Cyan)),
            Field::Today => Some(Value::new("$1.00", Style::Plain)),
            Field::Block => Some(Value::new("$0.50", Style::Plain)),
            _ => None,
        }
    }

    #[test]
    fn groups_drop_when_a_field_is_missing() {
        let t =
            Template::parse("{model} | {today}[ | {block} block[ ({left} left)]][ | {context}]")
                .expect("valid");
        assert_eq!(t.render(&values, false), "Opus | $1.00 | $0.50 block");
        assert_eq!(
            t.render(&values, true),
            "\x1b[36mOpus\x1b[0m | $1.00 | $0.50 block"
        );
        // Outside a group a missing field is a dash; escapes are literal.
        let t = Template::parse(r"\[{dir}\] \{x\} \\ {  model }").expect("valid");
        assert_eq!(t.render(&values, false), r"[-] {x} \ Opus");
        assert_eq!(
            Template::parse("").expect("empty").render(&values, false),
            ""
        );
    }

    #[test]
    fn errors_say_where() {
        for (s, at, msg) in [
            ("{model", 0, "without `}`"),
            ("ok {nope}", 3, "unknown field {nope}"),
            ("a ]", 2, "`]` without `[`"),
            ("x [ {model}", 2, "`[` without `]`"),
            ("}", 0, "without `{`"),
            (r"\n", 0, "escapes only"),
        ] {
            let e = Template::parse(s).expect_err(s);
            assert_eq!(e.offset, at, "{s}");
            assert!(e.to_string().contains(msg), "{s}: {e}");
        }
    }
}
