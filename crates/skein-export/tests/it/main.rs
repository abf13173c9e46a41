//! Integration tests of skein-export: the dataset written from testdata/, read back with the
//! parquet crate, against skein's own reports.

#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests read the files they wrote"
)]

mod common;
mod redact;
mod shards;
mod tables;
