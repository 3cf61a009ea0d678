//! Edit many at once: the klanten selected on the dashboard get one plan, retention rule,
//! encryption, set of copy targets, save folder or tag change in one go. First previewed — the page shows
//! what each klant has now and will have; what a new rule would remove now is counted here —
//! then set klant by klant through the same methods (and checks) as the one-klant form. The
//! change is checked whole before the first klant is touched, so a change that is refused
//! leaves every klant as it was.

use kluis_core::plan::Schedule;
use kluis_core::retention::Retention;
use kluis_core::Error;
use serde::{Deserialize, Serialize};

use super::{DesktopApp, EncryptionInput, PlanInput};
use crate::error::AppResult;
use crate::profiles::{Profile, ProfileView};

/// A retention rule for every klant selected (none: keep every backup).
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct RuleChange {
    pub rule: Option<Retention>,
}

/// The copy targets for every klant selected (none: every target, also later ones).
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct CopyToChange {
    pub targets: Option<Vec<String>>,
}

/// Where the klanten selected save their backups: a folder picked in the native dialog when
/// the change is applied (the page names no path), or each back to one under the office's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum FolderChange {
    Choose,
    Office,
}

/// What is set for every klant selected; a part left out (null) is left as each klant has it.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct ManyChange {
    pub plan: Option<PlanInput>,
    pub retention: Option<RuleChange>,
    /// A passphrase given is kept in the keyring for each klant.
    pub encryption: Option<EncryptionInput>,
    pub copy_to: Option<CopyToChange>,
    pub save_folder: Option<FolderChange>,
    /// Tags added to each klant, and taken off each (case aside).
    #[serde(default)]
    pub add_tags: Vec<String>,
    #[serde(default)]
    pub remove_tags: Vec<String>,
}

/// What the preview adds to what the page knows of a klant: how many of its kept backups the
/// new rule would remove now.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ManyPreview {
    pub profile_id: String,
    pub would_remove: u32,
}

impl ManyChange {
    fn is_empty(&self) -> bool {
        self.plan.is_none()
            && self.retention.is_none()
            && self.encryption.is_none()
            && self.copy_to.is_none()
            && self.save_folder.is_none()
            && self.add_tags.is_empty()
            && self.remove_tags.is_empty()
    }

    /// `profile`'s tags after the change.
    fn tags_of(&self, profile: &Profile) -> Vec<String> {
        let removed =
            |t: &String| (self.remove_tags.iter()).any(|r| r.trim().eq_ignore_ascii_case(t.trim()));
        (profile.tags.iter().chain(&self.add_tags))
            .filter(|t| !removed(t))
            .cloned()
            .collect()
    }
}

impl DesktopApp {
    /// What `change` would do to klanten `ids` that the page cannot tell by itself: per klant,
    /// the backups its new rule would remove now (nothing is changed).
    pub fn preview_many(&self, ids: &[String], change: &ManyChange) -> AppResult<Vec<ManyPreview>> {
        ids.iter()
            .map(|id| {
                self.shared.profiles.get(id)?;
                let would_remove = match change.retention.as_ref().and_then(|r| r.rule.clone()) {
                    Some(rule) => self.keeping.preview_retention(id, rule)?.len() as u32,
                    None => 0,
                };
                Ok(ManyPreview {
                    profile_id: id.clone(),
                    would_remove,
                })
            })
            .collect()
    }

    /// `change` set for each of klanten `ids` (see the module's text); the klanten as they are
    /// then.
    pub async fn edit_many(
        &self,
        ids: &[String],
        change: ManyChange,
    ) -> AppResult<Vec<ProfileView>> {
        let profiles = (ids.iter())
            .map(|id| self.shared.profiles.get(id))
            .collect::<Result<Vec<_>, _>>()?;
        let folder = match change.save_folder {
            Some(FolderChange::Choose) => match self.shared.dialogs().pick_folder().await {
                Some(folder) => Some(Some(folder)),
                // Cancelled: nothing is changed.
                None => return Ok(Vec::new()),
            },
            Some(FolderChange::Office) => Some(None),
            None => None,
        };
        let profiles: Vec<Profile> = match &folder {
            Some(folder) => (profiles.into_iter())
                .map(|p| Profile {
                    save_folder: folder.as_ref().map(|f| f.to_string_lossy().into_owned()),
                    ..p
                })
                .collect(),
            None => profiles,
        };
        self.check_many(&profiles, &change)?;
        let mut changed = Vec::with_capacity(ids.len());
        for profile in &profiles {
            let id = profile.id.as_str();
            if let Some(folder) = &folder {
                self.plans.set_klant_folder(id, folder.clone())?;
            }
            if let Some(plan) = &change.plan {
                self.plans.set_plan(id, plan.clone())?;
            }
            if let Some(retention) = &change.retention {
                self.keeping.set_retention(id, retention.rule.clone())?;
            }
            if let Some(copy_to) = &change.copy_to {
                self.keeping.set_copy_to(id, copy_to.targets.clone())?;
            }
            if let Some(encryption) = &change.encryption {
                self.accounts.set_encryption(id, encryption.clone()).await?;
            }
            if !change.add_tags.is_empty() || !change.remove_tags.is_empty() {
                self.shared
                    .profiles
                    .update(id, |p| p.set_tags(&change.tags_of(p)))?;
            }
            changed.push(self.shared.view(&self.shared.profiles.get(id)?));
        }
        Ok(changed)
    }

    /// Refuses `change` for `profiles` before anything is set: each part as its form checks
    /// it, once.
    fn check_many(&self, profiles: &[Profile], change: &ManyChange) -> AppResult<()> {
        if change.is_empty() {
            return Err(Error::Config("Choose what to change for these klanten.".into()).into());
        }
        if let Some(plan) = &change.plan {
            plan.schedule.check()?;
        }
        // A plan that runs (the new one, or a klant's own) needs a folder (the new one, or
        // the klant's, or the office's).
        for profile in profiles {
            let plan = (change.plan.as_ref()).map(|p| (p.schedule.clone(), p.paused));
            let plan = plan.or_else(|| {
                profile
                    .plan
                    .as_ref()
                    .map(|p| (p.schedule.clone(), p.paused))
            });
            if plan.is_some_and(|(schedule, paused)| schedule != Schedule::Manual && !paused) {
                self.shared.check_unattended_folder(profile)?;
            }
        }
        if let Some(CopyToChange {
            targets: Some(targets),
        }) = &change.copy_to
        {
            let all = self.shared.settings().copy_targets;
            if targets.iter().any(|t| !all.iter().any(|a| &a.id == t)) {
                let said = "A copy target chosen is no longer set; choose again.";
                return Err(crate::error::AppError::NotFound(said.into()));
            }
        }
        match &change.encryption {
            Some(EncryptionInput::Passphrase { passphrase }) => {
                let given = passphrase
                    .as_deref()
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| {
                        Error::Config(
                            "Enter the passphrase to encrypt these klanten's backups with.".into(),
                        )
                    })?;
                kluis_core::encryption::check_passphrase(&kluis_core::Secret::new(
                    given.to_string(),
                ))?;
            }
            Some(EncryptionInput::Recipient { recipient }) => {
                kluis_core::encryption::parse_recipient(recipient)?;
            }
            Some(EncryptionInput::None) | None => {}
        }
        for profile in profiles {
            profile.clone().set_tags(&change.tags_of(profile))?;
        }
        Ok(())
    }
}
