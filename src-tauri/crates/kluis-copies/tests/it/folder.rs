//! Copies to a folder (a share, a USB disk): made once and proven, a target away tried again
//! later, another file never replaced, a changed backup never copied, a lost copy made again,
//! a relative folder refused, and "Test".

use std::path::{Path, PathBuf};

use kluis_copies::{check_copies, copy_missing, test, CopyTarget, Place};
use kluis_core::History;

use crate::saved::{bakker, saved};

/// Copy target "NAS" in `root` — tested (and so marked as the target) when it is there, as
/// adding it does.
fn nas(root: &Path) -> CopyTarget {
    if root.is_dir() {
        kluis_copies::folder::test("NAS", root).unwrap();
    }
    let path = root.to_string_lossy().into_owned();
    CopyTarget::new("NAS", Place::Folder { path }).unwrap()
}

/// A saved backup is copied into the klant's folder on the target, byte for byte, and
/// recorded with its place; asked again, nothing is copied twice.
#[test]
fn a_backup_is_copied_once_and_recorded() {
    let (local, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let history = History::in_memory().unwrap();
    saved(
        &history,
        local.path(),
        "backup 2026-11-25.zip",
        b"the owner's data",
    );
    let target = nas(root.path());
    let copied = copy_missing(
        &history,
        Some(&bakker()),
        std::slice::from_ref(&target),
        None,
    )
    .unwrap();
    assert_eq!(copied.len(), 1);
    let place = root.path().join("Bakker").join("backup 2026-11-25.zip");
    assert_eq!(
        copied[0].outcome.as_deref().unwrap(),
        place.to_str().unwrap()
    );
    assert_eq!(std::fs::read(&place).unwrap(), b"the owner's data");
    let records = history.copies_of(&copied[0].entry.id).unwrap();
    assert!(
        records[0].made && records[0].target == target.id,
        "{records:?}"
    );
    assert!(
        copy_missing(&history, None, &[target], None)
            .unwrap()
            .is_empty(),
        "nothing is copied twice"
    );
    let files = std::fs::read_dir(root.path().join("Bakker"))
        .unwrap()
        .count();
    assert_eq!(files, 1, "no part file or second copy is left");
}

/// Attack/fault: the share is not mounted (its folder is not there). Nothing is written
/// anywhere, the failure names the target, and once the folder is back the copy is made.
#[test]
fn a_missing_target_is_tried_again_later() {
    let (local, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let history = History::in_memory().unwrap();
    saved(&history, local.path(), "backup.zip", b"data");
    let unmounted = root.path().join("share");
    let target = nas(&unmounted);
    let first = copy_missing(&history, None, std::slice::from_ref(&target), None).unwrap();
    let error = first[0].outcome.as_ref().unwrap_err().to_string();
    assert!(
        error.contains("\"NAS\"") && error.contains("not there"),
        "{error}"
    );
    assert!(
        !unmounted.exists(),
        "no folder is made where the share should be"
    );
    let record = &history.copies_of(&first[0].entry.id).unwrap()[0];
    assert!(!record.made && record.error_message.is_some(), "{record:?}");

    // Mounted again: the share, marked when the target was added, is there.
    let share = root.path().join("the share itself");
    std::fs::create_dir(&share).unwrap();
    nas(&share);
    std::fs::rename(&share, &unmounted).unwrap();
    let second = copy_missing(&history, None, &[target], None).unwrap();
    assert!(second[0].outcome.is_ok(), "{:?}", second[0].outcome);
    assert!(unmounted.join("Bakker").join("backup.zip").exists());
}

/// Attack/fault: the share is not mounted and its mount point is an empty folder on this
/// computer's disk. No copy lands there (it would be recorded as a copy off this computer, on
/// the disk it protects against): refused, saying so, nothing written; once the right folder
/// is tested, it is the target; a folder that holds something is not marked unasked.
#[test]
fn an_empty_mount_point_is_not_taken_for_the_share() {
    let (local, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let history = History::in_memory().unwrap();
    saved(&history, local.path(), "backup.zip", b"data");
    let mount_point = root.path().join("nas");
    std::fs::create_dir(&mount_point).unwrap();
    let path = mount_point.to_string_lossy().into_owned();
    let target = CopyTarget::new("NAS", Place::Folder { path }).unwrap();
    let first = copy_missing(&history, None, std::slice::from_ref(&target), None).unwrap();
    let error = first[0].outcome.as_ref().unwrap_err().to_string();
    assert!(error.contains("not marked"), "{error}");
    assert_eq!(
        std::fs::read_dir(&mount_point).unwrap().count(),
        0,
        "nothing written on the mount point"
    );

    kluis_copies::folder::test("NAS", &mount_point).unwrap();
    let second = copy_missing(&history, None, std::slice::from_ref(&target), None).unwrap();
    assert!(second[0].outcome.is_ok(), "{:?}", second[0].outcome);

    // A folder that holds something but not the mark (a mount point with files of its own,
    // a target from before the mark) is not marked unasked: refused until tested.
    std::fs::remove_file(mount_point.join(kluis_copies::folder::MARKER)).unwrap();
    saved(&history, local.path(), "later.zip", b"more");
    let third = copy_missing(&history, None, std::slice::from_ref(&target), None).unwrap();
    assert!(third.iter().all(|c| c.outcome.is_err()), "{third:?}");
    assert!(!mount_point.join(kluis_copies::folder::MARKER).exists());
    kluis_copies::folder::test("NAS", &mount_point).unwrap();
    let fourth = copy_missing(&history, None, &[target], None).unwrap();
    assert!(fourth.iter().all(|c| c.outcome.is_ok()), "{fourth:?}");
}

/// A disk that is not plugged in, with three backups it lacks: one copy is tried (the
/// newest), one failure recorded and told — not one per backup; the others stay missing and
/// are all made once the disk is back.
#[test]
fn a_target_away_is_tried_once_per_run() {
    let (local, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let history = History::in_memory().unwrap();
    for name in ["one.zip", "two.zip", "three.zip"] {
        saved(&history, local.path(), name, name.as_bytes());
    }
    let unplugged = root.path().join("usb");
    let target = nas(&unplugged);
    let first = copy_missing(&history, None, std::slice::from_ref(&target), None).unwrap();
    assert_eq!(first.len(), 1, "one try while the disk is away: {first:?}");
    assert!(
        first[0]
            .entry
            .path
            .as_deref()
            .unwrap()
            .ends_with("three.zip"),
        "the newest"
    );
    assert!(first[0].outcome.is_err());
    let missing = history.copies_missing(None, &target.id).unwrap();
    assert_eq!(missing.len(), 3, "all three still missing");

    std::fs::create_dir(&unplugged).unwrap();
    kluis_copies::folder::test("NAS", &unplugged).unwrap(); // the disk, as it was added
    let second = copy_missing(&history, None, &[target], None).unwrap();
    assert_eq!(second.len(), 3);
    assert!(second.iter().all(|c| c.outcome.is_ok()), "{second:?}");
}

/// A file of the backup's name already on the target, with other content, is never
/// replaced: the copy takes the next free name.
#[test]
fn another_file_of_that_name_is_never_replaced() {
    let (local, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let history = History::in_memory().unwrap();
    saved(&history, local.path(), "backup.zip", b"new data");
    let theirs = root.path().join("Bakker").join("backup.zip");
    std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
    std::fs::write(&theirs, b"someone else's file").unwrap();
    let copied = copy_missing(&history, None, &[nas(root.path())], None).unwrap();
    let place = PathBuf::from(copied[0].outcome.as_ref().unwrap());
    assert_eq!(place.file_name().unwrap(), "backup (1).zip");
    assert_eq!(std::fs::read(&theirs).unwrap(), b"someone else's file");
    assert_eq!(std::fs::read(&place).unwrap(), b"new data");
}

/// Fault: the local file changed after it was saved (a disk error, or tampering). It is
/// not copied as if it were the backup: the copy is refused and nothing stays on the target.
#[test]
fn a_changed_backup_is_not_copied() {
    let (local, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let history = History::in_memory().unwrap();
    let path = saved(&history, local.path(), "backup.zip", b"as downloaded");
    std::fs::write(&path, b"as changed!!!").unwrap();
    let copied = copy_missing(&history, None, &[nas(root.path())], None).unwrap();
    let error = copied[0].outcome.as_ref().unwrap_err().to_string();
    assert!(error.contains("did not match"), "{error}");
    let left: Vec<_> = std::fs::read_dir(root.path().join("Bakker"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "nothing is left on the target: {left:?}");
}

/// Verification: a copy there and whole is intact; one changed in place is caught by a
/// read-back (not by the cheap look, which sees its length only); one deleted is missing,
/// which makes it pending again, and the next copying puts it back.
#[test]
fn a_copy_found_missing_is_copied_again() {
    use kluis_core::verify::Finding;
    let (local, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let history = History::in_memory().unwrap();
    saved(&history, local.path(), "backup.zip", b"the owner's data");
    let target = nas(root.path());
    let targets = std::slice::from_ref(&target);
    copy_missing(&history, None, targets, None).unwrap();
    let finding = |read_back| {
        check_copies(&history, targets, None, read_back).unwrap()[0]
            .check
            .finding
    };
    assert_eq!(finding(true), Finding::Intact);

    let copy = root.path().join("Bakker").join("backup.zip");
    std::fs::write(&copy, b"the owner's DATA").unwrap();
    assert_eq!(
        finding(false),
        Finding::Intact,
        "the cheap look sees the length only"
    );
    assert_eq!(finding(true), Finding::Changed);
    std::fs::remove_file(&copy).unwrap();
    assert_eq!(finding(false), Finding::Missing);
    assert!(!history
        .copies_of(&history.kept(None).unwrap()[0].id)
        .unwrap()[0]
        .holds());

    let again = copy_missing(&history, None, targets, None).unwrap();
    assert_eq!(again.len(), 1, "missing again: copied again");
    assert_eq!(std::fs::read(&copy).unwrap(), b"the owner's data");
    assert_eq!(finding(true), Finding::Intact);
}

/// Hostile settings: a target's folder edited by hand into a relative path is refused,
/// and nothing is written where Kluis runs.
#[test]
fn a_relative_target_folder_is_refused() {
    let local = tempfile::tempdir().unwrap();
    let history = History::in_memory().unwrap();
    saved(&history, local.path(), "backup.zip", b"data");
    let hand_edited = CopyTarget {
        place: Place::Folder { path: "nas".into() },
        ..nas(local.path())
    };
    let copied = copy_missing(&history, None, std::slice::from_ref(&hand_edited), None).unwrap();
    let error = copied[0].outcome.as_ref().unwrap_err().to_string();
    assert!(error.contains("not a full path"), "{error}");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    assert!(runtime.block_on(test(&hand_edited)).is_err());
    assert!(
        !std::path::Path::new("nas").exists(),
        "nothing where Kluis runs"
    );
}

/// "Test" writes, reads back and removes a file, and says which target is not there.
#[tokio::test]
async fn test_writes_and_removes_a_file() {
    let root = tempfile::tempdir().unwrap();
    test(&nas(root.path())).await.unwrap();
    let left: Vec<_> = (std::fs::read_dir(root.path()).unwrap())
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        [kluis_copies::folder::MARKER],
        "only the target's mark stays"
    );
    let gone = test(&nas(&root.path().join("gone"))).await.unwrap_err();
    assert!(gone.to_string().contains("\"NAS\""), "{gone}");
}

/// Fault: a copy killed mid-write (a crash, a kill -9) left its part file on the target. The
/// next copy into that folder removes it once it is a day old — only a file named as Kluis
/// names its part files; a fresh one (a copy under way) and files of the user's stay.
#[test]
fn a_part_file_left_by_a_killed_copy_is_removed() {
    let (local, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let history = History::in_memory().unwrap();
    saved(&history, local.path(), "backup.zip", b"data");
    let folder = root.path().join("Bakker");
    std::fs::create_dir_all(&folder).unwrap();
    let two_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    let file = |name: &str, old: bool| {
        let path = folder.join(name);
        let file = std::fs::File::create(&path).unwrap();
        if old {
            file.set_modified(two_days_ago).unwrap();
        }
        path
    };
    let left = file(".kluis-0123456789abcdef0123456789abcdef.part", true);
    let under_way = file(".kluis-fedcba9876543210fedcba9876543210.part", false);
    let users = [
        file(".kluis-notes.part", true),
        file("backup.zip.part", true),
    ];

    let copied = copy_missing(&history, None, &[nas(root.path())], None).unwrap();
    assert!(copied[0].outcome.is_ok(), "{:?}", copied[0].outcome);
    assert!(!left.exists(), "the left part file is removed");
    assert!(under_way.exists(), "a fresh one may be a copy under way");
    assert!(
        users.iter().all(|f| f.exists()),
        "files not named as Kluis's stay"
    );
}

/// Recovery's small objects beside the copies, in a folder (see `objects.rs`); a copy's place
/// named relative to the folder.
#[tokio::test(flavor = "multi_thread")]
async fn small_objects_are_written_new_read_listed_and_removed() {
    let root = tempfile::tempdir().unwrap();
    let copy = root.path().join("Bakker").join("b.zip");
    crate::objects::round_trip(
        nas(root.path()),
        Some((copy.to_string_lossy().into_owned(), "Bakker/b.zip".into())),
    )
    .await;
}
