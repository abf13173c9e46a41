//! Hive partitions (`month=YYYY-MM[/project=…]`) and shards (`--shard K/N`).

use std::fmt::{self, Write as _};

/// The value of a partition key the row has no value for (Hive's and Spark's name).
pub const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// The UTC month (`YYYY-MM`) of an instant.
pub fn month_of(ms: Option<i64>) -> String {
    ms.map_or_else(
        || NULL_PARTITION.to_owned(),
        |ms| skein_core::time::Zone::utc().day_of(ms).month_key(),
    )
}

/// A partition value escaped as Hive escapes path values: every byte outside
/// `[A-Za-z0-9._-]` (and a leading `.`, which would hide the directory) as `%XX`, so no value
/// can add a path component, and engines unescape it back.
pub fn escape_value(v: &str) -> String {
    if v.is_empty() {
        return NULL_PARTITION.to_owned();
    }
    let mut out = String::with_capacity(v.len());
    for (i, b) in v.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0);
        if plain {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Which slice of the sessions a run exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based index, below `count`.
    pub index: u32,
    pub count: u32,
}

/// Why a `K/N` shard was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid shard {0:?}: expected K/N with 0 <= K < N (e.g. 0/3)")]
pub struct ShardError(pub String);

impl Shard {
    /// The whole input.
    pub const ALL: Self = Self { index: 0, count: 1 };

    /// Parses `K/N`.
    pub fn parse(s: &str) -> Result<Self, ShardError> {
        let err = || ShardError(s.to_owned());
        let (k, n) = s.split_once('/').ok_or_else(err)?;
        let index: u32 = k.trim().parse().map_err(|_| err())?;
        let count: u32 = n.trim().parse().map_err(|_| err())?;
        if count == 0 || index >= count {
            return Err(err());
        }
        Ok(Self { index, count })
    }

    /// Whether session `session_id` (with all its subagents) belongs to this shard: FNV-1a
    /// (64-bit) of the id's bytes, modulo the shard count. Stable across runs, machines and
    /// skein versions (documented in docs/export.md, so other tools can compute it too).
    pub fn contains(&self, session_id: &str) -> bool {
        (fnv1a(session_id.as_bytes()) % u64::from(self.count)) == u64::from(self.index)
    }

    /// The part-file name stem of this shard: `part-K-of-N` (zero-padded to 5 digits).
    pub fn part_name(&self) -> String {
        format!("part-{:05}-of-{:05}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// FNV-1a, 64-bit.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_and_escapes() {
        assert_eq!(month_of(Some(0)), "1970-01");
        assert_eq!(month_of(Some(1_700_000_000_000)), "2023-11");
        assert_eq!(month_of(None), NULL_PARTITION);
        assert_eq!(escape_value("-home-me-proj"), "-home-me-proj");
        assert_eq!(escape_value("../x/y=z"), "%2E.%2Fx%2Fy%3Dz");
        assert_eq!(escape_value(""), NULL_PARTITION);
    }

    #[test]
    fn shards_parse_and_partition_every_id_once() {
        assert_eq!(Shard::parse("1/3"), Ok(Shard { index: 1, count: 3 }));
        for bad in ["3/3", "1", "a/b", "0/0", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        // FNV-1a test vector.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        for id in ["s1", "s2", "0b7e", "ffff-0000"] {
            let n = (0..3)
                .filter(|&k| Shard { index: k, count: 3 }.contains(id))
                .count();
            assert_eq!(n, 1, "{id}");
        }
        assert_eq!(
            Shard {
                index: 2,
                count: 10
            }
            .part_name(),
            "part-00002-of-00010"
        );
    }
}
