//! kluis-copies' tests: `folder::` on folders here, `s3::` against moto's S3 server over TLS
//! on loopback (started by each test; `tests/s3/run.sh` runs them, with `KLUIS_MOTO_SERVER`
//! naming the server's program), `sftp::` against Debian's OpenSSH server on loopback
//! (started by each test, as root: `tests/sftp/run.sh`); `objects` is the round trip of the
//! small objects beside the copies, run on each kind.

mod folder;
mod listening;
mod moto;
mod objects;
mod s3;
mod s3rver;
mod saved;
mod sftp;
mod sshd;
