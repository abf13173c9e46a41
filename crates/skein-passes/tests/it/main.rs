//! Integration tests for skein-passes (one test binary; modules by area).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

mod common;
mod corpus;
mod fixtures;
mod props;
