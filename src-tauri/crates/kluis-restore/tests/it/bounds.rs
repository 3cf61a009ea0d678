//! Issue 43: what a restore writes is bounded by the folder it writes into — names compared as
//! that folder's file system compares them, the disk's free space, how many entries and
//! folders it makes — and the folder itself is made when only it is missing.

use kluis_core::Code;
use kluis_restore::room::KEEP_FREE;
use kluis_restore::{restore, Backup, Most, NameRule, RestoreOptions, Room};

use crate::crafted::{archive, Made};

fn restored_into(
    entries: &[Made],
    options: &RestoreOptions,
) -> (
    kluis_core::Result<kluis_restore::Restored>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(dir.path(), "backup.zip", entries);
    let mut backup = Backup::open(&path, None).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    (restore(&mut backup, &out, options, &mut |_, _| {}), dir)
}

/// Two entries that NTFS takes for one name (`aσ.txt`, `aς.txt`), or macOS (the NFC and NFD
/// forms of `é`), are not both written, even with `--overwrite`: the second is left out and
/// said, the first keeps its bytes (before, both were counted restored and the second
/// replaced the first). On Linux (exactly) both are restored, as ext4 tells them apart.
#[test]
fn names_one_to_the_file_system_are_not_both_written() {
    let pairs: [(&str, &str, NameRule); 2] = [
        ("a\u{3c3}.txt", "a\u{3c2}.txt", NameRule::Ntfs),
        ("caf\u{e9}.txt", "cafe\u{301}.txt", NameRule::Apple),
    ];
    for (first, second, rule) in pairs {
        let entries = [Made::File(first, b"first"), Made::File(second, b"second")];
        let options = RestoreOptions {
            overwrite: true,
            names: rule,
            ..RestoreOptions::default()
        };
        let (restored, dir) = restored_into(&entries, &options);
        let restored = restored.unwrap();
        assert_eq!((restored.files, restored.entries), (1, 2), "{rule:?}");
        assert!(
            restored.not_restored[0].1.contains("same name"),
            "{restored:?}"
        );
        assert!(!restored.whole());
        let kept = std::fs::read(dir.path().join("out").join(first)).unwrap();
        assert_eq!(kept, b"first", "{rule:?}: the first keeps its bytes");
        let exact = RestoreOptions {
            overwrite: true,
            names: NameRule::Exact,
            ..RestoreOptions::default()
        };
        let (restored, _) = restored_into(&entries, &exact);
        assert_eq!(restored.unwrap().files, 2, "exactly: two names");
    }
}

/// An archive whose files do not fit the free space of the disk (less what Kluis keeps free)
/// is refused before anything is written; one that fits but meets a disk that fills while it
/// writes (another program's files, whatever the archive declared) stops there, no file
/// half-written, the files written before it whole.
#[test]
fn a_restore_fits_the_disk_or_stops() {
    let big = vec![0u8; 1024 * 1024];
    let entries = [Made::File("a.bin", &big), Made::File("b.bin", b"small")];
    let tight = RestoreOptions {
        room: Room::told_by(|_| Ok(KEEP_FREE + 512 * 1024)),
        ..RestoreOptions::default()
    };
    let (refused, dir) = restored_into(&entries, &tight);
    let refused = refused.unwrap_err();
    assert!(
        refused.to_string().contains("nothing was restored"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("out")).unwrap().count(),
        0
    );

    let looks = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let filling = RestoreOptions {
        room: Room::told_by({
            let looks = looks.clone();
            move |_| match looks.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                0 => Ok(KEEP_FREE + (1 << 30)),
                _ => Ok(KEEP_FREE / 2),
            }
        }),
        ..RestoreOptions::default()
    };
    let chunk = vec![7u8; 40 << 20];
    let entries = [
        Made::File("first.bin", &chunk),
        Made::File("second.bin", &chunk),
        Made::File("third.bin", &chunk),
    ];
    let (stopped, dir) = restored_into(&entries, &filling);
    let stopped = stopped.unwrap_err();
    assert!(stopped.to_string().contains("No room left"), "{stopped}");
    let out = dir.path().join("out");
    let mut left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["first.bin"],
        "the second stopped half-way left no file"
    );
    assert_eq!(
        std::fs::metadata(out.join("first.bin")).unwrap().len(),
        40 << 20
    );
}

/// More entries, folders or depth than a restore makes are refused before anything is
/// written (as damaged: a backup holds nothing like it).
#[test]
fn entries_folders_and_depth_are_bounded() {
    let most = Most {
        entries: 3,
        folders: 2,
        depth: 4,
    };
    let options = RestoreOptions {
        most,
        ..RestoreOptions::default()
    };
    let cases: [(&str, Vec<Made>); 3] = [
        (
            "files and folders",
            vec![
                Made::File("1", b"1"),
                Made::File("2", b"2"),
                Made::File("3", b"3"),
                Made::File("4", b"4"),
            ],
        ),
        (
            "folders",
            vec![
                Made::File("a/1", b"1"),
                Made::File("b/2", b"2"),
                Made::File("c/3", b"3"),
            ],
        ),
        ("deep", vec![Made::File("a/b/c/d/e.txt", b"deep")]),
    ];
    for (what, entries) in cases {
        let (refused, dir) = restored_into(&entries, &options);
        let refused = refused.unwrap_err();
        assert_eq!(refused.code(), Code::BackupsDamaged, "{what}: {refused}");
        assert_eq!(
            std::fs::read_dir(dir.path().join("out")).unwrap().count(),
            0,
            "{what}"
        );
    }
    let (fits, _) = restored_into(
        &[Made::File("a/b/d.txt", b"ok"), Made::File("a/e.txt", b"ok")],
        &options,
    );
    assert_eq!(fits.unwrap().files, 2, "within the bounds");
}

/// The folder to restore into is made (owner-only) when only it is missing; a folder whose
/// parent is missing too is refused (a mistyped path), as is a file.
#[test]
fn the_folder_is_made_when_only_it_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = archive(dir.path(), "backup.zip", &[Made::File("a.txt", b"a")]);
    let mut backup = Backup::open(&path, None).unwrap();
    let options = RestoreOptions::default();
    let made = dir.path().join("new");
    let restored = restore(&mut backup, &made, &options, &mut |_, _| {}).unwrap();
    assert_eq!(restored.files, 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "owner-only");
    }
    let mistyped = dir.path().join("nope").join("new");
    let refused = restore(&mut backup, &mistyped, &options, &mut |_, _| {}).unwrap_err();
    assert!(refused.to_string().contains("is not there"), "{refused}");
    assert!(!dir.path().join("nope").exists());
    let refused = restore(&mut backup, &path, &options, &mut |_, _| {}).unwrap_err();
    assert!(refused.to_string().contains("is a file"), "{refused}");
}
