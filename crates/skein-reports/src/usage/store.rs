//! The copies the deduplication keeps, stored compactly: one fixed-size slot per request,
//! its `message.id` interned in one arena ([`Interner`]) and its `requestId` in another, its
//! model and agent interned too. A request costs about 200 bytes here with the vectors' slack
//! (measured in docs/export.md), where a `RequestCopy` with its own index key cost about 800.
//!
//! The requests of one message id are chained in order of first copy as they are added: a
//! copy is found by its message id and then its `requestId` along that chain (almost always
//! one long; past [`WALKED`] requests, a message replayed in many sidechains, in a map by
//! request id), and the sidechain-replay rule reads the chains of the ids that have more than
//! one request, instead of hashing every slot again after the scan (that map took 9 ms of the
//! report's serial tail on the bench tree; docs/performance.md, stop 42).

use rustc_hash::FxHashMap;
use skein_core::intern::Interner;

use super::Tokens;
use super::scan::{RequestCopy, Source};

/// A kept request as the builder stores it (see [`RequestRef`] for its fields).
struct Slot {
    session: u32,
    /// The number of its `message.id` in [`CopyStore::mids`].
    mid: u32,
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

/// The longest chain of one message id's requests that is walked to find a request id; a
/// longer one (a message replayed in many sidechains) is looked up in a map, so that adding
/// its copies stays linear.
const WALKED: usize = 8;

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
    /// Each distinct `message.id`.
    mids: Interner,
    /// Each slot's `requestId` ("" when absent), one after the other: slot `i`'s ends at
    /// `rid_ends[i]` and starts where slot `i - 1`'s ends.
    rids: String,
    rid_ends: Vec<usize>,
    /// By message id number: its first and its latest slot.
    first: Vec<u32>,
    last: Vec<u32>,
    /// By slot: the next slot of the same message id ([`NONE`]: none).
    next: Vec<u32>,
    /// The message ids with more than one slot, each once.
    shared: Vec<u32>,
    /// The slots of the message ids with more than [`WALKED`] of them, by request id: such a
    /// chain is looked up here, not walked.
    long: FxHashMap<u32, FxHashMap<Box<str>, u32>>,
    models: Interner,
    agents: Interner,
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
    /// Slot `i`'s `requestId` ("" when absent).
    fn rid(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.rid_ends[i - 1] };
        &self.rids[start..self.rid_ends[i]]
    }

    /// The slot of (`mid` number `m`, `rid`), or the length of `m`'s chain when it is not
    /// stored (at most [`WALKED`] + 1: a longer chain is looked up in `long`).
    fn find(&self, m: u32, rid: &str) -> Result<usize, usize> {
        let mut at = self.first[m as usize];
        let mut walked = 0;
        while at != NONE {
            if walked == WALKED {
                return match self.long.get(&m).and_then(|by_rid| by_rid.get(rid)) {
                    Some(&i) => Ok(i as usize),
                    None => Err(WALKED + 1),
                };
            }
            if self.rid(at as usize) == rid {
                return Ok(at as usize);
            }
            at = self.next[at as usize];
            walked += 1;
        }
        Err(walked)
    }

    /// Puts slot `i`, the newest of message id `m`'s chain of `len` slots, in `long` once
    /// the chain is longer than [`WALKED`]; when it has just grown past it (a chain only
    /// grows, so this happens once per message id), the slots before it go in too.
    fn index_long(&mut self, m: u32, i: u32, len: usize) {
        if len <= WALKED {
            return;
        }
        let mut keyed: Vec<(Box<str>, u32)> = Vec::new();
        let mut at = if len == WALKED + 1 {
            self.first[m as usize]
        } else {
            i
        };
        while at != NONE {
            keyed.push((self.rid(at as usize).into(), at));
            at = self.next[at as usize];
        }
        let by_rid = self.long.entry(m).or_default();
        for (rid, at) in keyed {
            by_rid.entry(rid).or_insert(at);
        }
    }

    /// Adds `copy`, read in session `session` (sessions in a fixed order).
    pub(super) fn add(&mut self, session: u32, copy: RequestCopy) -> Added {
        let Some(mid) = copy.message_id.as_deref() else {
            self.loose.push((session, copy));
            return Added::New;
        };
        let rid = copy.request_id.as_deref().unwrap_or("");
        let (m, new_mid) = self.mids.insert(mid);
        let held = if new_mid { Err(0) } else { self.find(m, rid) };
        let slot = Slot {
            session,
            mid: m,
            has_rid: copy.request_id.is_some(),
            model: intern(&mut self.models, copy.model.as_deref()),
            agent: intern(&mut self.agents, copy.agent_id.as_deref()),
            tokens: copy.tokens,
            timestamp_ms: copy.timestamp_ms,
            sidechain: copy.sidechain,
            foreign_session: copy.foreign_session,
            source: copy.source,
        };
        let i = match held {
            Ok(i) => i,
            Err(len) => {
                self.push(m, slot, rid, len);
                return Added::New;
            }
        };
        let held = &mut self.slots[i];
        if better(
            rank_of(&copy),
            (held.sidechain, held.tokens.total(), held.foreign_session),
        ) {
            *held = slot;
        }
        Added::Duplicate
    }

    /// Adds the first slot of (`m`, `rid`), whose message id had `len` slots.
    fn push(&mut self, m: u32, slot: Slot, rid: &str, len: usize) {
        let i = self.slots.len() as u32;
        self.slots.push(slot);
        self.rids.push_str(rid);
        self.rid_ends.push(self.rids.len());
        self.next.push(NONE);
        if len == 0 {
            self.first.push(i);
            self.last.push(i);
            return;
        }
        let last = std::mem::replace(&mut self.last[m as usize], i);
        self.next[last as usize] = i;
        if len == 1 {
            self.shared.push(m);
        }
        self.index_long(m, i, len + 1);
    }

    fn view(&self, i: usize) -> RequestRef<'_> {
        let s = &self.slots[i];
        RequestRef {
            message_id: Some(self.mids.name(s.mid)),
            request_id: s.has_rid.then(|| self.rid(i)),
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
        let mut dropped = vec![false; self.slots.len()];
        let mut members = Vec::new();
        for &m in &self.shared {
            members.clear();
            let mut cur = self.first[m as usize];
            while cur != NONE {
                members.push(cur as usize);
                cur = self.next[cur as usize];
            }
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

    /// The bytes it holds on the heap, slack included (copies without `message.id` counted
    /// at their size, not their strings', which are inline up to 30 bytes).
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.slots.capacity() * size_of::<Slot>()
            + self.mids.heap_bytes()
            + self.rids.capacity()
            + self.rid_ends.capacity() * size_of::<usize>()
            + (self.first.capacity() + self.last.capacity() + self.next.capacity())
                * size_of::<u32>()
            + self.shared.capacity() * size_of::<u32>()
            + self.models.heap_bytes()
            + self.agents.heap_bytes()
            + self.loose.capacity() * size_of::<(u32, RequestCopy)>()
            + self.dropped.capacity()
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

    /// The deduplication and the replay rule as the module documentation states them, over
    /// plain vectors: what the store's chains must give, copy for copy and in order.
    fn by_the_rules(copies: &[(u32, RequestCopy)]) -> Vec<(u32, RequestCopy)> {
        let mut kept: Vec<(u32, RequestCopy)> = Vec::new();
        let mut loose = Vec::new();
        for (session, c) in copies {
            let Some(mid) = c.message_id.as_deref() else {
                loose.push((*session, c.clone()));
                continue;
            };
            let rid = c.request_id.as_deref().unwrap_or("");
            let same = |k: &RequestCopy| {
                k.message_id.as_deref() == Some(mid) && k.request_id.as_deref().unwrap_or("") == rid
            };
            match kept.iter_mut().find(|(_, k)| same(k)) {
                Some(held) if better(rank_of(c), rank_of(&held.1)) => *held = (*session, c.clone()),
                Some(_) => {}
                None => kept.push((*session, c.clone())),
            }
        }
        let mut dropped = vec![false; kept.len()];
        for (i, (_, c)) in kept.iter().enumerate() {
            let members: Vec<usize> = (0..kept.len())
                .filter(|&j| kept[j].1.message_id == c.message_id)
                .collect();
            if members.len() < 2 || members[0] != i {
                continue;
            }
            if members.iter().any(|&m| !kept[m].1.sidechain) {
                for &m in &members {
                    dropped[m] = kept[m].1.sidechain;
                }
            } else {
                let mut best = members[0];
                for &m in &members[1..] {
                    if better(rank_of(&kept[m].1), rank_of(&kept[best].1)) {
                        best = m;
                    }
                }
                for &m in &members {
                    dropped[m] = m != best;
                }
            }
        }
        let mut out: Vec<(u32, RequestCopy)> = kept
            .into_iter()
            .zip(dropped)
            .filter_map(|(k, d)| (!d).then_some(k))
            .collect();
        out.extend(loose);
        out
    }

    /// A message id replayed under thousands of request ids (a main copy among sidechain
    /// ones), each seen twice: its chain is looked up, not walked, and keeps what the rules
    /// keep.
    #[test]
    fn a_long_chain_keeps_what_the_rules_keep() {
        let copies: Vec<(u32, RequestCopy)> = (0..2)
            .flat_map(|seen| {
                (0..2000u64).map(move |r| {
                    let mut c = copy("msg_replayed", Some(&format!("req_{r}")), r % 7 + seen);
                    c.sidechain = r != 1234;
                    (u32::try_from(r % 5).unwrap_or(0), c)
                })
            })
            .collect();
        let mut s = CopyStore::default();
        for (session, c) in &copies {
            s.add(*session, c.clone());
        }
        assert_eq!(s.long.get(&0).map(FxHashMap::len), Some(2000));
        assert_eq!(s.apply_replay_rule(), 1999);
        let got: Vec<(u32, RequestCopy)> = s.kept().map(|(i, c)| (i, c.to_owned_copy())).collect();
        assert_eq!(got, by_the_rules(&copies));
        assert_eq!(got[0].1.request_id.as_deref(), Some("req_1234"));
    }

    /// What a request costs the store, with ids as long as Claude Code's (28 bytes each),
    /// a few models and every copy of a request seen twice: the figure docs/export.md gives
    /// (201 bytes; 179 before the message ids were chained apart from the request ids).
    #[test]
    fn a_request_costs_the_store_about_200_bytes() {
        let mut s = CopyStore::default();
        let n = 115_000;
        for copy_of in 0..2 {
            for i in 0..n {
                let mut c = copy(
                    &format!("msg_01{i:022}"),
                    Some(&format!("req_011C{i:020}")),
                    copy_of,
                );
                c.model = Some(["claude-opus-4-7", "claude-sonnet-4-6"][i % 2].into());
                s.add(u32::try_from(i / 40).unwrap_or(u32::MAX), c);
            }
        }
        s.apply_replay_rule();
        assert_eq!(s.kept_count(), n as u64);
        let per_request = s.heap_bytes() / n;
        assert!(
            (180..210).contains(&per_request),
            "{per_request} bytes a request"
        );
    }

    proptest::proptest! {
        /// Few ids, so that keys repeat, message ids carry several request ids (present,
        /// empty and absent; more than `WALKED` of them, so that chains are looked up in
        /// `long` too) and sidechain copies replay main ones.
        #[test]
        fn the_store_keeps_what_the_rules_keep(
            raw in proptest::collection::vec(
                (0u32..4, proptest::option::of(0u8..4), 0u8..24, proptest::bool::ANY,
                 0u64..4, proptest::bool::ANY),
                0..120,
            )
        ) {
            let copies: Vec<(u32, RequestCopy)> = raw
                .iter()
                .map(|&(session, mid, rid, sidechain, output, foreign)| {
                    let rid = match rid {
                        0 => None,
                        1 => Some(String::new()),
                        r => Some(format!("req_{r}")),
                    };
                    let mut c = copy(&format!("msg_{}", mid.unwrap_or(0)), rid.as_deref(), output);
                    if mid.is_none() {
                        c.message_id = None;
                    }
                    c.sidechain = sidechain;
                    c.foreign_session = foreign;
                    (session, c)
                })
                .collect();
            let mut store = CopyStore::default();
            for (session, c) in &copies {
                store.add(*session, c.clone());
            }
            let dropped = store.apply_replay_rule();
            let got: Vec<(u32, RequestCopy)> =
                store.kept().map(|(s, c)| (s, c.to_owned_copy())).collect();
            let want = by_the_rules(&copies);
            proptest::prop_assert_eq!(&got, &want);
            proptest::prop_assert_eq!(store.kept_count(), want.len() as u64);
            let stored = copies.iter().filter(|(_, c)| c.message_id.is_some()).count();
            proptest::prop_assert!(dropped as usize <= stored);
        }
    }
}
