//! Windows: a newer Kluis installed through Tauri's updater plugin. kluis-desktop's Updates
//! has downloaded the setup and verified it (the publisher's key, the version it was signed
//! for); the plugin takes the manifest it came with again (`restore_update`, which always
//! binds the signature to the announced version), verifies the bytes once more with the same
//! key, and runs the setup silently (`/S /UPDATE`, tauri.conf.json's `installMode: quiet`;
//! Kluis's own NSIS setup waits for the app to let go of its program and starts it again) as
//! the app ends. On Linux and macOS the package manager updates Kluis: the plugin is not used.

use std::path::{Path, PathBuf};

use kluis_desktop::{AppError, InstallKind, UpdateInstaller, VerifiedSetup};
use tauri::{AppHandle, Runtime};
use tauri_plugin_updater::UpdaterExt;

/// See the module's text.
pub struct PluginInstaller<R: Runtime> {
    app: AppHandle<R>,
    /// How and where this Kluis was installed (read once: it does not change while it runs).
    kind: InstallKind,
    exe: PathBuf,
}

impl<R: Runtime> PluginInstaller<R> {
    pub fn new(app: AppHandle<R>) -> PluginInstaller<R> {
        PluginInstaller {
            app,
            kind: InstallKind::of_this_program(),
            exe: std::env::current_exe().unwrap_or_default(),
        }
    }
}

impl<R: Runtime> UpdateInstaller for PluginInstaller<R> {
    /// Not when IT installed Kluis for every user of this computer (the per-machine MSI, in
    /// Program Files: IT installs its updates, and this user could not), nor for a Kluis
    /// unpacked from the zip (the setup would install another one).
    fn installs_here(&self) -> bool {
        self.kind.updates_itself_at(&self.exe)
    }

    fn unpacked(&self) -> bool {
        self.kind == InstallKind::Setup && !self.kind.updates_itself_at(&self.exe)
    }

    /// Kluis's other programs beside this one that the setup would stop at (the window's
    /// own program ends for the update; the setup asks kluis-tray to quit — msiexec does not,
    /// so for the MSI kluis-tray must not run either).
    fn not_now(&self) -> Option<String> {
        let msi = self.kind == InstallKind::Msi;
        if msi && kluis_desktop::program_in_the_way(&self.exe, &["kluis-tray"]).is_some() {
            return Some("Kluis in the notification area (kluis-tray.exe) keeps the plans: choose Quit Kluis in its menu, then install the update here.".into());
        }
        kluis_desktop::program_in_the_way(&self.exe, &["kluis", "kluis-relay"])
    }

    fn managed_by_it(&self) -> bool {
        self.kind == InstallKind::MachineMsi
    }

    fn install(&self, setup: &VerifiedSetup) -> Result<(), AppError> {
        let (update, bytes) = self.checked(setup)?;
        // On success the plugin ends the app (after Tauri's clean-up) as the setup starts.
        update.install(bytes).map_err(|e| failed(&e))
    }
}

impl<R: Runtime> PluginInstaller<R> {
    /// The plugin's update for `setup`, and the setup's bytes it verified: everything
    /// [`UpdateInstaller::install`] does but starting the setup.
    pub fn checked(
        &self,
        setup: &VerifiedSetup,
    ) -> Result<(tauri_plugin_updater::Update, Vec<u8>), AppError> {
        let bytes = std::fs::read(&setup.file).map_err(|e| failed(&e))?;
        let endpoint = setup.manifest_url.parse().map_err(|e| failed(&e))?;
        let updater = (self.app.updater_builder())
            .pubkey(setup.tauri_pubkey.clone())
            .installer_args(installer_arguments(self.kind, &self.exe))
            .endpoints(vec![endpoint])
            .and_then(|builder| builder.build())
            .map_err(|e| failed(&e))?;
        let update = (updater.restore_update(setup.manifest.clone()))
            .map_err(|e| failed(&e))?
            .ok_or_else(|| {
                AppError::Update("This Kluis is as new as the update: nothing to install.".into())
            })?;
        update.verify(&bytes).map_err(|e| failed(&e))?;
        Ok((update, bytes))
    }
}

/// What the installer of a Kluis installed as `kind` at `exe` is told besides the plugin's own
/// arguments: the setup its install's folder (`/D=`, last, as NSIS reads it); msiexec nothing
/// more — it refuses a command line with an option it does not know.
pub fn installer_arguments(kind: InstallKind, exe: &Path) -> Vec<std::ffi::OsString> {
    match kind {
        InstallKind::Setup => vec![kluis_desktop::setup_folder_argument(exe)],
        _ => Vec::new(),
    }
}

fn failed(e: &dyn std::fmt::Display) -> AppError {
    let said = e.to_string();
    AppError::Update(format!(
        "The update could not be started: {}.",
        said.trim_end_matches('.')
    ))
}
