//! [`Room`]: how much a restore may write into its folder — the free space of the folder's disk,
//! less what is kept free ([`KEEP_FREE`]: the backups beside a restore test's folder, and the
//! computer itself, need room too). A restore whose entries declare more than that is refused
//! before anything is written; while it writes, what it wrote is counted against the room there
//! was at its start, and the disk is looked at again every [`LOOK_AGAIN_EVERY`] bytes, so that a
//! restore stops when the disk fills — whatever the archive declared, and whatever else fills it
//! meanwhile — instead of leaving the disk full.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kluis_core::{Error, Result};

const MIB: u64 = 1024 * 1024;
/// What a restore leaves free on its disk.
pub const KEEP_FREE: u64 = kluis_core::download::room::DEFAULT_MIN_FREE_MIB * MIB;
/// The disk's free space is read again after this many bytes are written.
pub const LOOK_AGAIN_EVERY: u64 = 64 * MIB;

/// How every error of this module begins (see [`is_no_room`]).
const NO_ROOM: &str = "No room";

/// Whether `error` is this module's: the disk has no room for the restore — which says
/// nothing of the backup (a restore test that meets it did not test it).
pub fn is_no_room(error: &Error) -> bool {
    matches!(error, Error::Io(message) if message.starts_with(NO_ROOM))
}

/// Where a restore learns how much is free on its folder's disk.
type FreeSpace = dyn Fn(&Path) -> std::io::Result<u64> + Send + Sync;

/// See the module's text. Cheap to clone.
#[derive(Clone)]
pub struct Room(Arc<FreeSpace>);

impl Default for Room {
    /// The disk's own free space.
    fn default() -> Room {
        Room(Arc::new(kluis_core::download::room::available))
    }
}

impl std::fmt::Debug for Room {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Room")
    }
}

impl Room {
    /// Free space as `free` says (tests: a disk that fills while the restore writes).
    pub fn told_by(free: impl Fn(&Path) -> std::io::Result<u64> + Send + Sync + 'static) -> Room {
        Room(Arc::new(free))
    }

    /// What may be written into `folder`, for a restore whose entries declare `needed` bytes:
    /// refused when the disk has not that much beyond [`KEEP_FREE`].
    pub(crate) fn budget(&self, folder: &Path, needed: u64) -> Result<Budget> {
        let free = self.free(folder)?;
        let usable = free.saturating_sub(KEEP_FREE);
        if needed > usable {
            return Err(Error::Io(format!(
                "{NO_ROOM} on the disk of {}: the backup's files take {} MiB and {} MiB is free (Kluis keeps {} MiB of it free); nothing was restored. Make room, or restore into a folder on another disk.",
                folder.display(),
                needed.div_ceil(MIB),
                free / MIB,
                KEEP_FREE / MIB
            )));
        }
        Ok(Budget {
            room: self.clone(),
            folder: folder.to_path_buf(),
            left: usable,
            since_look: 0,
        })
    }

    fn free(&self, folder: &Path) -> Result<u64> {
        (self.0)(folder).map_err(|e| {
            Error::Io(format!(
                "The free space of the disk of {} cannot be read ({e}): nothing more is restored.",
                folder.display()
            ))
        })
    }
}

/// What a running restore may still write (see the module's text).
pub(crate) struct Budget {
    room: Room,
    folder: PathBuf,
    left: u64,
    since_look: u64,
}

impl Budget {
    /// `bytes` written: an error, to stop the restore, when they pass what there was room for
    /// or the disk has filled meanwhile.
    pub(crate) fn spend(&mut self, bytes: u64) -> Result<()> {
        let full = || {
            Error::Io(format!(
                "{NO_ROOM} left on the disk of {} (Kluis keeps {} MiB free): the restore stopped; what it wrote so far is there, no file half-written.",
                self.folder.display(),
                KEEP_FREE / MIB
            ))
        };
        self.left = self.left.checked_sub(bytes).ok_or_else(full)?;
        self.since_look += bytes;
        if self.since_look >= LOOK_AGAIN_EVERY {
            self.since_look = 0;
            if self.room.free(&self.folder)? < KEEP_FREE {
                return Err(full());
            }
        }
        Ok(())
    }
}
