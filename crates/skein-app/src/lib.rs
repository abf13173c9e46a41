//! Compositions of skein's libraries, for the binary (which only parses flags, wires these up
//! and prints): archiving a tree with metadata ([`ingest`], with the incremental metadata
//! collector in [`meta`]), restoring sessions ([`restore`]), and the passes the hook runs
//! ([`hook`]: `archive`, `snapshot`, `index`), the agent-team configs kept beside the
//! sessions ([`teams`]), the catalog's scope and refresh ([`catalog`]), and the files the passes
//! read and spool through ([`sources`]). `skein archive` and the hook's `archive` pass share one
//! metadata and identity code path ([`meta`], [`identity`], [`transform`]).

#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "skein-app composes the I/O crates: it reads sources for prune and metadata and \
              writes the hook's request files; it reads no environment and no clock"
)]

pub mod catalog;
pub mod error;
pub mod hook;
pub mod identity;
pub mod ingest;
pub mod meta;
pub mod meta_read;
mod packed;
pub mod restore;
mod session_meta;
pub mod snapshot_dir;
pub mod sources;
pub mod teams;
pub mod transform;

pub use error::{Error, chain};
pub use ingest::{ArchiveJob, IngestRow};
pub use meta::MetaCollector;
pub use session_meta::agent_identity;
pub use transform::Transforms;
