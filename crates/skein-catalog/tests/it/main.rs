//! Integration tests of the catalog (one test binary; modules by area).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

mod common;
mod concurrency;
mod fixture;
mod incremental;
mod redaction;
mod usage_parity;
