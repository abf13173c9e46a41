//! Integration tests for skein-analysis (one test binary; modules by area).

mod corpus;
mod pairing;
mod robustness;
mod tasks;
