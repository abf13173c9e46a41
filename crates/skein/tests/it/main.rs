//! Integration tests for skein (one test binary; modules by area).

mod archive;
mod archive_safety;
mod check;
mod cli;
mod common;
mod hook;
mod line_cap;
mod live_files;
mod passes;
mod show;
mod skills;
mod stats_fixtures;
mod tools;
mod tree;
mod usage;
