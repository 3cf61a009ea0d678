//! A window opened while `kluis-tray` runs the plans shows that process's backups as if it ran
//! them: their stage and progress, their end, and *Cancel*.
//!
//! `kluis-tray` serves its planned backups' events ([`PlannedEvent`]) at its data folder's
//! [`endpoint`] (a Unix socket beside the history, a named pipe on Windows: its user's alone);
//! each connection first gets where every running backup stands (its stage, its last progress
//! and note), then every event as it comes, one JSON line each. The window ([`follow`]) hands
//! them to its own planned-event sink, and sends back, one JSON line each, a [`Request`]:
//! cancel a backup, or all, or (`kluis-tray --quit`, [`ask`]) quit. Nothing secret travels: job
//! and profile ids, stages, byte counts, file names.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{broadcast, mpsc, watch};

use crate::events::{AppJobEvent, PlannedEvent, PlannedSink};
pub use crate::owner::TrayRequest as Request;

pub mod endpoint;
pub use endpoint::{address, Address, Listener};

/// Where a running backup stands, for a window that connects while it runs.
#[derive(Default)]
struct Standing {
    profile_id: String,
    stage: Option<AppJobEvent>,
    note: Option<AppJobEvent>,
    progress: Option<AppJobEvent>,
}

/// `kluis-tray`'s side (see the module's text).
pub struct Mirror {
    running: Mutex<HashMap<String, Standing>>,
    events: broadcast::Sender<PlannedEvent>,
    /// How many windows (or `kluis-tray --quit`s) are connected now.
    connected: Arc<watch::Sender<usize>>,
}

impl Mirror {
    pub fn new() -> Arc<Mirror> {
        Arc::new(Mirror {
            running: Mutex::default(),
            // A window that falls this far behind misses progress, never an end: see `serve`.
            events: broadcast::channel(1024).0,
            connected: Arc::new(watch::channel(0).0),
        })
    }

    /// Whether a window follows this process now — or a `kluis-tray --quit` is being
    /// answered: every connection counts (kluis-tray installs no update then: the setup would
    /// stop at the window's program).
    pub fn followed(&self) -> bool {
        *self.connected.borrow() > 0
    }

    /// The sink the plans' events go to (`Plans::watch_planned`).
    pub fn sink(self: &Arc<Self>) -> PlannedSink {
        let mirror = self.clone();
        Arc::new(move |event| mirror.record(event))
    }

    fn record(&self, event: PlannedEvent) {
        {
            let mut running = self.running.lock().unwrap();
            match &event.event {
                // Its end: nothing of it is to be told to a window opened later.
                AppJobEvent::Saved { .. }
                | AppJobEvent::Failed { .. }
                | AppJobEvent::Staged { .. } => {
                    running.remove(&event.job_id);
                }
                kind => {
                    let standing = running.entry(event.job_id.clone()).or_default();
                    standing.profile_id = event.profile_id.clone();
                    let slot = match kind {
                        AppJobEvent::Stage { .. } => &mut standing.stage,
                        AppJobEvent::Progress { .. } => &mut standing.progress,
                        _ => &mut standing.note,
                    };
                    *slot = Some(event.event.clone());
                }
            }
        }
        let _ = self.events.send(event);
    }

    /// Where every running backup stands, as events.
    fn standings(&self) -> Vec<PlannedEvent> {
        let running = self.running.lock().unwrap();
        let mut events = Vec::new();
        for (job_id, standing) in running.iter() {
            let told = [&standing.stage, &standing.note, &standing.progress];
            for event in told.into_iter().flatten() {
                events.push(PlannedEvent {
                    job_id: job_id.clone(),
                    profile_id: standing.profile_id.clone(),
                    event: event.clone(),
                });
            }
        }
        events
    }

    /// Serves windows on `listener` until the process ends; `asked` does what a window asks.
    pub async fn serve(
        self: Arc<Self>,
        mut listener: Listener,
        asked: Arc<dyn Fn(Request) + Send + Sync>,
    ) -> std::io::Result<()> {
        let mut failed = 0;
        loop {
            let stream = match listener.accept().await {
                Ok(stream) => stream,
                // One window's failed connection is not the end of serving the next; a
                // listener that fails every time is (after a few, a second apart).
                Err(e) if failed < 5 => {
                    failed += 1;
                    tracing::debug!(%e, "a window's connection failed");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            failed = 0;
            let mirror = self.clone();
            let asked = asked.clone();
            let connected = Connected::counted(&self.connected);
            tokio::spawn(async move {
                let _connected = connected;
                if let Err(e) = mirror.serve_one(stream, asked).await {
                    tracing::debug!(%e, "a window's connection ended");
                }
            });
        }
    }

    /// One window's connection, until the window goes. Its requests are read on their own:
    /// one that came is taken even when writing to the window fails (a `--quit` that did not
    /// wait for what kluis-tray had to say first).
    async fn serve_one(
        &self,
        stream: impl AsyncRead + AsyncWrite,
        asked: Arc<dyn Fn(Request) + Send + Sync>,
    ) -> std::io::Result<()> {
        let (reader, mut writer) = tokio::io::split(stream);
        let reading = async move {
            let mut requests = BufReader::new(reader).lines();
            while let Some(text) = requests.next_line().await? {
                match serde_json::from_str::<Request>(&text) {
                    Ok(request) => asked(request),
                    Err(_) => tracing::debug!("a window's request was not understood"),
                }
            }
            std::io::Result::Ok(())
        };
        // Subscribed before the standings are read: an event in between is sent (twice at
        // worst, which the window takes as it takes any repeated progress).
        let mut events = self.events.subscribe();
        let writing = async move {
            for event in self.standings() {
                writer.write_all(&line(&event)).await?;
            }
            loop {
                match events.recv().await {
                    Ok(event) => writer.write_all(&line(&event)).await?,
                    // Progress this window was too slow to take is skipped; where each backup
                    // stands is sent again so no end is lost.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        for event in self.standings() {
                            writer.write_all(&line(&event)).await?;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return std::io::Result::Ok(()),
                }
            }
        };
        tokio::pin!(reading);
        tokio::select! {
            read = &mut reading => read,
            written = writing => {
                if let Err(e) = written {
                    tracing::debug!(%e, "a window is no longer written to");
                }
                reading.await
            }
        }
    }
}

/// One connection counted in [`Mirror::followed`] until it is dropped, however it ends.
struct Connected(Arc<watch::Sender<usize>>);

impl Connected {
    fn counted(count: &Arc<watch::Sender<usize>>) -> Connected {
        count.send_modify(|n| *n += 1);
        Connected(count.clone())
    }
}

impl Drop for Connected {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

fn line<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// The window's side: follows `kluis-tray`'s backups at `address`, handing each event to
/// `sink` and sending what `requests` asks, until `kluis-tray` ends (or cannot be reached:
/// `Err`).
pub async fn follow(
    address: &Address,
    sink: PlannedSink,
    requests: &mut mpsc::UnboundedReceiver<Request>,
) -> std::io::Result<()> {
    let stream = endpoint::connect(address).await?;
    let (reader, mut writer) = tokio::io::split(stream);
    let mut events = BufReader::new(reader).lines();
    loop {
        tokio::select! {
            event = events.next_line() => match event? {
                Some(text) => match serde_json::from_str::<PlannedEvent>(&text) {
                    Ok(event) => sink(event),
                    Err(_) => tracing::debug!("an event of kluis-tray was not understood"),
                },
                None => return Ok(()),
            },
            Some(request) = requests.recv() => writer.write_all(&line(&request)).await?,
        }
    }
}

/// Sends `request` to the `kluis-tray` serving at `address` (`kluis-tray --quit`), and returns
/// once that `kluis-tray` has gone (the connection ends as its process does; what it says
/// meanwhile is not read). The caller bounds the wait.
pub async fn ask(address: &Address, request: Request) -> std::io::Result<()> {
    let stream = endpoint::connect(address).await?;
    let (mut reader, mut writer) = tokio::io::split(stream);
    writer.write_all(&line(&request)).await?;
    writer.flush().await?;
    tokio::io::copy(&mut reader, &mut tokio::io::sink()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kluis_core::Stage;
    use uuid::Uuid;

    fn event(job: &str, event: AppJobEvent) -> PlannedEvent {
        PlannedEvent {
            job_id: job.into(),
            profile_id: format!("klant-{job}"),
            event,
        }
    }

    fn progress(bytes: u64) -> AppJobEvent {
        AppJobEvent::Progress {
            bytes,
            total: Some(100),
            bytes_per_sec: 10,
        }
    }

    /// A request is taken even when the window that sent it is gone before kluis-tray has
    /// told it where each backup stands (the old `--quit` closed at once: writing to it
    /// failed, and its Quit was never read).
    #[tokio::test]
    async fn a_request_is_taken_from_a_window_that_has_gone() {
        let dir = tempfile::tempdir().unwrap();
        let address = address(&crate::AppPaths::under(dir.path()));
        let mirror = Mirror::new();
        let sink = mirror.sink();
        // Enough standings that writing them outlasts any buffer between the two.
        for job in 0..2000 {
            sink(event(
                &format!("job-{job:04}-{}", "x".repeat(200)),
                progress(1),
            ));
        }
        let (asked_tx, mut asked) = mpsc::unbounded_channel();
        let listener = Listener::bind(&address).unwrap();
        let serving = tokio::spawn(mirror.serve(
            listener,
            Arc::new(move |request| drop(asked_tx.send(request))),
        ));
        let mut window = endpoint::connect(&address).await.unwrap();
        window.write_all(&line(&Request::Quit)).await.unwrap();
        drop(window);
        let taken = tokio::time::timeout(std::time::Duration::from_secs(60), asked.recv()).await;
        assert_eq!(
            taken.ok().flatten(),
            Some(Request::Quit),
            "the Quit is taken"
        );
        serving.abort();
    }

    /// A window that connects mid-backup hears where each running backup stands (not the ones
    /// that ended), then every event as it comes; its Cancel reaches kluis-tray's side; it is
    /// known to follow while connected, and no longer once it has gone; the
    /// socket is its owner's alone (on Unix; under Wine, where tests/windows/run.sh runs this
    /// over a named pipe, the pipe's security is endpoint.rs's and kluis-private's tests').
    #[tokio::test]
    async fn a_window_hears_where_each_backup_stands_then_each_event_and_can_cancel() {
        let dir = tempfile::tempdir().unwrap();
        let address = address(&crate::AppPaths::under(dir.path()));
        let mirror = Mirror::new();
        let sink = mirror.sink();
        let downloading = AppJobEvent::Stage {
            stage: Stage::Downloading,
        };
        sink(event("a", downloading.clone()));
        sink(event("a", progress(40)));
        sink(event("b", progress(10)));
        sink(event(
            "b",
            AppJobEvent::Failed {
                code: kluis_core::Code::Network,
                message: "gone".into(),
            },
        ));

        let (asked_tx, mut asked) = mpsc::unbounded_channel();
        let listener = Listener::bind(&address).unwrap();
        let serving = tokio::spawn(mirror.clone().serve(
            listener,
            Arc::new(move |request| drop(asked_tx.send(request))),
        ));
        let (heard_tx, mut heard) = mpsc::unbounded_channel();
        let (requests_tx, mut requests) = mpsc::unbounded_channel();
        let following = tokio::spawn(async move {
            let sink: PlannedSink = Arc::new(move |e| drop(heard_tx.send(e)));
            follow(&address, sink, &mut requests).await
        });
        assert_eq!(heard.recv().await.unwrap(), event("a", downloading));
        assert_eq!(heard.recv().await.unwrap(), event("a", progress(40)));
        assert!(mirror.followed(), "a window follows");

        // Live from here (sent once the window has connected: its first lines arrived).
        sink(event("a", progress(90)));
        assert_eq!(heard.recv().await.unwrap(), event("a", progress(90)));
        requests_tx.send(Request::Cancel(Uuid::nil())).unwrap();
        assert_eq!(asked.recv().await.unwrap(), Request::Cancel(Uuid::nil()));
        requests_tx.send(Request::CancelAll).unwrap();
        assert_eq!(asked.recv().await.unwrap(), Request::CancelAll);

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let socket = std::fs::metadata(dir.path().join("tray.sock")).unwrap();
            assert_eq!(
                socket.permissions().mode() & 0o077,
                0,
                "only its owner may connect"
            );
        }
        following.abort();
        let mut connected = mirror.connected.subscribe();
        let gone = connected.wait_for(|n| *n == 0);
        let gone = tokio::time::timeout(std::time::Duration::from_secs(60), gone).await;
        assert!(gone.is_ok(), "the window's end is noticed");
        assert!(!mirror.followed(), "no window follows any more");
        serving.abort();
    }
}
