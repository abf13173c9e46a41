//! Integration tests for skein-graph (one test binary; modules by area).

mod graph;
mod history;
