//! kluis-relay's integration tests as one test binary: one link of tokio, rustls, reqwest
//! and SQLite for all of them instead of one per file. Each module is one file of tests;
//! a test's name starts with its module (`cargo test --test it -- MODULE::`).

mod common;

mod binary;
mod limits;
mod office;
mod postgres;
mod relay;
mod tenants;
