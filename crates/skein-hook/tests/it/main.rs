//! Integration tests for skein-hook (one test binary; modules by area).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

mod checkpoint_extract;
mod common;
mod concurrency;
mod config;
mod events;
mod fail_open;
mod runtime;
mod settings;
mod status_line;
