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

impl InstallKind {
    /// How the program at `exe` was installed: on Windows the setup leaves its uninstaller
    /// beside the program and the per-machine MSI installs under Program Files (`program_files`:
    /// the folders that are); a program elsewhere there (a build run from where it was built)
    /// counts as the setup's. Elsewhere the `.deb`'s.
    pub fn of_program(exe: &Path, windows: bool, program_files: &[PathBuf]) -> InstallKind {
        if !windows {
            return InstallKind::Deb;
        }
        let folder = exe.parent().unwrap_or(Path::new(""));
        let lower = |p: &Path| p.to_string_lossy().to_lowercase().replace('/', "\\");
        let under = |root: &PathBuf| {
            let (root, folder) = (lower(root), lower(folder));
            let root = root.trim_end_matches('\\');
            !root.is_empty() && (folder == root || folder.starts_with(&format!("{root}\\")))
        };
        if folder.join("uninstall.exe").is_file() {
            InstallKind::Setup
        } else if program_files.iter().any(under) {
            InstallKind::MachineMsi
        } else if lower(folder).ends_with("\\programs\\kluis") {
            InstallKind::Msi
        } else {
            InstallKind::Setup
        }
    }

    /// The running program's.
    pub fn of_this_program() -> InstallKind {
        let exe = std::env::current_exe().unwrap_or_default();
        let program_files: Vec<PathBuf> = ["ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"]
            .iter()
            .filter_map(|name| std::env::var_os(name).map(PathBuf::from))
            .collect();
        InstallKind::of_program(&exe, cfg!(windows), &program_files)
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

    /// Where the manifest lists its build: the installer kind's key first, then the
    /// platform's.
    pub fn manifest_keys(&self) -> [String; 2] {
        [
            format!("{}-{}", self.platform, self.kind.manifest_suffix()),
            self.platform.clone(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The setup's uninstaller beside the program says the setup; Program Files says IT's
    /// per-machine MSI (whatever the case and slashes); the per-user MSI's folder says it; a
    /// build elsewhere counts as the setup's; any other system's is the `.deb`'s.
    #[test]
    fn how_a_program_was_installed() {
        let dir = tempfile::tempdir().unwrap();
        let setup = dir.path().join("Programs").join("Kluis");
        std::fs::create_dir_all(&setup).unwrap();
        let exe = setup.join("kluis-app.exe");
        let program_files = [PathBuf::from("C:\\Program Files")];
        assert_eq!(
            InstallKind::of_program(&exe, true, &program_files),
            InstallKind::Msi
        );
        std::fs::write(setup.join("uninstall.exe"), b"MZ").unwrap();
        assert_eq!(
            InstallKind::of_program(&exe, true, &program_files),
            InstallKind::Setup
        );
        let machine = Path::new("c:/program files/Kluis/kluis-app.exe");
        assert_eq!(
            InstallKind::of_program(machine, true, &program_files),
            InstallKind::MachineMsi
        );
        let built = Path::new("C:\\src\\kluis\\target\\debug\\kluis-app.exe");
        assert_eq!(
            InstallKind::of_program(built, true, &program_files),
            InstallKind::Setup
        );
        assert_eq!(
            InstallKind::of_program(Path::new("/usr/bin/kluis-app"), false, &[]),
            InstallKind::Deb
        );
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
