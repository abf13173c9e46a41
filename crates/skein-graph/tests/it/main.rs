//! Integration tests for skein-graph (one test binary; modules by area).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

mod graph;
mod history;
