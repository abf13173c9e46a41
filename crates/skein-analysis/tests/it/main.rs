//! Integration tests for skein-analysis (one test binary; modules by area).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

mod corpus;
mod memory;
mod pairing;
mod robustness;
mod tasks;
