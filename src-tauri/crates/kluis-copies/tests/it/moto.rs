//! A moto S3 server (PyPI's `moto[server]`) for one test: started on a free loopback port
//! with a certificate from a throw-away CA, stopped when dropped; and a TCP relay in front of
//! it that counts the bytes sent to the server and can die after a budget of them — a server
//! that goes away mid-upload.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use kluis_copies::s3::{Bucket, S3Place};
use kluis_core::Secret;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

pub const SECRET: &str = "kluis-test-secret-key";

pub struct Moto {
    _child: Child,
    pub port: u16,
    pub ca_file: PathBuf,
    /// The key requests are signed with (checked only by a server started with a key).
    pub access_key_id: String,
    pub secret: String,
    _dir: tempfile::TempDir,
}

/// Python, with moto's boto3, making a user allowed everything and an access key for it:
/// prints the key's id and secret.
const MAKE_KEY: &str = r#"
import json, os, boto3
iam = boto3.client("iam", endpoint_url=os.environ["ENDPOINT"], region_name="us-east-1",
                   aws_access_key_id="setup", aws_secret_access_key="setup")
iam.create_user(UserName="kluis")
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
iam.put_user_policy(UserName="kluis", PolicyName="all", PolicyDocument=json.dumps(policy))
key = iam.create_access_key(UserName="kluis")["AccessKey"]
print(key["AccessKeyId"], key["SecretAccessKey"])
"#;

impl Moto {
    /// Starts the server named by `KLUIS_MOTO_SERVER` and waits until it says it listens.
    /// It takes any key.
    pub async fn start() -> Moto {
        Moto::start_checking(false).await
    }

    /// The same, but after the three requests that make its user and key (with its boto3),
    /// it checks every request's signature against that key — as a real server does.
    pub async fn start_with_key() -> Moto {
        Moto::start_checking(true).await
    }

    async fn start_checking(signed: bool) -> Moto {
        let program = std::env::var("KLUIS_MOTO_SERVER")
            .expect("KLUIS_MOTO_SERVER names moto_server: run these tests with tests/s3/run.sh");
        let dir = tempfile::tempdir().unwrap();
        let ca = kluis_https::LocalCa::generate("Kluis test S3 CA").unwrap();
        let (chain, key) = ca.server_pem(&["127.0.0.1"]).unwrap();
        let (cert_file, key_file, ca_file) = (
            dir.path().join("cert.pem"),
            dir.path().join("key.pem"),
            dir.path().join("ca.pem"),
        );
        std::fs::write(&cert_file, chain).unwrap();
        std::fs::write(&key_file, key).unwrap();
        std::fs::write(&ca_file, ca.ca_pem()).unwrap();
        let (child, port, mut lines) =
            crate::listening::on_a_free_port("moto_server", "Running on", |port| {
                let mut command = Command::new(&program);
                if signed {
                    command.env("INITIAL_NO_AUTH_ACTION_COUNT", "3");
                }
                command
                    .args(["-H", "127.0.0.1", "-p", &port.to_string(), "-c"])
                    .arg(&cert_file)
                    .arg("-k")
                    .arg(&key_file)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                command
            })
            .await;
        // Its log goes on; drained so that the pipe never fills and stops the server.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (access_key_id, secret) = match signed {
            true => {
                let python = PathBuf::from(&program).with_file_name("python");
                let made = Command::new(python)
                    .args(["-c", MAKE_KEY])
                    .env("ENDPOINT", format!("https://127.0.0.1:{port}"))
                    .env("AWS_CA_BUNDLE", &ca_file)
                    .output()
                    .await
                    .expect("moto's python runs");
                assert!(
                    made.status.success(),
                    "{}",
                    String::from_utf8_lossy(&made.stderr)
                );
                let out = String::from_utf8(made.stdout).unwrap();
                let (id, secret) = out.trim().split_once(' ').expect("a key id and secret");
                (id.to_string(), secret.to_string())
            }
            false => ("AKIAKLUISTEST".to_string(), SECRET.to_string()),
        };
        Moto {
            _child: child,
            port,
            ca_file,
            access_key_id,
            secret,
            _dir: dir,
        }
    }

    /// A place in `bucket` on this server (reached at `port`: the server's own, or a relay's).
    pub fn place(&self, bucket: &str, port: u16) -> S3Place {
        S3Place {
            endpoint: format!("https://127.0.0.1:{port}"),
            region: "us-east-1".into(),
            bucket: bucket.into(),
            prefix: "reception-pc".into(),
            path_style: true,
            access_key_id: self.access_key_id.clone(),
            lock: None,
            ca_cert: Some(self.ca_file.to_string_lossy().into_owned()),
        }
    }

    /// The SDK client on `bucket`, as Kluis makes it.
    pub fn bucket(&self, bucket: &str) -> Bucket {
        let secret = Secret::new(self.secret.clone());
        Bucket::new("test", &self.place(bucket, self.port), Some(&secret)).unwrap()
    }

    /// The object at `key` in `bucket`, read whole (none there: `None`).
    pub async fn object(&self, bucket: &str, key: &str) -> Option<Vec<u8>> {
        let client = self.bucket(bucket).client;
        let got = client
            .get_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .ok()?;
        Some(got.body.collect().await.unwrap().to_vec())
    }

    /// Makes `bucket`, with Object Lock when `locked` (which turns versions on).
    pub async fn make_bucket(&self, bucket: &str, locked: bool) {
        let client = self.bucket(bucket).client;
        (client.create_bucket())
            .bucket(bucket)
            .object_lock_enabled_for_bucket(locked)
            .send()
            .await
            .unwrap();
    }
}

/// The key of the copy of the backup saved at `saved` under `prefix`: the klant's folder (the
/// backup's own folder here) and the backup's name.
pub fn key(prefix: &str, saved: &std::path::Path) -> String {
    let name = |p: &std::path::Path| p.file_name().unwrap().to_string_lossy().into_owned();
    format!("{prefix}/{}/{}", name(saved.parent().unwrap()), name(saved))
}

/// A TCP relay to the server that counts what the client sends, and — with a budget — dies
/// once that many bytes have gone through: the connection is cut and every later one refused.
pub struct Relay {
    pub port: u16,
    pub sent: Arc<AtomicU64>,
    dead: Arc<AtomicBool>,
    /// Told when the budget is spent (the CLI's kill -9 test waits for it).
    #[allow(dead_code)]
    pub spent: Arc<tokio::sync::Notify>,
}

/// What a relay does once its budget is spent.
#[derive(Clone, Copy, PartialEq)]
enum Spent {
    /// Cuts every connection and refuses new ones (a server gone).
    Die,
    /// Holds the connection that spent it, forwarding nothing more (a hung line, as long as
    /// the client lives); later connections pass.
    Stall,
}

impl Relay {
    pub async fn start(server_port: u16, budget: Option<u64>) -> Relay {
        Relay::with(server_port, budget, Spent::Die).await
    }

    /// A relay that hangs the connection that spends `budget` (see [`Spent::Stall`]).
    #[allow(dead_code)]
    pub async fn stalling(server_port: u16, budget: u64) -> Relay {
        Relay::with(server_port, Some(budget), Spent::Stall).await
    }

    async fn with(server_port: u16, budget: Option<u64>, spent: Spent) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (sent, dead) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let told = Arc::new(tokio::sync::Notify::new());
        let (counted, gone, tell) = (sent.clone(), dead.clone(), told.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if spent == Spent::Die && gone.load(Ordering::SeqCst) {
                    continue; // dropped: refused
                }
                let (counted, gone, tell) = (counted.clone(), gone.clone(), tell.clone());
                tokio::spawn(relay(
                    client,
                    server_port,
                    (budget, spent),
                    counted,
                    gone,
                    tell,
                ));
            }
        });
        Relay {
            port,
            sent,
            dead,
            spent: told,
        }
    }

    pub fn died(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
    }
}

async fn relay(
    client: TcpStream,
    server_port: u16,
    (budget, spent): (Option<u64>, Spent),
    sent: Arc<AtomicU64>,
    dead: Arc<AtomicBool>,
    told: Arc<tokio::sync::Notify>,
) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", server_port)).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let upstream = async {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = match client_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let total = sent.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
            let over = budget.is_some_and(|b| total > b);
            match spent {
                Spent::Die if over || dead.load(Ordering::SeqCst) => {
                    dead.store(true, Ordering::SeqCst);
                    told.notify_one();
                    return;
                }
                Spent::Stall if over && !dead.swap(true, Ordering::SeqCst) => {
                    told.notify_one();
                    std::future::pending::<()>().await;
                }
                _ => {}
            }
            if server_write.write_all(&buffer[..n]).await.is_err() {
                return;
            }
        }
    };
    let downstream = async {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
    };
    // Whichever side ends first ends the connection (a dead relay cuts it mid-request).
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
    }
}
