//! Integration tests for skein-archive (one test binary; modules by area).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

mod collide;
mod common;
mod crash;
mod crash_bulk;
mod ingest;
mod maintenance;
mod props;
mod repair;
