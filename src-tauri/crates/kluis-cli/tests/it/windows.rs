//! The Windows `kluis.exe` (cross-built by tests/windows/build.sh) under Wine, against the Linux
//! simulator over TLS: what a Windows office runs, given Windows paths (Wine's `Z:` drive is
//! the Linux file system). Ignored in the ordinary test run: tests/windows/run.sh runs them in
//! a throw-away WINEPREFIX, with KLUIS_WINE (the wine64 loader) and KLUIS_WINDOWS_BIN (the
//! folder of the `.exe` files) set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::*;
use kluis_sim::config::DEMO_API_KEY;
use serde_json::Value;

const WHY: &str = "the Windows build under Wine: bash tests/windows/run.sh";

/// The Windows spelling of a Linux path under Wine's `Z:` drive.
fn win(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// The Linux path of a `Z:` path that kluis.exe printed.
fn linux(path: &str) -> PathBuf {
    let path = path.strip_prefix(r"\\?\").unwrap_or(path);
    let rest = path
        .strip_prefix("Z:")
        .or_else(|| path.strip_prefix("z:"))
        .unwrap_or_else(|| panic!("{path} is not on Wine's Z: drive"));
    PathBuf::from(rest.replace('\\', "/"))
}

/// The wine64 loader and the Wine prefix the tests run in.
fn wine() -> (PathBuf, PathBuf) {
    let var = |name: &str| {
        std::env::var_os(name).unwrap_or_else(|| panic!("{name} is not set: run {WHY}"))
    };
    (var("KLUIS_WINE").into(), var("WINEPREFIX").into())
}

impl Env {
    /// `kluis.exe ARGS` under Wine with the demo settings in a clean environment; every path
    /// it is given is a Windows path.
    fn exe(&self, args: &[&str]) -> Command {
        let (loader, prefix) = wine();
        let bin = PathBuf::from(std::env::var_os("KLUIS_WINDOWS_BIN").expect(WHY));
        let mut command = Command::new(loader);
        command
            .arg(bin.join("kluis.exe"))
            .args(args)
            .env_clear()
            .env("WINEPREFIX", prefix)
            .env("WINEDEBUG", "-all")
            .env(
                "WINEDLLOVERRIDES",
                std::env::var("WINEDLLOVERRIDES").unwrap_or_default(),
            )
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .env("KLUIS_BASE_URL", self.sim.base_url().as_str())
            .env("KLUIS_API_KEY", DEMO_API_KEY.to_string())
            .env("KLUIS_USERNAME", kluis_sim::config::DEMO_USERNAME)
            .env("KLUIS_PASSWORD", kluis_sim::config::DEMO_PASSWORD)
            .env("KLUIS_CA_CERT", win(self.ca.path()))
            .env(
                "KLUIS_HISTORY_DB",
                win(&self.dir.path().join("history.sqlite3")),
            )
            .env(
                "KLUIS_PROFILES_FILE",
                win(&self.dir.path().join("profiles.json")),
            );
        command
    }

    async fn run(&self, mut command: Command) -> Output {
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    /// `kluis.exe backup --out <out>\ --json EXTRA…`, run to its end.
    async fn exe_backup(&self, extra: &[&str]) -> Output {
        let out = format!("{}\\", win(&self.out()));
        let mut args = vec!["backup", "--out", out.as_str(), "--json"];
        args.extend_from_slice(extra);
        self.run(self.exe(&args)).await
    }
}

/// The saved backup a `--json` run printed: its Linux path, after checking that the file is
/// the simulator's payload (its length and the SHA-256 printed).
fn saved(output: &Output, payload: u64) -> PathBuf {
    assert_succeeded(output);
    let line = String::from_utf8_lossy(&output.stdout);
    let last = line.lines().last().expect("a JSON line");
    let json: Value = serde_json::from_str(last).unwrap();
    let path = linux(json["path"].as_str().unwrap());
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, payload, "the whole file");
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    assert_eq!(
        json["sha256"],
        digest.as_str(),
        "the file is what was verified"
    );
    path
}

/// Hidden part files in `dir`.
fn parts_in(dir: &Path) -> Vec<u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .map(|e| e.metadata().unwrap().len())
        .collect()
}

/// The environment, a backup saved into a Windows folder (verified, its digest matching the
/// file on disk) and the history listing it with its Windows path.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn backs_up_and_records_under_wine() {
    let e = env(|c| c.payload_size = 3 * 1024 * 1024 + 7).await;
    let environment = e.run(e.exe(&["environment"])).await;
    assert_succeeded(&environment);
    assert!(!environment.stdout.is_empty(), "the environment is shown");

    let output = e.exe_backup(&[]).await;
    let path = saved(&output, 3 * 1024 * 1024 + 7);
    assert_eq!(
        path.parent(),
        Some(e.out().as_path()),
        "in the folder given"
    );
    let job = e.history().list(None, 1).unwrap()[0].id.clone();
    assert_no_secrets_except(&output, &[kluis_sim::config::DEMO_PASSWORD], &[&job]);

    let history = e.run(e.exe(&["history", "--json"])).await;
    assert_succeeded(&history);
    let listed = String::from_utf8_lossy(&history.stdout);
    assert!(
        listed.contains(&serde_json::to_string(&win(&path)).unwrap()),
        "the history names the file by its Windows path: {listed}"
    );
}

/// Without KLUIS_HISTORY_DB the history goes to %LOCALAPPDATA% (this computer's, not roaming
/// with the user), where `directories` finds it on Windows.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn keeps_its_history_in_local_appdata() {
    let e = env(|_| {}).await;
    let mut command = e.exe(&["backup", "--out", &format!("{}\\", win(&e.out())), "--json"]);
    command.env_remove("KLUIS_HISTORY_DB");
    assert_succeeded(&e.run(command).await);
    let (_, prefix) = wine();
    let users = prefix.join("drive_c/users");
    let found: Vec<PathBuf> = std::fs::read_dir(&users)
        .unwrap()
        .filter_map(Result::ok)
        .map(|user| {
            user.path()
                .join("AppData/Local/Kluis/kluis/data/history.sqlite3")
        })
        .filter(|path| path.is_file())
        .collect();
    assert_eq!(found.len(), 1, "one history under {}", users.display());
    let history = kluis_core::History::open(&found[0]).unwrap();
    assert_eq!(history.list(None, 10).unwrap()[0].stage, "saved");
    drop(history);
    // The prefix is shared with the installer tests, which count the installed kluis.exe's
    // history there: this test's own is removed.
    std::fs::remove_dir_all(found[0].parent().unwrap()).unwrap();
}

/// The exit codes scripts branch on: a wrong password is 3 (and the password is never
/// printed), a backup changed on disk makes `verify` exit 7, a cut download that cannot be
/// continued ends as 6.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn exit_codes_under_wine() {
    let e = env(|c| c.payload_size = 64 * 1024).await;
    let mut wrong = e.exe(&["backup", "--out", &format!("{}\\", win(&e.out()))]);
    wrong.env("KLUIS_PASSWORD", "not-the-password-1234");
    let output = e.run(wrong).await;
    assert_eq!(output.status.code(), Some(3), "auth_failed");
    assert_no_secrets(&output, &["not-the-password-1234"]);

    let path = saved(&e.exe_backup(&[]).await, 64 * 1024);
    let verified = e.run(e.exe(&["verify"])).await;
    assert_succeeded(&verified);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let verified = e.run(e.exe(&["verify"])).await;
    assert_eq!(verified.status.code(), Some(7), "a changed backup is found");

    e.sim.set_faults(|f| {
        f.cut_download_after = Some(1000);
        f.cut_download_times = 100;
        f.no_etag = true;
    });
    let cut = e.exe_backup(&[]).await;
    assert_eq!(cut.status.code(), Some(6), "download_failed");
}

/// A download cut half-way is continued with a range request in the same run.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn a_cut_download_is_continued_under_wine() {
    let e = env(|c| {
        c.payload_size = 2 * 1024 * 1024;
        c.faults.cut_download_after = Some(700_000);
        c.faults.cut_download_times = 1;
    })
    .await;
    saved(&e.exe_backup(&[]).await, 2 * 1024 * 1024);
    assert_eq!(
        e.sim.stats().partial_downloads,
        1,
        "continued, not restarted"
    );
}

/// `kill -9` of kluis.exe in the middle of a download (relay callbacks) leaves its part file;
/// `kluis.exe resume` continues it and leaves only the backup.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn a_killed_backup_is_resumed_under_wine() {
    let e = env(|c| {
        c.payload_size = 16 * 1024 * 1024;
        c.faults.download_rate = Some(4 * 1024 * 1024);
    })
    .await;
    let (callback, bundle) = e.relay().await;
    let out = format!("{}\\", win(&e.out()));
    let mut backup = e.exe(&["backup", "--out", &out, "--json", "--callback", &callback]);
    backup
        .env("KLUIS_RELAY_SECRET", RELAY_SECRET)
        .env("KLUIS_CA_CERT", win(Path::new(&bundle)))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = backup.spawn().unwrap();
    let watched = e.out();
    wait_for("a megabyte is downloaded", move || {
        parts_in(&watched).iter().any(|len| *len > 1024 * 1024)
    })
    .await;
    stop(child, "KILL").await;
    assert_eq!(parts_in(&e.out()).len(), 1, "the part file stays");
    e.sim.set_faults(|f| f.download_rate = None);

    let mut resume = e.exe(&["resume", "--json"]);
    resume
        .env("KLUIS_RELAY_SECRET", RELAY_SECRET)
        .env("KLUIS_CA_CERT", win(Path::new(&bundle)));
    saved(&e.run(resume).await, 16 * 1024 * 1024);
    assert_eq!(
        e.sim.stats().partial_downloads,
        1,
        "continued from the part"
    );
    assert!(parts_in(&e.out()).is_empty(), "no part file left");
    assert_eq!(files_in(&e.out()), 1);
}

/// A name the service sends that Windows would not keep as a file — a device name, trailing
/// dots and spaces, characters Windows forbids — is saved under a name that Windows does
/// keep: the file is there, whole, under the name printed.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn hostile_file_names_are_saved_safely_on_windows() {
    let e = env(|c| c.payload_size = 4096).await;
    for name in [
        "CON.zip",
        "aux",
        "com1.tar.gz",
        "LPT9 .zip",
        "rapport. . ",
        "a<b>c?.zip",
    ] {
        e.sim.set_faults(|f| {
            f.content_disposition = Some(format!("attachment; filename=\"{name}\""));
        });
        let output = e.exe_backup(&[]).await;
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let path = saved(&output, 4096);
        let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !file_name.ends_with(['.', ' ']) && !file_name.contains(['<', '>', '?']),
            "{name} was saved as {file_name}"
        );
        assert!(path.is_file(), "{name}: a file on disk, not a device");
    }
    assert_eq!(files_in(&e.out()), 6);
}

/// Ctrl-C (Wine turns SIGINT into the console's Ctrl-C event) while the backup waits for the
/// service is the user's "no": cancelled, recorded so, exit 130, nothing saved.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn ctrl_c_cancels_under_wine() {
    let e = env(|c| c.faults.callback_delay = std::time::Duration::from_secs(30)).await;
    let out = format!("{}\\", win(&e.out()));
    let mut backup = e.exe(&["backup", "--out", &out]);
    backup.stdout(Stdio::null()).stderr(Stdio::null());
    let child = backup.spawn().unwrap();
    let db = e.dir.path().join("history.sqlite3");
    wait_for("the service accepted the backup", move || {
        db.exists()
            && kluis_core::History::open(&db)
                .and_then(|h| h.list(None, 1))
                .is_ok_and(|rows| rows.first().is_some_and(|r| r.stage == "accepted"))
    })
    .await;
    let status = stop(child, "INT").await;
    assert_eq!(status.code(), Some(130), "cancelled by the user");
    let entry = &e.history().list(None, 1).unwrap()[0];
    assert_eq!(entry.error_code, Some(kluis_core::Code::Cancelled));
    assert_eq!(files_in(&e.out()), 0, "nothing saved");
}

/// `kluis.exe schedule install` registers the task `Kluis\run-due` with the Task Scheduler
/// through schtasks, its command line carrying the files the environment named (a task has no
/// environment); `schedule remove` unregisters it and removes its file. (Wine's Task Scheduler
/// keeps a task's settings but not its trigger or action: those are checked in the XML Kluis
/// wrote.)
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn schedule_install_registers_a_task_under_wine() {
    let e = env(|_| {}).await;
    let out = win(&e.dir.path().join("back ups"));
    let installed = e.run(e.exe(&["schedule", "install", "--out", &out])).await;
    assert_succeeded(&installed);
    let (_, prefix) = wine();
    let task = prefix.join("drive_c/windows/system32/tasks/Kluis/run-due");
    let registered = String::from_utf8_lossy(&std::fs::read(&task).unwrap()).into_owned();
    assert!(
        registered.contains("back up the klanten whose plan is due"),
        "{registered}"
    );
    assert!(registered.contains("<StartWhenAvailable>true</StartWhenAvailable>"));
    assert!(registered.contains("<MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>"));

    let users = prefix.join("drive_c/users");
    let file = std::fs::read_dir(&users)
        .unwrap()
        .map(|user| {
            user.unwrap()
                .path()
                .join("AppData/Roaming/Kluis/kluis/config/kluis-run-due.xml")
        })
        .find(|path| path.is_file())
        .expect("the task's XML beside the profiles");
    let bytes = std::fs::read(&file).unwrap();
    let units: Vec<u16> = bytes[2..]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let written = String::from_utf16(&units).unwrap();
    let history = win(&e.dir.path().join("history.sqlite3"));
    for part in [
        "<Interval>PT15M</Interval>".to_string(),
        "kluis.exe</Command>".to_string(),
        format!("--history-db {history}"),
        format!("run-due --out &quot;{out}&quot;</Arguments>"),
    ] {
        assert!(written.contains(&part), "{part} in {written}");
    }

    let removed = e.run(e.exe(&["schedule", "remove"])).await;
    assert_succeeded(&removed);
    assert!(!task.exists(), "unregistered");
    assert!(!file.exists(), "its file removed");
}

/// `kluis.exe profiles add` keeps the klant's api key and password in the Credential Manager
/// (nothing of them in Kluis's files), `backup --profile` reads them back from there in another
/// process, and `profiles remove` deletes them.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn saved_profiles_keep_their_secrets_in_the_credential_manager() {
    let e = env(|_| {}).await;
    let password = kluis_sim::config::DEMO_PASSWORD;
    let added = e.run(e.exe(&["profiles", "add", "Windows Klant"])).await;
    assert_succeeded(&added);
    for entry in std::fs::read_dir(e.dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            let found = bytes
                .windows(password.len())
                .any(|w| w == password.as_bytes());
            assert!(!found, "the password is in {}", path.display());
        }
    }
    let without_secrets = |args: &[&str]| {
        let mut command = e.exe(args);
        for var in SERVICE_VARIABLES {
            command.env_remove(var);
        }
        command
    };
    let out = format!("{}\\", win(&e.out()));
    let backup = without_secrets(&["backup", "--profile", "Windows Klant", "--out", &out]);
    assert_succeeded(&e.run(backup).await);
    assert_eq!(files_in(&e.out()), 1, "backed up with the saved secrets");

    assert_succeeded(&e.run(e.exe(&["profiles", "remove", "Windows Klant"])).await);
    let listed = e.run(without_secrets(&["profiles", "list"])).await;
    assert_succeeded(&listed);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(!listed.contains("Windows Klant"), "removed: {listed}");
}

/// IT's machine policy on Windows, as Group Policy or Intune sets it under
/// `HKLM\SOFTWARE\Policies\Kluis`: `DisableUpdates` = 1 makes `kluis.exe update check` say
/// updates are turned off by it and ask no server; `UpdateUrl` and `UpdatePublicKey` name the
/// office's own update server, which it then asks (here absent: "could not be reached"). The
/// same server named in `KLUIS_UPDATE_URL`/`KLUIS_UPDATE_PUBKEY` is not taken by this build
/// (a release's: any program of the user's can set the environment) — it says it has no update
/// server.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "the Windows build under Wine: bash tests/windows/run.sh"]
async fn the_registry_policy_turns_updates_off_and_names_the_server() {
    let e = env(|_| {}).await;
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = gone.local_addr().unwrap().port();
    drop(gone);
    let server = format!("https://127.0.0.1:{port}/m.json");
    let key = crate::update_server::Signer::new().public();
    let check = || e.exe(&["update", "check"]);
    let (loader, prefix) = wine();
    let policies = r"HKLM\SOFTWARE\Policies\Kluis";
    let reg = |args: &[&str]| {
        let status = Command::new(&loader)
            .arg("reg")
            .args(args)
            .env("WINEPREFIX", &prefix)
            .env("WINEDEBUG", "-all")
            .output()
            .unwrap()
            .status;
        assert!(status.success(), "reg {args:?}");
    };
    let set = |name: &str, kind: &str, value: &str| {
        reg(&["add", policies, "/v", name, "/t", kind, "/d", value, "/f"]);
    };
    set("UpdateUrl", "REG_SZ", &server);
    set("UpdatePublicKey", "REG_SZ", &key);
    set("DisableUpdates", "REG_DWORD", "1");
    let off = e.run(check()).await;
    reg(&["delete", policies, "/v", "DisableUpdates", "/f"]);
    let on = e.run(check()).await;
    reg(&["delete", policies, "/f"]);
    let from_env = e
        .run({
            let mut command = check();
            command
                .env("KLUIS_UPDATE_URL", &server)
                .env("KLUIS_UPDATE_PUBKEY", &key);
            command
        })
        .await;
    assert_succeeded(&off);
    let said = String::from_utf8_lossy(&off.stdout);
    assert!(
        said.contains("turned off") && said.contains("DisableUpdates"),
        "{said}"
    );
    assert_eq!(on.status.code(), Some(1), "{on:?}");
    assert!(
        String::from_utf8_lossy(&on.stderr)
            .contains(&format!("127.0.0.1:{port} could not be reached")),
        "the policy's server asked: {on:?}"
    );
    assert_succeeded(&from_env);
    assert!(
        String::from_utf8_lossy(&from_env.stdout).contains("no update server"),
        "the environment's server not taken: {from_env:?}"
    );
}
