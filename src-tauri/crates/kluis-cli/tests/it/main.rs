//! kluis-cli's integration tests as one test binary: one link of tokio, rustls, reqwest
//! and SQLite for all of them instead of one per file. Each module is one file of tests;
//! a test's name starts with its module (`cargo test --test it -- MODULE::`).

mod common;

mod ad_hoc;
mod attacks;
mod cli;
mod copies;
mod kept;
mod keyring;
mod keyring_locked;
mod one_path;
mod profiles;
mod resume;
mod room;
mod windows;
