//! Compact serde forms for the metadata collector's id sets, which the hook stores after every
//! turn: 64-bit hashes of the ids (a collision needs about 4 billion ids to become likely),
//! packed little-endian and written as one hex string instead of a JSON array of strings.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};

/// The 64-bit hash an id is kept as.
pub(crate) fn hash(text: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(text)
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

fn from_hex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let mut out = Vec::with_capacity(b.len() / 2);
    for p in b.chunks_exact(2) {
        out.push(nibble(p[0])? << 4 | nibble(p[1])?);
    }
    Some(out)
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

/// A set of hashes as one hex string.
pub(crate) mod set {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &FxHashSet<u64>, s: S) -> Result<S::Ok, S::Error> {
        let mut sorted: Vec<u64> = v.iter().copied().collect();
        sorted.sort_unstable();
        let bytes: Vec<u8> = sorted.iter().flat_map(|h| h.to_le_bytes()).collect();
        s.serialize_str(&to_hex(&bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<FxHashSet<u64>, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = from_hex(&text).ok_or_else(|| D::Error::custom("bad hex"))?;
        let mut out = FxHashSet::default();
        let mut at = 0;
        while at < bytes.len() {
            out.insert(get_u64(&bytes, &mut at).ok_or_else(|| D::Error::custom("short"))?);
        }
        Ok(out)
    }
}

/// A map of hashes to four counters as one hex string (counters as varints).
pub(crate) mod counters {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        v: &FxHashMap<u64, [u64; 4]>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut sorted: Vec<(&u64, &[u64; 4])> = v.iter().collect();
        sorted.sort_unstable_by_key(|(k, _)| **k);
        let mut bytes = Vec::with_capacity(sorted.len() * 16);
        for (k, c) in sorted {
            bytes.extend_from_slice(&k.to_le_bytes());
            for x in c {
                put_varint(&mut bytes, *x);
            }
        }
        s.serialize_str(&to_hex(&bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<FxHashMap<u64, [u64; 4]>, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = from_hex(&text).ok_or_else(|| D::Error::custom("bad hex"))?;
        let mut out = FxHashMap::default();
        let mut at = 0;
        let short = || D::Error::custom("short");
        while at < bytes.len() {
            let k = get_u64(&bytes, &mut at).ok_or_else(short)?;
            let mut c = [0u64; 4];
            for x in &mut c {
                *x = get_varint(&bytes, &mut at).ok_or_else(short)?;
            }
            out.insert(k, c);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Both {
        #[serde(with = "set")]
        s: FxHashSet<u64>,
        #[serde(with = "counters")]
        c: FxHashMap<u64, [u64; 4]>,
    }

    #[test]
    fn round_trips() {
        let v = Both {
            s: [0, 1, u64::MAX, hash(b"msg_01")].into_iter().collect(),
            c: [
                (7, [0, 127, 128, u64::MAX]),
                (hash(b"x"), [3, 1, 2054, 51230]),
            ]
            .into_iter()
            .collect(),
        };
        let text = serde_json::to_string(&v).expect("serialize");
        assert_eq!(serde_json::from_str::<Both>(&text).expect("parse"), v);
        assert!(serde_json::from_str::<Both>(r#"{"s":"abc","c":""}"#).is_err());
    }
}
