//! Kluis's Windows installers (tests/windows/installer.sh) under Wine: signed, every program
//! in them too, and a byte changed is caught; a silent per-user install of the MSI that runs
//! the backup flow against the Linux simulator, upgrades in place keeping the user's history
//! and backups, refuses a downgrade and uninstalls — the program gone, the user's data kept;
//! the per-machine MSI for IT, starting at log-in when asked; the NSIS installer, silent, and
//! its signed uninstaller; kluis-tray installing an update by itself, which stops it and starts
//! it again. Ignored in the ordinary run: tests/windows/run.sh runs them with KLUIS_WINE,
//! WINEPREFIX, KLUIS_WINDOWS_INSTALLERS (a folder per version, each with its installers) and
//! KLUIS_SIGNING_CA (the test CA that signed them) set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::Ordering;

use crate::common::*;
use kluis_sim::config::DEMO_API_KEY;

const WHY: &str = "the Windows installers under Wine: bash tests/windows/run.sh";

#[path = "../../../kluis-desktop/tests/support/planned_klant.rs"]
mod planned_klant;

fn var(name: &str) -> PathBuf {
    std::env::var_os(name)
        .unwrap_or_else(|| panic!("{name} is not set: run {WHY}"))
        .into()
}

/// Each test starts with no Kluis installed: one that failed halfway may have left it, and
/// the tests after it then say so instead of failing on counts.
fn assert_nothing_installed() {
    let left = apps_list();
    assert!(
        left.is_empty(),
        "a test before this one left Kluis {left:?} installed"
    );
}

/// A package: `kluis-VERSION-x64.msi`, or its per-machine twin.
fn package(version: &str, machine: bool) -> PathBuf {
    let name = format!(
        "kluis-{version}-x64{}.msi",
        if machine { "-machine" } else { "" }
    );
    var("KLUIS_WINDOWS_INSTALLERS").join(version).join(name)
}

/// The installer to double-click: `kluis-VERSION-x64-setup.exe`.
fn setup(version: &str) -> PathBuf {
    (var("KLUIS_WINDOWS_INSTALLERS").join(version)).join(format!("kluis-{version}-x64-setup.exe"))
}

/// The Windows spelling of a Linux path under Wine's `Z:` drive.
fn win(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// A Windows program (or Wine's own, such as `msiexec`) under Wine, in the tests' prefix.
fn wine(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(var("KLUIS_WINE"));
    command
        .arg(program)
        .args(args)
        .env_clear()
        .env("WINEPREFIX", var("WINEPREFIX"))
        .env("WINEDEBUG", "-all")
        .env(
            "WINEDLLOVERRIDES",
            std::env::var("WINEDLLOVERRIDES").unwrap_or_default(),
        )
        .env("HOME", std::env::var_os("HOME").unwrap_or_default());
    command
}

fn run(mut command: Command) -> Output {
    command.output().unwrap()
}

/// `msiexec ARGS…` run to its end (silently: every call passes /qn).
fn msiexec(args: &[&str]) -> Output {
    run(wine("msiexec", args))
}

/// The Wine prefix's `C:` drive, and the user's folders on it.
fn drive_c() -> PathBuf {
    var("WINEPREFIX").join("drive_c")
}

fn user_dir() -> PathBuf {
    let users = drive_c().join("users");
    (std::fs::read_dir(&users).unwrap().filter_map(Result::ok))
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n != "Public") && p.join("AppData").is_dir())
        .unwrap_or_else(|| panic!("no user's folder in {}", users.display()))
}

fn per_user_dir() -> PathBuf {
    user_dir().join("AppData/Local/Programs/Kluis")
}

fn start_menu_shortcut() -> PathBuf {
    user_dir().join("AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Kluis.lnk")
}

/// What `reg query KEY /s` says (empty when the key is not there).
fn registry(key: &str) -> String {
    let output = run(wine("reg", &["query", key, "/s"]));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The Apps list's entries named Kluis, with their version (both hives: a per-user and a
/// per-machine install are listed from different ones).
fn apps_list() -> Vec<String> {
    let mut versions = Vec::new();
    for hive in ["HKCU", "HKLM"] {
        let text = registry(&format!(
            r"{hive}\Software\Microsoft\Windows\CurrentVersion\Uninstall"
        ));
        for entry in text.split("\nHKEY_").skip(1) {
            let value = |name: &str| {
                (entry.lines())
                    .find(|l| l.split_whitespace().next() == Some(name))
                    .and_then(|l| l.split("REG_SZ").nth(1))
                    .map(|v| v.trim().to_string())
            };
            if value("DisplayName").as_deref() == Some("Kluis") {
                versions.push(value("DisplayVersion").unwrap_or_default());
            }
        }
    }
    versions
}

fn assert_ran(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what}: {:?}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `osslsigncode verify` of `file` against the test CA: whether it passed, and what it said.
fn verified(file: &Path) -> (bool, String) {
    let output = Command::new("osslsigncode")
        .args(["verify", "-CAfile"])
        .arg(var("KLUIS_SIGNING_CA"))
        .arg("-in")
        .arg(file)
        .output()
        .expect("osslsigncode (tests/windows/setup.sh installs it)");
    let said = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), said)
}

/// A copy of `file` in `dir` with one byte in its middle changed.
fn tampered(file: &Path, dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    let copy = dir.join(format!(
        "changed-{}",
        file.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&copy, bytes).unwrap();
    copy
}

/// Both packages, and each program inside them (unpacked with msiextract), verify against
/// the CA that signed them; a package or a program with one byte changed after signing does
/// not.
#[test]
#[ignore = "the Windows installers under Wine: bash tests/windows/run.sh"]
fn the_packages_and_their_programs_are_signed() {
    let dir = tempfile::tempdir().unwrap();
    for machine in [false, true] {
        let msi = package("0.1.0", machine);
        let (ok, said) = verified(&msi);
        assert!(ok, "{} does not verify: {said}", msi.display());
        let unpacked = dir.path().join(if machine { "machine" } else { "user" });
        let extract = Command::new("msiextract")
            .arg("-C")
            .arg(&unpacked)
            .arg(&msi)
            .output()
            .unwrap();
        assert_ran("msiextract", &extract);
        let programs: Vec<PathBuf> = walk(&unpacked)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "exe"))
            .collect();
        assert_eq!(programs.len(), 4, "every program is in it: {programs:?}");
        for program in &programs {
            let (ok, said) = verified(program);
            assert!(ok, "{} does not verify: {said}", program.display());
        }
        let (ok, _) = verified(&tampered(&programs[0], dir.path()));
        assert!(!ok, "a changed program verifies");
    }
    let (ok, said) = verified(&setup("0.1.0"));
    assert!(ok, "the setup does not verify: {said}");
    let (ok, _) = verified(&tampered(&package("0.1.0", false), dir.path()));
    assert!(!ok, "a changed package verifies");
    let (ok, _) = verified(&tampered(&setup("0.1.0"), dir.path()));
    assert!(!ok, "a changed setup verifies");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        match path.is_dir() {
            true => files.extend(walk(&path)),
            false => files.push(path),
        }
    }
    files
}

/// How the installed `kluis.exe` at `exe` says it was installed (`update check --json`'s
/// `install`: which build updates it).
fn install_kind(exe: &std::path::Path) -> String {
    let said = run(wine(&exe.to_string_lossy(), &["update", "check", "--json"]));
    let object: serde_json::Value = serde_json::from_slice(&said.stdout)
        .unwrap_or_else(|_| panic!("one JSON object: {said:?}"));
    object["install"].as_str().unwrap_or_default().to_string()
}

/// The programs, the WebView2 loader they need and the README in %LOCALAPPDATA%\Programs\Kluis,
/// and the Start-menu shortcut.
fn assert_installed_for_the_user() {
    for file in PROGRAMS.iter().chain(&["README.txt", "WebView2Loader.dll"]) {
        assert!(per_user_dir().join(file).is_file(), "{file} is installed");
    }
    assert!(start_menu_shortcut().is_file(), "the Start-menu shortcut");
}

/// The installed `kluis.exe ARGS` with the simulator's settings, keeping its history where an
/// office's does (%LOCALAPPDATA%: no history path given).
fn installed_kluis(env: &Env, args: &[&str]) -> Output {
    let mut command = wine(&per_user_dir().join("kluis.exe").to_string_lossy(), args);
    command
        .env("KLUIS_BASE_URL", env.sim.base_url().as_str())
        .env("KLUIS_API_KEY", DEMO_API_KEY.to_string())
        .env("KLUIS_USERNAME", kluis_sim::config::DEMO_USERNAME)
        .env("KLUIS_PASSWORD", kluis_sim::config::DEMO_PASSWORD)
        .env("KLUIS_CA_CERT", win(env.ca.path()));
    run(command)
}

/// The backups the installed kluis.exe's history lists.
fn history_count(env: &Env) -> usize {
    let listed = installed_kluis(env, &["history", "--json"]);
    assert_ran("kluis.exe history", &listed);
    String::from_utf8_lossy(&listed.stdout)
        .matches("\"stage\":\"saved\"")
        .count()
}

/// `msiexec /i kluis.msi /qn` installs for this user without asking anything: the programs
/// in %LOCALAPPDATA%\Programs\Kluis, a Start-menu shortcut, the Apps list's entry with its
/// version; the installed kluis.exe backs up against the simulator and saves a klant. The
/// next version upgrades in place (one entry, the new version) and keeps the history, the
/// klant and the backup; the older one is then refused; uninstalling removes the program,
/// its shortcut and entry, and keeps the user's history, klanten and backup.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows installers under Wine: bash tests/windows/run.sh"]
async fn a_silent_install_backs_up_upgrades_and_uninstalls_keeping_the_data() {
    assert_nothing_installed();
    let env = env(|_| {}).await;
    let first = package("0.1.0", false);
    assert_ran("install", &msiexec(&["/i", &win(&first), "/qn"]));
    assert_installed_for_the_user();
    assert_eq!(apps_list(), ["0.1.0"], "the Apps list's entry");
    assert_eq!(install_kind(&per_user_dir().join("kluis.exe")), "msi");
    assert!(
        !registry(r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run").contains("Kluis"),
        "no start at log-in unless asked"
    );

    let out = env.out();
    // (Counted, not assumed empty: the prefix is the one the Windows build's tests ran in.)
    let before = history_count(&env);
    let backup = installed_kluis(
        &env,
        &["backup", "--out", &format!("{}\\", win(&out)), "--json"],
    );
    assert_ran("the installed kluis.exe backs up", &backup);
    let saved = std::fs::read_dir(&out).unwrap().count();
    assert_eq!(saved, 1, "one backup file saved");
    assert_eq!(
        history_count(&env),
        before + 1,
        "the backup is in the history"
    );
    let saved_klant = installed_kluis(&env, &["profiles", "add", "Bakker B.V."]);
    assert_ran("kluis.exe profiles add", &saved_klant);

    let next = package("0.1.1", false);
    assert_ran("upgrade", &msiexec(&["/i", &win(&next), "/qn"]));
    assert_eq!(
        apps_list(),
        ["0.1.1"],
        "upgraded in place: one entry, the new version"
    );
    assert!(per_user_dir().join("kluis.exe").is_file());
    assert_eq!(history_count(&env), before + 1, "the history is kept");
    let listed = installed_kluis(&env, &["profiles", "list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("Bakker B.V."),
        "the saved klant is kept"
    );

    let downgrade = msiexec(&["/i", &win(&first), "/qn"]);
    assert!(!downgrade.status.success(), "an older version is refused");
    assert_eq!(apps_list(), ["0.1.1"]);

    let history = user_dir().join("AppData/Local/Kluis/kluis/data");
    assert!(history.is_dir(), "the history where an office's is");
    assert_ran("uninstall", &msiexec(&["/x", &win(&next), "/qn"]));
    assert!(!per_user_dir().exists(), "the program is gone");
    assert!(!start_menu_shortcut().exists(), "its shortcut is gone");
    assert!(apps_list().is_empty(), "its entry is gone");
    assert!(history.is_dir(), "the user's history is kept");
    let settings = user_dir().join("AppData/Roaming/Kluis/kluis/config/profiles.json");
    assert!(
        settings.is_file(),
        "the user's klanten and settings are kept"
    );
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        saved,
        "the backup is kept"
    );
}

/// The per-machine package, for IT: into Program Files for every user, and with AUTOSTART=1
/// Kluis starts in the tray at log-in (the Run value the app's own setting writes);
/// uninstalling removes both.
#[test]
#[ignore = "the Windows installers under Wine: bash tests/windows/run.sh"]
fn it_installs_per_machine_starting_at_log_in() {
    assert_nothing_installed();
    let machine = package("0.1.0", true);
    let run_key = r"HKLM\Software\Microsoft\Windows\CurrentVersion\Run";
    assert_ran(
        "install per machine",
        &msiexec(&["/i", &win(&machine), "/qn", "AUTOSTART=1"]),
    );
    let program_files = drive_c().join("Program Files/Kluis");
    assert!(
        program_files.join("kluis-app.exe").is_file(),
        "in Program Files"
    );
    assert_eq!(
        install_kind(&program_files.join("kluis.exe")),
        "machine_msi",
        "IT's install: IT updates it, Kluis does not"
    );
    let run_values = registry(run_key);
    assert!(
        run_values.contains("kluis-app.exe") && run_values.contains("--hidden"),
        "starts hidden at log-in: {run_values}"
    );
    assert_eq!(apps_list(), ["0.1.0"]);
    assert_ran("uninstall", &msiexec(&["/x", &win(&machine), "/qn"]));
    assert!(!program_files.exists(), "the program is gone");
    assert!(
        !registry(run_key).contains("kluis-app.exe"),
        "and its start at log-in"
    );
    assert!(apps_list().is_empty());
}

/// The installer to double-click, run silently (`/S`, as IT runs it), into a folder chosen
/// (`/D=`, what its folder page sets): for this user, the programs, the Apps list's entry with
/// its version, start at log-in only with `/AUTOSTART=1`, and a signed uninstaller. Installed
/// again over itself naming no folder (as the app's own update runs it), it upgrades in place
/// — in the folder chosen, not the default one. The uninstaller (`/S`; `_?=` runs it where it
/// is, so that this test can wait for it: it then leaves itself behind) removes the programs,
/// the shortcut, the entry, the start at log-in and the notifications' name and icon.
#[test]
#[ignore = "the Windows installers under Wine: bash tests/windows/run.sh"]
fn the_setup_installs_silently_and_uninstalls() {
    assert_nothing_installed();
    let run_key = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run";
    // (On drive C:, as a user would choose one.)
    let (chosen, chosen_win) = (drive_c().join("Kantoor").join("Kluis"), r"C:\Kantoor\Kluis");
    let into_chosen = format!("/D={chosen_win}");
    let installed = run(wine(
        &win(&setup("0.1.0")),
        &["/S", "/AUTOSTART=1", &into_chosen],
    ));
    assert_ran("setup /S", &installed);
    for file in PROGRAMS.iter().chain(&["README.txt", "WebView2Loader.dll"]) {
        assert!(chosen.join(file).is_file(), "{file} is installed");
    }
    assert!(start_menu_shortcut().is_file(), "the Start-menu shortcut");
    assert_eq!(apps_list(), ["0.1.0"]);
    let kluis = chosen.join("kluis.exe");
    assert_eq!(install_kind(&kluis), "setup");
    assert!(
        registry(run_key).contains("--hidden"),
        "starts at log-in, as asked"
    );
    let uninstaller = chosen.join("uninstall.exe");
    let (ok, said) = verified(&uninstaller);
    assert!(ok, "the uninstaller is signed: {said}");

    assert_ran(
        "setup over itself",
        &run(wine(&win(&setup("0.1.1")), &["/S"])),
    );
    assert_eq!(apps_list(), ["0.1.1"], "upgraded in place");
    // (The test's two versions hold the same programs: where it went is what tells.)
    assert!(
        !per_user_dir().exists(),
        "in the folder chosen, not the default one"
    );
    let location = registry(r"HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\Kluis");
    assert!(
        location.contains(chosen_win),
        "its entry names the folder chosen: {location}"
    );

    // What a program's first notification registers (kluis-reporting's app_identity).
    let notifications = r"HKCU\Software\Classes\AppUserModelId\nl.kluis.desktop";
    let icon = user_dir().join("AppData/Local/nl.kluis.desktop/notification-icon.png");
    std::fs::create_dir_all(icon.parent().unwrap()).unwrap();
    std::fs::write(&icon, b"png").unwrap();
    let name = [
        "add",
        notifications,
        "/v",
        "DisplayName",
        "/d",
        "Kluis",
        "/f",
    ];
    assert_ran("reg add", &run(wine("reg", &name)));
    assert!(registry(notifications).contains("DisplayName"));

    let in_place = format!("_?={chosen_win}");
    let removed = run(wine(&win(&uninstaller), &["/S", &in_place]));
    assert_ran("uninstall /S", &removed);
    for file in PROGRAMS.iter().chain(&["WebView2Loader.dll"]) {
        assert!(!chosen.join(file).exists(), "{file} is removed");
    }
    assert!(
        !registry(notifications).contains("DisplayName"),
        "the notifications' name is removed"
    );
    assert!(!icon.exists(), "the notifications' icon is removed");
    assert!(!start_menu_shortcut().exists(), "the shortcut is removed");
    assert!(apps_list().is_empty(), "the entry is removed");
    assert!(
        !registry(run_key).contains("kluis-app.exe"),
        "the start at log-in is removed"
    );
    std::fs::remove_dir_all(drive_c().join("Kantoor")).unwrap();
}

/// Kluis's programs, as installed.
const PROGRAMS: [&str; 4] = [
    "kluis.exe",
    "kluis-app.exe",
    "kluis-relay.exe",
    "kluis-tray.exe",
];

/// A data folder under `dir` whose klant has a daily plan, paused as a whole: kluis-tray keeps
/// it (a plan is set) and runs nothing; *Install updates by themselves* chosen.
async fn paused_plans_under(dir: &Path) -> PathBuf {
    use kluis_desktop::{AppPaths, DesktopApp, MemoryStore};
    let (data, saved) = (dir.join("data"), dir.join("saved"));
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&saved).unwrap();
    let app = DesktopApp::builder(
        AppPaths::under(&data),
        std::sync::Arc::new(MemoryStore::default()),
    )
    .save_folder(Some(saved))
    .open()
    .unwrap();
    planned_klant::save_klant(&app, true).await;
    app.plans.pause_plans().unwrap();
    app.updates.set_automatic(true).unwrap();
    app.shutdown().await;
    data
}

/// Where IT's machine policy for Kluis lives (kluis-update's `policy`).
const POLICY_KEY: &str = r"HKLM\SOFTWARE\Policies\Kluis";

/// IT's machine policy naming an update server (an office's own: the only way a release build
/// takes another than its own), removed again when dropped.
struct UpdatePolicy;

impl UpdatePolicy {
    fn naming(manifest_url: &str, public_key: &str) -> UpdatePolicy {
        for (name, value) in [("UpdateUrl", manifest_url), ("UpdatePublicKey", public_key)] {
            let args = [
                "add", POLICY_KEY, "/v", name, "/t", "REG_SZ", "/d", value, "/f",
            ];
            assert_ran("reg add", &run(wine("reg", &args)));
        }
        UpdatePolicy
    }
}

impl Drop for UpdatePolicy {
    fn drop(&mut self) {
        let _ = run(wine("reg", &["delete", POLICY_KEY, "/f"]));
    }
}

/// The test's update server offering `version`'s setup for Windows, signed as
/// tests/update/publish.sh signs it, named in IT's policy; its CA's certificate written to
/// `ca_file` (`KLUIS_CA_CERT`).
async fn update_server_offering(
    version: &str,
    ca_file: &Path,
) -> (crate::update_server::Setup, UpdatePolicy) {
    let s = crate::update_server::setup().await;
    let file = format!("kluis-{version}-x64-setup.exe");
    let bytes = std::fs::read(setup(version)).unwrap();
    let signature = s.signer.sign_for(&bytes, version, "windows-x86_64", &file);
    s.served.files.lock().unwrap().insert(file.clone(), bytes);
    *s.served.manifest.lock().unwrap() = serde_json::json!({
        "version": version,
        "notes": "Kluis werkt zichzelf bij.",
        "pub_date": "2026-12-01T10:00:00Z",
        "platforms": { "windows-x86_64": {
            "url": format!("{}/{file}", s.origin), "signature": signature
        } }
    })
    .to_string();
    std::fs::write(ca_file, &s.ca).unwrap();
    let policy = UpdatePolicy::naming(&format!("{}/manifest.json", s.origin), &s.signer.public());
    (s, policy)
}

/// `command` started (ended when dropped), and its error output to read line by line (never to
/// its end: a program it starts may hold it open).
fn started_with_its_log(
    mut command: tokio::process::Command,
) -> (
    tokio::process::Child,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>,
) {
    use std::process::Stdio;
    use tokio::io::AsyncBufReadExt;
    let mut child = (command.stdin(Stdio::null()).stdout(Stdio::null()))
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let log = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    (child, log)
}

/// `command` (`what`) run to its end, its output to nowhere (a program it starts may hold its
/// output open), within a generous bound.
async fn run_to_end(mut command: tokio::process::Command, what: &str) -> std::process::ExitStatus {
    use std::process::Stdio;
    let status = command.stdout(Stdio::null()).stderr(Stdio::null()).status();
    tokio::time::timeout(std::time::Duration::from_secs(300), status)
        .await
        .unwrap_or_else(|_| panic!("{what} did not end"))
        .unwrap()
}

/// Reads `log` (a program's, at info) until a line says `words`, within a generous bound;
/// what it said is shown when it does not.
async fn until_said<R: tokio::io::AsyncBufRead + Unpin>(
    log: &mut tokio::io::Lines<R>,
    words: &str,
) {
    let mut said = Vec::new();
    let reading = async {
        while let Some(line) = log.next_line().await.unwrap() {
            if line.contains(words) {
                return true;
            }
            said.push(line);
        }
        false
    };
    let found = tokio::time::timeout(std::time::Duration::from_secs(120), reading).await;
    assert!(
        matches!(found, Ok(true)),
        "it did not say {words:?}: {said:#?}"
    );
}

/// While another of Kluis's programs runs (the relay), the setup stops before it changes
/// anything (exit code 2); Kluis started at log-in (`kluis-app.exe --hidden`) leaves the
/// plans to kluis-tray and ends, and kluis-tray's update waits for the relay. Then
/// kluis-tray, keeping the plans while the window is closed, installs an update by itself
/// (*Install updates by themselves*): it looks (IT's policy names the test's update server),
/// downloads and verifies the newer setup and starts it; the setup asks kluis-tray to quit
/// before it replaces its program (a running program's file cannot be written), installs the
/// new version, and starts kluis-tray again, which keeps the plans and does not start the
/// setup again; the uninstaller asks it to quit too, and removes kluis-tray.exe. (Output goes
/// to files or is read line by line, never to its end: a program the setup starts may hold
/// it open.)
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows installers under Wine: bash tests/windows/run.sh"]
async fn kluis_tray_installs_an_update_and_the_setup_starts_it_again() {
    use std::process::Stdio;
    assert_nothing_installed();
    let dir = tempfile::tempdir().unwrap();
    let data = paused_plans_under(dir.path()).await;
    let ca_file = dir.path().join("update-ca.pem");
    let (server, _policy) = update_server_offering("0.1.1", &ca_file).await;
    let with_data = |mut command: Command| {
        command
            .env("KLUIS_DATA_DIR", win(&data))
            .env("KLUIS_CA_CERT", win(&ca_file))
            .env(
                "KLUIS_LOG",
                "kluis_tray=info,kluis_desktop=warn,kluis_desktop::app::updates=info",
            )
            .stdin(Stdio::null());
        tokio::process::Command::from(command)
    };
    let installed = run_to_end(with_data(wine(&win(&setup("0.1.0")), &["/S"])), "the setup").await;
    assert!(installed.success(), "setup /S: {installed:?}");
    assert!(
        per_user_dir().join("kluis-tray.exe").is_file(),
        "kluis-tray.exe is installed"
    );

    // Another of Kluis's programs running (the office relay, here): a setup run then stops
    // before it changes anything (exit code 2), and kluis-tray's update waits for it.
    let relay_data = dir.path().join("relay");
    std::fs::create_dir_all(&relay_data).unwrap();
    let relay_exe = win(&per_user_dir().join("kluis-relay.exe"));
    let relay_args = ["--listen", "127.0.0.1:0", "--data", &win(&relay_data)];
    let relay_command = tokio::process::Command::from(wine(&relay_exe, &relay_args));
    let (mut relay, mut relay_log) = started_with_its_log(relay_command);
    until_said(&mut relay_log, "serving").await;
    let refused = run_to_end(with_data(wine(&win(&setup("0.1.1")), &["/S"])), "the setup").await;
    assert_eq!(refused.code(), Some(2), "stopped by the relay: {refused:?}");
    assert_eq!(apps_list(), ["0.1.0"], "nothing changed");

    let tray_exe = win(&per_user_dir().join("kluis-tray.exe"));
    // Kluis started at log-in (`kluis-app.exe --hidden`, what the Run key starts) with plans
    // set: it starts kluis-tray, which takes them, and ends before it builds a window.
    let app_exe = win(&per_user_dir().join("kluis-app.exe"));
    let (mut login, mut log) = started_with_its_log(with_data(wine(&app_exe, &["--hidden"])));
    let started = tokio::time::timeout(std::time::Duration::from_secs(120), login.wait())
        .await
        .expect("kluis-app.exe --hidden ends")
        .unwrap();
    assert!(started.success(), "kluis-app.exe --hidden: {started:?}");
    until_said(&mut log, "kluis-tray keeps the plans").await;
    until_said(&mut log, "kluis-relay.exe (the office relay) is running").await;
    relay.kill().await.unwrap();
    let quit = run_to_end(with_data(wine(&tray_exe, &["--quit"])), "kluis-tray --quit").await;
    // (`--quit` answers once kluis-tray has gone.)
    assert!(quit.success(), "kluis-tray --quit: {quit:?}");
    until_said(&mut log, "kluis-tray leaves").await;

    // The relay gone, the next kluis-tray installs the update by itself.
    let (mut tray, mut log) = started_with_its_log(with_data(wine(&tray_exe, &[])));
    until_said(&mut log, "kluis-tray keeps the plans").await;
    until_said(&mut log, "kluis-tray listens for windows").await;
    let token = std::fs::read(data.join("tray.token")).unwrap();

    // The update, by itself: what kluis-tray says from then on is read (the new one's too,
    // started by the setup, which kluis-tray started with its output).
    until_said(&mut log, "kluis-tray starts the update's setup").await;
    until_said(&mut log, "kluis-tray leaves").await;
    let ended = tokio::time::timeout(std::time::Duration::from_secs(120), tray.wait())
        .await
        .expect("the old kluis-tray ends")
        .unwrap();
    assert!(ended.success(), "asked to quit, it ended: {ended:?}");
    until_said(&mut log, "kluis-tray keeps the plans").await;
    // (The setup writes the Apps list's entry before it starts kluis-tray.)
    assert_eq!(apps_list(), ["0.1.1"], "upgraded in place");
    // (Noted before the setup started. The test's two versions hold the same programs, which
    // say 0.1.0: the new kluis-tray takes the note for a setup that did not install, and
    // starts none again — the day's cap.)
    let noted = std::fs::read_to_string(data.join("update-started")).unwrap();
    assert!(noted.contains(" 0.1.1"), "noted: {noted:?}");
    assert_ne!(
        std::fs::read(data.join("tray.token")).unwrap(),
        token,
        "a new kluis-tray keeps the plans"
    );

    // The uninstaller (run where it is: `_?=`) asks the new one to quit as well.
    let in_place = format!("_?={}", win(&per_user_dir()));
    let uninstaller = win(&per_user_dir().join("uninstall.exe"));
    let removed = run_to_end(
        with_data(wine(&uninstaller, &["/S", &in_place])),
        "the uninstaller",
    )
    .await;
    assert!(removed.success(), "uninstall /S: {removed:?}");
    until_said(&mut log, "kluis-tray leaves").await;
    // (Over both kluis-trays' lives: the new one — whose programs say 0.1.0, as above — did
    // not fetch the setup again: the day's cap.)
    let downloads = server.served.build_asked.load(Ordering::SeqCst);
    assert_eq!(downloads, 1, "the setup downloaded once");
    assert!(
        !per_user_dir().join("kluis-tray.exe").exists(),
        "kluis-tray.exe is removed (it was not running any more)"
    );
    assert!(apps_list().is_empty(), "the entry is removed");
    std::fs::remove_dir_all(per_user_dir()).unwrap();
}
