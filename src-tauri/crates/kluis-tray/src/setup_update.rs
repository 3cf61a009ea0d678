//! Updates installed while the window is closed. kluis-tray runs the app's daily look for
//! updates (`kluis_desktop::Updates`, with the window's rules: *Install updates by themselves*
//! chosen, no backup running, no plan due within a quarter of an hour, a setup started by
//! itself once a day at most, whatever its version). [`SetupRunner`] is how it installs one: on Windows,
//! where the setup installed Kluis, the verified setup is started silently (`/S`); the setup
//! asks this kluis-tray to quit (`kluis-tray --quit`, as for any install), replaces the
//! programs and starts the new kluis-tray, which keeps the plans.
//!
//! Not while a window follows this process, nor while another of Kluis's programs runs (the
//! setup would find its program running and stop): the window installs it then (Settings →
//! *Updates*), or this process at a round after. Only where the setup's uninstaller is beside
//! the program, and into its folder. The per-user MSI's updates are the window's (msiexec does
//! not ask kluis-tray to quit); the per-machine MSI's are IT's; on Linux the package manager's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use kluis_desktop::mirror::Mirror;
use kluis_desktop::{AppError, AppResult, InstallKind, UpdateInstaller, VerifiedSetup};

/// Kluis's programs beside kluis-tray that the setup replaces, and stops at when one runs —
/// with what each is, in the words a user knows it by.
const OTHER_PROGRAMS: [(&str, &str); 3] = [
    ("kluis-app", "Kluis's window"),
    ("kluis", "a scheduled or command-line backup"),
    ("kluis-relay", "the office relay"),
];

/// See the module's text.
pub struct SetupRunner {
    kind: InstallKind,
    /// The folder of this program (the install's).
    folder: PathBuf,
    /// The windows that follow this process (connected to it).
    followers: Arc<Mirror>,
}

impl SetupRunner {
    /// For this program (how and where it was installed), refusing while one of `followers`
    /// follows it.
    pub fn new(followers: Arc<Mirror>) -> SetupRunner {
        let exe = std::env::current_exe().unwrap_or_default();
        SetupRunner::of_program(&exe, InstallKind::of_this_program(), followers)
    }

    /// For the program `exe`, installed as `kind`.
    pub fn of_program(exe: &Path, kind: InstallKind, followers: Arc<Mirror>) -> SetupRunner {
        let folder = exe.parent().unwrap_or(Path::new("")).to_path_buf();
        SetupRunner {
            kind,
            folder,
            followers,
        }
    }
}

impl UpdateInstaller for SetupRunner {
    /// A Kluis the setup installed: its uninstaller beside the program. (A program elsewhere
    /// — unpacked from the zip — counts as the setup's for which build to download, but the
    /// setup would install a Kluis nobody asked for beside it.)
    fn installs_here(&self) -> bool {
        self.kind == InstallKind::Setup && self.folder.join("uninstall.exe").is_file()
    }

    fn managed_by_it(&self) -> bool {
        self.kind == InstallKind::MachineMsi
    }

    /// A window that follows this process; or any of Kluis's other programs running (their
    /// file cannot be written, which is what the setup looks at: a window not connected yet,
    /// `kluis` run by a schedule, the relay) — the setup would stop at it.
    fn not_now(&self) -> Option<String> {
        if self.followers.followed() {
            return Some("Kluis's window is open: the update is installed once it is closed (or now, from Settings → Updates).".into());
        }
        let (program, what) = OTHER_PROGRAMS.iter().find(|(program, _)| {
            let file = format!("{program}{}", std::env::consts::EXE_SUFFIX);
            program_running(&self.folder.join(file))
        })?;
        Some(format!(
            "{program}{} ({what}) is running: the update is installed once it has ended.",
            std::env::consts::EXE_SUFFIX
        ))
    }

    /// Starts the setup into this program's folder (it outlives this process; under Wine its
    /// error output, and the new kluis-tray's, go where this one's did), and returns; the setup's
    /// `--quit` ends this process (a backup a plan started in between is stopped, and finished
    /// by the new kluis-tray). The setup was verified just before (`Updates`), in the user's
    /// owner-only data folder: another account cannot change it in between; the user's own
    /// programs could as well change this program itself (a per-user install).
    fn install(&self, setup: &VerifiedSetup) -> AppResult<()> {
        tracing::info!("kluis-tray starts the update's setup");
        let mut command = Command::new(&setup.file);
        command.arg("/S");
        // (Where the user chose to install it: `/D=` last, never quoted, as NSIS reads it.)
        #[cfg(windows)]
        std::os::windows::process::CommandExt::raw_arg(
            &mut command,
            format!("/D={}", self.folder.display()),
        );
        (command.stdin(Stdio::null()).stdout(Stdio::null()).spawn())
            .map(drop)
            .map_err(|e| {
                AppError::Update(format!(
                    "The update's setup could not be started ({e}). Kluis tries again in a day; or install it from Settings → Updates."
                ))
            })
    }
}

/// Whether the program at `path` runs: Windows keeps a running program's file from being
/// opened to write. (Elsewhere the package manager updates Kluis: never asked.)
fn program_running(path: &Path) -> bool {
    #[cfg(windows)]
    {
        // (To write, as the setup opens it: to append alone, Wine lets a running image open.)
        let opened = std::fs::OpenOptions::new().write(true).open(path);
        matches!(opened, Err(e) if e.kind() != std::io::ErrorKind::NotFound)
    }
    #[cfg(not(windows))]
    {
        let _ = path;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a Kluis the setup installed (its uninstaller beside the program) installs its own
    /// updates here — not one unpacked elsewhere, nor an MSI's; IT's install is said as IT's.
    #[test]
    fn only_the_setups_install_is_updated_by_kluis_tray() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("kluis-tray.exe");
        let runner = |kind| SetupRunner::of_program(&exe, kind, Mirror::new());
        assert!(
            !runner(InstallKind::Setup).installs_here(),
            "no uninstaller beside it: not the setup's install"
        );
        std::fs::write(dir.path().join("uninstall.exe"), b"MZ").unwrap();
        assert!(runner(InstallKind::Setup).installs_here());
        for kind in [InstallKind::Msi, InstallKind::MachineMsi, InstallKind::Deb] {
            assert!(!runner(kind).installs_here(), "{kind:?}");
        }
        assert!(runner(InstallKind::MachineMsi).managed_by_it());
    }

    /// A running program is known by its file (what the setup looks at); a file that is not
    /// running, or none, is not. (A Windows test: tests/windows/run.sh runs it under Wine.)
    #[cfg(windows)]
    #[test]
    fn a_running_program_is_known_by_its_file() {
        let this = std::env::current_exe().unwrap();
        assert!(program_running(&this), "this test binary runs");
        let dir = tempfile::tempdir().unwrap();
        let idle = dir.path().join("kluis.exe");
        std::fs::write(&idle, b"MZ").unwrap();
        assert!(!program_running(&idle), "a program not running");
        assert!(
            !program_running(&dir.path().join("kluis-relay.exe")),
            "none"
        );
    }

    /// While a window follows kluis-tray (connected to it), no update is installed; once it has
    /// gone, one may be.
    #[tokio::test]
    async fn no_update_is_installed_while_a_window_follows() {
        use kluis_desktop::mirror::{self, endpoint};
        let dir = tempfile::tempdir().unwrap();
        let address = mirror::address(&kluis_desktop::AppPaths::under(dir.path()));
        let windows = Mirror::new();
        let runner = SetupRunner::of_program(
            &dir.path().join("kluis-tray.exe"),
            InstallKind::Setup,
            windows.clone(),
        );
        assert!(runner.not_now().is_none(), "no window");
        let listener = mirror::Listener::bind(&address).unwrap();
        let serving = tokio::spawn(windows.clone().serve(listener, Arc::new(|_| {})));
        let mut window = endpoint::connect(&address).await.unwrap();
        // (Its first line read: kluis-tray has taken the connection. A new event is sent to it.)
        windows.sink()(kluis_desktop::PlannedEvent {
            job_id: "a".into(),
            profile_id: "b".into(),
            event: kluis_desktop::AppJobEvent::Progress {
                bytes: 1,
                total: None,
                bytes_per_sec: 1,
            },
        });
        let mut first = [0u8; 1];
        let read = tokio::io::AsyncReadExt::read_exact(&mut window, &mut first);
        let read = tokio::time::timeout(std::time::Duration::from_secs(60), read).await;
        assert!(
            matches!(read, Ok(Ok(_))),
            "kluis-tray's first line: {read:?}"
        );
        let why = runner.not_now().expect("refused while a window follows");
        assert!(why.contains("window is open"), "{why}");
        serving.abort();
    }
}
