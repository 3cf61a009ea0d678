//! tests/update/publish.sh, the publisher's signing step, end to end: each build of a release
//! signed with Debian's `minisign` for its version, platform and file, listed in the manifest
//! under Tauri's keys — and each Kluis (by platform and install kind) finds, downloads and
//! verifies its own build, and refuses another of the same release passed off as its own.

use std::path::Path;
use std::process::Command;

use kluis_update::{check, download, Found, InstallKind, Target, Version};

use crate::server::setup;

/// The release 9.9.9's four builds, each of other bytes, signed by the script with a key
/// made by `minisign -G`; the manifest it wrote; the public key.
fn published(dir: &Path, base_url: &str) -> (String, String) {
    let run = |command: &mut Command| {
        let output = command
            .output()
            .expect("minisign and bash are installed (.ci/setup)");
        assert!(output.status.success(), "{output:?}");
    };
    let (key, public) = (dir.join("update.key"), dir.join("update.pub"));
    run(Command::new("minisign")
        .args(["-G", "-W", "-s"])
        .arg(&key)
        .arg("-p")
        .arg(&public));
    for name in [
        "kluis-9.9.9-x64-setup.exe",
        "kluis-9.9.9-x64.msi",
        "kluis-9.9.9-x64-machine.msi",
        "kluis_9.9.9_amd64.deb",
    ] {
        std::fs::write(dir.join(name), format!("the build {name}").repeat(100)).unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/update/publish.sh");
    run(Command::new("bash")
        .arg(script)
        .args(["--key", key.to_str().unwrap(), "--version", "9.9.9"])
        .args(["--base-url", base_url, "--notes", "Sneller \"importeren\"."])
        .arg(dir));
    (
        std::fs::read_to_string(dir.join("kluis.json")).unwrap(),
        std::fs::read_to_string(public).unwrap(),
    )
}

/// Each install kind takes its own build from the published manifest, verified; a manifest
/// changed to offer the per-machine MSI (validly signed, the same version) as the per-user
/// one, or the setup as the `.deb`, is refused.
#[tokio::test]
async fn each_kluis_takes_only_its_own_build_of_a_published_release() {
    let s = setup().await;
    let dir = tempfile::tempdir().unwrap();
    let (manifest, public) = published(dir.path(), &s.origin);
    for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        s.served
            .files
            .lock()
            .unwrap()
            .insert(name, std::fs::read(entry.path()).unwrap());
    }
    let publisher = kluis_update::Publisher::new(s.publisher.manifest.as_str(), &public).unwrap();
    let target = |platform: &str, kind| Target {
        platform: platform.into(),
        kind,
        arch: "x86_64".into(),
    };
    let take = |target: Target, manifest: String| {
        let (s, publisher) = (&s, &publisher);
        async move {
            *s.served.manifest.lock().unwrap() = manifest;
            let v = Version::parse("0.1.0").unwrap();
            let Found::Newer(release) = check(publisher, &v, &target, Some(&s.ca)).await.unwrap()
            else {
                panic!("nothing newer")
            };
            assert_eq!(release.notes, "Sneller \"importeren\".");
            let to = tempfile::tempdir().unwrap();
            download(publisher, &release, to.path(), Some(&s.ca))
                .await
                .map(|file| std::fs::read_to_string(file).unwrap())
        }
    };
    for (platform, kind, name) in [
        (
            "windows-x86_64",
            InstallKind::Setup,
            "kluis-9.9.9-x64-setup.exe",
        ),
        ("windows-x86_64", InstallKind::Msi, "kluis-9.9.9-x64.msi"),
        (
            "windows-x86_64",
            InstallKind::MachineMsi,
            "kluis-9.9.9-x64-machine.msi",
        ),
        ("linux-x86_64", InstallKind::Deb, "kluis_9.9.9_amd64.deb"),
    ] {
        let got = take(target(platform, kind), manifest.clone())
            .await
            .unwrap();
        assert!(
            got.starts_with(&format!("the build {name}")),
            "{kind:?}: {got}"
        );
    }
    let swapped: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let mut machine_as_user = swapped.clone();
    machine_as_user["platforms"]["windows-x86_64-msi"] =
        swapped["platforms"]["windows-x86_64-msi-machine"].clone();
    let refused = take(
        target("windows-x86_64", InstallKind::Msi),
        machine_as_user.to_string(),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code(), "wrong_build", "{refused}");
    // A manifest without the per-user MSI's build: said as such (the setup under the
    // platform's key is not fetched for it, only to be refused).
    let mut without_msi = swapped.clone();
    without_msi["platforms"]
        .as_object_mut()
        .unwrap()
        .remove("windows-x86_64-msi");
    *s.served.manifest.lock().unwrap() = without_msi.to_string();
    let asked = s
        .served
        .build_asked
        .load(std::sync::atomic::Ordering::SeqCst);
    let v = Version::parse("0.1.0").unwrap();
    let none = check(
        &publisher,
        &v,
        &target("windows-x86_64", InstallKind::Msi),
        Some(&s.ca),
    )
    .await
    .unwrap_err();
    assert_eq!(none.code(), "not_a_manifest", "{none}");
    assert!(none.to_string().contains("per-user MSI"), "{none}");
    assert_eq!(
        s.served
            .build_asked
            .load(std::sync::atomic::Ordering::SeqCst),
        asked
    );
    let mut setup_as_deb = swapped.clone();
    setup_as_deb["platforms"]["linux-x86_64-deb"] = swapped["platforms"]["windows-x86_64"].clone();
    let refused = take(
        target("linux-x86_64", InstallKind::Deb),
        setup_as_deb.to_string(),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code(), "wrong_build", "{refused}");
}
