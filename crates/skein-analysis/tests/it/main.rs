//! Integration tests for skein-analysis (one test binary; modules by area).

mod corpus;
mod memory;
mod pairing;
mod robustness;
