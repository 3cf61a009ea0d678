//! The encrypting end of the writer: plain chunks in, an age file out, hashed as it is written.
//!
//! Encrypting (ChaCha20-Poly1305) and hashing the encrypted file (SHA-256) are each about as
//! much work as hashing the plain stream, which the writer thread already does. Done on that
//! one thread, the three made an encrypted download twice as slow as a plain one. So they run
//! as a pipeline of their own threads — the writer hashes the plain bytes, the sealer
//! encrypts them, the file writer hashes and writes what comes out — joined by bounded
//! channels, which keep memory bounded and let the stages overlap on every core there is.

use std::fs::File;
use std::io::{self, Seek, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

use super::disk::{start_writeback, Held, WRITEBACK_EVERY};
use crate::encryption::Encryption;

/// Batches of plain chunks waiting for the sealer, at most (their bytes stay within the
/// writer's budget).
const PLAIN_QUEUE: usize = 4;
/// Encrypted batches waiting to be written, at most.
const SEALED_QUEUE: usize = 4;
/// Bytes handed from one thread to the next at once: a channel message and a thread wake-up
/// per 64 KiB (age's chunk) cost as much system time as the writes themselves.
const BATCH: usize = 1024 * 1024;

enum Step<T> {
    Data(T),
    /// Start the file over (under a new file key).
    Restart,
    /// All is in: end the file and hand it back.
    Finish,
}

/// The encrypted file: its length and SHA-256, and the file itself (not yet synced).
type Out = (File, u64, [u8; 32]);

/// The sealer and file-writer threads behind a channel.
pub(super) struct Sealed {
    plain: Option<SyncSender<Step<Vec<Held>>>>,
    sealer: Option<JoinHandle<io::Result<Out>>>,
    /// Chunks gathered for the next hand-over, and their bytes.
    batch: Vec<Held>,
    batch_len: usize,
}

impl Sealed {
    /// Starts the pipeline into `file` (empty), encrypting to `encryption`.
    pub fn new(file: File, encryption: Arc<Encryption>) -> io::Result<Sealed> {
        let (sealed_tx, sealed_rx) = sync_channel(SEALED_QUEUE);
        let writer = std::thread::Builder::new()
            .name("kluis-sealed-writer".into())
            .spawn(move || write_sealed(file, sealed_rx))?;
        let (plain_tx, plain_rx) = sync_channel(PLAIN_QUEUE);
        let sealer = std::thread::Builder::new()
            .name("kluis-sealer".into())
            .spawn(move || seal(encryption, plain_rx, sealed_tx, writer))?;
        Ok(Sealed {
            plain: Some(plain_tx),
            sealer: Some(sealer),
            batch: Vec::new(),
            batch_len: 0,
        })
    }

    pub fn push(&mut self, chunk: Held) -> io::Result<()> {
        self.batch_len += chunk.bytes.len();
        self.batch.push(chunk);
        match self.batch_len >= BATCH {
            true => self.hand_over(),
            false => Ok(()),
        }
    }

    fn hand_over(&mut self) -> io::Result<()> {
        self.batch_len = 0;
        let batch = std::mem::take(&mut self.batch);
        self.send(Step::Data(batch))
    }

    pub fn truncate(&mut self) -> io::Result<()> {
        self.batch.clear();
        self.batch_len = 0;
        self.send(Step::Restart)
    }

    /// Ends the file: its length and SHA-256.
    pub fn finish(mut self) -> io::Result<Out> {
        self.hand_over()?;
        self.send(Step::Finish)?;
        self.plain = None;
        self.outcome()
    }

    fn send(&mut self, step: Step<Vec<Held>>) -> io::Result<()> {
        let sent = match &self.plain {
            Some(plain) => plain.send(step).is_ok(),
            None => false,
        };
        match sent {
            true => Ok(()),
            // The sealer stopped: only on an error, which it hands back.
            false => Err(self
                .outcome()
                .err()
                .unwrap_or_else(|| io::Error::other("the encryption stopped"))),
        }
    }

    fn outcome(&mut self) -> io::Result<Out> {
        self.plain = None;
        match self.sealer.take().map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => Err(io::Error::other("the encryption stopped unexpectedly")),
            None => Err(io::Error::other("the encryption has ended")),
        }
    }
}

impl Drop for Sealed {
    /// Abandoned: the threads end (their channels close) and are waited for, so the part file
    /// is closed before its owner removes it (Windows cannot remove an open file).
    fn drop(&mut self) {
        self.plain = None;
        if let Some(sealer) = self.sealer.take() {
            let _ = sealer.join();
        }
    }
}

/// A writer that hands what the age stream writes to the file-writer thread, a batch at a
/// time ([`ToFile::hand_over`] sends what is left).
struct ToFile {
    to: SyncSender<Step<Vec<u8>>>,
    batch: Vec<u8>,
}

impl ToFile {
    fn new(to: SyncSender<Step<Vec<u8>>>) -> ToFile {
        ToFile {
            to,
            batch: Vec::with_capacity(BATCH + 64 * 1024),
        }
    }

    fn hand_over(&mut self) -> io::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH + 64 * 1024));
        self.to
            .send(Step::Data(batch))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the file writer stopped"))
    }
}

impl Write for ToFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.batch.extend_from_slice(buf);
        if self.batch.len() >= BATCH {
            self.hand_over()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The sealer thread: encrypts the plain chunks into age's stream.
fn seal(
    encryption: Arc<Encryption>,
    plain: Receiver<Step<Vec<Held>>>,
    sealed: SyncSender<Step<Vec<u8>>>,
    writer: JoinHandle<io::Result<Out>>,
) -> io::Result<Out> {
    // A failure to hand data on means the file writer stopped: its error is the one to tell.
    let writer_error = |writer: JoinHandle<io::Result<Out>>, e: io::Error| match writer.join() {
        Ok(Err(written)) => written,
        _ => e,
    };
    let mut stream = match encryption.seal(ToFile::new(sealed.clone())) {
        Ok(stream) => Some(stream),
        Err(e) => return Err(writer_error(writer, e)),
    };
    for step in plain {
        let done = match (step, stream.as_mut()) {
            (Step::Data(batch), Some(open)) => (batch.iter())
                .try_for_each(|chunk| open.write_all(&chunk.bytes))
                .map(|()| false),
            (Step::Restart, _) => {
                // The unfinished stream is dropped (nothing more is written for it).
                stream = None;
                let restarted = (sealed.send(Step::Restart))
                    .map_err(|_| io::Error::other("the file writer stopped"));
                restarted
                    .and_then(|()| encryption.seal(ToFile::new(sealed.clone())))
                    .map(|new| {
                        stream = Some(new);
                        false
                    })
            }
            (Step::Finish, Some(_)) => (stream.take().expect("open"))
                .finish()
                .and_then(|mut rest| rest.hand_over())
                .map(|()| true),
            (_, None) => Err(io::Error::other("the encryption stopped")),
        };
        match done {
            Ok(false) => {}
            Ok(true) => {
                let ended = sealed.send(Step::Finish);
                drop(sealed);
                return match (ended, writer.join()) {
                    (Ok(()), Ok(outcome)) => outcome,
                    (_, Ok(Err(e))) => Err(e),
                    _ => Err(io::Error::other("the file writer stopped unexpectedly")),
                };
            }
            Err(e) => {
                // Every sender goes first (the open stream holds one), or the file writer
                // would wait for more and the join would never return.
                drop((stream, sealed));
                return Err(writer_error(writer, e));
            }
        }
    }
    // The download was abandoned: the file writer ends too (once every sender is gone, the
    // open stream's included), and the part file is removed by its owner.
    drop((stream, sealed));
    let _ = writer.join();
    Err(io::Error::new(
        io::ErrorKind::Interrupted,
        "the download was abandoned",
    ))
}

/// The file-writer thread: writes the encrypted stream and hashes it.
fn write_sealed(mut file: File, sealed: Receiver<Step<Vec<u8>>>) -> io::Result<Out> {
    let mut hasher = Sha256::new();
    let (mut written, mut flushed_to) = (0u64, 0u64);
    for step in sealed {
        match step {
            Step::Data(bytes) => {
                file.write_all(&bytes)?;
                hasher.update(&bytes);
                written += bytes.len() as u64;
                if written - flushed_to >= WRITEBACK_EVERY {
                    start_writeback(&file, flushed_to, written - flushed_to);
                    flushed_to = written;
                }
            }
            Step::Restart => {
                file.set_len(0)?;
                file.rewind()?;
                hasher = Sha256::new();
                (written, flushed_to) = (0, 0);
            }
            Step::Finish => return Ok((file, written, hasher.finalize().into())),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::Interrupted,
        "the download was abandoned",
    ))
}
