//! Windows: the name and icon Kluis's notifications show. A program that is not a packaged app
//! shows a toast under an application user model ID (AUMID) the shell must know — from a Start
//! menu shortcut that carries it, or registered for the user under
//! `HKEY_CURRENT_USER\Software\Classes\AppUserModelId\<AUMID>` with a display name and an icon
//! (what Microsoft's Windows App SDK does for unpackaged apps). Without one, notify-rust sends
//! them as Windows PowerShell's: "Windows PowerShell" and its icon on every notice of Kluis's.
//!
//! Each notification of a Kluis program (the window, kluis-tray, `kluis` from a schedule)
//! registers Kluis's first — for every kind of install, the zip's too; again each time, in
//! case the key was removed meanwhile. The icon it names is written to
//! `%LOCALAPPDATA%\nl.kluis.desktop`, the folder of the window's web view data, with Windows'
//! ordinary permissions — not to Kluis's own `%LOCALAPPDATA%\Kluis`, which is the user's alone
//! and which what draws the toast may read as another account. When the registration cannot be written, the toast goes out as
//! PowerShell's, as before: a notice shown under another name beats none. The setup's
//! uninstaller removes both.

use std::path::{Path, PathBuf};

/// Kluis's AUMID: its Tauri identifier.
pub const APP_ID: &str = "nl.kluis.desktop";

/// The name a notification shows.
const DISPLAY_NAME: &str = "Kluis";

/// The icon a notification shows (the app's, 128 px).
const ICON_PNG: &[u8] = include_bytes!("../../../../icons/128x128.png");

/// Its file's name, in `%LOCALAPPDATA%\<APP_ID>`.
const ICON_FILE: &str = "notification-icon.png";

/// Kluis's AUMID, registered (again) for this toast, else none. Again for each: a key removed
/// while Kluis runs (the setup's uninstaller while the zip's Kluis runs, a cleaning tool) would
/// otherwise leave its toasts under an AUMID Windows no longer knows, which it may drop unseen;
/// two registry values and an icon compared are nothing beside a toast.
pub fn registered() -> Option<&'static str> {
    let icon_folder = directories::BaseDirs::new().map(|dirs| dirs.data_local_dir().join(APP_ID));
    match register(&key(APP_ID), icon_folder.as_deref()) {
        Ok(()) => Some(APP_ID),
        Err(e) => {
            tracing::warn!("notifications show as from PowerShell: {e}");
            None
        }
    }
}

/// The registry key of AUMID `id`, under `HKEY_CURRENT_USER`.
fn key(id: &str) -> String {
    format!(r"Software\Classes\AppUserModelId\{id}")
}

/// Registers the display name under `key`, and the icon written into `icon_folder` (an icon
/// that cannot be written is left out: the toast then shows a plain one).
fn register(key: &str, icon_folder: Option<&Path>) -> Result<(), String> {
    let icon = icon_folder.and_then(|folder| match write_icon(folder) {
        Ok(path) => Some(path),
        Err(e) => {
            tracing::warn!("the notifications' icon could not be written: {e}");
            None
        }
    });
    let mut values = vec![("DisplayName", DISPLAY_NAME.to_string())];
    if let Some(icon) = icon {
        values.push(("IconUri", icon.display().to_string()));
    }
    registry::set_strings(key, &values)
}

/// Writes the icon into `folder` unless it is there already, whole (a new file, then renamed:
/// never half an icon).
fn write_icon(folder: &Path) -> std::io::Result<PathBuf> {
    let path = folder.join(ICON_FILE);
    // (Its length first: a large file put there is not read whole.)
    let same_length = std::fs::metadata(&path).is_ok_and(|m| m.len() == ICON_PNG.len() as u64);
    if same_length && std::fs::read(&path).is_ok_and(|held| held == ICON_PNG) {
        return Ok(path);
    }
    std::fs::create_dir_all(folder)?;
    let part = folder.join(format!("{ICON_FILE}.{}.part", std::process::id()));
    std::fs::write(&part, ICON_PNG)?;
    std::fs::rename(&part, &path).inspect_err(|_| drop(std::fs::remove_file(&part)))?;
    Ok(path)
}

mod registry {
    use windows_sys::Win32::System::Registry::{
        RegCloseKey, RegCreateKeyExW, RegSetValueExW, HKEY, HKEY_CURRENT_USER, KEY_SET_VALUE,
        REG_OPTION_NON_VOLATILE, REG_SZ,
    };

    fn wide(text: &str) -> Vec<u16> {
        text.encode_utf16().chain(Some(0)).collect()
    }

    /// Sets the string values `values` under `key` of `HKEY_CURRENT_USER`, made if missing.
    pub(super) fn set_strings(key: &str, values: &[(&str, String)]) -> Result<(), String> {
        let mut handle: HKEY = std::ptr::null_mut();
        let key_name = wide(key);
        // SAFETY: a NUL-terminated name, and `handle` to receive the opened key.
        let status = unsafe {
            RegCreateKeyExW(
                HKEY_CURRENT_USER,
                key_name.as_ptr(),
                0,
                std::ptr::null(),
                REG_OPTION_NON_VOLATILE,
                KEY_SET_VALUE,
                std::ptr::null(),
                &mut handle,
                std::ptr::null_mut(),
            )
        };
        if status != 0 {
            return Err(format!(
                "the registry key could not be made (error {status})"
            ));
        }
        let mut result = Ok(());
        for (name, value) in values {
            let name = wide(name);
            let data = wide(value);
            // SAFETY: an open key, a NUL-terminated name, and `data`'s bytes with their length.
            let status = unsafe {
                RegSetValueExW(
                    handle,
                    name.as_ptr(),
                    0,
                    REG_SZ,
                    data.as_ptr().cast(),
                    (data.len() * 2) as u32,
                )
            };
            if status != 0 {
                result = Err(format!(
                    "a registry value could not be written (error {status})"
                ));
                break;
            }
        }
        // SAFETY: the key opened above, closed once.
        unsafe { RegCloseKey(handle) };
        result
    }

    /// The string `value` under `key` of `HKEY_CURRENT_USER` (for the tests).
    #[cfg(test)]
    pub(super) fn string(key: &str, value: &str) -> Option<String> {
        use windows_sys::Win32::System::Registry::{RegGetValueW, RRF_RT_REG_SZ};
        let (key, value) = (wide(key), wide(value));
        let mut buffer = vec![0u16; 1024];
        let mut size = (buffer.len() * 2) as u32;
        // SAFETY: NUL-terminated names; `buffer` holds `size` bytes.
        let status = unsafe {
            RegGetValueW(
                HKEY_CURRENT_USER,
                key.as_ptr(),
                value.as_ptr(),
                RRF_RT_REG_SZ,
                std::ptr::null_mut(),
                buffer.as_mut_ptr().cast(),
                &mut size,
            )
        };
        (status == 0).then(|| {
            let chars = (size as usize / 2).saturating_sub(1);
            String::from_utf16_lossy(&buffer[..chars])
        })
    }

    /// Removes `key` of `HKEY_CURRENT_USER` and what it holds (for the tests).
    #[cfg(test)]
    pub(super) fn remove(key: &str) {
        let key = wide(key);
        // SAFETY: a NUL-terminated name.
        unsafe {
            windows_sys::Win32::System::Registry::RegDeleteTreeW(HKEY_CURRENT_USER, key.as_ptr())
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registration names Kluis and its icon, written whole where the toast reads it; a
    /// second one (the next program's) keeps the same.
    #[test]
    fn the_registration_names_kluis_and_its_icon() {
        let folder = tempfile::tempdir().unwrap();
        let key = key(&format!("nl.kluis.test-{}", std::process::id()));
        register(&key, Some(folder.path())).unwrap();
        assert_eq!(
            registry::string(&key, "DisplayName").as_deref(),
            Some("Kluis")
        );
        let icon = registry::string(&key, "IconUri").expect("an icon is named");
        assert_eq!(Path::new(&icon), folder.path().join(ICON_FILE));
        assert_eq!(std::fs::read(&icon).unwrap(), ICON_PNG, "the icon is whole");

        register(&key, Some(folder.path())).unwrap();
        assert_eq!(registry::string(&key, "IconUri"), Some(icon));
        let left: Vec<_> = std::fs::read_dir(folder.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no part file is left: {left:?}");
        registry::remove(&key);
        assert_eq!(registry::string(&key, "DisplayName"), None);
    }

    /// A desktop notification registers Kluis's name and icon before it is shown (whether
    /// Windows then shows it or, as under Wine, cannot).
    #[tokio::test]
    async fn a_notification_registers_kluis_first() {
        use crate::Notifier;
        let _ = crate::DesktopNotifier
            .notify(&crate::Alert::test(kluis_profiles::Language::En))
            .await;
        let key = key(APP_ID);
        assert_eq!(
            registry::string(&key, "DisplayName").as_deref(),
            Some("Kluis")
        );
        let icon = registry::string(&key, "IconUri").expect("an icon is named");
        assert_eq!(std::fs::read(&icon).unwrap(), ICON_PNG);
        registry::remove(&key);
        std::fs::remove_file(icon).unwrap();
    }

    /// An icon that cannot be written leaves the name registered, without an icon.
    #[test]
    fn an_icon_not_written_leaves_the_name() {
        let folder = tempfile::tempdir().unwrap();
        let blocked = folder.path().join("a file, not a folder");
        std::fs::write(&blocked, b"x").unwrap();
        let key = key(&format!("nl.kluis.test-noicon-{}", std::process::id()));
        register(&key, Some(&blocked)).unwrap();
        assert_eq!(
            registry::string(&key, "DisplayName").as_deref(),
            Some("Kluis")
        );
        assert_eq!(registry::string(&key, "IconUri"), None);
        registry::remove(&key);
    }
}
