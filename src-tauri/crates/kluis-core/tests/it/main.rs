//! kluis-core's integration tests as one test binary: one link of tokio, rustls, reqwest
//! and SQLite for all of them instead of one per file. Each module is one file of tests;
//! a test's name starts with its module (`cargo test --test it -- MODULE::`).

#[path = "../common/mod.rs"]
mod common;

mod attacks;
mod backup;
mod direct;
mod encryption;
mod engine;
mod loopback;
mod relay_transport;
mod session;
mod transport;
mod transports;
mod unreachable;
mod webhook_site;
