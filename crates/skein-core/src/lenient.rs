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
