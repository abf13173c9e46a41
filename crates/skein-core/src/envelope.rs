//! The record envelope: the fields of a transcript line that skein's analyses read. Every
//! other field is skipped by the parser (and kept in the line's raw bytes). Every field is
//! lenient (see [`crate::lenient`]), so any JSON object parses into an envelope.

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::lenient::{Count, Flag, Obj, ResultSize, Str};

/// The top-level fields of one record. `I` is the type tool inputs are read into:
/// [`IgnoredAny`] (skipped, the default and the fast path) or e.g. `serde_json::Value`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, bound(deserialize = "I: Deserialize<'de> + Default"))]
pub struct Envelope<'a, I = IgnoredAny> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow)]
    pub subtype: Str<'a>,
    #[serde(borrow)]
    pub uuid: Str<'a>,
    #[serde(rename = "parentUuid", borrow)]
    pub parent_uuid: Str<'a>,
    #[serde(rename = "logicalParentUuid", borrow)]
    pub logical_parent_uuid: Str<'a>,
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Str<'a>,
    #[serde(borrow)]
    pub timestamp: Str<'a>,
    #[serde(rename = "requestId", borrow)]
    pub request_id: Str<'a>,
    #[serde(rename = "agentId", borrow)]
    pub agent_id: Str<'a>,
    #[serde(rename = "teamName", borrow)]
    pub team_name: Str<'a>,
    #[serde(borrow)]
    pub cwd: Str<'a>,
    #[serde(rename = "gitBranch", borrow)]
    pub git_branch: Str<'a>,
    #[serde(rename = "isSidechain")]
    pub is_sidechain: Flag,
    #[serde(rename = "isMeta")]
    pub is_meta: Flag,
    #[serde(rename = "isCompactSummary")]
    pub is_compact_summary: Flag,
    #[serde(rename = "isApiErrorMessage")]
    pub is_api_error: Flag,
    #[serde(borrow)]
    pub message: Obj<Message<'a, I>>,
    #[serde(rename = "toolUseResult", borrow)]
    pub tool_use_result: Obj<ToolUseResult<'a>>,
}

/// `message`: an Anthropic Messages API object (user or assistant).
#[derive(Debug, Default, Deserialize)]
#[serde(default, bound(deserialize = "I: Deserialize<'de> + Default"))]
pub struct Message<'a, I = IgnoredAny> {
    #[serde(borrow)]
    pub id: Str<'a>,
    #[serde(borrow)]
    pub role: Str<'a>,
    #[serde(borrow)]
    pub model: Str<'a>,
    #[serde(borrow)]
    pub content: Content<'a, I>,
    pub usage: Obj<Usage>,
    #[serde(borrow)]
    pub stop_reason: Str<'a>,
}

/// `message.usage`, the four token counters that cost depends on.
#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: Count,
    pub output_tokens: Count,
    pub cache_creation_input_tokens: Count,
    pub cache_read_input_tokens: Count,
}

/// `toolUseResult` (tool specific); only the subagent link is read here.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolUseResult<'a> {
    #[serde(rename = "agentId", borrow)]
    pub agent_id: Str<'a>,
}

/// `message.content`: a string, an array of blocks, or anything else (ignored).
#[derive(Debug)]
pub enum Content<'a, I = IgnoredAny> {
    None,
    Text(Str<'a>),
    Blocks(Vec<Block<'a, I>>),
}

#[allow(clippy::derivable_impls, reason = "a derive would require I: Default")]
impl<I> Default for Content<'_, I> {
    fn default() -> Self {
        Self::None
    }
}

impl<'a, I> Content<'a, I> {
    /// The content blocks (empty for string or missing content).
    pub fn blocks(&self) -> &[Block<'a, I>] {
        match self {
            Content::Blocks(b) => b,
            _ => &[],
        }
    }
}

impl<'de: 'a, 'a, I: Deserialize<'de>> Deserialize<'de> for Content<'a, I> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, Visitor};
        struct V<'a, I>(std::marker::PhantomData<(&'a (), I)>);
        impl<'de: 'a, 'a, I: Deserialize<'de>> Visitor<'de> for V<'a, I> {
            type Value = Content<'a, I>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Str(Some(v.into()))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Str(Some(v.to_owned().into()))))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(Obj(b)) = seq.next_element::<Obj<Block<'a, I>>>()? {
                    blocks.push(b.unwrap_or_else(Block::empty));
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Content::None)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// One content block. Which fields are set depends on `kind` (`text`, `thinking`, `tool_use`,
/// `tool_result`, `image`, …); a non-object array element becomes an empty block.
#[derive(Debug, Deserialize)]
#[serde(default)]
pub struct Block<'a, I = IgnoredAny> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    /// `tool_use` / `server_tool_use` id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// Tool name of a `tool_use`.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// Input of a `tool_use`, read into `I` (skipped with the default [`IgnoredAny`]).
    pub input: Option<I>,
    /// The `tool_use` a `tool_result` answers.
    #[serde(borrow)]
    pub tool_use_id: Str<'a>,
    pub is_error: Flag,
    /// Sizes of a `tool_result`'s content (text, media, other).
    pub content: ResultSize,
    /// Text of a `text` block.
    #[serde(borrow)]
    pub text: Str<'a>,
}

impl<I> Default for Block<'_, I> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<I> Block<'_, I> {
    /// A block with no fields set.
    pub fn empty() -> Self {
        Self {
            kind: Str::default(),
            id: Str::default(),
            name: Str::default(),
            input: None,
            tool_use_id: Str::default(),
            is_error: Flag::default(),
            content: ResultSize::default(),
            text: Str::default(),
        }
    }

    /// The block's type tag.
    pub fn kind(&self) -> Option<&str> {
        self.kind.get()
    }
}
