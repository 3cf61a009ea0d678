//! What `contents` lists: every entry with its path, kind, size and date; names read right in
//! UTF-8 and in the DOS code page 437 old archivers use.

use kluis_restore::archive::EntryKind;
use kluis_restore::Backup;

use crate::crafted::{archive, central_headers, local_headers, Made};

/// Files and folders are listed with their restore path, size and the archive's date.
#[test]
fn every_entry_is_listed_with_path_size_and_date() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(
        dir.path(),
        "backup.zip",
        &[
            Made::Folder("2025/"),
            Made::File("2025/grootboek.csv", &[b'x'; 5000]),
            Made::File("2025/Één en twee.txt", b"utf-8"),
        ],
    );
    let entries = Backup::open(&path, None).unwrap().entries();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].kind, EntryKind::Folder);
    assert_eq!(entries[0].path.as_deref(), Some("2025"));
    let ledger = &entries[1];
    assert_eq!(ledger.path.as_deref(), Some("2025/grootboek.csv"));
    assert_eq!((ledger.kind, ledger.size), (EntryKind::File, 5000));
    assert!(ledger.compressed < 5000, "deflated: {}", ledger.compressed);
    assert_eq!(ledger.modified.as_deref(), Some("2025-03-01 14:22:06"));
    assert_eq!(ledger.refused, None);
    assert_eq!(entries[2].path.as_deref(), Some("2025/Één en twee.txt"));
}

/// A name stored without the UTF-8 flag is read as code page 437 (0x81 is ü there), as
/// every zip tool reads it.
#[test]
fn a_cp437_name_is_read_right() {
    // Written with an ASCII name, then made DOS-style: the UTF-8 flag (bit 11) off and the
    // name's second byte 0x81.
    let dir2 = tempfile::tempdir().unwrap();
    let dos = archive(dir2.path(), "dos.zip", &[Made::File("mXller.txt", b"x")]);
    let mut bytes = std::fs::read(&dos).unwrap();
    for at in local_headers(&bytes) {
        let flags = u16::from_le_bytes([bytes[at + 6], bytes[at + 7]]) & !(1 << 11);
        bytes[at + 6..at + 8].copy_from_slice(&flags.to_le_bytes());
        bytes[at + 31] = 0x81;
    }
    for at in central_headers(&bytes) {
        let flags = u16::from_le_bytes([bytes[at + 8], bytes[at + 9]]) & !(1 << 11);
        bytes[at + 8..at + 10].copy_from_slice(&flags.to_le_bytes());
        bytes[at + 47] = 0x81;
    }
    std::fs::write(&dos, &bytes).unwrap();
    let entries = Backup::open(&dos, None).unwrap().entries();
    assert_eq!(entries[0].name, "müller.txt");
    assert_eq!(entries[0].path.as_deref(), Some("müller.txt"));
}
