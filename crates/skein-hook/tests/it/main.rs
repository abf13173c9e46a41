//! Integration tests for skein-hook (one test binary; modules by area).

mod checkpoint_extract;
mod common;
mod concurrency;
mod config;
mod events;
mod fail_open;
mod runtime;
mod settings;
