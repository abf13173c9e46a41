//! The metadata collector's id sets, which the hook stores after every turn: 64-bit hashes of
//! the ids (a collision needs about 4 billion ids to become likely) kept in insertion order
//! ([`Keyed`]), packed little-endian and written as one hex string instead of a JSON array of
//! strings. Reading one back is a decode, not a rebuild of a hash table: the hook asks only a
//! few questions per turn (a linear scan answers them), while `skein archive` asks one per line
//! (the index is built on the first few dozen).

use rustc_hash::FxHashMap;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};

/// The 64-bit hash an id is kept as.
pub(crate) fn hash(text: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(text)
}

/// [`hash`] of `parts` one after the other, without joining them first (the same value: XXH3
/// streams).
pub(crate) fn hash_parts(parts: &[&str]) -> u64 {
    use std::hash::Hasher;
    let mut h = twox_hash::XxHash3_64::new();
    for p in parts {
        h.write(p.as_bytes());
    }
    h.finish()
}

const HEX: &[u8; 16] = b"0123456789abcdef";

// A table, not `write!` per byte: the hook writes a long session's sets after every turn.
fn to_hex(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
    String::from_utf8(out).unwrap_or_default()
}

const BAD: u8 = 0xff;
const TABLE: [u8; 256] = {
    let mut t = [BAD; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

fn from_hex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() / 2);
    let mut bad = 0u8;
    for p in b.chunks_exact(2) {
        let (hi, lo) = (TABLE[usize::from(p[0])], TABLE[usize::from(p[1])]);
        bad |= hi | lo;
        out.push(hi << 4 | (lo & 15));
    }
    // Every valid nibble is < 16: one test at the end instead of a branch per byte.
    (bad & 0xf0 == 0).then_some(out)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

fn get_u64(b: &[u8], at: &mut usize) -> Option<u64> {
    let chunk = b.get(*at..*at + 8)?;
    *at += 8;
    Some(u64::from_le_bytes(chunk.try_into().ok()?))
}

/// Lookups answered by a linear scan before the index is built.
const SCANS: u32 = 32;

/// Hashes with a value each, in insertion order, with a hash index built on demand.
#[derive(Debug, Clone, Default)]
pub(crate) struct Keyed<V> {
    items: Vec<(u64, V)>,
    index: Option<FxHashMap<u64, usize>>,
    scans: u32,
    /// Positions [`Keyed::entry_logged`] handed out since [`Keyed::take_changed`].
    changed: Vec<usize>,
}

impl<V: PartialEq> PartialEq for Keyed<V> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

impl<V: Eq> Eq for Keyed<V> {}

impl<V> Keyed<V> {
    fn position(&mut self, key: u64) -> Option<usize> {
        if self.index.is_none() {
            if self.scans < SCANS {
                self.scans += 1;
                return self.items.iter().position(|(k, _)| *k == key);
            }
            let index = self
                .items
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (*k, i))
                .collect();
            self.index = Some(index);
        }
        self.index.as_ref().and_then(|ix| ix.get(&key).copied())
    }

    /// The value of `key`, inserted with `make` when absent (and whether it was).
    pub(crate) fn entry(&mut self, key: u64, make: impl FnOnce() -> V) -> (&mut V, bool) {
        let (at, new) = if let Some(at) = self.position(key) {
            (at, false)
        } else {
            self.items.push((key, make()));
            let at = self.items.len() - 1;
            if let Some(ix) = &mut self.index {
                ix.insert(key, at);
            }
            (at, true)
        };
        (&mut self.items[at].1, new)
    }

    /// [`Keyed::entry`], remembering the position for [`Keyed::take_changed`].
    pub(crate) fn entry_logged(&mut self, key: u64, make: impl FnOnce() -> V) -> &mut V {
        let before = self.items.len();
        let (_, new) = self.entry(key, make);
        let at = if new {
            before
        } else {
            self.position(key).unwrap_or(before)
        };
        self.changed.push(at);
        &mut self.items[at].1
    }

    /// The positions handed out by [`Keyed::entry_logged`] since the last call, sorted, once.
    pub(crate) fn take_changed(&mut self) -> Vec<usize> {
        let mut c = std::mem::take(&mut self.changed);
        c.sort_unstable();
        c.dedup();
        c
    }

    /// The items from position `from` on.
    pub(crate) fn items_from(&self, from: usize) -> &[(u64, V)] {
        self.items.get(from..).unwrap_or(&[])
    }

    /// The item at `at`.
    pub(crate) fn item(&self, at: usize) -> Option<&(u64, V)> {
        self.items.get(at)
    }

    /// Appends an item known to be new (replaying a log of this structure: no lookup).
    pub(crate) fn push_new(&mut self, key: u64, value: V) {
        if let Some(ix) = &mut self.index {
            ix.insert(key, self.items.len());
        }
        self.items.push((key, value));
    }

    /// Replaces the value at `at` (replaying a log); false when there is no such item.
    pub(crate) fn set_at(&mut self, at: usize, value: V) -> bool {
        match self.items.get_mut(at) {
            Some(slot) => {
                slot.1 = value;
                true
            }
            None => false,
        }
    }

    pub(crate) fn contains(&mut self, key: u64) -> bool {
        self.position(key).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.items.iter().map(|(_, v)| v)
    }

    fn from_items(items: Vec<(u64, V)>) -> Self {
        Self {
            items,
            index: None,
            scans: 0,
            changed: Vec::new(),
        }
    }
}

impl Keyed<()> {
    /// Inserts `key`; false when it was there already.
    pub(crate) fn insert(&mut self, key: u64) -> bool {
        self.entry(key, || ()).1
    }
}

/// A set of hashes as one hex string.
pub(crate) mod set {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &Keyed<()>, s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = v.items.iter().flat_map(|(h, ())| h.to_le_bytes()).collect();
        s.serialize_str(&to_hex(&bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Keyed<()>, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = from_hex(&text).ok_or_else(|| D::Error::custom("bad hex"))?;
        if bytes.len() % 8 != 0 {
            return Err(D::Error::custom("short"));
        }
        let items = bytes
            .chunks_exact(8)
            .map(|c| (u64::from_le_bytes(c.try_into().unwrap_or_default()), ()))
            .collect();
        Ok(Keyed::from_items(items))
    }
}

/// Hashes with four counters each as one hex string (counters as varints).
pub(crate) mod counters {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &Keyed<[u64; 4]>, s: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::with_capacity(v.items.len() * 16);
        for (k, c) in &v.items {
            bytes.extend_from_slice(&k.to_le_bytes());
            for x in c {
                put_varint(&mut bytes, *x);
            }
        }
        s.serialize_str(&to_hex(&bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Keyed<[u64; 4]>, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = from_hex(&text).ok_or_else(|| D::Error::custom("bad hex"))?;
        let mut items = Vec::new();
        let mut at = 0;
        let short = || D::Error::custom("short");
        while at < bytes.len() {
            let k = get_u64(&bytes, &mut at).ok_or_else(short)?;
            let mut c = [0u64; 4];
            for x in &mut c {
                *x = get_varint(&bytes, &mut at).ok_or_else(short)?;
            }
            items.push((k, c));
        }
        Ok(Keyed::from_items(items))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Both {
        #[serde(with = "set")]
        s: Keyed<()>,
        #[serde(with = "counters")]
        c: Keyed<[u64; 4]>,
    }

    /// The id log stores usage-group keys hashed: hashing the parts must give what hashing
    /// them joined gave, or a saved state would stop matching.
    #[test]
    fn parts_hash_as_joined() {
        for parts in [
            &["msg_01", "\0", "req_02"][..],
            &["", "\0", ""][..],
            &["a".repeat(300).as_str(), "\0", "r"][..],
        ] {
            assert_eq!(
                hash_parts(parts),
                hash(parts.concat().as_bytes()),
                "{parts:?}"
            );
        }
    }

    #[test]
    fn round_trips() {
        let mut v = Both {
            s: Keyed::default(),
            c: Keyed::default(),
        };
        for k in [0, 1, u64::MAX, hash(b"msg_01")] {
            assert!(v.s.insert(k));
        }
        assert!(!v.s.insert(1));
        *v.c.entry(7, Default::default).0 = [0, 127, 128, u64::MAX];
        *v.c.entry(hash(b"x"), Default::default).0 = [3, 1, 2054, 51230];
        let text = serde_json::to_string(&v).expect("serialize");
        assert_eq!(serde_json::from_str::<Both>(&text).expect("parse"), v);
        assert!(serde_json::from_str::<Both>(r#"{"s":"abc","c":""}"#).is_err());
        assert!(serde_json::from_str::<Both>(r#"{"s":"zz","c":""}"#).is_err());
    }

    #[test]
    fn the_index_answers_like_the_scan() {
        let mut k: Keyed<()> = Keyed::default();
        for i in 0..1000u64 {
            assert!(k.insert(i * 7));
        }
        for i in 0..1000u64 {
            assert!(k.contains(i * 7), "{i}");
            assert!(!k.contains(i * 7 + 1), "{i}");
        }
        assert!(k.index.is_some());
        assert!(!k.insert(14) && k.insert(15) && k.contains(15));
        assert_eq!(k.len(), 1001);
    }
}
