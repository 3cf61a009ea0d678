//! [`Prefetched`]: a reader that reads ahead on a thread of its own — for an encrypted backup,
//! the decryption of the next blocks runs on the second core while this one inflates the
//! entries (in turn, an encrypted restore took 1.5 × a plain one; see
//! tests/bench/restore-vs-unzip.sh).
//!
//! The thread owns the reader under it and sends blocks of [`BLOCK`] bytes, at most
//! [`AHEAD`] ahead, each tagged with the run it belongs to. A seek within the block in hand
//! only moves in it; any other seek starts a new run at its target, and the blocks of the old
//! one still on their way are dropped by their tag. The zip reader seeks mostly to where it
//! already is (each entry's header follows the entry before it), so the thread streams on.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

/// Bytes a block holds.
const BLOCK: usize = 1024 * 1024;
/// Blocks read ahead at most (memory: this many blocks and the one in hand).
const AHEAD: usize = 4;

/// A block of a run: its run, where it starts, its bytes (or why it could not be read).
struct Block {
    run: u64,
    at: u64,
    bytes: io::Result<Vec<u8>>,
}

/// See the module's text.
pub(crate) struct Prefetched {
    /// Where each new run starts, with its tag.
    starts: Sender<(u64, u64)>,
    blocks: Receiver<Block>,
    run: u64,
    /// The block in hand: where it starts, its bytes.
    at: u64,
    block: Vec<u8>,
    /// Where the reader is (in the block in hand, or just past it).
    pos: u64,
    len: u64,
    /// Whether the run in hand has ended (its end reached, or an error sent).
    ended: bool,
}

impl Prefetched {
    /// Reads `inner` ahead on a thread of its own, from its start.
    pub(crate) fn new<R: Read + Seek + Send + 'static>(mut inner: R) -> io::Result<Prefetched> {
        let len = inner.seek(SeekFrom::End(0))?;
        let (starts, started) = mpsc::channel::<(u64, u64)>();
        let (send, blocks) = mpsc::sync_channel::<Block>(AHEAD);
        std::thread::Builder::new()
            .name("kluis-read-ahead".into())
            .spawn(move || read_ahead(inner, started, send))?;
        let reader = Prefetched {
            starts,
            blocks,
            run: 0,
            at: 0,
            block: Vec::new(),
            pos: 0,
            len,
            ended: false,
        };
        reader.starts.send((0, 0)).map_err(|_| gone())?;
        Ok(reader)
    }

    /// The next block of the run in hand (older runs' blocks dropped); none at its end.
    fn next_block(&mut self) -> io::Result<bool> {
        if self.ended {
            return Ok(false);
        }
        loop {
            let block = self.blocks.recv().map_err(|_| gone())?;
            if block.run != self.run {
                continue;
            }
            let bytes = block.bytes?;
            if bytes.is_empty() {
                self.ended = true;
                return Ok(false);
            }
            self.at = block.at;
            self.block = bytes;
            return Ok(true);
        }
    }
}

impl Read for Prefetched {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let end = self.at + self.block.len() as u64;
            if self.pos >= self.at && self.pos < end {
                let from = (self.pos - self.at) as usize;
                let n = buf.len().min(self.block.len() - from);
                buf[..n].copy_from_slice(&self.block[from..from + n]);
                self.pos += n as u64;
                return Ok(n);
            }
            if self.pos >= self.len || !self.next_block()? {
                return Ok(0);
            }
        }
    }
}

impl Seek for Prefetched {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::Current(by) => self.pos.checked_add_signed(by),
            SeekFrom::End(by) => self.len.checked_add_signed(by),
        }
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        let in_hand = target >= self.at && target <= self.at + self.block.len() as u64;
        // Where the reader is, or in the block in hand: the run goes on.
        if target != self.pos && !in_hand {
            self.run += 1;
            self.block.clear();
            self.at = target;
            self.ended = false;
            self.starts.send((self.run, target)).map_err(|_| gone())?;
        }
        self.pos = target;
        Ok(target)
    }
}

/// The thread: for each run asked for, blocks from its start until its end, a newer run, or
/// the reader gone.
fn read_ahead<R: Read + Seek>(
    mut inner: R,
    started: Receiver<(u64, u64)>,
    send: SyncSender<Block>,
) {
    let Ok(mut run) = started.recv() else {
        return;
    };
    'runs: loop {
        let (tag, mut at) = run;
        if let Err(e) = inner.seek(SeekFrom::Start(at)) {
            let _ = send.send(Block {
                run: tag,
                at,
                bytes: Err(e),
            });
        } else {
            loop {
                // A newer run replaces this one.
                if let Ok(newer) = started.try_recv() {
                    run = newer;
                    continue 'runs;
                }
                let mut bytes = vec![0u8; BLOCK];
                let read = read_full(&mut inner, &mut bytes);
                let (n, failed) = match read {
                    Ok(n) => (n, false),
                    Err(_) => (0, true),
                };
                bytes.truncate(n);
                let block = match read {
                    Ok(_) => Block {
                        run: tag,
                        at,
                        bytes: Ok(bytes),
                    },
                    Err(e) => Block {
                        run: tag,
                        at,
                        bytes: Err(e),
                    },
                };
                at += n as u64;
                if send.send(block).is_err() {
                    return; // the reader is gone
                }
                if n == 0 || failed {
                    break;
                }
            }
        }
        match started.recv() {
            Ok(newer) => run = newer,
            Err(_) => return,
        }
    }
}

/// Fills `buf` from `inner` as far as it goes (short only at the end).
fn read_full<R: Read>(inner: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match inner.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn gone() -> io::Error {
    io::Error::other("the read-ahead thread stopped")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any mix of reads and seeks reads what the bytes under it hold there.
    #[test]
    fn reads_and_seeks_read_the_bytes_under_it() {
        let bytes: Vec<u8> = (0..3 * BLOCK + 12_345)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let mut reader = Prefetched::new(io::Cursor::new(bytes.clone())).unwrap();
        let mut all = Vec::new();
        reader.read_to_end(&mut all).unwrap();
        assert!(all == bytes, "read through");
        for (to, want) in [
            (SeekFrom::Start(10), 10),
            (SeekFrom::End(-5), bytes.len() - 5),
            (SeekFrom::Start(BLOCK as u64 + 3), BLOCK + 3),
            (SeekFrom::Current(-2), BLOCK + 1),
            (SeekFrom::Start(2 * BLOCK as u64 - 1), 2 * BLOCK - 1),
        ] {
            assert_eq!(reader.seek(to).unwrap(), want as u64);
            let mut got = [0u8; 3];
            let n = reader.read(&mut got).unwrap();
            assert!(n > 0 && got[..n] == bytes[want..want + n], "at {want}");
            reader.seek(SeekFrom::Start(want as u64)).unwrap();
        }
        assert!(reader
            .seek(SeekFrom::Current(-(3 * BLOCK as i64) - 20_000))
            .is_err());
        reader.seek(SeekFrom::Start(bytes.len() as u64)).unwrap();
        assert_eq!(reader.read(&mut [0u8; 4]).unwrap(), 0, "at the end");
    }
}
