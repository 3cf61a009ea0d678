//! [`Target`]: which of the publisher's builds updates this Kluis — its platform, and how it
//! was installed ([`InstallKind`]: the setup, the per-user MSI, the per-machine MSI, the
//! `.deb`). The manifest is not signed, so what is expected comes from the running build, not
//! from the manifest: each build's signature names, in its trusted comment, the version,
//! platform and file it was signed for, and a build signed for another file — the `.deb` passed
//! off as the Windows setup, the per-machine MSI as the per-user one — is refused although the
//! publisher signed it.

use std::path::{Path, PathBuf};

/// How this Kluis was installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallKind {
    /// By the setup (NSIS), for this user: updated by the next setup.
    Setup,
    /// By the per-user MSI: updated by the next one.
    Msi,
    /// By the per-machine MSI, for every user (IT's): IT installs its updates.
    MachineMsi,
    /// By the `.deb` (Debian, Ubuntu): apt installs its updates.
    Deb,
}

/// Where the MSIs record the folder they installed into (`kluis.wxs`: the programs'
/// component's key path): under `HKEY_LOCAL_MACHINE` for the per-machine MSI — only an
/// administrator writes there — and under `HKEY_CURRENT_USER` for the per-user one.
const INSTALLED: &str = r"Software\Kluis\Installed";

impl InstallKind {
    /// How the program at `exe` was installed, on Windows (`windows`) from what the
    /// installers leave: the folder the per-machine MSI recorded (`machine_msi`, from
    /// `HKEY_LOCAL_MACHINE`, which only an administrator writes), the setup's uninstaller
    /// beside the program, the folder the per-user MSI recorded (`user_msi`); a program
    /// elsewhere (a build run from where it was built) counts as the setup's. Elsewhere the
    /// `.deb`'s.
    pub fn of_program(
        exe: &Path,
        windows: bool,
        machine_msi: Option<&Path>,
        user_msi: Option<&Path>,
    ) -> InstallKind {
        if !windows {
            return InstallKind::Deb;
        }
        let folder = exe.parent().unwrap_or(Path::new(""));
        let here = |recorded: Option<&Path>| recorded.is_some_and(|r| same_folder(r, folder));
        if here(machine_msi) {
            InstallKind::MachineMsi
        } else if folder.join("uninstall.exe").is_file() {
            InstallKind::Setup
        } else if here(user_msi) {
            InstallKind::Msi
        } else {
            InstallKind::Setup
        }
    }

    /// The running program's.
    pub fn of_this_program() -> InstallKind {
        use crate::registry::{string, Hive};
        let exe = std::env::current_exe().unwrap_or_default();
        let recorded = |hive| string(hive, INSTALLED, "Programs").map(PathBuf::from);
        let (machine, user) = (recorded(Hive::Machine), recorded(Hive::User));
        InstallKind::of_program(&exe, cfg!(windows), machine.as_deref(), user.as_deref())
    }

    /// Its name in what the CLI says (`kluis update check --json`'s `install`).
    pub fn word(self) -> &'static str {
        match self {
            InstallKind::Setup => "setup",
            InstallKind::Msi => "msi",
            InstallKind::MachineMsi => "machine_msi",
            InstallKind::Deb => "deb",
        }
    }

    /// The name of its build of `version` for `arch` (`std::env::consts::ARCH`), as the
    /// publisher's scripts name it (tests/windows/installer.sh, tests/linux/apt-repo.sh).
    pub fn artifact(self, version: &semver::Version, arch: &str) -> String {
        let windows_arch = match arch {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            other => other,
        };
        let debian_arch = match arch {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        };
        match self {
            InstallKind::Setup => format!("kluis-{version}-{windows_arch}-setup.exe"),
            InstallKind::Msi => format!("kluis-{version}-{windows_arch}.msi"),
            InstallKind::MachineMsi => format!("kluis-{version}-{windows_arch}-machine.msi"),
            InstallKind::Deb => format!("kluis_{version}_{debian_arch}.deb"),
        }
    }

    /// Its key in the manifest after the platform's (`windows-x86_64-msi`), as Tauri's
    /// updater names installer kinds; the platform's own key serves the setup and the `.deb`.
    pub fn manifest_suffix(self) -> &'static str {
        match self {
            InstallKind::Setup => "nsis",
            InstallKind::Msi => "msi",
            InstallKind::MachineMsi => "msi-machine",
            InstallKind::Deb => "deb",
        }
    }

    /// Whether Kluis installs its own updates (the per-user installs on Windows), rather than
    /// IT or the package manager.
    pub fn updates_itself(self) -> bool {
        matches!(self, InstallKind::Setup | InstallKind::Msi)
    }

    /// Whether the program at `exe`, installed as this kind, installs its own updates there: a
    /// per-user MSI's; a setup's only with the setup's uninstaller beside it (a program
    /// unpacked from the zip takes the setup's build, but the setup would install a Kluis
    /// nobody asked for in another folder).
    pub fn updates_itself_at(self, exe: &Path) -> bool {
        match self {
            InstallKind::Msi => true,
            InstallKind::Setup => (exe.parent()).is_some_and(|folder| {
                folder.is_absolute() && folder.join("uninstall.exe").is_file()
            }),
            InstallKind::MachineMsi | InstallKind::Deb => false,
        }
    }
}

/// Whether two folders are one: the same path once each is resolved (links, `\\?\`, 8.3
/// names) where it can be, else as written, case and a trailing separator aside (Windows').
fn same_folder(a: &Path, b: &Path) -> bool {
    let plain = |p: &Path| {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let text = p.to_string_lossy().to_lowercase().replace('/', "\\");
        text.trim_end_matches('\\').to_string()
    };
    plain(a) == plain(b)
}

/// What a build must have been signed for to update this Kluis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The manifest's platform key (`windows-x86_64`).
    pub platform: String,
    pub kind: InstallKind,
    /// `std::env::consts::ARCH`.
    pub arch: String,
}

impl Target {
    /// The running program's.
    pub fn this_program() -> Target {
        Target {
            platform: crate::platform(),
            kind: InstallKind::of_this_program(),
            arch: std::env::consts::ARCH.into(),
        }
    }

    /// The name of its build of `version`.
    pub fn artifact(&self, version: &semver::Version) -> String {
        self.kind.artifact(version, &self.arch)
    }

    /// Where the manifest lists its build: the installer kind's key; for the setup and the
    /// `.deb`, then the platform's own (which is theirs: an MSI install never finds its build
    /// there, so it is not asked to download one it must refuse).
    pub fn manifest_keys(&self) -> Vec<String> {
        let own = format!("{}-{}", self.platform, self.kind.manifest_suffix());
        match self.kind {
            InstallKind::Setup | InstallKind::Deb => vec![own, self.platform.clone()],
            InstallKind::Msi | InstallKind::MachineMsi => vec![own],
        }
    }

    /// This kind of install, in words (for a manifest without its build).
    pub fn described(&self) -> &'static str {
        match self.kind {
            InstallKind::Setup => "installed by the setup",
            InstallKind::Msi => "installed by the per-user MSI",
            InstallKind::MachineMsi => "installed for every user by the per-machine MSI",
            InstallKind::Deb => "installed from the .deb",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folder the per-machine MSI recorded (under HKLM) says IT's install, before all
    /// else; the setup's uninstaller beside the program says the setup; the folder the
    /// per-user MSI recorded says it (whatever the case and slashes); a build elsewhere counts
    /// as the setup's; any other system's is the `.deb`'s.
    #[test]
    fn how_a_program_was_installed() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("Programs").join("Kluis");
        std::fs::create_dir_all(&folder).unwrap();
        let exe = folder.join("kluis-app.exe");
        let kind = |machine: Option<&Path>, user: Option<&Path>| {
            InstallKind::of_program(&exe, true, machine, user)
        };
        let written_otherwise = PathBuf::from(
            format!("{}/", folder.display())
                .to_uppercase()
                .replace('\\', "/"),
        );
        assert_eq!(kind(None, Some(&folder)), InstallKind::Msi);
        assert_eq!(
            kind(None, None),
            InstallKind::Setup,
            "a build run where it was built"
        );
        std::fs::write(folder.join("uninstall.exe"), b"MZ").unwrap();
        assert_eq!(kind(None, Some(&folder)), InstallKind::Setup);
        assert_eq!(
            kind(Some(&written_otherwise), None),
            InstallKind::MachineMsi,
            "IT's record counts first"
        );
        let elsewhere = dir.path().join("Program Files").join("Kluis");
        assert_eq!(
            kind(Some(&elsewhere), None),
            InstallKind::Setup,
            "another folder's record"
        );
        assert_eq!(
            InstallKind::of_program(Path::new("/usr/bin/kluis-app"), false, None, None),
            InstallKind::Deb
        );
    }

    /// A setup's install updates itself only where the setup's uninstaller is beside the
    /// program (not unpacked from the zip, nor from a relative path); the per-user MSI's does;
    /// IT's and the .deb's do not.
    #[test]
    fn who_updates_itself_where() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("kluis-app.exe");
        assert!(
            !InstallKind::Setup.updates_itself_at(&exe),
            "unpacked from the zip"
        );
        std::fs::write(dir.path().join("uninstall.exe"), b"MZ").unwrap();
        assert!(InstallKind::Setup.updates_itself_at(&exe));
        assert!(!InstallKind::Setup.updates_itself_at(Path::new("kluis-app.exe")));
        assert!(InstallKind::Msi.updates_itself_at(&exe));
        assert!(!InstallKind::MachineMsi.updates_itself_at(&exe));
        assert!(!InstallKind::Deb.updates_itself_at(&exe));
    }

    /// Each kind's build has the name the publisher's scripts give it.
    #[test]
    fn each_kind_has_its_build() {
        let v = semver::Version::parse("0.2.0").unwrap();
        let names: Vec<String> = [
            InstallKind::Setup,
            InstallKind::Msi,
            InstallKind::MachineMsi,
            InstallKind::Deb,
        ]
        .iter()
        .map(|k| k.artifact(&v, "x86_64"))
        .collect();
        assert_eq!(
            names,
            [
                "kluis-0.2.0-x64-setup.exe",
                "kluis-0.2.0-x64.msi",
                "kluis-0.2.0-x64-machine.msi",
                "kluis_0.2.0_amd64.deb"
            ]
        );
    }
}
