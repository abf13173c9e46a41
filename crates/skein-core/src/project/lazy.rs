//! A projection read off the line's structural index ([`crate::lazy`]), the first path of
//! [`Projection::write`]: no skim, no tape, no copy of the line; the fields named are found
//! by the index's walk, and only they are looked at. A string without an escape, an integer
//! and a literal are written as the line holds them, which is what serde writes of the value
//! simd-json reads (the index vouches only for lines simd-json takes: no control character in
//! a string, no `\u` escape, numbers of the plain forms). What might be written otherwise is
//! left to the tape: a fraction (written as simd-json reads it, not as the line has it), `-0`,
//! and an object named that repeats a key (serde's last copy wins, in the first one's place).
//! `project::tests` and the `project` fuzz target hold the three paths to one output.

use std::borrow::Cow;

use super::{Field, Projection, Step, clear, write_members};
use crate::lazy::{At, Doc};
use crate::source::{Kind, Source};

/// Appends the projection of the line `doc` holds to `out` (as [`Projection::write_object`]
/// does); `None` where the tape must write it instead, with `out` as it was.
pub(super) fn write(
    p: &Projection,
    doc: &Doc<'_, '_>,
    prefix: &[u8],
    out: &mut Vec<u8>,
) -> Option<()> {
    p.with_fields(|fields| {
        read(doc, Doc::ROOT, &p.steps, fields)?;
        write_fields(p, doc, fields, prefix, out)
    })
}

/// Writes the fields read, as [`Projection::write_object`] does; `None` (with `out` as it
/// was) where the tape must write them instead.
fn write_fields(
    p: &Projection,
    doc: &Doc<'_, '_>,
    fields: &[Field<'_>],
    prefix: &[u8],
    out: &mut Vec<u8>,
) -> Option<()> {
    let start = out.len();
    out.push(b'{');
    out.extend_from_slice(prefix);
    let written = write_members(&p.steps, fields, !prefix.is_empty(), out, &|at, out| {
        write_value(doc, at, out)
    });
    if written.is_none() {
        out.truncate(start);
        return None;
    }
    out.extend_from_slice(b"}\n");
    Some(())
}

/// Reads the fields of `steps` off the object at `at`, as `project::read_tape` reads them off
/// the tape (the last of duplicate keys winning, a later copy of an object named replacing
/// the earlier one whole).
fn read(doc: &Doc<'_, '_>, at: At, steps: &[Step], fields: &mut [Field<'_>]) -> Option<()> {
    for (key, value) in doc.members(at) {
        let key = doc.str(Some(key))?;
        let Some(step) = steps.iter().find(|s| s.key == key) else {
            continue;
        };
        if let Some(i) = step.leaf {
            fields[i] = Field::Index(value);
        } else {
            clear(&step.below, fields);
            if doc.kind(value) == Kind::Object {
                read(doc, value, &step.below, fields)?;
            }
        }
    }
    Some(())
}

/// Writes the value at `at` as compact JSON, as serde writes the value simd-json reads; `None`
/// where that may differ from the line's text and is left to the tape (see the module's).
fn write_value(doc: &Doc<'_, '_>, at: At, out: &mut Vec<u8>) -> Option<()> {
    match doc.kind(at) {
        Kind::String => write_str(doc.str(Some(at))?, out),
        Kind::Number => {
            let text = doc.number_text(at);
            if text.contains('.') || text == "-0" {
                return None;
            }
            out.extend_from_slice(text.as_bytes());
        }
        Kind::True => out.extend_from_slice(b"true"),
        Kind::False => out.extend_from_slice(b"false"),
        Kind::Null => out.extend_from_slice(b"null"),
        Kind::Object => {
            let members: Vec<(Cow<'_, str>, At)> = doc
                .members(at)
                .map(|(key, value)| Some((doc.str(Some(key))?, value)))
                .collect::<Option<_>>()?;
            if members.len() > 1 {
                let mut keys: Vec<&str> = members.iter().map(|(k, _)| &**k).collect();
                keys.sort_unstable();
                if keys.windows(2).any(|w| w[0] == w[1]) {
                    return None;
                }
            }
            out.push(b'{');
            for (i, (key, value)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(key, out);
                out.push(b':');
                write_value(doc, value, out)?;
            }
            out.push(b'}');
        }
        Kind::Array => {
            out.push(b'[');
            for (i, (_, value)) in doc.entries(at).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(doc, value, out)?;
            }
            out.push(b']');
        }
    }
    Some(())
}

/// A string as serde writes it: one read without an escape (borrowed from the line) needs
/// none, since a checked line's strings hold no control character, and is copied as it is.
fn write_str(s: Cow<'_, str>, out: &mut Vec<u8>) {
    match s {
        Cow::Borrowed(s) => {
            out.push(b'"');
            out.extend_from_slice(s.as_bytes());
            out.push(b'"');
        }
        // Writing JSON into a Vec cannot fail.
        Cow::Owned(s) => {
            let _ = serde_json::to_writer(&mut *out, &s);
        }
    }
}
