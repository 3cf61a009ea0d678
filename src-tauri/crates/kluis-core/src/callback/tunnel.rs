//! The tunnel transport: `cloudflared tunnel --url http://127.0.0.1:PORT` (a Cloudflare quick
//! tunnel) gives a local plain-HTTP listener a public https URL, with no server of one's own.
//!
//! Kluis starts cloudflared as a child process with a metrics endpoint on 127.0.0.1, waits for
//! its `/ready` and reads the public hostname from its `/quicktunnel` — never from its log
//! output, whose format is not an interface. The tunnel lives as long as the transport: it is
//! never restarted while a job waits, because its URL would change and the service's callback
//! would go nowhere. Stopping the transport stops cloudflared.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use url::Url;
use uuid::Uuid;

use super::{CallbackTransport, ListenerTransport, Registration};
use crate::error::{Error, Result};

/// How long cloudflared gets to report ready.
pub const READY_TIMEOUT: Duration = Duration::from_secs(45);

pub struct TunnelTransport {
    listener: ListenerTransport,
    child: Mutex<Child>,
}

impl TunnelTransport {
    /// Starts `cloudflared` (a name looked up in PATH, or a path) for a fresh local listener.
    pub async fn start(cloudflared: &Path) -> Result<Self> {
        Self::start_with(cloudflared, READY_TIMEOUT).await
    }

    pub async fn start_with(cloudflared: &Path, ready_timeout: Duration) -> Result<Self> {
        let listener =
            ListenerTransport::direct("https://tunnel.pending", "127.0.0.1:0".parse().unwrap())
                .await?;
        let metrics = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| {
                Error::Io(format!(
                    "No free local port for cloudflared's metrics: {e}."
                ))
            })?;
        let mut child = Command::new(cloudflared)
            .args(["tunnel", "--url", &format!("http://{}", listener.local_addr()), "--no-autoupdate", "--metrics", &metrics.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Error::Config(format!(
                    "cloudflared was not found ({}). Install cloudflared, give its path (--callback tunnel=/path/to/cloudflared), or choose another way for the service to reach this computer.",
                    cloudflared.display()
                )),
                _ => Error::Io(format!("cloudflared could not be started: {e}.")),
            })?;
        let public = match wait_until_ready(&mut child, metrics, ready_timeout)
            .await
            .and_then(|hostname| {
                Url::parse(&format!("https://{hostname}")).map_err(|_| {
                    Error::BadResponse(format!(
                        "cloudflared reported an unusable hostname ({hostname})."
                    ))
                })
            }) {
            Ok(public) => public,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(TunnelTransport {
            listener: listener.with_public_base(public),
            child: Mutex::new(child),
        })
    }

    /// The tunnel's public base URL.
    pub fn public_url(&self) -> Url {
        self.listener.public_base().clone()
    }
}

/// Polls cloudflared's metrics endpoint until `/ready` answers 200, then reads `/quicktunnel`.
async fn wait_until_ready(
    child: &mut Child,
    metrics: std::net::SocketAddr,
    timeout: Duration,
) -> Result<String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .map_err(|e| Error::Io(e.to_string()))?;
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::Network(format!(
                    "cloudflared stopped before the tunnel was ready ({status}). Check the internet connection, or run cloudflared by hand to see why."
                )));
        }
        let ready = http
            .get(format!("http://{metrics}/ready"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            let response = http
                .get(format!("http://{metrics}/quicktunnel"))
                .send()
                .await
                .map_err(|_| {
                    Error::BadResponse("cloudflared did not tell the tunnel's hostname.".into())
                })?;
            let answer: serde_json::Value =
                crate::http::read_json_as(response, "cloudflared's /quicktunnel", 64 * 1024)
                    .await
                    .map_err(|_| {
                        Error::BadResponse(
                            "cloudflared's /quicktunnel answer was not understood.".into(),
                        )
                    })?;
            return answer
                .get("hostname")
                .and_then(|h| h.as_str())
                .filter(|h| !h.is_empty())
                .map(str::to_string)
                .ok_or_else(|| {
                    Error::BadResponse("cloudflared reported no tunnel hostname.".into())
                });
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::Network(format!(
                    "cloudflared did not become ready within {} s. The network may block it; choose another way for the service to reach this computer.",
                    timeout.as_secs()
                )));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

impl TunnelTransport {
    /// How cloudflared ended, once it has. Only an exit seen counts: an error asking is no
    /// reason to refuse a job or start another tunnel.
    fn exit_seen(&self) -> Option<std::process::ExitStatus> {
        self.child.lock().unwrap().try_wait().ok().flatten()
    }
}

impl Drop for TunnelTransport {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[async_trait]
impl CallbackTransport for TunnelTransport {
    fn name(&self) -> &'static str {
        "tunnel"
    }

    fn is_alive(&self) -> bool {
        self.exit_seen().is_none()
    }

    async fn prepare(&self, job: Uuid) -> Result<Registration> {
        if let Some(status) = self.exit_seen() {
            // Its hostname reaches nothing now: the service's callback would be lost, and the
            // job would wait out its whole time limit.
            return Err(Error::Network(format!(
                "cloudflared stopped ({status}), so the tunnel no longer reaches this computer. Start the backup again: a new tunnel is started."
            )));
        }
        let mut registration = self.listener.prepare(job).await?;
        // The quick tunnel's hostname dies with this process: nothing to resume elsewhere.
        registration.reattach = None;
        Ok(registration)
    }
}
