//! An archive over 4 GiB (zip64: sizes and offsets past 32 bits), made sparse on disk: a
//! 4.5 GiB entry of zeros is written as a hole, so the test takes seconds and no disk.

use std::io::{Seek, SeekFrom, Write};

use kluis_restore::{restore, Backup, RestoreOptions};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// A file whose all-zero writes become holes (the zip writer streams the entry through it).
struct Sparse(std::fs::File);

impl Write for Sparse {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Compared as slices (memcmp), which is fast in a test build too.
        static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
        if buf.chunks(ZEROS.len()).all(|c| c == &ZEROS[..c.len()]) {
            self.0.seek(SeekFrom::Current(buf.len() as i64))?;
            return Ok(buf.len());
        }
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Seek for Sparse {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(to)
    }
}

const BIG: u64 = 4 * 1024 * 1024 * 1024 + 512 * 1024 * 1024;

/// The 4.5 GiB entry is listed with its size, and the small entry after it (at an offset past
/// 4 GiB) is restored.
#[test]
fn an_archive_over_4_gib_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.zip");
    let mut zip = ZipWriter::new(Sparse(std::fs::File::create(&path).unwrap()));
    let stored = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(true);
    zip.start_file("big.bin", stored).unwrap();
    let zeros = vec![0u8; 8 * 1024 * 1024];
    for _ in 0..BIG / zeros.len() as u64 {
        zip.write_all(&zeros).unwrap();
    }
    zip.start_file("after.txt", stored).unwrap();
    zip.write_all(b"past four gibibytes").unwrap();
    let Sparse(mut file) = zip.finish().unwrap();
    let end = file.stream_position().unwrap();
    file.set_len(end).unwrap();
    drop(file);
    assert!(std::fs::metadata(&path).unwrap().len() > BIG);

    let mut backup = Backup::open(&path, None).unwrap();
    let entries = backup.entries();
    assert_eq!(entries[0].size, BIG);
    let out = tempfile::tempdir().unwrap();
    let only = RestoreOptions {
        only: vec!["after.txt".into()],
        ..RestoreOptions::default()
    };
    let restored = restore(&mut backup, out.path(), &only, &mut |_, _| {}).unwrap();
    assert_eq!(restored.files, 1);
    assert_eq!(
        std::fs::read(out.path().join("after.txt")).unwrap(),
        b"past four gibibytes"
    );
}
