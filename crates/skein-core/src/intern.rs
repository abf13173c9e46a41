//! Strings interned to dense numbers (`0, 1, 2, …` in order of first appearance), stored in one
//! arena: 20 to 28 bytes of overhead per string instead of the ~80 of a `HashMap<Box<str>, u32>`
//! plus a `Vec<Box<str>>`. Uuids, tool ids and message ids of a transcript go through it, so a
//! pass over a file with hundreds of thousands of records keeps its graph in a few dozen bytes
//! a record.

use std::hash::BuildHasher;

/// No slot.
const EMPTY: u32 = u32::MAX;

/// An interner: `intern` gives each distinct string a number, `name` gives it back.
#[derive(Clone, Default)]
pub struct Interner {
    /// Every string, one after the other.
    text: String,
    /// End of each string in `text` (its start is the previous end).
    ends: Vec<usize>,
    /// Each string's hash (its low 32 bits), by number: a probe compares it before the string,
    /// so that a slot taken by another string costs one read instead of two (its end and its
    /// text, far apart in a large interner), and growing rehashes no string.
    hashes: Vec<u32>,
    /// Open addressing (linear probing) over the numbers; a power of two long, at most half
    /// full.
    slots: Vec<u32>,
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interner")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

/// The hash a string is kept and placed by: its low 32 bits (a table of more than 2^32 slots
/// would only place its strings less evenly).
fn hash(s: &str) -> u32 {
    rustc_hash::FxBuildHasher.hash_one(s) as u32
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many distinct strings it holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The string numbered `i` (panics when there is none).
    pub fn name(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// The number of `s`, if interned.
    pub fn get(&self, s: &str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(hash(s), s).ok()
    }

    /// The number of `s`, interning it if new.
    pub fn intern(&mut self, s: &str) -> u32 {
        self.insert(s).0
    }

    /// The number of `s` and whether it was new.
    pub fn insert(&mut self, s: &str) -> (u32, bool) {
        if (self.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let h = hash(s);
        let at = match self.probe(h, s) {
            Ok(i) => return (i, false),
            Err(at) => at,
        };
        let i = u32::try_from(self.len())
            .ok()
            .filter(|&i| i != EMPTY)
            .expect("fewer than 2^32 - 1 interned strings");
        self.text.push_str(s);
        self.ends.push(self.text.len());
        self.hashes.push(h);
        self.slots[at] = i;
        (i, true)
    }

    /// Where `s`, of hash `h`, is: its number, or the empty slot it would take. The table must
    /// have slots, one of them empty (it is at most half full). A slot taken by another string
    /// is told apart by the hash first, and only on equal hashes by the string.
    fn probe(&self, h: u32, s: &str) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut at = h as usize & mask;
        loop {
            match self.slots[at] {
                EMPTY => return Err(at),
                i if self.hashes[i as usize] == h && self.name(i) == s => return Ok(i),
                _ => at = (at + 1) & mask,
            }
        }
    }

    /// Forgets every string, keeping the memory for the next ones, except a large slot table:
    /// refilling it would cost every later use as much as the largest one (one interner per
    /// file, reused for thousands of small files).
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.hashes.clear();
        if self.slots.len() > 1024 {
            self.slots = Vec::new();
        } else {
            self.slots.fill(EMPTY);
        }
    }

    /// The bytes it holds on the heap, slack included (what a memory budget counts).
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity()
            + self.ends.capacity() * std::mem::size_of::<usize>()
            + (self.hashes.capacity() + self.slots.capacity()) * std::mem::size_of::<u32>()
    }

    /// Every string, by number.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len() as u32).map(|i| self.name(i))
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        self.slots = vec![EMPTY; size];
        let mask = size - 1;
        for (i, &h) in self.hashes.iter().enumerate() {
            let mut at = h as usize & mask;
            while self.slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            // (`i` fits: `insert` numbers fewer than 2^32 - 1 strings.)
            self.slots[at] = i as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_first_appearance() {
        let mut t = Interner::new();
        assert_eq!(t.get("a"), None);
        let words = ["a", "bb", "", "a", "ccc", "bb", "é"];
        let got: Vec<(u32, bool)> = words.iter().map(|w| t.insert(w)).collect();
        assert_eq!(
            got,
            [
                (0, true),
                (1, true),
                (2, true),
                (0, false),
                (3, true),
                (1, false),
                (4, true)
            ]
        );
        assert_eq!(t.len(), 5);
        assert_eq!(t.iter().collect::<Vec<_>>(), ["a", "bb", "", "ccc", "é"]);
        assert_eq!(t.get("ccc"), Some(3));
        assert_eq!(t.get("cc"), None);
    }

    #[test]
    fn many_strings_survive_growth() {
        let mut t = Interner::new();
        for i in 0..10_000u32 {
            assert_eq!(t.intern(&format!("id-{i}")), i);
        }
        for i in (0..10_000u32).rev() {
            assert_eq!(t.get(&format!("id-{i}")), Some(i));
            assert_eq!(t.name(i), format!("id-{i}"));
        }
        assert_eq!(t.get("id-10000"), None);
    }

    #[test]
    fn cleared_it_numbers_from_zero_again() {
        let mut t = Interner::new();
        for i in 0..100u32 {
            t.intern(&format!("old-{i}"));
        }
        t.clear();
        assert_eq!(t.get("old-3"), None);
        for i in 0..5000u32 {
            t.intern(&format!("old-{i}"));
        }
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.get("old-3"), None);
        assert_eq!(t.insert("new"), (0, true));
        assert_eq!(t.insert("old-3"), (1, true));
        assert_eq!(t.insert("new"), (0, false));
        assert_eq!(t.iter().collect::<Vec<_>>(), ["new", "old-3"]);
    }
}
