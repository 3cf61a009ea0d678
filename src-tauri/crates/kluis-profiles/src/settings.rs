//! The office's settings (Settings in the app, `kluis` options that are kept): where backups
//! are saved, how the service's callback comes in, how many run at once, notifications, file
//! names, the download limit and free space, copy targets, updates and the recovery kit — kept
//! in the profiles file beside the profiles ([`crate::store`]). The `mail` section is kept as
//! data this crate does not read: kluis-reporting's.

use serde::{Deserialize, Serialize};

/// App settings the UI may read and change.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// Save every backup in this folder instead of asking with a save dialog.
    pub save_folder: Option<String>,
    /// How the service's callback reaches this computer.
    #[serde(default)]
    pub callback: kluis_core::CallbackChoice,
    /// Whether a relay secret is in the keyring (the secret itself never leaves it).
    #[serde(default)]
    pub relay_secret_saved: bool,
    /// Unattended backups (plans, Backup all) running at once.
    #[serde(default = "default_at_once")]
    pub unattended_at_once: u32,
    /// A desktop notification when unattended backups fail or klanten become overdue (the app
    /// and `kluis backup --all`/`run-due` alike).
    #[serde(default = "notify_by_default")]
    pub notify_desktop: bool,
    /// The profiles whose plans "Pause plans" paused (the tray's, for all klanten at once):
    /// "Resume plans" resumes exactly these, so a plan paused by hand stays paused. Empty when
    /// plans are not paused as a whole.
    #[serde(default)]
    pub paused_together: Vec<String>,
    /// How unattended backups' files are named (see [`crate::file_names`]); the default when
    /// none is set.
    #[serde(default)]
    pub file_name_template: Option<String>,
    /// E-mail through the office's SMTP server, if set up (Settings → E-mail): kept as data
    /// this crate does not interpret. kluis-reporting, which sends the mail, reads and writes
    /// it (`kluis_reporting::mail_settings`), and the UI gets it from there, typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub mail: Option<serde_json::Value>,
    /// One speed limit for all downloads together (the app's and `kluis`'s unattended runs),
    /// if set.
    #[serde(default)]
    pub bandwidth: Option<kluis_core::download::bandwidth::BandwidthLimit>,
    /// No backup is asked for while the disk it goes to has less free than this many MiB
    /// (the app's and `kluis`'s); [`kluis_core::download::room::DEFAULT_MIN_FREE_MIB`] when
    /// not set.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub min_free_mib: Option<u64>,
    /// Where a second copy of each backup is kept, off this computer (kluis-copies): every
    /// klant's backups go to each.
    #[serde(default)]
    pub copy_targets: Vec<kluis_copies::CopyTarget>,
    /// A newer Kluis is installed by itself at a quiet moment (the app, where it can install
    /// one: Windows); otherwise only when asked.
    #[serde(default)]
    pub install_updates: bool,
    /// The office's recovery kit, once made: its public key (the private half is only in the
    /// kit), and this computer as its catalogs name it.
    #[serde(default)]
    pub recovery: Option<RecoverySetting>,
    /// The office this PC joined (the office hub: `kluis office join`), if any: its PCs then
    /// back each klant up once per slot between them. Its two keys are in the keyring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub office: Option<kluis_office::Membership>,
    /// The language the window shows, as it last said (none until it did): the tray speaks
    /// it too ([`crate::Language::or_from_os`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::language::lenient"
    )]
    pub language: Option<crate::Language>,
}

/// The recovery kit as this computer keeps it (see kluis-recovery): never the private key.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecoverySetting {
    /// The office key's public half (`age1…`) and its fingerprint, as the kit shows it.
    pub office_key: String,
    pub fingerprint: String,
    /// When the kit was made (Unix milliseconds).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub made_ms: i64,
    /// This computer in the catalogs: an id made once, and the name the office knows it by.
    pub pc_id: String,
    pub pc_name: String,
    /// The lost computers this one carries on for (`kluis recover adopt`), said in its
    /// catalogs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub adopted: Vec<kluis_recovery::Adoption>,
}

/// `mib` MiB in bytes (saturating), or the default minimum free space when none is given.
pub fn mib_to_bytes(mib: Option<u64>) -> u64 {
    mib.unwrap_or(kluis_core::download::room::DEFAULT_MIN_FREE_MIB)
        .saturating_mul(1024 * 1024)
}

fn notify_by_default() -> bool {
    true
}

impl Settings {
    /// The free space a backup's disk must have before it is asked for, in bytes: the
    /// office's minimum, else the default (the app's and `kluis`'s alike).
    pub fn min_free_bytes(&self) -> u64 {
        mib_to_bytes(self.min_free_mib)
    }

    /// The language the tray speaks: the window's, else the OS's.
    pub fn language(&self) -> crate::Language {
        crate::Language::or_from_os(self.language)
    }

    /// Whether plans are paused as a whole ("Pause plans").
    pub fn plans_paused(&self) -> bool {
        !self.paused_together.is_empty()
    }

    /// The template unattended backups' files are named by.
    pub fn file_names(&self) -> crate::FileNameTemplate {
        crate::FileNameTemplate::of_setting(self.file_name_template.as_deref())
    }
}

/// Backups running at once unless the user chose otherwise: two keep a 2-core office PC and
/// the service responsive while a batch of klanten runs.
pub const DEFAULT_AT_ONCE: u32 = 2;
/// The most the settings allow: more only makes the service and the disk queue.
pub const MAX_AT_ONCE: u32 = 8;

fn default_at_once() -> u32 {
    DEFAULT_AT_ONCE
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            save_folder: None,
            callback: kluis_core::CallbackChoice::default(),
            relay_secret_saved: false,
            unattended_at_once: DEFAULT_AT_ONCE,
            notify_desktop: true,
            paused_together: Vec::new(),
            file_name_template: None,
            mail: None,
            bandwidth: None,
            min_free_mib: None,
            copy_targets: Vec::new(),
            install_updates: false,
            recovery: None,
            office: None,
            language: None,
        }
    }
}
