//! kluis-desktop's integration tests as one test binary: one link of tokio, rustls, reqwest
//! and SQLite for all of them instead of one per file. Each module is one file of tests;
//! a test's name starts with its module (`cargo test --test it -- MODULE::`).

#[path = "../common/mod.rs"]
mod common;

/// How kluis-copies' test servers start on a free port (the S3 and SFTP ones below).
#[allow(dead_code)]
#[path = "../../../kluis-copies/tests/it/listening.rs"]
mod listening;
/// The S3 server of kluis-copies' tests, shared (its relay is not used here).
#[allow(dead_code)]
#[path = "../../../kluis-copies/tests/it/moto.rs"]
mod moto;
/// The SFTP server of kluis-copies' tests, shared (OpenSSH as root: Linux only).
#[cfg(unix)]
#[allow(dead_code)]
#[path = "../../../kluis-copies/tests/it/sshd.rs"]
mod sshd;
/// The office hub of kluis-office's tests, shared.
#[allow(dead_code)]
#[path = "../../../kluis-office/tests/it/test_hub.rs"]
mod test_hub;
/// The update server of kluis-update's tests, shared.
#[allow(dead_code)]
#[path = "../../../kluis-update/tests/it/server.rs"]
mod update_server;

mod app;
mod copies;
mod demo;
mod imports;
mod keeping;
mod keyring;
mod many;
mod office;
mod plans;
mod recover;
mod restores;
mod retry;
mod s3;
#[cfg(unix)]
mod sftp;
mod tray_window;
mod updates;
