//! The office's recovery kit as this computer makes it (kluis-recovery's key, the catalogs'
//! [`crate::catalogs`]): [`new_kit`] makes a recovery key and the setting this computer keeps
//! (its public half only), [`keep_kit`] keeps that setting and the kit's vouch key, and [`page`]
//! is the kit's page — the key both ways, where the copies are and how to add each target
//! again, and the steps of a recovery — for `kluis recovery-kit` and the app's Settings alike.
//! The private key is on the page and nowhere else this computer keeps.

use kluis_recovery::RecoveryKey;

use crate::secrets::{SecretKind, SecretStore, APP};
use crate::settings::RecoverySetting;
use crate::store::ProfileStore;
use crate::ProfileResult;

/// A new recovery key, and the setting this computer keeps of it: its id kept (a new one
/// when it had none), its name as given or kept (else the host's), the computers it carries
/// on for kept.
pub fn new_kit(
    before: Option<&RecoverySetting>,
    pc_name: Option<String>,
) -> (RecoveryKey, RecoverySetting) {
    let key = RecoveryKey::generate();
    let office = key.office_key();
    let setting = RecoverySetting {
        office_key: office.to_text(),
        fingerprint: office.fingerprint(),
        made_ms: kluis_core::clock::now_ms(),
        pc_id: (before.map(|r| r.pc_id.clone()))
            .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string()),
        pc_name: pc_name
            .or_else(|| before.map(|r| r.pc_name.clone()))
            .unwrap_or_else(host_name),
        adopted: before.map(|r| r.adopted.clone()).unwrap_or_default(),
    };
    (key, setting)
}

/// `setting` kept as this computer's kit, with `key`'s vouch key in `secrets` (first: a kit
/// whose vouch key could not be kept is not made). Blocking (the keyring).
pub fn keep_kit(
    profiles: &ProfileStore,
    secrets: &dyn SecretStore,
    key: &RecoveryKey,
    setting: RecoverySetting,
) -> ProfileResult<()> {
    secrets.set(APP, SecretKind::RecoveryVouch, &key.vouch_key().to_text())?;
    profiles.update_settings(|settings| {
        settings.recovery = Some(setting);
        Ok(())
    })?;
    Ok(())
}

/// The setting this computer keeps to write its catalogs under the office's kit `key` (one
/// made on another computer, or given to carry on for a lost one): its own id and name kept
/// (or `pc_name`, or its host name), the computers it carries on for kept; the kit's date is
/// when it was joined here.
pub fn joined(
    key: &RecoveryKey,
    before: Option<&RecoverySetting>,
    pc_name: Option<String>,
) -> RecoverySetting {
    let office = key.office_key();
    RecoverySetting {
        office_key: office.to_text(),
        fingerprint: office.fingerprint(),
        made_ms: (before.filter(|b| b.fingerprint == office.fingerprint()))
            .map_or_else(kluis_core::clock::now_ms, |b| b.made_ms),
        pc_id: (before.map(|b| b.pc_id.clone()))
            .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string()),
        pc_name: pc_name
            .or_else(|| before.map(|b| b.pc_name.clone()))
            .unwrap_or_else(host_name),
        adopted: before.map(|b| b.adopted.clone()).unwrap_or_default(),
    }
}

/// This computer's name, as the catalogs name it unless told.
pub fn host_name() -> String {
    std::env::var("COMPUTERNAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "this computer".into())
}

/// The kit's page: the key (age's text and 24 words), where the copies are and where each
/// target's own secret is kept, the date, and the steps of a recovery.
pub fn page(
    key: &RecoveryKey,
    setting: &RecoverySetting,
    targets: &[kluis_copies::CopyTarget],
    renewed: bool,
) -> String {
    let made = jiff::Timestamp::from_millisecond(setting.made_ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default();
    let numbered: String = (key.to_words().expose().split(' ').enumerate())
        .map(|(i, w)| {
            format!(
                "{:>2}. {w:<10}{}",
                i + 1,
                if (i + 1) % 4 == 0 { "\n" } else { "  " }
            )
        })
        .collect();
    let mut page = format!(
        "KLUIS RECOVERY KIT — {made}\n\
         \n\
         Office key fingerprint (not secret: the catalogs on the copy targets name it): {fingerprint}\n\
         Made on: {pc}\n\
         \n\
         The recovery key. Keep it secret: with the copy targets it opens every catalog, and every\n\
         backup encrypted with a passphrase (not one encrypted to a recipient: keep that identity\n\
         file too).\n\
         \n  {text}\n\n\
         The same key as 24 words, to type from paper:\n\n{numbered}\n",
        fingerprint = setting.fingerprint,
        pc = setting.pc_name,
        text = key.to_text().expose(),
    );
    page.push_str(
        "Where the copies are, and how to add each again on a new computer (its secret from the\n\
         office's password manager):\n",
    );
    if targets.is_empty() {
        page.push_str("  (no copy target yet: add one, or these copies do not exist)\n");
    }
    for target in targets {
        page.push_str(&format!(
            "  - {}: {} — {}\n      {}\n",
            target.name,
            place_of(&target.place),
            what_to_keep(target),
            add_again(target)
        ));
    }
    let name = targets.first().map_or("NAME", |t| t.name.as_str());
    page.push_str(&format!(
        "\nOn a new computer, when this one is lost — in the app: Restore from a copy… on its first\n\
         screen (add the copy target with the values above, give the key below, then Restore… or\n\
         Carry on for this office); or on the command line:\n\
         \x20 1. Install Kluis, and add each copy target above again (the commands above).\n\
         \x20 2. Put the recovery key in a file, say key.txt: its AGE-SECRET-KEY-1… line, or the 24 words\n\
         \x20    as numbered above. Then see every klant's backups there:\n\
         \x20      kluis recover list --target \"{name}\" --recovery-key key.txt\n\
         \x20 3. When a klant's files are needed now, restore its newest backup into a new folder:\n\
         \x20      kluis recover restore --target \"{name}\" --recovery-key key.txt --klant \"KLANT\" --to FOLDER\n\
         \x20 4. Carry on backing up here: its klanten, plans and copies (do not make a new kit first):\n\
         \x20      kluis recover adopt --target \"{name}\" --recovery-key key.txt\n\
         \x20    then give each klant its password and api key (kluis profiles import), choose where\n\
         \x20    backups are saved and start the nightly runs (kluis schedule install --out FOLDER, or\n\
         \x20    the app), as docs/recovery.md says. This page stays valid.\n\
         \x20 5. Delete key.txt, and put this page back in the safe.\n"
    ));
    if renewed {
        page.push_str("\nThis kit replaces the one made before: the catalogs are written again under it now, and\nthe old kit opens nothing written from now on. Destroy the old page once this one is checked.\n");
    }
    page
}

/// The kit's page asked for with the targets' secrets: refused when one that logs in with a
/// secret came without it (the keyring could not be read) — a page said to hold them must.
pub fn with_every_secret(targets: &[kluis_copies::CopyTarget]) -> kluis_core::Result<()> {
    use kluis_copies::sftp::SftpLogin;
    let missing: Vec<&str> = (targets.iter())
        .filter(|t| t.secret.is_none())
        .filter(|t| match &t.place {
            kluis_copies::Place::S3(_) => true,
            kluis_copies::Place::Sftp(sftp) => matches!(sftp.login, SftpLogin::Password),
            kluis_copies::Place::Folder { .. } => false,
        })
        .map(|t| t.name.as_str())
        .collect();
    match missing.is_empty() {
        true => Ok(()),
        false => Err(kluis_core::Error::Config(format!(
            "The secret of copy target {} could not be read from the keyring: no kit is made with the targets' secrets (make it without them, or unlock the keyring and try again).",
            missing.join(", ")
        ))),
    }
}

/// What must be kept, besides this kit, to reach a target from a new computer — its secret
/// itself when `target` carries it (the kit made with the targets' secrets, on request, for an
/// office that keeps the page in a safe).
fn what_to_keep(target: &kluis_copies::CopyTarget) -> String {
    let kept = what_to_keep_of(&target.place);
    match (&target.place, &target.secret) {
        (kluis_copies::Place::Folder { .. }, _) | (_, None) => kept,
        (_, Some(secret)) => format!(
            "{kept}\n      its secret (printed on request: this page is as secret as the target): {}",
            secret.expose()
        ),
    }
}

fn what_to_keep_of(place: &kluis_copies::Place) -> String {
    match place {
        kluis_copies::Place::Folder { .. } => "no secret".into(),
        kluis_copies::Place::S3(s3) => {
            let ca = match &s3.ca_cert {
                Some(_) => "; and the server's CA certificate (--s3-ca-cert)",
                None => "",
            };
            format!("its secret key is in this computer's keyring: keep it in the office's password manager too{ca}")
        }
        kluis_copies::Place::Sftp(sftp) => match &sftp.login {
            kluis_copies::sftp::SftpLogin::Password => {
                "its password is in this computer's keyring: keep it in the office's password manager too".into()
            }
            kluis_copies::sftp::SftpLogin::Key { key_file } => format!(
                "logs in with the key file {key_file}: keep a copy of it (and its passphrase) off this computer"
            ),
        },
    }
}

/// The `kluis copy-target add` that adds `target` again (its secret from standard input).
fn add_again(target: &kluis_copies::CopyTarget) -> String {
    let quoted = |text: &str| match text.contains([' ', '"', '\'', '\\', '$', '`']) {
        true => format!("'{}'", text.replace('\'', "'\\''")),
        false => text.to_string(),
    };
    let mut words = vec!["kluis copy-target add".to_string(), quoted(&target.name)];
    match &target.place {
        kluis_copies::Place::Folder { path } => words.push(format!("--folder {}", quoted(path))),
        kluis_copies::Place::S3(s3) => {
            words.push(format!("--s3-endpoint {}", quoted(&s3.endpoint)));
            words.push(format!("--s3-bucket {}", quoted(&s3.bucket)));
            words.push(format!("--s3-region {}", quoted(&s3.region)));
            if !s3.prefix.is_empty() {
                words.push(format!("--s3-prefix {}", quoted(&s3.prefix)));
            }
            if s3.path_style {
                words.push("--s3-path-style".into());
            }
            words.push(format!("--s3-access-key-id {}", quoted(&s3.access_key_id)));
            if s3.ca_cert.is_some() {
                words.push("--s3-ca-cert CA.pem".into());
            }
            if let Some(lock) = &s3.lock {
                let mode = match lock.mode {
                    kluis_copies::s3::LockMode::Governance => "governance",
                    kluis_copies::s3::LockMode::Compliance => "compliance",
                };
                words.push(format!(
                    "--s3-lock-days {} --s3-lock-mode {mode}",
                    lock.days
                ));
            }
            words.push("--stdin".into());
        }
        kluis_copies::Place::Sftp(sftp) => {
            words.push(format!("--sftp-host {}", quoted(&sftp.host)));
            if sftp.port != kluis_copies::sftp::SSH_PORT {
                words.push(format!("--sftp-port {}", sftp.port));
            }
            words.push(format!("--sftp-user {}", quoted(&sftp.user)));
            words.push(format!("--sftp-path {}", quoted(&sftp.path)));
            match &sftp.login {
                kluis_copies::sftp::SftpLogin::Key { key_file } => {
                    words.push(format!("--sftp-key {}", quoted(key_file)))
                }
                kluis_copies::sftp::SftpLogin::Password => words.push("--stdin".into()),
            }
            if !sftp.host_key.is_empty() {
                words.push(format!("--sftp-host-key {}", quoted(&sftp.host_key)));
            }
        }
    }
    let mut line = words.join(" ");
    // Its rule too: without it the new computer keeps every copy (never fewer than before).
    if let Some(rule) = &target.keep {
        let mut keep = vec![format!("kluis copy-target keep {}", quoted(&target.name))];
        for (flag, n) in [
            ("--keep-last", rule.keep_last),
            ("--keep-daily", rule.keep_daily),
            ("--keep-weekly", rule.keep_weekly),
            ("--keep-monthly", rule.keep_monthly),
        ] {
            if let Some(n) = n {
                keep.push(format!("{flag} {n}"));
            }
        }
        line.push_str(&format!("\n\x20    then: {}", keep.join(" ")));
    }
    line
}

/// Where a target's copies are, in words for the kit.
fn place_of(place: &kluis_copies::Place) -> String {
    match place {
        kluis_copies::Place::Folder { path } => format!("the folder {path}"),
        kluis_copies::Place::S3(s3) => s3.describe(),
        kluis_copies::Place::Sftp(sftp) => sftp.describe(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy target's own secret is on the kit's page only when the target is given with it
    /// (the kit made with the targets' secrets, on request); else the page says where to keep it.
    #[test]
    fn a_targets_secret_is_on_the_page_only_when_asked() {
        let place = kluis_copies::Place::S3(kluis_copies::s3::S3Place {
            endpoint: "https://s3.example.nl".into(),
            region: "nl-ams".into(),
            bucket: "office".into(),
            prefix: String::new(),
            path_style: false,
            access_key_id: "AK1".into(),
            lock: None,
            ca_cert: None,
        });
        let mut target = kluis_copies::CopyTarget::new("Cloud", place).unwrap();
        let (key, setting) = new_kit(None, Some("RECEPTIE".into()));
        let without = page(&key, &setting, std::slice::from_ref(&target), false);
        assert!(
            without.contains("keep it in the office's password manager too"),
            "{without}"
        );
        assert!(!without.contains("s3cr3t-key"));
        assert!(
            with_every_secret(std::slice::from_ref(&target)).is_err(),
            "asked with the secrets, one missing (the keyring not read): refused"
        );
        target.secret = Some(kluis_core::Secret::new("s3cr3t-key"));
        assert!(with_every_secret(std::slice::from_ref(&target)).is_ok());
        let with = page(&key, &setting, &[target], false);
        assert!(with.contains("its secret (printed on request"), "{with}");
        assert!(with.contains("s3cr3t-key"), "{with}");
    }
}
