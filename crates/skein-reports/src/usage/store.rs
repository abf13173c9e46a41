//! The copies the deduplication keeps, stored compactly: one fixed-size slot per request,
//! its ids in one shared text buffer and its model and agent interned. A request costs about
//! 150 bytes here (a `RequestCopy` with its index key cost about 800), so a report or an
//! export over a large history holds megabytes, not hundreds of them (issue 15).

use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

use super::Tokens;
use super::scan::{RequestCopy, Source};

/// A kept request as the builder stores it (see [`RequestRef`] for its fields).
struct Slot {
    session: u32,
    /// `message.id` then `requestId`, back to back in [`CopyStore::text`].
    at: usize,
    mid_len: usize,
    rid_len: usize,
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

/// Strings seen often (models, agent ids), stored once.
#[derive(Default)]
struct Interner {
    ids: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl Interner {
    fn id(&mut self, s: Option<&str>) -> u32 {
        let Some(s) = s else { return NONE };
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.into());
        self.ids.insert(s.into(), i);
        i
    }

    fn get(&self, i: u32) -> Option<&str> {
        (i != NONE).then(|| &*self.names[i as usize])
    }
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
pub(super) struct CopyStore {
    slots: Vec<Slot>,
    text: String,
    /// Hash of the key → its slot; a key whose hash another key already holds goes to
    /// `collided` (keyed by the whole key), so equal hashes never merge two requests.
    index: FxHashMap<u64, u32>,
    collided: FxHashMap<Box<str>, u32>,
    /// The key hash ([`key_hash`]; a test makes every key collide).
    hash: fn(&str, &str) -> u64,
    models: Interner,
    agents: Interner,
    /// Copies without `message.id`: each its own request.
    loose: Vec<(u32, RequestCopy)>,
    /// After [`CopyStore::apply_replay_rule`]: the slots dropped.
    dropped: Vec<bool>,
}

impl Default for CopyStore {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            text: String::new(),
            index: FxHashMap::default(),
            collided: FxHashMap::default(),
            hash: key_hash,
            models: Interner::default(),
            agents: Interner::default(),
            loose: Vec::new(),
            dropped: Vec::new(),
        }
    }
}

fn key_hash(mid: &str, rid: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(mid.as_bytes());
    h.write_u8(0);
    h.write(rid.as_bytes());
    h.finish()
}

impl CopyStore {
    fn key(&self, s: &Slot) -> (&str, &str) {
        let mid = &self.text[s.at..s.at + s.mid_len];
        let rid = &self.text[s.at + s.mid_len..s.at + s.mid_len + s.rid_len];
        (mid, rid)
    }

    /// The slot holding (`mid`, `rid`), if any.
    fn find(&self, hash: u64, mid: &str, rid: &str) -> Option<u32> {
        let &i = self.index.get(&hash)?;
        if self.key(&self.slots[i as usize]) == (mid, rid) {
            return Some(i);
        }
        let mut whole = String::with_capacity(mid.len() + 1 + rid.len());
        whole.push_str(mid);
        whole.push('\0');
        whole.push_str(rid);
        self.collided.get(whole.as_str()).copied()
    }

    /// Adds `copy`, read in session `session` (sessions in a fixed order).
    pub(super) fn add(&mut self, session: u32, copy: RequestCopy) -> Added {
        let Some(mid) = copy.message_id.as_deref() else {
            self.loose.push((session, copy));
            return Added::New;
        };
        let rid = copy.request_id.as_deref().unwrap_or("");
        let hash = (self.hash)(mid, rid);
        if let Some(i) = self.find(hash, mid, rid) {
            let slot = &self.slots[i as usize];
            let held = (slot.sidechain, slot.tokens.total(), slot.foreign_session);
            if better(rank_of(&copy), held) {
                let (model, agent) = (
                    self.models.id(copy.model.as_deref()),
                    self.agents.id(copy.agent_id.as_deref()),
                );
                let slot = &mut self.slots[i as usize];
                slot.session = session;
                slot.has_rid = copy.request_id.is_some();
                slot.model = model;
                slot.agent = agent;
                slot.tokens = copy.tokens;
                slot.timestamp_ms = copy.timestamp_ms;
                slot.sidechain = copy.sidechain;
                slot.foreign_session = copy.foreign_session;
                slot.source = copy.source;
            }
            return Added::Duplicate;
        }
        let i = self.slots.len() as u32;
        let at = self.text.len();
        self.text.push_str(mid);
        self.text.push_str(rid);
        let slot = Slot {
            session,
            at,
            mid_len: mid.len(),
            rid_len: rid.len(),
            has_rid: copy.request_id.is_some(),
            model: self.models.id(copy.model.as_deref()),
            agent: self.agents.id(copy.agent_id.as_deref()),
            tokens: copy.tokens,
            timestamp_ms: copy.timestamp_ms,
            sidechain: copy.sidechain,
            foreign_session: copy.foreign_session,
            source: copy.source,
        };
        self.slots.push(slot);
        match self.index.entry(hash) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(i);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                let mut whole = String::with_capacity(mid.len() + 1 + rid.len());
                whole.push_str(mid);
                whole.push('\0');
                whole.push_str(rid);
                self.collided.insert(whole.into(), i);
            }
        }
        Added::New
    }

    fn view(&self, s: &Slot) -> RequestRef<'_> {
        let (mid, rid) = self.key(s);
        RequestRef {
            message_id: Some(mid),
            request_id: s.has_rid.then_some(rid),
            model: self.models.get(s.model),
            tokens: s.tokens,
            timestamp_ms: s.timestamp_ms,
            sidechain: s.sidechain,
            foreign_session: s.foreign_session,
            source: s.source,
            agent_id: self.agents.get(s.agent),
        }
    }

    /// Applies the sidechain-replay rule (module documentation of `usage`, rule 3) and
    /// returns how many requests it dropped. The key index is freed: nothing more is added.
    pub(super) fn apply_replay_rule(&mut self) -> u64 {
        self.index = FxHashMap::default();
        self.collided = FxHashMap::default();
        // Chain the slots of each message id: `heads` holds the latest slot of each id and
        // `next` links each slot to the previous one with the same id.
        let mut heads: FxHashMap<&str, u32> = FxHashMap::default();
        let mut next = vec![NONE; self.slots.len()];
        for (i, slot) in self.slots.iter().enumerate() {
            if let Some(head) = heads.insert(self.key(slot).0, i as u32) {
                next[i] = head;
            }
        }
        let mut dropped = vec![false; self.slots.len()];
        let mut members = Vec::new();
        for (i, slot) in self.slots.iter().enumerate() {
            if next[i] == NONE || heads.get(self.key(slot).0) != Some(&(i as u32)) {
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
            (s.session, self.view(s))
        } else {
            let (s, c) = &self.loose[p - self.slots.len()];
            (*s, RequestRef::from(c))
        }
    }

    /// Requests kept (after the replay rule).
    pub(super) fn kept_count(&self) -> u64 {
        let dropped = self.dropped.iter().filter(|&&d| d).count();
        (self.slots.len() - dropped + self.loose.len()) as u64
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
    fn keys_whose_hashes_collide_stay_apart() {
        // Every key hashing alike must give what distinct hashes give.
        let run = |hash: fn(&str, &str) -> u64| {
            let mut s = CopyStore {
                hash,
                ..CopyStore::default()
            };
            let added: Vec<Added> = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 1)]
                .into_iter()
                .map(|(k, out)| s.add(out as u32, copy(k, Some("r"), out)))
                .collect();
            s.apply_replay_rule();
            let kept: Vec<(u32, RequestCopy)> =
                s.kept().map(|(i, c)| (i, c.to_owned_copy())).collect();
            (added, kept)
        };
        let (added, kept) = run(|_, _| 7);
        assert_eq!(run(key_hash), (added.clone(), kept.clone()));
        let (new, dup) = (Added::New, Added::Duplicate);
        assert_eq!(added, [new, new, dup, new, dup]);
        let outputs: Vec<u64> = kept.iter().map(|(_, c)| c.tokens.output).collect();
        assert_eq!(outputs, [3, 2, 4]);
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
