//! The backup file's bytes: a zip archive of one stored entry whose data is a deterministic
//! pattern, of any length, served in zero-copy slices ([`file_slice`]).
//!
//! Byte `i` of the pattern is `PATTERN[i % PERIOD]`. The period is prime, so a client that
//! resumed at a wrong offset ends with different bytes (and a different SHA-256). In the
//! archive, byte `i` of the file is the pattern's byte `i` wherever the entry's data is (all
//! but the first [`LOCAL`] and the last [`TRAILER`] bytes), so the file restores like a real
//! backup (`kluis restore-test`), and a client's view of "the file's bytes at offset i" is the
//! pattern's there. A file too small to hold the archive's headers, or too large for a zip
//! without zip64 (4 GiB), is the bare pattern.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use bytes::Bytes;
use sha2::{Digest, Sha256};

const PERIOD: usize = 1_048_573;
/// Largest slice [`slice`] hands out.
pub const MAX_CHUNK: usize = 64 * 1024;

fn pattern() -> &'static Bytes {
    static PATTERN: OnceLock<Bytes> = OnceLock::new();
    PATTERN.get_or_init(|| {
        // PERIOD + MAX_CHUNK bytes so that any chunk is one contiguous slice.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let bytes: Vec<u8> = (0..PERIOD + MAX_CHUNK)
            .map(|i| {
                if i >= PERIOD {
                    return 0; // replaced below
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let mut bytes = bytes;
        let (head, tail) = bytes.split_at_mut(PERIOD);
        tail.copy_from_slice(&head[..MAX_CHUNK]);
        Bytes::from(bytes)
    })
}

/// The `len` (≤ [`MAX_CHUNK`]) bytes of the file that start at `offset`.
pub fn slice(offset: u64, len: usize) -> Bytes {
    assert!(len <= MAX_CHUNK);
    let start = (offset % PERIOD as u64) as usize;
    pattern().slice(start..start + len)
}

/// The entry's name in the archive.
const ENTRY: &[u8] = b"owner-data.bin";
/// The local header before the data.
pub const LOCAL: usize = 30 + ENTRY.len();
/// After the data: its descriptor, the central directory's one header, its end record.
pub const TRAILER: usize = 16 + (46 + ENTRY.len()) + 22;

/// Whether a file of `size` bytes is served as a zip archive.
pub fn is_zip(size: u64) -> bool {
    size >= (LOCAL + TRAILER) as u64 && size <= u32::MAX as u64
}

/// The `len` (≤ [`MAX_CHUNK`]) bytes at `offset` of the served file of `size` bytes.
pub fn file_slice(size: u64, offset: u64, len: usize) -> Bytes {
    assert!(len <= MAX_CHUNK);
    let data_end = size.saturating_sub(TRAILER as u64);
    let in_data = offset >= LOCAL as u64 && offset + len as u64 <= data_end;
    if !is_zip(size) || in_data {
        return slice(offset, len);
    }
    let (head, tail) = (local_header(), trailer(size));
    let mut out = Vec::with_capacity(len);
    let mut at = offset;
    let end = offset + len as u64;
    while at < end {
        let piece = if at < LOCAL as u64 {
            let stop = end.min(LOCAL as u64);
            head[at as usize..stop as usize].to_vec()
        } else if at < data_end {
            let stop = end.min(data_end);
            slice(at, (stop - at) as usize).to_vec()
        } else {
            let from = (at - data_end) as usize;
            tail[from..from + (end - at) as usize].to_vec()
        };
        at += piece.len() as u64;
        out.extend_from_slice(&piece);
    }
    Bytes::from(out)
}

/// The local header: stored, sizes and CRC-32 in the data descriptor after the data (bit 3),
/// so that it is the same for every size.
fn local_header() -> Vec<u8> {
    let mut h = Vec::with_capacity(LOCAL);
    h.extend_from_slice(b"PK\x03\x04");
    h.extend_from_slice(&20u16.to_le_bytes()); // version needed
    h.extend_from_slice(&0x0008u16.to_le_bytes()); // a data descriptor follows
    h.extend_from_slice(&0u16.to_le_bytes()); // stored
    h.extend_from_slice(&DOS_TIME.to_le_bytes());
    h.extend_from_slice(&DOS_DATE.to_le_bytes());
    h.extend_from_slice(&[0; 12]); // CRC-32 and sizes: in the descriptor
    h.extend_from_slice(&(ENTRY.len() as u16).to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes()); // no extra field
    h.extend_from_slice(ENTRY);
    h
}

/// 2026-01-01 09:00:00 in DOS form.
const DOS_TIME: u16 = 9 << 11;
const DOS_DATE: u16 = ((2026 - 1980) << 9) | (1 << 5) | 1;

/// The data descriptor, central directory and its end record of the file of `size` bytes.
fn trailer(size: u64) -> Vec<u8> {
    let data = (size - (LOCAL + TRAILER) as u64) as u32;
    let crc = data_crc32(size);
    let mut t = Vec::with_capacity(TRAILER);
    t.extend_from_slice(b"PK\x07\x08");
    t.extend_from_slice(&crc.to_le_bytes());
    t.extend_from_slice(&data.to_le_bytes());
    t.extend_from_slice(&data.to_le_bytes());
    let central_at = (size - (46 + ENTRY.len() + 22) as u64) as u32;
    t.extend_from_slice(b"PK\x01\x02");
    t.extend_from_slice(&((3u16 << 8) | 20).to_le_bytes()); // made by: Unix, 2.0
    t.extend_from_slice(&20u16.to_le_bytes());
    t.extend_from_slice(&0x0008u16.to_le_bytes());
    t.extend_from_slice(&0u16.to_le_bytes());
    t.extend_from_slice(&DOS_TIME.to_le_bytes());
    t.extend_from_slice(&DOS_DATE.to_le_bytes());
    t.extend_from_slice(&crc.to_le_bytes());
    t.extend_from_slice(&data.to_le_bytes());
    t.extend_from_slice(&data.to_le_bytes());
    t.extend_from_slice(&(ENTRY.len() as u16).to_le_bytes());
    t.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attributes
    t.extend_from_slice(&(0o100644u32 << 16).to_le_bytes()); // a regular file, rw-r--r--
    t.extend_from_slice(&0u32.to_le_bytes()); // its local header's offset
    t.extend_from_slice(ENTRY);
    t.extend_from_slice(b"PK\x05\x06");
    t.extend_from_slice(&[0; 4]); // this disk, the directory's disk
    t.extend_from_slice(&1u16.to_le_bytes());
    t.extend_from_slice(&1u16.to_le_bytes());
    t.extend_from_slice(&((46 + ENTRY.len()) as u32).to_le_bytes());
    t.extend_from_slice(&central_at.to_le_bytes());
    t.extend_from_slice(&0u16.to_le_bytes()); // no comment
    t
}

/// The CRC-32 of the entry's data in the file of `size` bytes (computed once per size).
fn data_crc32(size: u64) -> u32 {
    static CACHE: OnceLock<Mutex<HashMap<u64, u32>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(crc) = cache.lock().unwrap().get(&size) {
        return *crc;
    }
    let mut hasher = crc32fast::Hasher::new();
    let (mut offset, end) = (LOCAL as u64, size - TRAILER as u64);
    while offset < end {
        let len = (end - offset).min(MAX_CHUNK as u64) as usize;
        hasher.update(&slice(offset, len));
        offset += len as u64;
    }
    let crc = hasher.finalize();
    cache.lock().unwrap().insert(size, crc);
    crc
}

/// SHA-256 of the served file of `size` bytes (computed once per size, then remembered).
pub fn sha256(size: u64) -> [u8; 32] {
    static CACHE: OnceLock<Mutex<HashMap<u64, [u8; 32]>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(digest) = cache.lock().unwrap().get(&size) {
        return *digest;
    }
    let mut hasher = Sha256::new();
    let mut offset = 0;
    while offset < size {
        let len = (size - offset).min(MAX_CHUNK as u64) as usize;
        hasher.update(file_slice(size, offset, len));
        offset += len as u64;
    }
    let digest: [u8; 32] = hasher.finalize().into();
    cache.lock().unwrap().insert(size, digest);
    digest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file of any size from the smallest archive up is a zip archive whose one entry is
    /// the pattern between its headers, CRC-32 and all (read by the zip crate, as a restore
    /// reads it); slices across the headers agree with slices of the whole.
    #[test]
    fn the_file_is_a_zip_archive_of_the_pattern() {
        use std::io::Read;
        for size in [(LOCAL + TRAILER) as u64, 1000, 200_000] {
            let whole: Vec<u8> = (0..size)
                .step_by(MAX_CHUNK)
                .flat_map(|at| {
                    file_slice(size, at, (size - at).min(MAX_CHUNK as u64) as usize).to_vec()
                })
                .collect();
            let bytes: Vec<u8> = (0..size).map(|at| file_slice(size, at, 1)[0]).collect();
            assert!(whole == bytes, "slices agree at size {size}");
            let mut archive = zip::ZipArchive::new(std::io::Cursor::new(whole.clone())).unwrap();
            let mut entry = archive.by_index(0).unwrap();
            assert_eq!(entry.name().unwrap(), "owner-data.bin");
            let mut data = Vec::new();
            entry.read_to_end(&mut data).unwrap(); // checks the CRC-32
            assert_eq!(data.len() as u64, size - (LOCAL + TRAILER) as u64);
            assert!(
                data == whole[LOCAL..LOCAL + data.len()],
                "the data is the pattern in place"
            );
            let digest: [u8; 32] = Sha256::digest(&whole).into();
            assert_eq!(sha256(size), digest);
        }
        assert!(
            !is_zip(10) && file_slice(10, 0, 10) == slice(0, 10),
            "too small: the pattern"
        );
    }

    /// Slices agree with each other wherever they overlap, across the period boundary too.
    #[test]
    fn slices_are_consistent() {
        let a = slice(PERIOD as u64 - 10, 20);
        let b = slice(PERIOD as u64 - 5, 10);
        assert_eq!(&a[5..15], &b[..]);
        assert_eq!(slice(0, 100), slice(PERIOD as u64, 100));
        assert_ne!(
            slice(0, 100),
            slice(1, 100),
            "the pattern must not be constant"
        );
    }
}
