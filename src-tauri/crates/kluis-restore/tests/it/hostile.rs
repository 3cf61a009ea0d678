//! Hostile and damaged archives: each zip-slip form, a link, a bomb (declared and actual), an
//! entry with a password, an archive cut short — listed or refused with a clear reason,
//! nothing written outside the folder, no panic.

use kluis_core::Code;
use kluis_restore::archive::EntryKind;
use kluis_restore::{restore, Backup, RestoreOptions};

use crate::crafted::{archive, central_headers, local_headers, put_u32, Made};

/// Files under `dir`, as paths relative to it, sorted.
fn files_under(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            match entry.file_type().unwrap().is_dir() {
                true => stack.push(path),
                false => found.push(
                    path.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                ),
            }
        }
    }
    found.sort();
    found
}

/// `../`, a root, a drive, backslashes climbing out, a link: none lands outside the folder,
/// each is listed as not restored with its reason; the honest entry is restored.
#[test]
fn no_entry_lands_outside_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(
        dir.path(),
        "slip.zip",
        &[
            Made::File("../evil.txt", b"1"),
            Made::File("/abs.txt", b"2"),
            Made::File("C:\\drive.txt", b"3"),
            Made::File("a\\..\\..\\back.txt", b"4"),
            Made::Link("link", "/etc/passwd"),
            Made::File("ok/fine.txt", b"fine"),
        ],
    );
    let mut backup = Backup::open(&path, None).unwrap();
    let listed = backup.entries();
    assert_eq!(listed[4].kind, EntryKind::Link);
    assert!(
        listed.iter().take(5).all(|e| e.refused.is_some()),
        "{listed:?}"
    );
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let restored = restore(
        &mut backup,
        &out,
        &RestoreOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(restored.files, 1);
    let reasons: Vec<&str> = restored
        .not_restored
        .iter()
        .map(|(_, why)| why.as_str())
        .collect();
    assert_eq!(reasons.len(), 5, "{reasons:?}");
    assert!(
        reasons[0].contains("climbs out") && reasons[1].contains("root"),
        "{reasons:?}"
    );
    assert!(reasons[4].contains("a link"), "{reasons:?}");
    assert_eq!(
        files_under(dir.path()),
        ["out/ok/fine.txt", "slip.zip"],
        "nothing else written anywhere"
    );
}

/// A bomb by declaration (an entry saying it inflates to 4 GiB in a 200-byte archive) is
/// refused when opened: nothing is listed or inflated.
#[test]
fn a_bomb_is_refused_before_anything_is_inflated() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(dir.path(), "bomb.zip", &[Made::File("zeros", b"0")]);
    let mut bytes = std::fs::read(&path).unwrap();
    for at in central_headers(&bytes) {
        put_u32(&mut bytes, at + 24, 0xFFFF_FFF0);
    }
    std::fs::write(&path, &bytes).unwrap();
    let refused = Backup::open(&path, None).err().expect("refused");
    assert_eq!(refused.code(), Code::BackupsDamaged, "{refused}");
    assert!(refused.to_string().contains("suspicious"), "{refused}");
}

/// A bomb by overlap (a second entry pointing at the first one's bytes, as a zip bomb shares
/// one compressed stream among many entries) is refused when opened, from the central
/// directory alone.
#[test]
fn entries_sharing_bytes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(
        dir.path(),
        "shared.zip",
        &[
            Made::File("a", &[b'a'; 5000]),
            Made::File("b", &[b'b'; 5000]),
        ],
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let second = central_headers(&bytes)[1];
    put_u32(&mut bytes, second + 42, 0); // "b" starts where "a" does
    std::fs::write(&path, &bytes).unwrap();
    let refused = Backup::open(&path, None).err().expect("refused");
    assert_eq!(refused.code(), Code::BackupsDamaged, "{refused}");
    assert!(
        refused.to_string().contains("share the same bytes"),
        "{refused}"
    );
}

/// An entry that inflates past the size it declares, and one whose bytes were changed (its
/// CRC-32 no longer matches), are not restored — no file under their names, no part left —
/// and a restore that does not go on stops with the reason.
#[test]
fn an_entry_that_lies_or_was_changed_leaves_nothing_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(
        dir.path(),
        "lies.zip",
        &[
            Made::File("long.txt", &[b'a'; 1000]),
            Made::File("changed.txt", b"the original bytes"),
        ],
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let centrals = central_headers(&bytes);
    // long.txt says it is 10 bytes (in both headers).
    put_u32(&mut bytes, centrals[0] + 24, 10);
    let first_local = local_headers(&bytes)[0];
    put_u32(&mut bytes, first_local + 22, 10);
    // changed.txt's CRC-32 is made another.
    let crc_at = centrals[1] + 16;
    bytes[crc_at] ^= 0xFF;
    let local = local_headers(&bytes)[1];
    bytes[local + 14] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();

    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let mut backup = Backup::open(&path, None).unwrap();
    let going_on = RestoreOptions {
        keep_going: true,
        ..RestoreOptions::default()
    };
    let restored = restore(&mut backup, &out, &going_on, &mut |_, _| {}).unwrap();
    assert_eq!(restored.files, 0, "{restored:?}");
    assert_eq!(restored.not_restored.len(), 2, "{restored:?}");
    assert!(
        files_under(&out).is_empty(),
        "nothing under their names, no part left: {:?}",
        files_under(&out)
    );
    let stopped = restore(
        &mut backup,
        &out,
        &RestoreOptions::default(),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert_eq!(stopped.code(), Code::BackupsDamaged, "{stopped}");
    assert!(files_under(&out).is_empty());
}

/// An entry with a password of its own (the encryption flag set) is listed as such and not
/// restored, with a clear reason — not a crash.
#[test]
fn an_entry_with_a_password_is_said_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(
        dir.path(),
        "locked.zip",
        &[
            Made::File("secret.txt", b"data"),
            Made::File("open.txt", b"x"),
        ],
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let (local, central) = (local_headers(&bytes)[0], central_headers(&bytes)[0]);
    bytes[local + 6] |= 1;
    bytes[central + 8] |= 1;
    std::fs::write(&path, &bytes).unwrap();
    let mut backup = Backup::open(&path, None).unwrap();
    let listed = backup.entries();
    assert!(listed[0].encrypted && listed[0].refused.as_deref().unwrap().contains("password"));
    let out = tempfile::tempdir().unwrap();
    let restored = restore(
        &mut backup,
        out.path(),
        &RestoreOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(restored.files, 1);
    assert_eq!(files_under(out.path()), ["open.txt"]);
}

/// An archive cut short (the end of a download lost) is refused as damaged, naming what to do.
#[test]
fn an_archive_cut_short_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(
        dir.path(),
        "short.zip",
        &[Made::File("a.txt", &[b'a'; 4000])],
    );
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let refused = Backup::open(&path, None).err().expect("refused");
    assert_eq!(refused.code(), Code::BackupsDamaged, "{refused}");
    assert!(refused.to_string().contains("cut short"), "{refused}");
    let nothing = Backup::open(&dir.path().join("none.zip"), None)
        .err()
        .expect("no file");
    assert_eq!(nothing.code(), Code::Io, "{nothing}");
}
