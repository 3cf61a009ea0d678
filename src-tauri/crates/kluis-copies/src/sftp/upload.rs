//! Sending a backup to its part file on the server, resumable: the part file is named after
//! the backup's job (`.kluis-<job>.part`), so a copy cut off by a dead line, a crash or a
//! kill -9 finds what it sent and goes on from there. The local file is hashed as it is read
//! (also the part already sent, read here again), so a backup that changed since its save is
//! never completed; what the server holds is proven afterwards by reading it back in full.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use kluis_core::{Error, Result};
use russh_sftp::protocol::OpenFlags;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncSeekExt, AsyncWriteExt};

use super::{mib, Server};

/// Bytes read and written at a time.
const CHUNK: usize = 256 * 1024;
/// How far before the part's end a resumed upload starts again. SFTP lets a server carry out
/// the writes in flight (up to 16 of 32 KiB) in any order, so when the line died the part's
/// length may count a gap behind its last write; going back further than that window sends
/// a little twice and never trusts a gap. (The read-back proves the whole file in any case.)
const RESUME_MARGIN: u64 = 1024 * 1024;

impl Server {
    /// Sends `source` (of `expected` length and SHA-256) to `part` in `folder`, going on from
    /// what an earlier try left there; the part is fsynced and closed when this returns.
    pub(super) async fn send(
        &self,
        folder: &str,
        part: &str,
        source: &Path,
        expected: (u64, &str),
    ) -> Result<()> {
        let sftp = &self.connected.sftp;
        let held = match sftp.metadata(part).await {
            Ok(meta) if meta.file_type().is_file() && meta.len() <= expected.0 => meta.len(),
            _ => 0,
        };
        let offset = held.saturating_sub(RESUME_MARGIN) / RESUME_MARGIN * RESUME_MARGIN;
        self.room_for(folder, expected.0 - offset).await?;
        let mut flags = OpenFlags::WRITE | OpenFlags::CREATE;
        if offset == 0 {
            flags |= OpenFlags::TRUNCATE;
        }
        let mut remote = (sftp.open_with_flags(part, flags).await)
            .map_err(|e| self.said(&e, &format!("write {part}")))?;
        remote
            .seek(SeekFrom::Start(offset))
            .await
            .map_err(|e| self.lost(&e))?;
        let mut local = std::fs::File::open(source)
            .map_err(|e| Error::io(format!("read the backup {}", source.display()), e))?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; CHUNK];
        // What was sent before is hashed from here (the server's part is proven later).
        let mut read = 0u64;
        while read < offset {
            let want = CHUNK.min((offset - read) as usize);
            let n = local_read(&mut local, &mut buffer[..want], source)?;
            hasher.update(&buffer[..n]);
            read += n as u64;
        }
        local
            .seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io(format!("read the backup {}", source.display()), e))?;
        loop {
            let n = local_read(&mut local, &mut buffer, source)?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            read += n as u64;
            if let Some(pace) = &self.pace {
                pace.admit(n).await;
            }
            if let Err(e) = remote.write_all(&buffer[..n]).await {
                return Err(self.write_failed(folder, expected.0 - read, &e).await);
            }
        }
        if let Err(e) = remote.flush().await {
            return Err(self.write_failed(folder, 0, &e).await);
        }
        if read != expected.0 || hex::encode(hasher.finalize()) != expected.1 {
            let _ = remote.shutdown().await;
            let _ = sftp.remove_file(part).await;
            return Err(Error::Io(format!(
                "Copy target \"{}\": the backup {} changed since it was saved; it was not copied. Run `kluis verify`.",
                self.name,
                source.display()
            )));
        }
        // On the server's disk before it gets its name (fsync@openssh.com, where offered).
        remote
            .sync_all()
            .await
            .map_err(|e| self.said(&e, "fsync the copy"))?;
        remote.shutdown().await.map_err(|e| self.lost(&e))?;
        Ok(())
    }

    /// Refuses before sending when the server says its disk has less room than `needed`
    /// (statvfs@openssh.com; a server without it is simply tried).
    async fn room_for(&self, folder: &str, needed: u64) -> Result<()> {
        match self.free_in(folder).await {
            Some(free) if free < needed => Err(self.full(free, needed)),
            _ => Ok(()),
        }
    }

    /// The bytes free for this user in `folder`'s file system, where the server tells.
    pub(super) async fn free_in(&self, folder: &str) -> Option<u64> {
        let stat = self.connected.sftp.fs_info(folder).await.ok()??;
        Some(stat.blocks_avail.saturating_mul(stat.fragment_size))
    }

    /// A write that failed: a full disk said as such (the server's own answer is only
    /// "failure"), anything else as what it is.
    async fn write_failed(&self, folder: &str, still: u64, e: &std::io::Error) -> Error {
        match self.free_in(folder).await {
            Some(free) if free < still.max(CHUNK as u64) => self.full(free, still),
            Some(_) => Error::Io(format!(
                "Copy target \"{}\": the SFTP server stopped taking the copy ({e}). The part sent is kept there and the copy goes on from it next time.",
                self.name
            )),
            None => self.lost(e),
        }
    }

    fn full(&self, free: u64, needed: u64) -> Error {
        Error::Io(format!(
            "Copy target \"{}\": the disk of the SFTP server {} is full ({} free, the copy needs {} more). Nothing there was replaced and the backup is kept on this computer; make room on the server and the copy is made later.",
            self.name,
            self.place.host,
            mib(free),
            mib(needed)
        ))
    }
}

fn local_read(file: &mut std::fs::File, buffer: &mut [u8], source: &Path) -> Result<usize> {
    file.read(buffer)
        .map_err(|e| Error::io(format!("read the backup {}", source.display()), e))
}
