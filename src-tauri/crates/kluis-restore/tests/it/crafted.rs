//! Archives made for the tests: written with the zip crate, then (where a hostile archive
//! needs it) patched byte by byte as no honest writer would.

use std::io::Write;
use std::path::{Path, PathBuf};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

/// What an entry of a crafted archive is.
pub enum Made<'a> {
    File(&'a str, &'a [u8]),
    Folder(&'a str),
    Link(&'a str, &'a str),
}

/// The options every crafted entry gets: deflated, dated 1 March 2025 14:22:06.
pub fn options() -> SimpleFileOptions {
    let date = DateTime::from_date_and_time(2025, 3, 1, 14, 22, 6).unwrap();
    SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .last_modified_time(date)
}

/// An archive at `dir/name` holding `entries`.
pub fn archive(dir: &Path, name: &str, entries: &[Made]) -> PathBuf {
    let path = dir.join(name);
    let mut zip = ZipWriter::new(std::fs::File::create(&path).unwrap());
    for entry in entries {
        match entry {
            Made::File(name, bytes) => {
                zip.start_file(*name, options()).unwrap();
                zip.write_all(bytes).unwrap();
            }
            Made::Folder(name) => zip.add_directory(*name, options()).unwrap(),
            Made::Link(name, to) => zip.add_symlink(*name, *to, options()).unwrap(),
        }
    }
    zip.finish().unwrap();
    path
}

/// The offsets of every central directory header (PK\1\2) in `bytes`.
pub fn central_headers(bytes: &[u8]) -> Vec<usize> {
    (0..bytes.len().saturating_sub(4))
        .filter(|&i| &bytes[i..i + 4] == b"PK\x01\x02")
        .collect()
}

/// The offsets of every local header (PK\3\4) in `bytes`.
pub fn local_headers(bytes: &[u8]) -> Vec<usize> {
    (0..bytes.len().saturating_sub(4))
        .filter(|&i| &bytes[i..i + 4] == b"PK\x03\x04")
        .collect()
}

/// `bytes` with the little-endian u32 at `at` set to `value`.
pub fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}
