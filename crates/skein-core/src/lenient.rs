//! Field types that accept any JSON value: the expected shape gives a value, any other shape
//! gives the empty value instead of an error. A record is never rejected because one field
//! changed type between Claude Code versions.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Visitor methods that turn every non-matching shape into `$empty`, draining containers.
macro_rules! ignore_other_shapes {
    ($empty:expr, $($skip:ident),*) => {
        $(ignore_other_shapes!(@one $skip, $empty);)*
    };
    (@one bool, $empty:expr) => { fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> { Ok($empty) } };
    (@one i64, $empty:expr) => { fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> { Ok($empty) } };
    (@one u64, $empty:expr) => { fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> { Ok($empty) } };
    (@one f64, $empty:expr) => { fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> { Ok($empty) } };
    (@one str, $empty:expr) => { fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> { Ok($empty) } };
    (@one unit, $empty:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> { Ok($empty) }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> { Ok($empty) }
    };
    (@one seq, $empty:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($empty)
        }
    };
    (@one map, $empty:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($empty)
        }
    };
}

/// A string field; `None` for a missing field or any non-string value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Str<'a>(pub Option<Cow<'a, str>>);

impl Str<'_> {
    /// The string, if the field held one.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(v))))
            }
            ignore_other_shapes!(Str(None), bool, i64, u64, f64, unit, seq, map);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A boolean field that is `true` only for JSON `true`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flag(pub bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Flag(v))
            }
            ignore_other_shapes!(Flag(false), i64, u64, f64, str, unit, seq, map);
        }
        d.deserialize_any(V)
    }
}

/// A token count: integers as given, floats truncated toward zero, negatives, non-finite
/// numbers and non-numbers as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count(pub u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Count(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Count(u64::try_from(v).unwrap_or(0)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                // `as` saturates: NaN → 0, negative → 0, huge → u64::MAX.
                Ok(Count(if v.is_finite() { v as u64 } else { 0 }))
            }
            ignore_other_shapes!(Count(0), bool, str, unit, seq, map);
        }
        d.deserialize_any(V)
    }
}

/// An object field deserialised into `T`; `None` for a missing field or a non-object value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }
            ignore_other_shapes!(Obj(None), bool, i64, u64, f64, str, unit, seq);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// An array field deserialised element by element with `T`; empty for any non-array value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::<T>::deserialize(SeqAccessDeserializer::new(seq)).map(List)
            }
            ignore_other_shapes!(List(Vec::new()), bool, i64, u64, f64, str, unit, map);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// The size of a value in bytes of text: the UTF-8 length of every string inside it (object
/// keys and `"type"` tags excluded). Used for tool result sizes without building the value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextSize(pub u64);

impl<'de> Deserialize<'de> for TextSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(TextSize(v.len() as u64))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut n = 0;
                while let Some(TextSize(s)) = seq.next_element()? {
                    n += s;
                }
                Ok(TextSize(n))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut n = 0;
                while let Some(key) = map.next_key::<Str<'_>>()? {
                    if key.get() == Some("type") {
                        map.next_value::<IgnoredAny>()?;
                    } else {
                        n += map.next_value::<TextSize>()?.0;
                    }
                }
                Ok(TextSize(n))
            }
            ignore_other_shapes!(TextSize(0), bool, i64, u64, f64, unit);
        }
        d.deserialize_any(V)
    }
}

/// The size of a `tool_result`'s `content`, split the way reports count it:
///
/// * `text`: UTF-8 bytes of the text the model reads: string content, or the `text` of
///   `text` blocks;
/// * `media`: bytes of base64 `source.data` of `image` and `document` blocks, as stored;
/// * `images`: `image` blocks;
/// * `other`: every other string inside (names of `tool_reference` blocks, media types,
///   unknown blocks), object keys and `"type"` tags excluded.
///
/// [`ResultSize::total`] is every string byte, the size a size limit on stored output sees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResultSize {
    pub text: u64,
    pub media: u64,
    pub images: u64,
    pub other: u64,
}

impl ResultSize {
    /// Every string byte: text, media and other.
    pub fn total(&self) -> u64 {
        self.text + self.media + self.other
    }

    pub(crate) fn add(&mut self, o: Self) {
        self.text += o.text;
        self.media += o.media;
        self.images += o.images;
        self.other += o.other;
    }

    /// One content block's sizes from what was read of it: its `type`, the bytes of its
    /// `text`, of its `source`'s `data`, and of every other string in it (serde's reader and
    /// the tape's, `crate::envelope_tape`, both end here).
    pub(crate) fn of_block(kind: Option<&str>, text: u64, data: u64, rest: u64) -> Self {
        let mut n = ResultSize::default();
        match kind {
            Some("text") => n.text = text,
            Some(k @ ("image" | "document")) => {
                n.media = data;
                n.images = u64::from(k == "image");
                n.other = text;
            }
            _ => n.other = text + data,
        }
        n.other += rest;
        n
    }
}

impl<'de> Deserialize<'de> for ResultSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ResultSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ResultSize {
                    text: v.len() as u64,
                    ..ResultSize::default()
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut n = ResultSize::default();
                while let Some(BlockSize(b)) = seq.next_element()? {
                    n.add(b);
                }
                Ok(n)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                BlockSize::deserialize(MapAccessDeserializer::new(map)).map(|b| b.0)
            }
            ignore_other_shapes!(ResultSize::default(), bool, i64, u64, f64, unit);
        }
        d.deserialize_any(V)
    }
}

/// One element of a `tool_result` content array.
struct BlockSize(ResultSize);

impl<'de> Deserialize<'de> for BlockSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BlockSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(BlockSize(ResultSize {
                    other: v.len() as u64,
                    ..ResultSize::default()
                }))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut n = 0;
                while let Some(TextSize(s)) = seq.next_element()? {
                    n += s;
                }
                Ok(BlockSize(ResultSize {
                    other: n,
                    ..ResultSize::default()
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                // The `type` tag may come after the fields it qualifies: sizes are kept apart
                // until the end of the object.
                let mut kind: Option<String> = None;
                let (mut text, mut data, mut rest) = (0, 0, 0);
                while let Some(key) = map.next_key::<Str<'_>>()? {
                    match key.get() {
                        Some("type") => kind = map.next_value::<Str<'_>>()?.get().map(Into::into),
                        Some("text") => text += map.next_value::<TextSize>()?.0,
                        Some("source") => {
                            let s = map.next_value::<SourceSize>()?;
                            data += s.data;
                            rest += s.rest;
                        }
                        _ => rest += map.next_value::<TextSize>()?.0,
                    }
                }
                Ok(BlockSize(ResultSize::of_block(
                    kind.as_deref(),
                    text,
                    data,
                    rest,
                )))
            }
            ignore_other_shapes!(BlockSize(ResultSize::default()), bool, i64, u64, f64, unit);
        }
        d.deserialize_any(V)
    }
}

/// A media block's `source`: the bytes of its `data` string and of every other string.
#[derive(Default)]
struct SourceSize {
    data: u64,
    rest: u64,
}

impl<'de> Deserialize<'de> for SourceSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SourceSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut s = SourceSize::default();
                while let Some(key) = map.next_key::<Str<'_>>()? {
                    match key.get() {
                        Some("data") => s.data += map.next_value::<TextSize>()?.0,
                        Some("type") => {
                            map.next_value::<IgnoredAny>()?;
                        }
                        _ => s.rest += map.next_value::<TextSize>()?.0,
                    }
                }
                Ok(s)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(SourceSize {
                    data: 0,
                    rest: v.len() as u64,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut rest = 0;
                while let Some(TextSize(s)) = seq.next_element()? {
                    rest += s;
                }
                Ok(SourceSize { data: 0, rest })
            }
            ignore_other_shapes!(SourceSize::default(), bool, i64, u64, f64, unit);
        }
        d.deserialize_any(V)
    }
}
