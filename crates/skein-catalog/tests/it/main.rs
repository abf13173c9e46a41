//! Integration tests of the catalog.
