//! The parentUuid graph of a transcript: nodes are records with a string `uuid`, edges run
//! `parentUuid → uuid`. Building never fails; anomalies (duplicate uuids, dangling parents,
//! cycles) are counted and listed. No I/O here.
//!
//! * [`build`]: [`GraphBuilder`] collects nodes in file order and resolves them into a [`Dag`].
//! * [`dag`]: the resolved graph and its summary ([`ChainSummary`]).
//! * [`active`]: the active branch as Claude Code's SDK picks it, the whole-history walk across
//!   compaction boundaries, and the parallel-tool repair for rendering.
//! * [`history`]: the whole-history walk that bridges broken chains (dangling parents,
//!   compaction boundaries without their logical parent, new roots) and marks each seam.

pub mod active;
pub mod build;
pub mod dag;
pub mod history;

pub use active::{NodeTools, repair_parallel_tools};
pub use build::{GraphBuilder, NodeInput};
pub use dag::Parent;
pub use dag::{ChainSummary, Dag, NodeId, RecordType};
pub use history::{History, Seam, SeamKind};
