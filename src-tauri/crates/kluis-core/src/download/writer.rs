//! The writer thread: appends downloaded chunks to a hidden part file and hashes them.
//!
//! Hashing and writing run on their own OS thread, fed through a bounded channel, so that the
//! network side (TLS decryption on the async runtime) and the disk side (SHA-256, `write`) use
//! both cores at once; the bound keeps memory constant whatever the file's size.

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};

/// Chunks in flight between the network and the writer (≈16 KiB each).
const QUEUE: usize = 128;
const WRITE_BUFFER: usize = 512 * 1024;

/// A hidden `.kluis-….part` file that removes itself unless it was persisted.
pub(crate) struct PartFile {
    path: PathBuf,
    keep: bool,
}

impl PartFile {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file was moved or linked into place: do not remove it on drop.
    pub fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

enum Command {
    Data(Bytes),
    /// Start over from byte 0 (the server sent the whole file again).
    Restart,
    /// All bytes are in: flush, fsync and hand the part file back.
    Finish,
}

/// What the writer produced: the closed, fsynced part file, its length and SHA-256.
pub(crate) struct Written {
    pub part: PartFile,
    pub bytes: u64,
    pub sha256: [u8; 32],
}

/// The async side's handle on the writer thread. Dropping it without [`Writer::finish`]
/// makes the thread close and remove the part file.
pub(crate) struct Writer {
    commands: mpsc::Sender<Command>,
    done: oneshot::Receiver<io::Result<Written>>,
}

impl Writer {
    /// Creates a new part file in `dir` and starts the thread.
    pub fn create(dir: &Path) -> io::Result<Writer> {
        let path = dir.join(format!(".kluis-{}.part", uuid::Uuid::new_v4().simple()));
        let file = File::options().write(true).create_new(true).open(&path)?;
        let part = PartFile { path, keep: false };
        let (commands, rx) = mpsc::channel(QUEUE);
        let (tx_done, done) = oneshot::channel();
        std::thread::Builder::new()
            .name("kluis-writer".into())
            .spawn(move || {
                let _ = tx_done.send(run(part, file, rx));
            })?;
        Ok(Writer { commands, done })
    }

    pub async fn write(&mut self, chunk: Bytes) -> io::Result<()> {
        self.send(Command::Data(chunk)).await
    }

    pub async fn restart(&mut self) -> io::Result<()> {
        self.send(Command::Restart).await
    }

    pub async fn finish(mut self) -> io::Result<Written> {
        self.send(Command::Finish).await?;
        self.outcome().await
    }

    /// Stops the thread and waits until it has closed and removed the part file, so that a
    /// failed download has left nothing behind by the time its error is reported.
    pub async fn abandon(self) {
        let Writer { commands, done } = self;
        drop(commands);
        let _ = done.await;
    }

    async fn send(&mut self, command: Command) -> io::Result<()> {
        if self.commands.send(command).await.is_err() {
            // The thread stopped early: that only happens on a write error, which it reports.
            return Err(self.outcome().await.err().unwrap_or_else(|| io::Error::other("the writer stopped")));
        }
        Ok(())
    }

    async fn outcome(&mut self) -> io::Result<Written> {
        (&mut self.done).await.unwrap_or_else(|_| Err(io::Error::other("the writer thread ended unexpectedly")))
    }
}

fn run(part: PartFile, file: File, mut commands: mpsc::Receiver<Command>) -> io::Result<Written> {
    // `part` is declared before `out`, so on an early return the file is closed first and
    // then removed.
    let mut out = BufWriter::with_capacity(WRITE_BUFFER, file);
    let mut hasher = Sha256::new();
    let mut bytes = 0u64;
    while let Some(command) = commands.blocking_recv() {
        match command {
            Command::Data(chunk) => {
                hasher.update(&chunk);
                out.write_all(&chunk)?;
                bytes += chunk.len() as u64;
            }
            Command::Restart => {
                out.flush()?;
                out.get_mut().set_len(0)?;
                out.get_mut().rewind()?;
                hasher = Sha256::new();
                bytes = 0;
            }
            Command::Finish => {
                let file = out.into_inner().map_err(|e| e.into_error())?;
                file.sync_all()?;
                drop(file);
                return Ok(Written { part, bytes, sha256: hasher.finalize().into() });
            }
        }
    }
    Err(io::Error::new(io::ErrorKind::Interrupted, "the download was abandoned"))
}
