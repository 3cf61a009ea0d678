//! kluis-update against an update server of its own on loopback over TLS (kluis-https, a
//! throw-away CA), its manifest and build signed as `tauri signer sign` signs them (minisign):
//! a newer version offered, downloaded and verified; an older one ignored; a build signed by
//! another key refused before anything is downloaded; a build changed after it was signed
//! deleted; a server that is not there, or answers no manifest, said plainly.

mod server;

use std::sync::atomic::Ordering;

use base64::Engine;

use kluis_update::{check, download, platform, Found, Publisher, UpdateError};
use server::{manifest, setup, Signer};

fn v(text: &str) -> semver::Version {
    semver::Version::parse(text).unwrap()
}

/// A newer version is offered with its notes; downloaded, its signature verifies and the
/// whole file is kept under its name, no part file beside it.
#[tokio::test]
async fn a_newer_version_is_offered_downloaded_and_verified() {
    let s = setup().await;
    let build = b"MZ the next Kluis".repeat(10_000);
    *s.served.build.lock().unwrap() = build.clone();
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(&build, "9.9.9"));
    let Found::Newer(release) = check(&s.publisher, &v("0.1.0"), &platform(), Some(&s.ca))
        .await
        .unwrap()
    else {
        panic!("nothing newer found")
    };
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
}

/// The same version is up to date; an older one (a downgrade) is ignored and said.
#[tokio::test]
async fn the_same_or_an_older_version_is_no_update() {
    let s = setup().await;
    let signature = s.signer.sign(b"old", "0.0.9");
    for (offered, older) in [("0.1.0", None), ("v0.0.9", Some(v("0.0.9")))] {
        *s.served.manifest.lock().unwrap() = manifest(offered, &s.origin, &signature);
        match check(&s.publisher, &v("0.1.0"), &platform(), Some(&s.ca))
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
    let refused = check(&s.publisher, &v("0.1.0"), &platform(), Some(&s.ca))
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
    let Found::Newer(release) = check(&s.publisher, &v("0.1.0"), &platform(), Some(&s.ca))
        .await
        .unwrap()
    else {
        panic!("nothing newer found")
    };
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
    let e = check(&nowhere, &v("0.1.0"), &platform(), Some(&s.ca))
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
        let e = check(&s.publisher, &v("0.1.0"), &platform(), Some(&s.ca))
            .await
            .unwrap_err();
        assert_eq!(e.code(), "not_a_manifest", "{e}");
    }
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(b"x", "9.9.9"))
            .replace(&platform(), "plan9-mips");
    let e = check(&s.publisher, &v("0.1.0"), &platform(), Some(&s.ca))
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
/// its signature shows the version it was signed for, and nothing of it is kept; so is a build
/// whose signature names no version.
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
}
