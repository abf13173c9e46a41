//! Integration tests for skein (one test binary; modules by area).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests, benches and tools read and write files"
)]

mod archive;
mod archive_input;
mod archive_safety;
mod blocks;
mod catalog;
mod check;
mod cli;
mod common;
mod config;
mod conventions;
mod export;
mod history;
mod history_corpus;
mod hook;
mod hook_promises;
mod line_cap;
mod live_files;
#[cfg(target_os = "linux")]
mod memory;
mod passes;
mod records;
mod show;
mod skills;
mod stats_fixtures;
mod statusline;
mod terminal;
mod tools;
mod tree;
mod usage;
mod zones;
