//! The copies the deduplication keeps, stored compactly: one fixed-size slot per request,
//! its key (`message.id` and `requestId`) interned in one arena ([`Interner`], whose numbers
//! are the slot numbers), its model and agent interned too. A request costs about 175 bytes
//! here with the vectors' slack (measured in docs/export.md), where a `RequestCopy` with its
//! own index key cost about 800.

use rustc_hash::{FxBuildHasher, FxHashMap};
use skein_core::intern::Interner;

use super::Tokens;
use super::scan::{RequestCopy, Source};

/// A kept request as the builder stores it (see [`RequestRef`] for its fields).
struct Slot {
    session: u32,
    /// Bytes of `message.id` in the slot's key (`message.id`, NUL, `requestId`).
    mid_len: usize,
    /// `requestId` was present (an absent one and an empty one are the same key).
    has_rid: bool,
    model: u32,
    agent: u32,
    tokens: Tokens,
    timestamp_ms: i64,
    sidechain: bool,
    foreign_session: bool,
    source: Source,
}

/// "None" for an interned index and the end of a chain.
const NONE: u32 = u32::MAX;

/// A kept request, borrowed from the store: the fields of [`RequestCopy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRef<'a> {
    pub message_id: Option<&'a str>,
    pub request_id: Option<&'a str>,
    pub model: Option<&'a str>,
    pub tokens: Tokens,
    pub timestamp_ms: i64,
    pub sidechain: bool,
    pub foreign_session: bool,
    pub source: Source,
    pub agent_id: Option<&'a str>,
}

impl RequestRef<'_> {
    /// An owned copy.
    pub fn to_owned_copy(&self) -> RequestCopy {
        RequestCopy {
            message_id: self.message_id.map(Into::into),
            request_id: self.request_id.map(Into::into),
            model: self.model.map(Into::into),
            tokens: self.tokens,
            timestamp_ms: self.timestamp_ms,
            sidechain: self.sidechain,
            foreign_session: self.foreign_session,
            source: self.source,
            agent_id: self.agent_id.map(Into::into),
        }
    }
}

impl<'a> From<&'a RequestCopy> for RequestRef<'a> {
    fn from(c: &'a RequestCopy) -> Self {
        Self {
            message_id: c.message_id.as_deref(),
            request_id: c.request_id.as_deref(),
            model: c.model.as_deref(),
            tokens: c.tokens,
            timestamp_ms: c.timestamp_ms,
            sidechain: c.sidechain,
            foreign_session: c.foreign_session,
            source: c.source,
            agent_id: c.agent_id.as_deref(),
        }
    }
}

/// Is a copy with rank `a` preferred over one with rank `b` (both copies of one request)?
/// A rank is (sidechain, token total, foreign session).
pub(super) fn better(a: (bool, u64, bool), b: (bool, u64, bool)) -> bool {
    if a.0 != b.0 {
        return !a.0;
    }
    if a.1 != b.1 {
        return a.1 > b.1;
    }
    !a.2 && b.2
}

fn rank_of(c: &RequestCopy) -> (bool, u64, bool) {
    (c.sidechain, c.tokens.total(), c.foreign_session)
}

/// What [`CopyStore::add`] did with a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Added {
    /// The first copy of its request, or a copy without `message.id` (its own request).
    New,
    /// Another copy of a request already stored (kept in its place when better).
    Duplicate,
}

/// The deduplicated copies of a whole input, by (`message.id`, `requestId`).
#[derive(Default)]
pub(super) struct CopyStore {
    slots: Vec<Slot>,
    /// Each slot's key, numbered as the slots are.
    keys: Interner,
    models: Interner,
    agents: Interner,
    /// The key being looked up (reused).
    key: String,
    /// Copies without `message.id`: each its own request.
    loose: Vec<(u32, RequestCopy)>,
    /// After [`CopyStore::apply_replay_rule`]: the slots dropped, and how many.
    dropped: Vec<bool>,
    dropped_count: u64,
}

/// The number of `s` in `names`, or [`NONE`] for no value.
fn intern(names: &mut Interner, s: Option<&str>) -> u32 {
    s.map_or(NONE, |s| names.intern(s))
}

/// The value numbered `i` in `names` ([`NONE`]: none).
fn named(names: &Interner, i: u32) -> Option<&str> {
    (i != NONE).then(|| names.name(i))
}

impl CopyStore {
    fn key(&self, i: usize) -> (&str, &str) {
        let key = self.keys.name(i as u32);
        let mid = self.slots[i].mid_len;
        (&key[..mid], &key[mid + 1..])
    }

    /// Adds `copy`, read in session `session` (sessions in a fixed order).
    pub(super) fn add(&mut self, session: u32, copy: RequestCopy) -> Added {
        let Some(mid) = copy.message_id.as_deref() else {
            self.loose.push((session, copy));
            return Added::New;
        };
        self.key.clear();
        self.key.push_str(mid);
        self.key.push('\0');
        self.key.push_str(copy.request_id.as_deref().unwrap_or(""));
        let (i, new) = self.keys.insert(&self.key);
        let slot = Slot {
            session,
            mid_len: mid.len(),
            has_rid: copy.request_id.is_some(),
            model: intern(&mut self.models, copy.model.as_deref()),
            agent: intern(&mut self.agents, copy.agent_id.as_deref()),
            tokens: copy.tokens,
            timestamp_ms: copy.timestamp_ms,
            sidechain: copy.sidechain,
            foreign_session: copy.foreign_session,
            source: copy.source,
        };
        if new {
            self.slots.push(slot);
            return Added::New;
        }
        let held = &mut self.slots[i as usize];
        if better(
            rank_of(&copy),
            (held.sidechain, held.tokens.total(), held.foreign_session),
        ) {
            *held = slot;
        }
        Added::Duplicate
    }

    fn view(&self, i: usize) -> RequestRef<'_> {
        let s = &self.slots[i];
        let (mid, rid) = self.key(i);
        RequestRef {
            message_id: Some(mid),
            request_id: s.has_rid.then_some(rid),
            model: named(&self.models, s.model),
            tokens: s.tokens,
            timestamp_ms: s.timestamp_ms,
            sidechain: s.sidechain,
            foreign_session: s.foreign_session,
            source: s.source,
            agent_id: named(&self.agents, s.agent),
        }
    }

    /// Applies the sidechain-replay rule (module documentation of `usage`, rule 3) and
    /// returns how many requests it dropped.
    pub(super) fn apply_replay_rule(&mut self) -> u64 {
        // Chain the slots of each message id: `heads` holds the latest slot of each id and
        // `next` links each slot to the previous one with the same id.
        // Sized for every slot up front: grown from empty, its rehashes were a fifth of the
        // report's serial tail on the bench tree (docs/performance.md, stop 38).
        let mut heads: FxHashMap<&str, u32> =
            FxHashMap::with_capacity_and_hasher(self.slots.len(), FxBuildHasher);
        let mut next = vec![NONE; self.slots.len()];
        for (i, next) in next.iter_mut().enumerate() {
            if let Some(head) = heads.insert(self.key(i).0, i as u32) {
                *next = head;
            }
        }
        let mut dropped = vec![false; self.slots.len()];
        let mut members = Vec::new();
        for i in 0..self.slots.len() {
            if next[i] == NONE || heads.get(self.key(i).0) != Some(&(i as u32)) {
                continue;
            }
            members.clear();
            let mut cur = i as u32;
            while cur != NONE {
                members.push(cur as usize);
                cur = next[cur as usize];
            }
            members.reverse();
            let s = |m: usize| &self.slots[m];
            if members.iter().any(|&m| !s(m).sidechain) {
                for &m in &members {
                    dropped[m] = s(m).sidechain;
                }
            } else {
                let rank = |m: usize| (s(m).sidechain, s(m).tokens.total(), s(m).foreign_session);
                let mut best = members[0];
                for &m in &members[1..] {
                    if better(rank(m), rank(best)) {
                        best = m;
                    }
                }
                for &m in &members {
                    dropped[m] = m != best;
                }
            }
        }
        drop(heads);
        let n = dropped.iter().filter(|&&d| d).count() as u64;
        self.dropped = dropped;
        self.dropped_count = n;
        n
    }

    /// The requests kept, with their session: the stored ones in order of first copy, then
    /// those without `message.id`. Call [`CopyStore::apply_replay_rule`] first.
    pub(super) fn kept(&self) -> impl Iterator<Item = (u32, RequestRef<'_>)> {
        self.kept_positions().map(|(_, at)| self.at(at))
    }

    /// (session, position) of each request kept, in [`CopyStore::kept`]'s order; a position
    /// is given back by [`CopyStore::at`].
    pub(super) fn kept_positions(&self) -> impl Iterator<Item = (u32, u32)> {
        let n = self.slots.len();
        let stored = self.slots.iter().enumerate();
        stored
            .filter(|&(i, _)| !self.dropped.get(i).copied().unwrap_or(false))
            .map(|(i, s)| (s.session, i as u32))
            .chain(
                self.loose
                    .iter()
                    .enumerate()
                    .map(move |(j, (s, _))| (*s, (n + j) as u32)),
            )
    }

    /// The request at `position` and its session.
    pub(super) fn at(&self, position: u32) -> (u32, RequestRef<'_>) {
        let p = position as usize;
        if let Some(s) = self.slots.get(p) {
            (s.session, self.view(p))
        } else {
            let (s, c) = &self.loose[p - self.slots.len()];
            (*s, RequestRef::from(c))
        }
    }

    /// Requests kept (after the replay rule).
    pub(super) fn kept_count(&self) -> u64 {
        (self.slots.len() + self.loose.len()) as u64 - self.dropped_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(mid: &str, rid: Option<&str>, output: u64) -> RequestCopy {
        RequestCopy {
            message_id: Some(mid.into()),
            request_id: rid.map(Into::into),
            model: Some("m".into()),
            tokens: Tokens {
                output,
                ..Tokens::default()
            },
            timestamp_ms: i64::try_from(output).unwrap_or(i64::MAX),
            sidechain: false,
            foreign_session: false,
            source: Source::Main,
            agent_id: None,
        }
    }

    #[test]
    fn copies_of_one_key_keep_the_best_in_its_place() {
        let mut s = CopyStore::default();
        let added: Vec<Added> = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 1)]
            .into_iter()
            .map(|(k, out)| s.add(out as u32, copy(k, Some("r"), out)))
            .collect();
        s.apply_replay_rule();
        let kept: Vec<(u32, RequestCopy)> = s.kept().map(|(i, c)| (i, c.to_owned_copy())).collect();
        let (new, dup) = (Added::New, Added::Duplicate);
        assert_eq!(added, [new, new, dup, new, dup]);
        // First-seen order of the keys; the better copy (more tokens) in its key's place.
        let outputs: Vec<u64> = kept.iter().map(|(_, c)| c.tokens.output).collect();
        assert_eq!(outputs, [3, 2, 4]);
        let sessions: Vec<u32> = kept.iter().map(|(i, _)| *i).collect();
        assert_eq!(sessions, [3, 2, 4]);
    }

    #[test]
    fn an_absent_request_id_is_the_empty_one_and_is_given_back_as_absent() {
        let mut s = CopyStore::default();
        assert_eq!(s.add(0, copy("a", None, 1)), Added::New);
        assert_eq!(s.add(1, copy("a", Some(""), 2)), Added::Duplicate);
        assert_eq!(s.add(2, copy("a", None, 1)), Added::Duplicate);
        s.apply_replay_rule();
        let kept: Vec<_> = s.kept().collect();
        assert_eq!(kept.len(), 1);
        // The better copy (more tokens) replaced the first, with its present request id.
        assert_eq!(kept[0].0, 1);
        assert_eq!(kept[0].1.request_id, Some(""));
        assert_eq!(kept[0].1.to_owned_copy(), copy("a", Some(""), 2));
    }
}
