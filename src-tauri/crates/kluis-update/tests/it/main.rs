//! kluis-update against an update server of its own on loopback over TLS (kluis-https, a
//! throw-away CA), its manifest and build signed as `tauri signer sign` signs them (minisign):
//! a newer version offered, downloaded and verified; an older one ignored; a build signed by
//! another key refused before anything is downloaded; a build changed after it was signed
//! deleted; a server that is not there, or answers no manifest, said plainly.

mod publish;
mod server;

use std::sync::atomic::Ordering;

use base64::Engine;

use kluis_update::{
    check, download, platform, verify_kept, Found, Publisher, Release, Target, UpdateError,
};
use server::{manifest, setup, Signer};

fn v(text: &str) -> semver::Version {
    semver::Version::parse(text).unwrap()
}

/// The release the server offers this program, found newer than 0.1.0 (boxed, as `Found` holds it).
async fn found_newer(s: &server::Setup) -> Box<Release> {
    let (version, ours) = (v("0.1.0"), Target::this_program());
    let found = check(&s.publisher, &version, &ours, Some(&s.ca)).await;
    let Found::Newer(release) = found.unwrap() else {
        panic!("nothing newer found")
    };
    release
}

/// A newer version is offered with its notes; downloaded, its signature verifies and the
/// whole file is kept under its name, no part file beside it; verified again before it is
/// run, a kept file that changed is refused.
#[tokio::test]
async fn a_newer_version_is_offered_downloaded_and_verified() {
    let s = setup().await;
    let build = b"MZ the next Kluis".repeat(10_000);
    *s.served.build.lock().unwrap() = build.clone();
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(&build, "9.9.9"));
    let release = found_newer(&s).await;
    assert_eq!(release.version, v("9.9.9"));
    assert_eq!(release.notes, "Sneller importeren.");
    let dir = tempfile::tempdir().unwrap();
    let file = download(&s.publisher, &release, dir.path(), Some(&s.ca))
        .await
        .unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), build);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no part file left"
    );
    assert_eq!(
        file.file_name().unwrap().to_str(),
        Some(release.artifact().as_str()),
        "kept under the name it was signed for"
    );
    verify_kept(&s.publisher, &release, &file).expect("the kept build verifies again");

    // Changed on disk after its download, or replaced by another signed build, it is refused
    // before it is run.
    let mut changed = build.clone();
    changed[1234] ^= 1;
    std::fs::write(&file, &changed).unwrap();
    let refused = verify_kept(&s.publisher, &release, &file).unwrap_err();
    assert_eq!(refused.code(), "tampered", "{refused}");
    std::fs::write(&file, b"MZ an older Kluis").unwrap();
    let refused = verify_kept(&s.publisher, &release, &file).unwrap_err();
    assert_eq!(refused.code(), "tampered", "{refused}");
    std::fs::remove_file(&file).unwrap();
    assert!(
        verify_kept(&s.publisher, &release, &file).is_err(),
        "a file gone"
    );
}

/// The same version is up to date; an older one (a downgrade) is ignored and said.
#[tokio::test]
async fn the_same_or_an_older_version_is_no_update() {
    let s = setup().await;
    let signature = s.signer.sign(b"old", "0.0.9");
    for (offered, older) in [("0.1.0", None), ("v0.0.9", Some(v("0.0.9")))] {
        *s.served.manifest.lock().unwrap() = manifest(offered, &s.origin, &signature);
        match check(
            &s.publisher,
            &v("0.1.0"),
            &Target::this_program(),
            Some(&s.ca),
        )
        .await
        .unwrap()
        {
            Found::UpToDate { offered_older } => assert_eq!(offered_older, older, "{offered}"),
            Found::Newer(r) => panic!("{offered} offered as newer: {r:?}"),
        }
    }
}

/// A build signed by another key is refused by the check already: nothing is downloaded.
#[tokio::test]
async fn another_keys_build_is_refused_before_download() {
    let s = setup().await;
    let build = b"MZ a forged Kluis".to_vec();
    *s.served.build.lock().unwrap() = build.clone();
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &Signer::new().sign(&build, "9.9.9"));
    let refused = check(
        &s.publisher,
        &v("0.1.0"),
        &Target::this_program(),
        Some(&s.ca),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code(), "other_key", "{refused}");
    assert!(refused.to_string().contains("9.9.9"), "{refused}");
    assert_eq!(
        s.served.build_asked.load(Ordering::SeqCst),
        0,
        "nothing downloaded"
    );
}

/// A build changed after it was signed (on the server, or on the way) does not verify: the
/// download fails and nothing of it is left.
#[tokio::test]
async fn a_changed_build_is_deleted() {
    let s = setup().await;
    let mut build = b"MZ the next Kluis".repeat(1000);
    let signature = s.signer.sign(&build, "9.9.9");
    build[500] ^= 1;
    *s.served.build.lock().unwrap() = build;
    let (refused, left) = refused_download(&s, &signature).await;
    assert_eq!(refused.code(), "tampered", "{refused}");
    assert_eq!(left, 0, "nothing kept");
}

/// 9.9.9 offered with `signature`, found newer, and its download refused: why, and how many
/// files it left in its folder.
async fn refused_download(s: &server::Setup, signature: &str) -> (UpdateError, usize) {
    *s.served.manifest.lock().unwrap() = manifest("9.9.9", &s.origin, signature);
    let release = found_newer(s).await;
    let dir = tempfile::tempdir().unwrap();
    let refused = download(&s.publisher, &release, dir.path(), Some(&s.ca))
        .await
        .unwrap_err();
    (refused, std::fs::read_dir(dir.path()).unwrap().count())
}

/// An update server that is not there, or answers something that is no manifest, is said in
/// a line, nothing more.
#[tokio::test]
async fn no_server_or_no_manifest_is_said() {
    let s = setup().await;
    let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = gone.local_addr().unwrap().port();
    drop(gone);
    let nowhere = Publisher::new(
        &format!("https://127.0.0.1:{port}/manifest.json"),
        &s.signer.public(),
    )
    .unwrap();
    let e = check(&nowhere, &v("0.1.0"), &Target::this_program(), Some(&s.ca))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "unreachable", "{e}");
    assert!(
        e.to_string().contains(&format!("127.0.0.1:{port}")) && !e.to_string().contains('\n'),
        "{e}"
    );

    for answer in [
        "<html>maintenance</html>".to_string(),
        "x".repeat(300 * 1024),
        r#"{"version":"soon","platforms":{}}"#.to_string(),
    ] {
        *s.served.manifest.lock().unwrap() = answer;
        let e = check(
            &s.publisher,
            &v("0.1.0"),
            &Target::this_program(),
            Some(&s.ca),
        )
        .await
        .unwrap_err();
        assert_eq!(e.code(), "not_a_manifest", "{e}");
    }
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(b"x", "9.9.9"))
            .replace(&platform(), "plan9-mips");
    let e = check(
        &s.publisher,
        &v("0.1.0"),
        &Target::this_program(),
        Some(&s.ca),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, UpdateError::NotAManifest(_)) && e.to_string().contains("no build"),
        "{e}"
    );
}

/// A publisher's key or address that is not one is refused when it is given.
#[test]
fn a_bad_key_or_address_is_refused() {
    let key = Signer::new().public();
    assert_eq!(
        Publisher::new("http://updates.example/m.json", &key)
            .unwrap_err()
            .code(),
        "config"
    );
    assert_eq!(
        Publisher::new("https://updates.example/m.json", "not a key")
            .unwrap_err()
            .code(),
        "config"
    );
    let publisher = Publisher::new("https://updates.example/m.json", &key).unwrap();
    assert_eq!(
        publisher.tauri_pubkey, key,
        "handed to Tauri's updater as given"
    );
    let line = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(&key)
            .unwrap(),
    )
    .unwrap()
    .lines()
    .nth(1)
    .unwrap()
    .to_string();
    let from_line = Publisher::new("https://updates.example/m.json", &line).unwrap();
    let wrapped = base64::engine::general_purpose::STANDARD
        .decode(&from_line.tauri_pubkey)
        .unwrap();
    assert_eq!(
        String::from_utf8(wrapped).unwrap().lines().nth(1),
        Some(line.as_str())
    );
}

/// The manifest is not signed, only each build: an older build with its own valid signature,
/// announced as a newer version (a changed server bringing back an old flaw), is refused once
/// its signature shows the version it was signed for — before it is fetched — and nothing of
/// it is kept; so is a build whose signature names no version.
#[tokio::test]
async fn an_older_build_announced_as_newer_is_refused() {
    let s = setup().await;
    let old = b"MZ Kluis 0.0.5, with a flaw mended since".to_vec();
    *s.served.build.lock().unwrap() = old.clone();
    for (signature, signed) in [
        (s.signer.sign(&old, "0.0.5"), "0.0.5"),
        (
            s.signer
                .sign_with(&old, "timestamp:1764150000\tfile:kluis-setup.exe"),
            "no version",
        ),
    ] {
        let (refused, left) = refused_download(&s, &signature).await;
        assert_eq!(refused.code(), "wrong_version", "{refused}");
        assert!(refused.to_string().contains(signed), "{refused}");
        assert_eq!(left, 0, "nothing kept");
    }
    let fetched = s.served.build_asked.load(Ordering::SeqCst);
    assert_eq!(
        fetched, 0,
        "refused by its signature's comment before it is fetched"
    );
}

/// The manifest is not signed: a build the publisher signed for the same version but another
/// file or platform — the `.deb` offered as this computer's build, the per-machine MSI as the
/// per-user one, the Windows setup on Linux — verifies, and is still refused (it would install
/// something else than this Kluis), before it is fetched, nothing of it kept; so is a signature
/// without them.
#[tokio::test]
async fn a_build_signed_for_another_file_or_platform_is_refused() {
    let s = setup().await;
    let build = b"MZ a Kluis for another computer".to_vec();
    *s.served.build.lock().unwrap() = build.clone();
    let ours = Target::this_program();
    let file = ours.artifact(&v("9.9.9"));
    for (platform, other_file) in [
        (ours.platform.clone(), "kluis_9.9.9_amd64.deb".to_string()),
        (
            ours.platform.clone(),
            "kluis-9.9.9-x64-machine.msi".to_string(),
        ),
        ("windows-x86_64".to_string(), file.clone()),
        (
            "linux-x86_64".to_string(),
            "kluis-9.9.9-x64-setup.exe".to_string(),
        ),
    ] {
        if (platform.as_str(), other_file.as_str()) == (ours.platform.as_str(), file.as_str()) {
            continue; // (this computer's own, on the platform it names)
        }
        let signature = s.signer.sign_for(&build, "9.9.9", &platform, &other_file);
        let (refused, left) = refused_download(&s, &signature).await;
        assert_eq!(
            refused.code(),
            "wrong_build",
            "{platform} {other_file}: {refused}"
        );
        assert!(refused.to_string().contains(&other_file), "{refused}");
        assert_eq!(left, 0, "nothing kept");
    }
    let bare = s.signer.sign_with(&build, "version:9.9.9");
    let (refused, _) = refused_download(&s, &bare).await;
    assert_eq!(
        refused.code(),
        "wrong_build",
        "no file or platform named: {refused}"
    );
    let fetched = s.served.build_asked.load(Ordering::SeqCst);
    assert_eq!(
        fetched, 0,
        "refused by its signature's comment before it is fetched"
    );
}

/// The build for this computer's install kind is taken from the manifest's key for that kind
/// (`windows-x86_64-msi`, as Tauri's updater names them) before the platform's own; what the
/// app hands Tauri's updater is the manifest narrowed to that one build, under the platform's
/// key.
#[tokio::test]
async fn the_install_kinds_build_is_chosen_and_handed_on_alone() {
    let s = setup().await;
    let ours = Target::this_program();
    let build = b"MZ the next Kluis, this kind's".to_vec();
    *s.served.build.lock().unwrap() = build.clone();
    let signature = s.signer.sign(&build, "9.9.9");
    let (kind_key, platform_key) = (ours.manifest_keys()[0].clone(), ours.platform.clone());
    *s.served.manifest.lock().unwrap() = serde_json::json!({
        "version": "9.9.9",
        "platforms": {
            platform_key.clone(): { "url": format!("{}/other.bin", s.origin), "signature": "not this one" },
            kind_key: { "url": format!("{}/kluis-9.9.9-x64-setup.exe", s.origin), "signature": signature },
        }
    })
    .to_string();
    let Found::Newer(release) = check(&s.publisher, &v("0.1.0"), &ours, Some(&s.ca))
        .await
        .unwrap()
    else {
        panic!("nothing newer found")
    };
    assert_eq!(release.url.path(), "/kluis-9.9.9-x64-setup.exe");
    let platforms = release.manifest["platforms"].as_object().unwrap();
    assert_eq!(platforms.len(), 1);
    assert_eq!(platforms[&platform_key]["signature"], signature.as_str());
    let dir = tempfile::tempdir().unwrap();
    let file = download(&s.publisher, &release, dir.path(), Some(&s.ca))
        .await
        .unwrap();
    assert_eq!(std::fs::read(file).unwrap(), build);
}

/// A part file a crash left behind blocks no later download (each has a name of its own);
/// Kluis's own stale parts (its naming, a day old) are removed at the next download, a fresh
/// one (a download running now) and another program's file are left, and a link of that
/// naming is neither followed nor removed.
#[tokio::test]
async fn part_files_a_crash_left_block_nothing_and_are_cleared() {
    let s = setup().await;
    let build = b"MZ the next Kluis".repeat(100);
    *s.served.build.lock().unwrap() = build.clone();
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(&build, "9.9.9"));
    let release = found_newer(&s).await;
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let day_old = std::time::SystemTime::now() - std::time::Duration::from_secs(25 * 3600);
    for name in [
        ".kluis-update-crashed.part",
        ".kluis-update-running.part",
        ".other-program.part",
    ] {
        std::fs::write(at(name), b"half").unwrap();
    }
    for name in [".kluis-update-crashed.part", ".other-program.part"] {
        let file = std::fs::File::options().write(true).open(at(name)).unwrap();
        file.set_modified(day_old).unwrap();
    }
    #[cfg(unix)]
    {
        let victim = at("precious.txt");
        std::fs::write(&victim, b"the user's").unwrap();
        std::os::unix::fs::symlink(&victim, at(".kluis-update-link.part")).unwrap();
    }
    let file = download(&s.publisher, &release, dir.path(), Some(&s.ca))
        .await
        .unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), build);
    assert!(
        !at(".kluis-update-crashed.part").exists(),
        "the crash's part removed"
    );
    assert!(
        at(".kluis-update-running.part").exists(),
        "a fresh part left"
    );
    assert!(
        at(".other-program.part").exists(),
        "another program's file left"
    );
    #[cfg(unix)]
    {
        assert!(
            std::fs::symlink_metadata(at(".kluis-update-link.part")).is_ok(),
            "the link left"
        );
        assert_eq!(std::fs::read(at("precious.txt")).unwrap(), b"the user's");
    }
}
