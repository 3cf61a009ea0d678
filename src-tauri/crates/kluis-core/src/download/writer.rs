//! The writer thread: appends downloaded chunks to a hidden part file and hashes them.
//!
//! Hashing and writing run on their own OS thread, fed through a channel, so that the network
//! side (TLS decryption on the async runtime) and the disk side (SHA-256, `write`) use both
//! cores at once. What is in flight between them is bounded in bytes ([`IN_FLIGHT`]), which
//! keeps memory constant whatever the file's size.
//!
//! Chunks are gathered into batches and written with one `writev` each (no copy into a
//! buffer), and on Linux the kernel is asked to start writing each finished 8 MiB to disk
//! right away (`sync_file_range`), so the final `fsync` — which makes the file durable before
//! it gets its name — finds little left to do.
//!
//! With encryption ([`crate::encryption`]) the plain bytes are hashed here and then handed to
//! [`super::sealed`], which encrypts them into the part file and hashes what it writes: the
//! plain stream is checked as always, and the encrypted file gets its own length and SHA-256.

use std::fs::File;
use std::io::{self, IoSlice, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot, Semaphore};

use super::disk::{start_writeback, Held, WRITEBACK_EVERY};
use super::sealed::Sealed;
use crate::encryption::Encryption;

/// Chunks in flight between the network and the writer, at most.
const QUEUE: usize = 32;
/// Bytes in flight between the network and the writer (queued or gathered for a `writev`), at
/// most, in KiB. A chunk is a slice of the HTTP stack's receive buffer and keeps it alive until
/// written, so this bounds the memory a download holds. It was 32 chunks, whatever their size:
/// up to ~14 MiB per download, and the app's RSS grew by 40 MiB during a Backup all.
const IN_FLIGHT: u32 = 3 * 1024;
/// Bytes gathered before one `writev`.
const BATCH: usize = 1024 * 1024;

const PART_PREFIX: &str = ".kluis-";
const PART_SUFFIX: &str = ".part";

/// Whether `name` is one of Kluis's part files (`.kluis-<32 lowercase hex>.part`, made with
/// `create_new`): the only files a clean-up after a crash may take for its own.
pub fn is_part_file_name(name: &str) -> bool {
    (name.strip_prefix(PART_PREFIX))
        .and_then(|rest| rest.strip_suffix(PART_SUFFIX))
        .is_some_and(|id| {
            id.len() == 32
                && id
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

/// A hidden `.kluis-….part` file that removes itself unless it was persisted.
pub(crate) struct PartFile {
    path: PathBuf,
    keep: bool,
}

impl PartFile {
    /// A new, empty, owner-only hidden part file in `dir` (the finished backup keeps its mode).
    pub fn create_in(dir: &Path) -> io::Result<(File, PartFile)> {
        let path = dir.join(format!(
            "{PART_PREFIX}{}{PART_SUFFIX}",
            uuid::Uuid::new_v4().simple()
        ));
        let file = kluis_private::files::options()
            .write(true)
            .create_new(true)
            .open(&path)?;
        // (On Unix the mode was given at creation; on Windows the ACL is set now, while the
        // file is empty.)
        kluis_private::files::restrict(&file)?;
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
    Data(Held),
    /// Start over from byte 0 (the server sent the whole file again).
    Restart,
    /// All bytes are in: flush, fsync and hand the part file back.
    Finish,
}

/// What the writer produced: the closed, fsynced part file, the plain stream's length and
/// SHA-256, and — when it was encrypted — the encrypted file's.
pub(crate) struct Written {
    pub part: PartFile,
    pub bytes: u64,
    pub sha256: [u8; 32],
    pub sealed: Option<Digested>,
}

/// A file's length and SHA-256.
pub(crate) type Digested = (u64, [u8; 32]);

/// The async side's handle on the writer thread. Dropping it without [`Writer::finish`]
/// makes the thread close and remove the part file.
pub(crate) struct Writer {
    commands: mpsc::Sender<Command>,
    /// KiB that may still be sent before the thread has written some.
    budget: Arc<Semaphore>,
    done: oneshot::Receiver<io::Result<Written>>,
    /// The part file's path until it is finished or abandoned: if the job is dropped (a
    /// cancel, a program that is stopping), the file is unlinked right in `drop` rather than
    /// whenever the thread gets to it, so it is gone before the process can exit.
    unfinished: Option<PathBuf>,
    /// Whether what is written is encrypted into the file (journalled with the part).
    seals: bool,
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
    /// Creates a new part file in `dir` and starts the thread; with `sealing`, what arrives is
    /// encrypted into it.
    pub fn create(dir: &Path, sealing: Option<Arc<Encryption>>) -> io::Result<Writer> {
        let (file, part) = PartFile::create_in(dir)?;
        Self::spawn(part, file, false, sealing)
    }

    /// Continues the part file an earlier process left at `path`; returns its length. The
    /// thread first reads what is there into the hash.
    ///
    /// The journal names the file, but what is at that name now is not trusted: it is opened
    /// without following a link (a link planted there would otherwise have its target
    /// truncated by a restart), and must be a regular file of this user with no other name.
    pub fn reopen(path: &Path) -> io::Result<(Writer, u64)> {
        let mut options = kluis_private::files::options();
        options.read(true).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW);
        }
        #[cfg(windows)]
        {
            // FILE_FLAG_OPEN_REPARSE_POINT: a link at the name is opened itself (and refused
            // below as not a regular file), never followed.
            use std::os::windows::fs::OpenOptionsExt;
            options.custom_flags(0x0020_0000);
        }
        let file = options.open(path)?;
        let meta = file.metadata()?;
        let not_ours = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_string());
        if !meta.is_file() {
            return Err(not_ours("the part file is not a regular file"));
        }
        if !kluis_private::files::is_own(&meta) {
            return Err(not_ours("the part file is not this user's own"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if meta.nlink() != 1 {
                return Err(not_ours("the part file is not this user's own"));
            }
        }
        kluis_private::files::restrict(&file)?;
        let len = meta.len();
        let part = PartFile {
            path: path.to_path_buf(),
            keep: false,
        };
        Ok((Self::spawn(part, file, true, None)?, len))
    }

    fn spawn(
        part: PartFile,
        file: File,
        existing: bool,
        sealing: Option<Arc<Encryption>>,
    ) -> io::Result<Writer> {
        let path = part.path.clone();
        let seals = sealing.is_some();
        let (commands, rx) = mpsc::channel(QUEUE);
        let (tx_done, done) = oneshot::channel();
        std::thread::Builder::new()
            .name("kluis-writer".into())
            .spawn(move || {
                let _ = tx_done.send(run(part, file, existing, sealing, rx));
            })?;
        Ok(Writer {
            commands,
            budget: Arc::new(Semaphore::new(IN_FLIGHT as usize)),
            done,
            unfinished: Some(path),
            seals,
        })
    }

    pub fn path(&self) -> Option<&Path> {
        self.unfinished.as_deref()
    }

    /// Whether the part file holds encrypted bytes.
    pub fn seals(&self) -> bool {
        self.seals
    }

    /// Sends `chunk` to the thread, once the bytes in flight leave room for it.
    pub async fn write(&mut self, chunk: Bytes) -> io::Result<()> {
        let kib = chunk.len().div_ceil(1024).min(IN_FLIGHT as usize) as u32;
        let budget = (self.budget.clone().acquire_many_owned(kib).await)
            .map_err(|_| io::Error::other("the writer stopped"))?;
        let held = Held {
            bytes: chunk,
            _budget: budget,
        };
        self.send(Command::Data(held)).await
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
    sealing: Option<Arc<Encryption>>,
    mut commands: mpsc::Receiver<Command>,
) -> io::Result<Written> {
    // `part` is declared before `out`, so on an early return the file is closed first and
    // then removed.
    let mut hasher = Sha256::new();
    let mut len = 0;
    if existing {
        len = io::copy(&mut file, &mut hasher)?;
    }
    let mut out = match sealing {
        None => Out::Plain(BatchWriter::new(file, len)),
        Some(encryption) => Out::Sealed(Sealed::new(file, encryption)?),
    };
    while let Some(command) = commands.blocking_recv() {
        match command {
            Command::Data(chunk) => {
                hasher.update(&chunk.bytes);
                len += chunk.bytes.len() as u64;
                out.push(chunk)?;
            }
            Command::Restart => {
                out.truncate()?;
                hasher = Sha256::new();
                len = 0;
            }
            Command::Finish => {
                let (file, sealed) = out.finish()?;
                file.sync_all()?;
                drop(file);
                return Ok(Written {
                    part,
                    bytes: len,
                    sha256: hasher.finalize().into(),
                    sealed,
                });
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::Interrupted,
        "the download was abandoned",
    ))
}

/// Where the bytes go: as they are, or encrypted.
enum Out {
    Plain(BatchWriter),
    Sealed(Sealed),
}

impl Out {
    fn push(&mut self, chunk: Held) -> io::Result<()> {
        match self {
            Out::Plain(out) => out.push(chunk),
            Out::Sealed(out) => out.push(chunk),
        }
    }

    fn truncate(&mut self) -> io::Result<()> {
        match self {
            Out::Plain(out) => out.truncate(),
            Out::Sealed(out) => out.truncate(),
        }
    }

    /// The file, and for an encrypted one its length and SHA-256.
    fn finish(self) -> io::Result<(File, Option<Digested>)> {
        match self {
            Out::Plain(out) => Ok((out.finish()?.0, None)),
            Out::Sealed(out) => {
                let (file, len, sha256) = out.finish()?;
                Ok((file, Some((len, sha256))))
            }
        }
    }
}

/// Gathers chunks and writes them with `writev`, asking for early write-back on Linux.
struct BatchWriter {
    file: File,
    pending: Vec<Held>,
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

    fn push(&mut self, chunk: Held) -> io::Result<()> {
        self.pending_len += chunk.bytes.len();
        self.pending.push(chunk);
        if self.pending_len >= BATCH {
            self.write_pending()?;
        }
        Ok(())
    }

    fn write_pending(&mut self) -> io::Result<()> {
        let mut slices: Vec<IoSlice<'_>> = self
            .pending
            .iter()
            .map(|h| IoSlice::new(&h.bytes))
            .collect();
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

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::*;

    /// What a download holds in memory is bounded in bytes, not chunks: a chunk waits while the
    /// bytes in flight fill the budget, and the thread gives the budget back as it writes (four
    /// budgets' worth of chunks go through).
    #[tokio::test]
    async fn bytes_in_flight_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = Writer::create(dir.path(), None).unwrap();
        let chunk = Bytes::from(vec![7u8; 256 * 1024]);
        let taken = writer
            .budget
            .clone()
            .acquire_many_owned(IN_FLIGHT - 128)
            .await
            .unwrap();
        {
            let write = writer.write(chunk.clone());
            tokio::pin!(write);
            assert!(
                (&mut write).now_or_never().is_none(),
                "a 256 KiB chunk waits while only 128 KiB are free"
            );
        }
        drop(taken); // as if the thread had written those bytes
        let through = async {
            for _ in 0..(4 * IN_FLIGHT / 256) {
                writer.write(chunk.clone()).await.unwrap();
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), through)
            .await
            .expect("the budget comes back as the thread writes");
        let written = writer.finish().await.unwrap();
        assert_eq!(
            written.bytes,
            4 * IN_FLIGHT as u64 * 1024,
            "every byte written"
        );
    }

    fn encryption() -> Option<Arc<Encryption>> {
        let recipient = age::x25519::Identity::generate().to_public().to_string();
        Some(Arc::new(Encryption::recipient(&recipient).unwrap()))
    }

    /// An encrypted download given up half-way (a cancel, a failed download) ends its threads
    /// at once and leaves no part file: the sealer's open stream held a way into the file
    /// writer, which then waited for more for ever.
    #[tokio::test]
    async fn an_abandoned_encrypted_download_ends_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = Writer::create(dir.path(), encryption()).unwrap();
        for _ in 0..8 {
            writer.write(Bytes::from(vec![1u8; 300_000])).await.unwrap();
        }
        let abandoned = writer.abandon();
        tokio::time::timeout(std::time::Duration::from_secs(10), abandoned)
            .await
            .expect("the threads end");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "no part file"
        );
    }

    /// A restart (the file host sent the whole file again) starts the encrypted file over:
    /// what is finished is one whole age file of the second pass's bytes.
    #[tokio::test]
    async fn an_encrypted_restart_starts_the_file_over() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = Writer::create(dir.path(), encryption()).unwrap();
        writer
            .write(Bytes::from(vec![1u8; 2_000_000]))
            .await
            .unwrap();
        writer.restart().await.unwrap();
        writer.write(Bytes::from(vec![2u8; 500_000])).await.unwrap();
        let written = writer.finish().await.unwrap();
        assert_eq!(
            written.bytes, 500_000,
            "the plain stream of the second pass"
        );
        let (len, sha) = written.sealed.expect("encrypted");
        let file = std::fs::read(written.part.path()).unwrap();
        assert_eq!(len, file.len() as u64);
        assert_eq!(sha, <[u8; 32]>::from(Sha256::digest(&file)));
        assert!(
            file.starts_with(b"age-encryption.org/v1\n"),
            "one age file from its start"
        );
        assert!(len < 600_000, "the first pass is gone: {len}");
    }
}
