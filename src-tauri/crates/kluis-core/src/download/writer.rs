//! The writer thread: appends downloaded chunks to a hidden part file and hashes them.
//!
//! Hashing and writing run on their own OS thread, fed through a bounded channel, so that the
//! network side (TLS decryption on the async runtime) and the disk side (SHA-256, `write`) use
//! both cores at once; the bound keeps memory constant whatever the file's size.
//!
//! Chunks are gathered into batches and written with one `writev` each (no copy into a
//! buffer), and on Linux the kernel is asked to start writing each finished 8 MiB to disk
//! right away (`sync_file_range`), so the final `fsync` — which makes the file durable before
//! it gets its name — finds little left to do.

use std::fs::File;
use std::io::{self, IoSlice, Seek, Write};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};

/// Chunks in flight between the network and the writer. Each may pin a larger receive
/// buffer of the HTTP stack, so this stays small: it bounds the process's memory.
const QUEUE: usize = 32;
/// Bytes gathered before one `writev`.
const BATCH: usize = 1024 * 1024;
/// Bytes between two requests to start write-back.
const WRITEBACK_EVERY: u64 = 8 * 1024 * 1024;

/// A hidden `.kluis-….part` file that removes itself unless it was persisted.
pub(crate) struct PartFile {
    path: PathBuf,
    keep: bool,
}

impl PartFile {
    /// A new, empty, owner-only hidden part file in `dir` (the finished backup keeps its mode).
    pub fn create_in(dir: &Path) -> io::Result<(File, PartFile)> {
        let path = dir.join(format!(".kluis-{}.part", uuid::Uuid::new_v4().simple()));
        let file = kluis_https::private::options()
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok((file, PartFile { path, keep: false }))
    }

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
    /// The part file's path until it is finished or abandoned: if the job is dropped (a
    /// cancel, a program that is stopping), the file is unlinked right in `drop` rather than
    /// whenever the thread gets to it, so it is gone before the process can exit.
    unfinished: Option<PathBuf>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Some(path) = self.unfinished.take() {
            // Fails harmlessly where an open file cannot be removed (Windows): the thread
            // removes it once it has closed it.
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Writer {
    /// Creates a new part file in `dir` and starts the thread.
    pub fn create(dir: &Path) -> io::Result<Writer> {
        let (file, part) = PartFile::create_in(dir)?;
        Self::spawn(part, file, false)
    }

    /// Continues the part file an earlier process left at `path`; returns its length. The
    /// thread first reads what is there into the hash.
    ///
    /// The journal names the file, but what is at that name now is not trusted: it is opened
    /// without following a link (a link planted there would otherwise have its target
    /// truncated by a restart), and must be a regular file of this user with no other name.
    pub fn reopen(path: &Path) -> io::Result<(Writer, u64)> {
        let mut options = kluis_https::private::options();
        options.read(true).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW);
        }
        let file = options.open(path)?;
        let meta = file.metadata()?;
        let not_ours = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_string());
        if !meta.is_file() {
            return Err(not_ours("the part file is not a regular file"));
        }
        if !kluis_https::private::is_own(&meta) {
            return Err(not_ours("the part file is not this user's own"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if meta.nlink() != 1 {
                return Err(not_ours("the part file is not this user's own"));
            }
        }
        kluis_https::private::restrict(&file)?;
        let len = meta.len();
        let part = PartFile {
            path: path.to_path_buf(),
            keep: false,
        };
        Ok((Self::spawn(part, file, true)?, len))
    }

    fn spawn(part: PartFile, file: File, existing: bool) -> io::Result<Writer> {
        let path = part.path.clone();
        let (commands, rx) = mpsc::channel(QUEUE);
        let (tx_done, done) = oneshot::channel();
        std::thread::Builder::new()
            .name("kluis-writer".into())
            .spawn(move || {
                let _ = tx_done.send(run(part, file, existing, rx));
            })?;
        Ok(Writer {
            commands,
            done,
            unfinished: Some(path),
        })
    }

    pub fn path(&self) -> Option<&Path> {
        self.unfinished.as_deref()
    }

    pub async fn write(&mut self, chunk: Bytes) -> io::Result<()> {
        self.send(Command::Data(chunk)).await
    }

    pub async fn restart(&mut self) -> io::Result<()> {
        self.send(Command::Restart).await
    }

    pub async fn finish(mut self) -> io::Result<Written> {
        self.send(Command::Finish).await?;
        let written = self.outcome().await;
        self.unfinished = None; // the thread has closed the file: `Written::part` owns it now
        written
    }

    /// Stops the thread and waits until it has closed and removed the part file, so that a
    /// failed download has left nothing behind by the time its error is reported.
    pub async fn abandon(mut self) {
        let (closed, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.commands, closed));
        let _ = self.outcome().await;
        self.unfinished = None;
    }

    async fn send(&mut self, command: Command) -> io::Result<()> {
        if self.commands.send(command).await.is_err() {
            // The thread stopped early: that only happens on a write error, which it reports.
            return Err(self
                .outcome()
                .await
                .err()
                .unwrap_or_else(|| io::Error::other("the writer stopped")));
        }
        Ok(())
    }

    async fn outcome(&mut self) -> io::Result<Written> {
        (&mut self.done)
            .await
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread ended unexpectedly")))
    }
}

fn run(
    part: PartFile,
    mut file: File,
    existing: bool,
    mut commands: mpsc::Receiver<Command>,
) -> io::Result<Written> {
    // `part` is declared before `out`, so on an early return the file is closed first and
    // then removed.
    let mut hasher = Sha256::new();
    let mut len = 0;
    if existing {
        len = io::copy(&mut file, &mut hasher)?;
    }
    let mut out = BatchWriter::new(file, len);
    while let Some(command) = commands.blocking_recv() {
        match command {
            Command::Data(chunk) => {
                hasher.update(&chunk);
                out.push(chunk)?;
            }
            Command::Restart => {
                out.truncate()?;
                hasher = Sha256::new();
            }
            Command::Finish => {
                let (file, bytes) = out.finish()?;
                file.sync_all()?;
                drop(file);
                return Ok(Written {
                    part,
                    bytes,
                    sha256: hasher.finalize().into(),
                });
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::Interrupted,
        "the download was abandoned",
    ))
}

/// Gathers chunks and writes them with `writev`, asking for early write-back on Linux.
struct BatchWriter {
    file: File,
    pending: Vec<Bytes>,
    pending_len: usize,
    /// Bytes written to the file so far.
    written: u64,
    /// Offset up to which write-back was requested.
    flushed_to: u64,
}

impl BatchWriter {
    /// Appends to `file`, which holds `len` bytes already (and is positioned at its end).
    fn new(file: File, len: u64) -> Self {
        Self {
            file,
            pending: Vec::new(),
            pending_len: 0,
            written: len,
            flushed_to: len,
        }
    }

    fn push(&mut self, chunk: Bytes) -> io::Result<()> {
        self.pending_len += chunk.len();
        self.pending.push(chunk);
        if self.pending_len >= BATCH {
            self.write_pending()?;
        }
        Ok(())
    }

    fn write_pending(&mut self) -> io::Result<()> {
        let mut slices: Vec<IoSlice<'_>> = self.pending.iter().map(|b| IoSlice::new(b)).collect();
        let mut slices = &mut slices[..];
        while !slices.is_empty() {
            let n = self.file.write_vectored(slices)?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            IoSlice::advance_slices(&mut slices, n);
        }
        self.written += self.pending_len as u64;
        self.pending.clear();
        self.pending_len = 0;
        if self.written - self.flushed_to >= WRITEBACK_EVERY {
            start_writeback(&self.file, self.flushed_to, self.written - self.flushed_to);
            self.flushed_to = self.written;
        }
        Ok(())
    }

    fn truncate(&mut self) -> io::Result<()> {
        self.pending.clear();
        self.pending_len = 0;
        self.file.set_len(0)?;
        self.file.rewind()?;
        self.written = 0;
        self.flushed_to = 0;
        Ok(())
    }

    fn finish(mut self) -> io::Result<(File, u64)> {
        self.write_pending()?;
        Ok((self.file, self.written))
    }
}

/// Asks the kernel to begin writing `len` bytes at `offset` to disk without waiting for it.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: plain syscall on a file descriptor we own; the result is only a hint.
    unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset as i64,
            len as i64,
            libc::SYNC_FILE_RANGE_WRITE,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _len: u64) {}
