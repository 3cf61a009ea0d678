//! A second S3 server for one test: npm's `s3rver`, started on a free loopback port with a
//! certificate from a throw-away CA and run under Debian's `faketime`, so that its clock is off
//! by a given offset. Unlike moto it checks a header-signed request's time against its own and
//! refuses one more than 15 minutes off (`RequestTimeTooSkewed`), as S3 does.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use kluis_copies::s3::S3Place;
use kluis_copies::{CopyTarget, Place};
use kluis_core::Secret;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub struct S3rver {
    /// `faketime`, which runs s3rver as a child of its own: both in a process group of their
    /// own, ended together with this value.
    child: Child,
    /// Requests it refused (403) so far.
    refused: Arc<AtomicU32>,
    pub port: u16,
    ca_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl S3rver {
    /// Starts the server named by `KLUIS_S3RVER`, with bucket "kluis", its clock `offset`
    /// from this computer's (faketime's form: "+1h").
    pub async fn start_off_by(offset: &str) -> S3rver {
        let program = std::env::var("KLUIS_S3RVER")
            .expect("KLUIS_S3RVER names s3rver: run these tests with tests/s3/run.sh");
        let dir = tempfile::tempdir().unwrap();
        let ca = kluis_https::LocalCa::generate("Kluis test S3 CA").unwrap();
        let (chain, key) = ca.server_pem(&["127.0.0.1"]).unwrap();
        let (cert_file, key_file, ca_file, data) = (
            dir.path().join("cert.pem"),
            dir.path().join("key.pem"),
            dir.path().join("ca.pem"),
            dir.path().join("data"),
        );
        std::fs::write(&cert_file, chain).unwrap();
        std::fs::write(&key_file, key).unwrap();
        std::fs::write(&ca_file, ca.ca_pem()).unwrap();
        let mut child = Command::new("faketime")
            .args(["-f", offset])
            .arg(&program)
            .arg("-d")
            .arg(&data)
            .args(["-a", "127.0.0.1", "-p", "0", "--configure-bucket", "kluis"])
            .arg("--key")
            .arg(&key_file)
            .arg("--cert")
            .arg(&cert_file)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("faketime and s3rver start");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let port = loop {
            let line = (lines.next_line().await.unwrap()).expect("s3rver ended before it listened");
            if let Some(at) = line.strip_prefix("S3rver listening on 127.0.0.1:") {
                break at.trim().parse().expect("a port");
            }
        };
        // Its log goes on, a line per request with its status: the refusals are counted.
        let refused = Arc::new(AtomicU32::new(0));
        let count = refused.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains(" 403 ") {
                    count.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        S3rver {
            child,
            refused,
            port,
            ca_file,
            _dir: dir,
        }
    }

    /// How many requests it refused (403) so far.
    pub fn refused(&self) -> u32 {
        self.refused.load(Ordering::SeqCst)
    }

    /// Copy target "Office S3" on bucket "kluis", with s3rver's own key.
    pub fn target(&self) -> CopyTarget {
        let place = S3Place {
            endpoint: format!("https://127.0.0.1:{}", self.port),
            region: "us-east-1".into(),
            bucket: "kluis".into(),
            prefix: "reception-pc".into(),
            path_style: true,
            access_key_id: "S3RVER".into(),
            lock: None,
            ca_cert: Some(self.ca_file.to_string_lossy().into_owned()),
        };
        let mut target = CopyTarget::new("Office S3", Place::S3(place)).unwrap();
        target.secret = Some(Secret::new("S3RVER"));
        target
    }
}

impl Drop for S3rver {
    /// Ends s3rver too, not only `faketime` (killing that one alone left s3rver running after
    /// the tests, holding its port and folder).
    fn drop(&mut self) {
        if let Some(group) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{group}")])
                .stderr(Stdio::null())
                .status();
        }
    }
}
