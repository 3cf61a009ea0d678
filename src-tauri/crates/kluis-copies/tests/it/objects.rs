//! Small objects beside the copies (recovery's catalogs and records), on each kind of target:
//! written new and never over another, replaced only when asked (whole), read within a bound
//! (or fetched whole with its SHA-256),
//! listed by their names under the root, removed; a copy's place named relative to the root.

use kluis_copies::{CopyTarget, Opened};

/// The round trip of the module's text on `target` (opened on a blocking thread, as Kluis
/// uses targets); `copy_at`: a copy's place as the history records it, and its name under the
/// root.
pub async fn round_trip(target: CopyTarget, copy_at: Option<(String, String)>) {
    tokio::task::spawn_blocking(move || {
        let opened = Opened::open(&target, None).unwrap();
        let at = "kluis-recovery/catalogs/aa01/000000000001.age";
        opened.put(at, b"first", false).unwrap();
        let refused = opened.put(at, b"second", false).unwrap_err();
        assert!(
            refused.to_string().contains(&target.name),
            "names the target: {refused}"
        );
        assert_eq!(
            opened.get(at, 1024).unwrap().as_deref(),
            Some(&b"first"[..]),
            "not replaced"
        );
        opened
            .put("kluis-recovery/office-key.txt", b"age1old", false)
            .unwrap();
        opened
            .put("kluis-recovery/office-key.txt", b"age1new", true)
            .unwrap();
        assert_eq!(
            opened
                .get("kluis-recovery/office-key.txt", 1024)
                .unwrap()
                .as_deref(),
            Some(&b"age1new"[..]),
            "replaced when asked"
        );
        assert!(opened.get(at, 3).is_err(), "larger than the bound");
        let mut fetched = Vec::new();
        let (length, sha256) = opened.fetch_object(at, 5, &mut fetched).unwrap();
        use sha2::Digest;
        assert_eq!(
            (length, sha256, fetched.as_slice()),
            (
                5,
                hex::encode(sha2::Sha256::digest(b"first")),
                &b"first"[..]
            ),
            "fetched whole, with its length and SHA-256"
        );
        assert_eq!(opened.get("kluis-recovery/none.age", 1024).unwrap(), None);
        opened
            .put("Bakker/b.zip.kluis-record", b"record", false)
            .unwrap();
        let listed = opened.list("").unwrap();
        let names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
        for name in [
            at,
            "kluis-recovery/office-key.txt",
            "Bakker/b.zip.kluis-record",
        ] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        assert!(
            listed.contains(&(at.to_string(), 5)),
            "with its length: {listed:?}"
        );
        let under: Vec<String> = opened
            .list("kluis-recovery")
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(
            under.iter().all(|n| n.starts_with("kluis-recovery/")),
            "{under:?}"
        );
        opened.remove(at).unwrap();
        opened.remove(at).unwrap(); // (nothing there: done)
        assert_eq!(opened.get(at, 1024).unwrap(), None);
        for bad in ["../escape", "/abs", "a/../../b"] {
            assert!(opened.put(bad, b"x", false).is_err(), "{bad}");
        }
        if let Some((location, relative)) = copy_at {
            assert_eq!(
                opened.relative(&location).as_deref(),
                Some(relative.as_str())
            );
            assert_eq!(
                opened.location(&relative).unwrap(),
                location,
                "a copy's place under the root is the location the history records"
            );
        }
    })
    .await
    .unwrap();
}
