//! Integration tests for skein (one test binary; modules by area).

mod archive;
mod check;
mod cli;
mod common;
mod history;
mod history_corpus;
mod hook;
mod passes;
mod show;
mod skills;
mod stats_fixtures;
mod tools;
mod tree;
mod usage;
