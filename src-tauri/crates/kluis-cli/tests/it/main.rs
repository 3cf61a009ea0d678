//! kluis-cli's integration tests as one test binary: one link of tokio, rustls, reqwest
//! and SQLite for all of them instead of one per file. Each module is one file of tests;
//! a test's name starts with its module (`cargo test --test it -- MODULE::`).

mod common;
/// A throw-away database on the PostgreSQL test cluster (kluis-relay's tests'), shared.
#[path = "../../../kluis-relay/tests/it/common/fresh_database.rs"]
mod fresh_database;
/// How kluis-copies' test servers start on a free port (the S3 and SFTP ones below).
#[allow(dead_code)]
#[path = "../../../kluis-copies/tests/it/listening.rs"]
mod listening;
/// The S3 server of kluis-copies' tests, shared (its relay is not used here).
#[allow(dead_code)]
#[path = "../../../kluis-copies/tests/it/moto.rs"]
mod moto;
/// The SFTP server of kluis-copies' tests, shared.
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

mod ad_hoc;
mod attacks;
mod cli;
mod copies;
mod drill;
mod import;
mod installer;
mod kept;
mod keyring;
mod keyring_locked;
mod office;
mod one_path;
mod postgres;
mod profiles;
mod recovery;
mod restore;
mod resume;
mod room;
mod s3;
mod sftp;
mod shape;
mod update;
mod windows;
