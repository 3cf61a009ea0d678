//! The import itself, after the preview: each row's klant signed in against its service — a
//! few at a time — and saved only when it signs in: its secrets to the secret store (the
//! keyring, or `KLUIS_SECRETS_DIR`), the profile to the profiles file. A row of a saved klant
//! updates it, so importing a file again doubles no one. The CLI's `kluis profiles import` and
//! the app's *Import klanten…* both run it; each says the outcomes its own way.
//!
//! Nothing is half-stored: a new klant's secrets are removed again when its profile cannot be
//! saved, and a stop (Ctrl-C, the app's Cancel) lets the klanten signing in at that moment
//! finish whole while the rows not begun are not tried.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use kluis_core::plan::Plan;
use kluis_core::{Code, Error, Result, Secret, ServiceClient, Session};
use kluis_profiles::secrets::off_thread;
use kluis_profiles::{Profile, ProfileError, ProfileStore, SecretKind, SecretStore};
use serde::Serialize;

use crate::preview::{Action, Planned};

/// Klanten signed in at once unless told otherwise: a service answers a handful of sign-ins
/// at a time without queueing them, and 500 klanten take well under a minute.
pub const DEFAULT_AT_ONCE: usize = 8;

/// How a row ended.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A dry run: would be added / updated.
    WouldAdd,
    WouldUpdate,
    Added,
    Updated,
    /// The service refused the username, password or api key: nothing saved.
    WrongPassword,
    /// The service could not be reached: nothing saved; import again later.
    Unreachable,
    /// Another failure (see its message): nothing saved.
    Failed,
    /// Not imported: the row's problems.
    Skipped,
    /// Not tried: the import was stopped before its turn.
    Cancelled,
}

impl Outcome {
    /// Whether the row is (or, in a dry run, would be) imported.
    pub fn imported(self) -> bool {
        matches!(
            self,
            Outcome::Added | Outcome::Updated | Outcome::WouldAdd | Outcome::WouldUpdate
        )
    }

    /// Its name as the CLI's output and the app's table say it (`wrong_password`).
    pub fn word(self) -> &'static str {
        match self {
            Outcome::WouldAdd => "would_add",
            Outcome::WouldUpdate => "would_update",
            Outcome::Added => "added",
            Outcome::Updated => "updated",
            Outcome::WrongPassword => "wrong_password",
            Outcome::Unreachable => "unreachable",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// One row's result.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct RowOutcome {
    /// Its line in the file.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub line: u64,
    pub name: String,
    pub outcome: Outcome,
    /// Why, for a row not imported (no secret in it: the service's words or the row's
    /// problems).
    pub why: Option<String>,
    /// The service address a (would-be) updated klant was moved from, to the row's.
    pub moved_from: Option<String>,
}

/// What a dry run says of `rows`: what each would come to, nothing stored.
pub fn dry_run(rows: &[Planned]) -> Vec<RowOutcome> {
    rows.iter()
        .map(|row| {
            let outcome = match row.action {
                Action::Add => Outcome::WouldAdd,
                Action::Update => Outcome::WouldUpdate,
                Action::Skip => Outcome::Skipped,
            };
            said(row, outcome, skipped_why(row))
        })
        .collect()
}

fn said(row: &Planned, outcome: Outcome, why: Option<String>) -> RowOutcome {
    let updated = matches!(outcome, Outcome::Updated | Outcome::WouldUpdate);
    RowOutcome {
        line: row.line,
        name: row.name.clone(),
        outcome,
        why,
        moved_from: row.moves_from.clone().filter(|_| updated),
    }
}

fn skipped_why(row: &Planned) -> Option<String> {
    (row.action == Action::Skip).then(|| row.problems.join("; "))
}

/// What importing needs besides the rows.
pub struct Importer<'a> {
    pub profiles: &'a ProfileStore,
    /// Where the klanten's secrets go.
    pub secrets: Arc<dyn SecretStore>,
    /// The office's api key, for rows without one (one key serves every klant of a third
    /// party: the service's document).
    pub office_key: Option<Secret>,
    /// CA certificates trusted when signing in (a service with a private CA) by profiles
    /// without their own.
    pub ca_pem: Option<String>,
    /// Whether a new profile keeps `ca_pem` as its own trusted CA (the CLI's `--ca-cert`); the
    /// app trusts its `KLUIS_CA_CERT` for every profile already.
    pub keep_ca: bool,
    /// The CAs saved klanten trust, by their service address: a new klant at one of those
    /// addresses trusts it too (an office behind a TLS-inspecting proxy, a service with a
    /// private CA, set up once for its first klant).
    pub known_cas: HashMap<String, String>,
    /// Klanten signed in at once (at least one).
    pub at_once: usize,
    /// Set to stop: rows not begun are not tried (those signing in finish whole).
    pub stopping: Arc<AtomicBool>,
}

impl Importer<'_> {
    /// `rows` imported (see the module's text): their outcomes in the rows' order;
    /// `finished(index, outcome)` hears each row as it ends, in the order they end.
    pub async fn run(
        &self,
        rows: &[Planned],
        mut finished: impl FnMut(usize, &RowOutcome),
    ) -> Vec<RowOutcome> {
        let mut outcomes: Vec<Option<RowOutcome>> = vec![None; rows.len()];
        // By index, not by `&Planned`: a closure taking a reference makes the future not
        // `Send` for every lifetime, which the app's command needs (rust-lang/rust#64552).
        // A row begins when it takes one of the `at_once` places: whether it is tried is told
        // then (a stop lets the rows in their places finish), not when its sign-in is first
        // polled, which may be later.
        let mut ending = stream::iter(0..rows.len())
            .map(|i| {
                let begun = !self.stopping.load(Ordering::SeqCst);
                async move { (i, self.import(&rows[i], begun).await) }
            })
            .buffer_unordered(self.at_once.max(1));
        while let Some((i, outcome)) = ending.next().await {
            finished(i, &outcome);
            outcomes[i] = Some(outcome);
        }
        outcomes.into_iter().flatten().collect()
    }

    /// `row` imported: signed in and saved, or why not (not tried unless `begun`).
    async fn import(&self, row: &Planned, begun: bool) -> RowOutcome {
        if row.action == Action::Skip {
            return said(row, Outcome::Skipped, skipped_why(row));
        }
        if !begun {
            let why = "not tried: the import was stopped".to_string();
            return said(row, Outcome::Cancelled, Some(why));
        }
        let done = match row.action {
            Action::Add => self.add(row).await.map(|()| Outcome::Added),
            _ => self.update(row).await.map(|()| Outcome::Updated),
        };
        match done {
            Ok(outcome) => said(row, outcome, None),
            Err(e) => {
                let outcome = match e.code() {
                    Code::AuthFailed => Outcome::WrongPassword,
                    Code::Network | Code::Certificate | Code::ServiceError => Outcome::Unreachable,
                    _ => Outcome::Failed,
                };
                said(row, outcome, Some(e.to_string()))
            }
        }
    }

    /// The settings `row` sets, on `profile`.
    fn set(&self, profile: &mut Profile, row: &Planned) -> Result<()> {
        profile.username = row.username.clone();
        if let Some(base_url) = &row.base_url {
            // (The same address written otherwise leaves the saved one as it is.)
            if !crate::preview::same_address(&profile.base_url, base_url) {
                profile.base_url = base_url.clone();
            }
        }
        if let Some(schedule) = &row.schedule {
            profile.plan = Some(Plan::new(schedule.clone(), jiff::Timestamp::now())?);
        }
        if let Some(retention) = &row.retention {
            profile.retention = retention.clone();
        }
        if !row.tags.is_empty() {
            profile.tags = row.tags.clone();
        }
        Ok(())
    }

    async fn on_store<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn SecretStore) -> kluis_profiles::ProfileResult<T> + Send + 'static,
    ) -> Result<T> {
        off_thread(self.secrets.clone(), work)
            .await
            .map_err(ProfileError::into_core)
    }

    /// Signs `profile` in with `api_key` and `password` (only a klant that signs in is
    /// saved), then stores them as its secrets — those that differ from `saved` (its secrets
    /// now: importing a file again writes no unchanged secret, and a keyring with a thousand
    /// items is slow to write to).
    async fn sign_in_and_store(
        &self,
        profile: &Profile,
        api_key: Secret,
        password: Secret,
        saved: [Option<Secret>; 2],
    ) -> Result<()> {
        let config =
            profile.service_config(api_key.clone(), password.clone(), self.ca_pem.as_deref())?;
        let session = Session::new(ServiceClient::new(config)?);
        session.sign_in().await?;
        let id = profile.id.clone();
        let [saved_key, saved_password] = saved;
        let changed = [
            (SecretKind::ApiKey, api_key, saved_key),
            (SecretKind::Password, password, saved_password),
        ]
        .into_iter()
        .filter(|(_, new, saved)| saved.as_ref() != Some(new))
        .map(|(kind, new, _)| (kind, new))
        .collect::<Vec<_>>();
        if changed.is_empty() {
            return Ok(());
        }
        self.on_store(move |store| {
            for (kind, secret) in &changed {
                store.set(&id, *kind, secret)?;
            }
            Ok(())
        })
        .await
    }

    /// A new klant: signed in, its secrets stored, then the profile saved (its secrets
    /// removed again when it cannot be: nothing half-stored).
    async fn add(&self, row: &Planned) -> Result<()> {
        let mut profile = Profile::new(
            &row.name,
            row.base_url.as_deref().unwrap_or_default(),
            &row.username,
        );
        profile.extra_ca_pem = match self.known_cas.get(&profile.base_url) {
            Some(pem) => Some(pem.clone()),
            None => self.ca_pem.clone().filter(|_| self.keep_ca),
        };
        self.set(&mut profile, row)?;
        let api_key = (row.api_key.as_ref().or(self.office_key.as_ref()).cloned())
            .ok_or_else(|| Error::Config("no api key".into()))?;
        let password = (row.password.clone()).ok_or_else(|| Error::Config("no password".into()))?;
        self.sign_in_and_store(&profile, api_key, password, [None, None])
            .await?;
        if let Err(e) = self.profiles.put(profile.clone()) {
            let id = profile.id.clone();
            let _ = self
                .on_store(move |store| {
                    store.delete(&id, SecretKind::ApiKey)?;
                    store.delete(&id, SecretKind::Password)
                })
                .await;
            return Err(e.into_core());
        }
        Ok(())
    }

    /// A saved klant: its settings set; with a password in the row, signed in with the new
    /// secrets first and those stored (a username changes only with its password). Moved to
    /// another service address only by signing in there with the secrets the import gives —
    /// never the saved ones, which go to no address they were not saved for.
    async fn update(&self, row: &Planned) -> Result<()> {
        let mut profile = self
            .profiles
            .find(&row.name)
            .map_err(ProfileError::into_core)?;
        let moves = (row.base_url.as_deref())
            .is_some_and(|url| !crate::preview::same_address(&profile.base_url, url));
        if moves {
            return self.move_to(profile, row).await;
        }
        let new_login =
            profile.username != row.username || row.password.is_some() || row.api_key.is_some();
        self.set(&mut profile, row)?;
        let id = profile.id.clone();
        let [saved_key, saved_password] = self
            .on_store(move |store| {
                Ok([
                    store.get(&id, SecretKind::ApiKey)?,
                    store.get(&id, SecretKind::Password)?,
                ])
            })
            .await?;
        // A klant without saved secrets (one taken over from a lost computer) is not
        // "updated" by a row that gives none: its backups could still not run.
        if !new_login && (saved_key.is_none() || saved_password.is_none()) {
            return Err(Error::Config(
                "no password or api key is saved here for this klant: give its password in the file (or with --secrets) and its api key in the file or KLUIS_API_KEY".into(),
            ));
        }
        if new_login {
            let password = row.password.clone().ok_or_else(|| {
                Error::Config(format!(
                    "a new username ({}) needs its password in the file",
                    row.username
                ))
            })?;
            let api_key = (row.api_key.clone())
                .or(saved_key.clone())
                .or(self.office_key.clone())
                .ok_or_else(|| Error::Config("no api key".into()))?;
            let saved = [saved_key, saved_password];
            self.sign_in_and_store(&profile, api_key, password, saved)
                .await?;
        }
        self.profiles.put(profile).map_err(ProfileError::into_core)
    }
}

impl Importer<'_> {
    /// Saved klant `profile` moved to `row`'s service address: signed in there with the row's
    /// password (from the file or a password manager's export for that address) and the row's
    /// api key or the office's given for this import, which are then its secrets; the CA it
    /// trusts is the one for its new address, as a new klant's would be. The preview refused
    /// a move without them; they are asked for here again, as the rows may come from elsewhere.
    async fn move_to(&self, mut profile: Profile, row: &Planned) -> Result<()> {
        let refused = |what: &str| {
            Error::Config(format!(
                "a new service address needs {what} in the import: the saved one is never sent to another address"
            ))
        };
        let password = row
            .password
            .clone()
            .ok_or_else(|| refused("the klant's password"))?;
        let api_key = (row.api_key.as_ref().or(self.office_key.as_ref()).cloned())
            .ok_or_else(|| refused("an api key"))?;
        self.set(&mut profile, row)?;
        profile.extra_ca_pem = match self.known_cas.get(&profile.base_url) {
            Some(pem) => Some(pem.clone()),
            None => self.ca_pem.clone().filter(|_| self.keep_ca),
        };
        let id = profile.id.clone();
        let saved = self
            .on_store(move |store| {
                Ok([
                    store.get(&id, SecretKind::ApiKey)?,
                    store.get(&id, SecretKind::Password)?,
                ])
            })
            .await?;
        self.sign_in_and_store(&profile, api_key, password, saved)
            .await?;
        self.profiles.put(profile).map_err(ProfileError::into_core)
    }
}

/// The CAs `profiles` trust, by service address (see [`Importer::known_cas`]).
pub fn known_cas(profiles: &[Profile]) -> HashMap<String, String> {
    (profiles.iter())
        .filter(|p| !p.demo)
        .filter_map(|p| Some((p.base_url.clone(), p.extra_ca_pem.clone()?)))
        .collect()
}
