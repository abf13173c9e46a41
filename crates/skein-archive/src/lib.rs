//! The skein archive: where a user's Claude Code history lives after Claude Code deletes its
//! transcripts. Incremental (each run appends one zstd frame with the new complete lines),
//! idempotent (nothing new → nothing written), crash-safe (frame, fsync, then an atomic
//! checkpoint; torn frames are truncated on the next run) and never merging a rewritten
//! transcript into its old archive (a new version file is started instead).
//!
//! * [`Archive::ingest`]: archive one transcript (main session or subagent), with an optional
//!   per-line [`Transform`] (prune, redact).
//! * [`verify`], [`Archive::restore`], [`Archive::apply_retention`], [`Archive::compact`],
//!   [`Archive::train_dictionary`], [`Archive::recover_all`], [`Archive::rebuild_index`].
//! * [`compress_file`], [`decompress_file`], [`open_archived`]: single files.
//! * [`describe`], [`current_files`]: what the archive records about its files (read-only), for
//!   `skein-layout`, which maps them back to the sessions they were.
//!
//! The on-disk format and the crash-safety argument are described in `docs/archive.md`.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "skein-archive owns the archive directory on disk"
)]

mod archive;
mod batch;
mod checkpoint;
mod codec;
mod compact;
mod dict;
mod error;
mod frames;
mod index;
mod ingest;
mod layout;
mod meta;
mod pump;
mod reader;
mod restore;
mod retention;
mod settle;
mod teams;
mod verify;
mod verify_file;

pub use archive::{Archive, ArchiveOptions, DictMode, RecoverReport, now_unix};
pub use batch::{BATCH_DIR, Batch, BatchCommit};
pub use checkpoint::{
    Checkpoint, DictRef, FORMAT, FileState, HASH_WINDOW, PendingCompaction, SourceState,
};
pub use codec::{
    CodecOptions, CodecReport, MAX_WINDOW_LOG, MT_THRESHOLD, compress_file, compress_stream,
    decompress_file, decompress_stream,
};
pub use compact::{CompactOptions, CompactReport};
pub use dict::{DICT_MAX_INPUT, DictInfo, TrainOptions, TrainReport};
pub use error::{ArchiveError, Result};
#[doc(hidden)]
pub use frames::{FuzzFrame, fuzz_scan};
pub use index::{Index, IndexEntry};
pub use ingest::{IngestReport, IngestRequest, MetaLater, Transform, VersionReason};
pub use layout::{
    ARCHIVE_SUFFIX, CHECKPOINT_DIR, DICT_DIR, INDEX_FILE, Kind, LOCK_DIR, MAIN_DIR, META_SUFFIX,
    NO_PARENT, SET_ASIDE_DIR, SUBAGENT_DIR, UNKNOWN_AGENT_TYPE, meta_rel_path,
};
pub use meta::{Origin, SessionMeta, SubagentRef, TokenUsage};
pub use reader::{
    ArchivedFile, current_files, describe, is_archive_root, open_archived, open_archived_range,
    read_archived,
};
pub use restore::{RestoreContent, RestoreItem, RestoreReport};
pub use retention::{RetentionOptions, RetentionReport};
pub use settle::Rebuilt;
pub use teams::{TEAMS_DIR, TeamConfigStatus};
pub use verify::{Issue, Problem, Severity, VerifyReport, verify};
