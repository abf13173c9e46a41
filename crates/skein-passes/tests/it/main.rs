//! Integration tests for skein-passes (one test binary; modules by area).

mod common;
mod corpus;
mod fixtures;
mod props;
