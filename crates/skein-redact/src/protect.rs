//! The string values that are never scanned or changed: the ids, thinking signatures and
//! base64 media that Claude Code itself writes, at the places it writes them. A key of the
//! same name anywhere else (a tool input, a tool result, `toolUseResult`, a document) is
//! scanned like any other value: a token stored under `id` or `signature` in a tool's JSON
//! is still a token.
//!
//! Protected, relative to a record (a top-level object, or a record nested in a `progress`
//! line's `data.message` / `data.normalizedMessages[]`):
//! * the envelope ids: `uuid`, `parentUuid`, `sessionId`, `requestId`, `timestamp`,
//!   `agentId`, `promptId`, `toolUseID`, … directly in the record;
//! * `message.id`, `snapshot.messageId` / `snapshot.timestamp`, `attachment.toolUseID`,
//!   `data.agentId`;
//! * in a content block of `message.content[]`: `id`, `tool_use_id`, `signature` (thinking),
//!   and `data` of a `redacted_thinking` block;
//! * `toolUseResult.file.base64` (an image the Read tool returned).
//!
//! Anywhere: `data` of a `source` object whose `type` is `base64` (images and PDFs; a
//! document whose source is `text` is scanned), and `encrypted_content` under a Codex
//! `payload`.

use crate::json::Frame;

/// Ids Claude Code writes directly into a record.
const ENVELOPE: &[&[u8]] = &[
    b"uuid",
    b"parentUuid",
    b"logicalParentUuid",
    b"leafUuid",
    b"sessionId",
    b"requestId",
    b"timestamp",
    b"agentId",
    b"parentAgentId",
    b"promptId",
    b"messageId",
    b"toolUseID",
    b"toolUseId",
    b"parentToolUseID",
    b"sourceToolUseID",
    b"sourceToolAssistantUUID",
];

/// The key of the member of `f` that is open (raw bytes; a key written with escapes does not
/// match, so its value is scanned).
fn key_of<'s>(src: &'s [u8], f: Option<&Frame>) -> Option<&'s [u8]> {
    match f {
        Some(Frame::Object {
            key: Some((a, b)), ..
        }) => Some(&src[*a..*b]),
        _ => None,
    }
}

/// The `type` of the object `f`, when it came before the current member.
fn type_of<'s>(src: &'s [u8], f: Option<&Frame>) -> Option<&'s [u8]> {
    match f {
        Some(Frame::Object {
            ty: Some((a, b)), ..
        }) => Some(&src[*a..*b]),
        _ => None,
    }
}

fn is_array(f: Option<&Frame>) -> bool {
    matches!(f, Some(Frame::Array { .. }))
}

fn is_object(f: Option<&Frame>) -> bool {
    matches!(f, Some(Frame::Object { .. }))
}

/// Index in `stack` of the innermost record the current value belongs to.
fn record(src: &[u8], stack: &[Frame]) -> usize {
    let mut r = 0;
    while key_of(src, stack.get(r)) == Some(b"data") && is_object(stack.get(r + 1)) {
        match key_of(src, stack.get(r + 1)) {
            Some(b"message") if is_object(stack.get(r + 2)) => r += 2,
            Some(b"normalizedMessages")
                if is_array(stack.get(r + 2)) && is_object(stack.get(r + 3)) =>
            {
                r += 3;
            }
            _ => break,
        }
    }
    r
}

/// Is the value of member `key` of the innermost open object of `stack` protected?
pub(crate) fn protected(src: &[u8], key: &[u8], stack: &[Frame]) -> bool {
    let Some(d) = stack.len().checked_sub(1) else {
        return false;
    };
    let at = |i: usize| key_of(src, stack.get(i));
    if key == b"data"
        && type_of(src, stack.get(d)) == Some(b"base64")
        && d >= 1
        && at(d - 1) == Some(b"source")
    {
        return true;
    }
    if key == b"encrypted_content" && at(0) == Some(b"payload") {
        return true;
    }
    let r = record(src, stack);
    match d - r {
        0 => ENVELOPE.contains(&key),
        1 => matches!(
            (at(r), key),
            (Some(b"message"), b"id")
                | (Some(b"snapshot"), b"messageId" | b"timestamp")
                | (Some(b"attachment"), b"toolUseID")
                | (Some(b"data"), b"agentId")
        ),
        2 => at(r) == Some(b"toolUseResult") && at(r + 1) == Some(b"file") && key == b"base64",
        3 => {
            at(r) == Some(b"message")
                && at(r + 1) == Some(b"content")
                && is_array(stack.get(r + 2))
                && (matches!(key, b"id" | b"tool_use_id" | b"signature")
                    || (key == b"data" && type_of(src, stack.get(d)) == Some(b"redacted_thinking")))
        }
        _ => false,
    }
}
