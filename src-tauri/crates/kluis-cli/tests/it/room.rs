//! A backup that cannot be saved is not asked for: the destination is checked before
//! `POST /backup/owner` (it exists or can be made, a file can be created there, its disk has the
//! minimum free), and in a batch only the klant whose folder fails, fails.

use crate::common::*;

/// `kluis backup` into a folder that takes no file, or onto a disk with less free than the
/// minimum, fails at once with the folder named and the service never asked (it sent the POST,
/// waited for the backup, and only then failed).
#[tokio::test(flavor = "multi_thread")]
async fn an_unusable_folder_fails_before_the_service_is_asked() {
    let e = env(|c| c.payload_size = 20_000).await;
    let out = e.out();
    let too_little = e
        .demo(&[
            "backup",
            "--out",
            out.to_str().unwrap(),
            "--min-free-mib",
            &u64::from(u32::MAX).to_string(),
        ])
        .await;
    let said = String::from_utf8_lossy(&too_little.stderr);
    assert_eq!(too_little.status.code(), Some(1), "{said}");
    assert!(
        said.contains(out.to_str().unwrap()) && said.contains("MiB is free"),
        "{said}"
    );
    assert!(
        said.contains("--min-free-mib"),
        "says how to change it: {said}"
    );
    assert_eq!(files_in(&out), 0, "nothing left in the folder");

    #[cfg(target_os = "linux")]
    {
        // Root may write anywhere else; /proc takes no new file from anyone.
        let unwritable = e.demo(&["backup", "--out", "/proc"]).await;
        let said = String::from_utf8_lossy(&unwritable.stderr);
        assert_eq!(unwritable.status.code(), Some(1), "{said}");
        assert!(said.contains("No file can be saved in /proc"), "{said}");
    }
    assert_eq!(
        e.sim.stats().backups_started,
        0,
        "the service was never asked"
    );

    // The same folder with the minimum lowered (0: none) is backed up.
    let fine = e
        .demo(&[
            "backup",
            "--out",
            out.to_str().unwrap(),
            "--min-free-mib",
            "0",
        ])
        .await;
    assert_succeeded(&fine);
    assert_eq!(e.sim.stats().backups_started, 1);
}
