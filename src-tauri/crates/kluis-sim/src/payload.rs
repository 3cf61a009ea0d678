//! The backup file's bytes: a deterministic pattern of any length, served in zero-copy slices.
//!
//! Byte `i` of every file is `PATTERN[i % PERIOD]`. The period is prime, so a client that
//! resumed at a wrong offset ends with different bytes (and a different SHA-256).

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

/// SHA-256 of a file of `size` bytes (computed once per size, then remembered).
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
        hasher.update(slice(offset, len));
        offset += len as u64;
    }
    let digest: [u8; 32] = hasher.finalize().into();
    cache.lock().unwrap().insert(size, digest);
    digest
}

#[cfg(test)]
mod tests {
    use super::*;

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
