//! What both of a download's writers share — the plain one (`writer`) and the encrypting one
//! (`sealed`): a chunk held within the bytes a download may have in flight, and asking the
//! kernel to start writing to disk early, so the fsync at the end has little left. (A leaf.)

use std::fs::File;

use bytes::Bytes;
use tokio::sync::OwnedSemaphorePermit;

/// Bytes between two requests to start write-back.
pub(super) const WRITEBACK_EVERY: u64 = 8 * 1024 * 1024;

/// A chunk with its share of the bytes a download may have in flight (`writer`'s
/// `IN_FLIGHT`), given back when it is written.
pub(super) struct Held {
    pub bytes: Bytes,
    pub(super) _budget: OwnedSemaphorePermit,
}

/// Asks the kernel to begin writing `len` bytes at `offset` to disk without waiting for it.
#[cfg(target_os = "linux")]
pub(super) fn start_writeback(file: &File, offset: u64, len: u64) {
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
pub(super) fn start_writeback(_file: &File, _offset: u64, _len: u64) {}
