//! Updates installed while the window is closed. kluis-tray runs the app's daily look for
//! updates (`kluis_desktop::Updates`, with the window's rules: *Install updates by themselves*
//! chosen, no backup running, no plan due within a quarter of an hour, a version's setup
//! started by itself once a day at most). [`SetupRunner`] is how it installs one: on Windows,
//! where the setup installed Kluis, the verified setup is started silently (`/S`); the setup
//! asks this kluis-tray to quit (`kluis-tray --quit`, as for any install), replaces the
//! programs and starts the new kluis-tray, which keeps the plans.
//!
//! Not while a window follows this process (the setup would find the window's program running
//! and stop): the window installs it then (Settings → *Updates*), or this process at a round
//! after the window has closed. The per-user MSI's updates are the window's (msiexec does not
//! ask kluis-tray to quit); the per-machine MSI's are IT's; on Linux the package manager's.

use std::process::{Command, Stdio};
use std::sync::Arc;

use kluis_desktop::mirror::Mirror;
use kluis_desktop::{AppError, AppResult, InstallKind, UpdateInstaller, VerifiedSetup};

/// See the module's text.
pub struct SetupRunner {
    kind: InstallKind,
    /// The windows that follow this process.
    windows: Arc<Mirror>,
}

impl SetupRunner {
    /// For this program (how it was installed), refusing while one of `windows` follows it.
    pub fn new(windows: Arc<Mirror>) -> SetupRunner {
        SetupRunner::of_kind(InstallKind::of_this_program(), windows)
    }

    /// For a program installed as `kind`.
    pub fn of_kind(kind: InstallKind, windows: Arc<Mirror>) -> SetupRunner {
        SetupRunner { kind, windows }
    }
}

impl UpdateInstaller for SetupRunner {
    fn installs_here(&self) -> bool {
        self.kind == InstallKind::Setup
    }

    fn managed_by_it(&self) -> bool {
        self.kind == InstallKind::MachineMsi
    }

    fn not_now(&self) -> Option<String> {
        self.windows.followed().then(|| {
            "Kluis's window is open: install the update there (Settings → Updates), or Kluis installs it once the window is closed.".into()
        })
    }

    /// Starts the setup (it outlives this process, whose output it inherits: the setup's own
    /// start of the new kluis-tray logs where this one did), and returns; the setup's
    /// `--quit` ends this process.
    fn install(&self, setup: &VerifiedSetup) -> AppResult<()> {
        tracing::info!("kluis-tray starts the update's setup");
        Command::new(&setup.file)
            .arg("/S")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map(drop)
            .map_err(|e| AppError::Update(format!("The update's setup could not be started: {e}.")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a Kluis the setup installed installs its own updates here; IT's install is said
    /// as IT's.
    #[test]
    fn only_the_setups_install_is_updated_by_kluis_tray() {
        let runner = |kind| SetupRunner::of_kind(kind, Mirror::new());
        assert!(runner(InstallKind::Setup).installs_here());
        for kind in [InstallKind::Msi, InstallKind::MachineMsi, InstallKind::Deb] {
            assert!(!runner(kind).installs_here(), "{kind:?}");
        }
        assert!(runner(InstallKind::MachineMsi).managed_by_it());
    }

    /// While a window follows kluis-tray (connected to it), no update is installed; once it has
    /// gone, one may be.
    #[tokio::test]
    async fn no_update_is_installed_while_a_window_follows() {
        use kluis_desktop::mirror::{self, endpoint};
        let dir = tempfile::tempdir().unwrap();
        let address = mirror::address(&kluis_desktop::AppPaths::under(dir.path()));
        let windows = Mirror::new();
        let runner = SetupRunner::of_kind(InstallKind::Setup, windows.clone());
        assert!(runner.not_now().is_none(), "no window");
        let listener = Mirror::listen(&address).unwrap();
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
        tokio::io::AsyncReadExt::read_exact(&mut window, &mut first)
            .await
            .unwrap();
        let why = runner.not_now().expect("refused while a window follows");
        assert!(why.contains("window is open"), "{why}");
        serving.abort();
    }
}
