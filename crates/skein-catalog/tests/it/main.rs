//! Integration tests of the catalog (one test binary; modules by area).

mod common;
mod concurrency;
mod fixture;
mod incremental;
mod usage_parity;
