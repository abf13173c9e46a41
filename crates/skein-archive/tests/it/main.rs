//! Integration tests for skein-archive (one test binary; modules by area).

mod common;
mod crash;
mod ingest;
mod maintenance;
mod props;
mod repair;
