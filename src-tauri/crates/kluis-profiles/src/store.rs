//! Profiles (one per klant) and app settings, in a small JSON file in the config folder — the
//! same file for the app and the CLI. Nothing secret is in it: the api key and password of a
//! profile live in the keyring ([`crate::secrets`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use kluis_core::KlantKey;
use serde::{Deserialize, Serialize};

use crate::error::{ProfileError, ProfileResult};
pub use crate::settings::Settings;
use crate::shared_file::SharedJson;

/// The endpoints Kluis uses (besides `/authenticate`, which every key may use).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    Environment,
    BackupOwner,
    Webhook,
}

impl Endpoint {
    pub const ALL: [Endpoint; 3] = [
        Endpoint::Environment,
        Endpoint::BackupOwner,
        Endpoint::Webhook,
    ];

    /// The path below the base URL.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Environment => "/util/environment",
            Endpoint::BackupOwner => "/backup/owner",
            Endpoint::Webhook => "/webhook",
        }
    }
}

/// A saved profile, without its secrets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub base_url: String,
    pub username: String,
    /// The service's OpenAPI description URL (on the base URL's origin), if known.
    #[serde(default)]
    pub openapi_url: Option<String>,
    /// Endpoints the service refused with 403 for this profile's key.
    #[serde(default)]
    pub denied: Vec<Endpoint>,
    /// Endpoints that answered this profile's key (the newest answer wins over a 403).
    #[serde(default)]
    pub allowed: Vec<Endpoint>,
    /// A demo profile (simulator, secrets in memory): never written to disk.
    #[serde(skip)]
    pub demo: bool,
    /// Extra CA certificates (PEM) this profile trusts: the user's choice for a service with a
    /// private CA or behind a TLS-inspecting proxy, or the demo's simulator CA. Public, not
    /// secret, so it is kept in the profile file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_ca_pem: Option<String>,
    /// When this klant is backed up without a click (none: only by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<kluis_core::plan::Plan>,
    /// The klant's outside monitor (healthchecks style), pinged after each unattended backup
    /// (see [`crate::monitor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_url: Option<String>,
    /// Which of the klant's backups are kept; applied after each verified save (none: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<kluis_core::retention::Retention>,
    /// Read all the klant's kept backups again once a month (after a save; see
    /// [`kluis_core::verify::monthly_due`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify_monthly: bool,
    /// Prove once a month, after a save, that the klant's newest backup restores (see
    /// [`kluis_core::History::restore_test_due`]): on unless turned off.
    #[serde(default = "on", skip_serializing_if = "is_on")]
    pub restore_test_monthly: bool,
    /// Encrypt the klant's backups as they download (a passphrase's secret in the keyring).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<kluis_core::encryption::EncryptionSetting>,
    /// The copy targets (their ids) this klant's backups are copied to; none set: every one
    /// (a target added later gets them too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_to: Option<Vec<String>>,
    /// The office's own labels for the klant (a colleague, a kind of klant): to find and
    /// select klanten by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The klant's own folder for its backups (a share of its own, say), chosen in a native
    /// dialog; none: a folder of its own under the office's save folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save_folder: Option<String>,
}

/// A setting that is on unless the profile says otherwise.
fn on() -> bool {
    true
}

/// Whether such a setting is on (then it is not written: the file holds what differs).
fn is_on(setting: &bool) -> bool {
    *setting
}

impl Profile {
    /// Of the office's copy targets `all`, those this klant's backups go to.
    pub fn copy_targets(&self, all: &[kluis_copies::CopyTarget]) -> Vec<kluis_copies::CopyTarget> {
        match &self.copy_to {
            None => all.to_vec(),
            Some(chosen) => (all.iter())
                .filter(|t| chosen.contains(&t.id))
                .cloned()
                .collect(),
        }
    }

    /// Sets the klant's tags to `tags` cleaned: each trimmed, empty ones and repeats (case
    /// aside) left out; refused when one is not a label (a line break, too long) or there are
    /// too many.
    pub fn set_tags(&mut self, tags: &[String]) -> ProfileResult<()> {
        const MOST: usize = 20;
        const LONGEST: usize = 40;
        let mut cleaned: Vec<String> = Vec::new();
        for tag in tags.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            if tag.chars().count() > LONGEST || tag.chars().any(char::is_control) {
                return Err(ProfileError::Core(kluis_core::Error::Config(format!(
                    "A tag is a short label (at most {LONGEST} characters, one line): \"{}\" is not one.",
                    tag.chars().filter(|c| !c.is_control()).take(LONGEST).collect::<String>()
                ))));
            }
            if !cleaned
                .iter()
                .any(|t| t.to_lowercase() == tag.to_lowercase())
            {
                cleaned.push(tag.to_string());
            }
        }
        if cleaned.len() > MOST {
            return Err(ProfileError::Core(kluis_core::Error::Config(format!(
                "A klant has at most {MOST} tags."
            ))));
        }
        self.tags = cleaned;
        Ok(())
    }

    /// Whether the klant has `tag` (case and surrounding space aside).
    pub fn has_tag(&self, tag: &str) -> bool {
        let tag = tag.trim().to_lowercase();
        self.tags.iter().any(|t| t.trim().to_lowercase() == tag)
    }

    /// The key the history records this profile's backups under.
    pub fn key(&self) -> KlantKey {
        KlantKey::profile(&self.id)
    }

    /// A new profile with a fresh id: nothing learnt, no plan, no extra CA.
    pub fn new(name: &str, base_url: &str, username: &str) -> Profile {
        Profile {
            id: uuid::Uuid::new_v4().to_string(),
            name: name.trim().to_string(),
            base_url: base_url.trim().to_string(),
            username: username.trim().to_string(),
            openapi_url: None,
            denied: Vec::new(),
            allowed: Vec::new(),
            demo: false,
            extra_ca_pem: None,
            plan: None,
            ping_url: None,
            retention: None,
            verify_monthly: false,
            restore_test_monthly: true,
            encryption: None,
            copy_to: None,
            tags: Vec::new(),
            save_folder: None,
        }
    }

    /// The service settings of this profile with its secrets; its own extra CA, else
    /// `fallback_ca_pem` (`KLUIS_CA_CERT`).
    pub fn service_config(
        &self,
        api_key: kluis_core::Secret,
        password: kluis_core::Secret,
        fallback_ca_pem: Option<&str>,
    ) -> kluis_core::Result<kluis_core::ServiceConfig> {
        let mut config = kluis_core::ServiceConfig::new(
            &self.base_url,
            api_key,
            self.username.clone(),
            password,
            false,
        )?;
        config.extra_ca_pem = self
            .extra_ca_pem
            .clone()
            .or_else(|| fallback_ca_pem.map(str::to_string));
        Ok(config)
    }

    /// The folder this klant's backups go to: `forced` (the CLI's `--out`) as the root when
    /// given, else the klant's own folder itself, else a folder of its own under the office's
    /// `root` — named by its name made safe as a file name (its id when nothing of the name
    /// is left). None when there is neither.
    pub fn backup_folder(&self, forced: Option<&Path>, root: Option<&Path>) -> Option<PathBuf> {
        let under = |root: &Path| {
            let klant =
                kluis_core::filename::name_as_file(&self.name).unwrap_or_else(|| self.id.clone());
            root.join(klant)
        };
        match (forced, &self.save_folder, root) {
            (Some(forced), _, _) => Some(under(forced)),
            (None, Some(own), _) => Some(PathBuf::from(own)),
            (None, None, Some(root)) => Some(under(root)),
            (None, None, None) => None,
        }
    }

    /// Where an unattended backup of this klant started at `now` goes: the folder
    /// [`Profile::backup_folder`] says (made owner-only when missing), and the file `template`
    /// names (`<klant> <YYYY-MM-DD HHmm>` by default, in local time) plus the download's
    /// extension — never `owner-backup (7).zip`.
    pub fn unattended_destination(
        &self,
        forced: Option<&Path>,
        root: Option<&Path>,
        template: &crate::FileNameTemplate,
        now: &jiff::Zoned,
    ) -> kluis_core::Result<kluis_core::Destination> {
        let folder = self
            .backup_folder(forced, root)
            .ok_or_else(|| kluis_core::Error::Config(NO_FOLDER.into()))?;
        kluis_private::files::create_dir_all(&folder)
            .map_err(|e| kluis_core::Error::io(format!("create {}", folder.display()), e))?;
        let klant =
            kluis_core::filename::name_as_file(&self.name).unwrap_or_else(|| self.id.clone());
        let stem = kluis_core::filename::sanitize(&template.render(&klant, now))
            .unwrap_or_else(|| crate::FileNameTemplate::default().render(&klant, now));
        kluis_core::Destination::named(&folder, stem)
    }
}

/// What a backup nobody watches says when it has no folder to go to.
pub const NO_FOLDER: &str = "A backup nobody watches cannot ask where to save: choose a folder in the app (Settings → “Where backups are saved”, or the klant's own in its form), or give kluis --out FOLDER.";

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    profiles: Vec<Profile>,
    #[serde(default)]
    settings: Settings,
}

/// The profiles file, or memory only (tests). Shared with the other Kluis processes (see
/// [`crate::shared_file`]): reads see what another process saved, and each change is made
/// to the file's newest content, so the app's copy never writes back over a `kluis plan`.
pub struct ProfileStore {
    file: SharedJson<Stored>,
    demo: Mutex<Vec<Profile>>,
}

impl ProfileStore {
    /// Loads `path`. A file that cannot be parsed is kept aside as `*.unreadable` (so nothing
    /// is lost) and an empty store is used.
    pub fn open(path: PathBuf) -> ProfileResult<Self> {
        Ok(Self {
            file: SharedJson::open(path)?,
            demo: Mutex::default(),
        })
    }

    pub fn in_memory() -> Self {
        Self {
            file: SharedJson::in_memory(),
            demo: Mutex::default(),
        }
    }

    pub fn list(&self) -> Vec<Profile> {
        let mut all = self.demo.lock().unwrap().clone();
        self.file
            .read(|stored| all.extend(stored.profiles.iter().cloned()));
        all
    }

    pub fn get(&self, id: &str) -> ProfileResult<Profile> {
        self.list()
            .into_iter()
            .find(|p| p.id == id)
            .ok_or_else(gone)
    }

    /// The profile whose id is `name_or_id`, or whose name is (ignoring case and spaces at
    /// either end). Two profiles of that name: refused with their ids, so the user can pick.
    pub fn find(&self, name_or_id: &str) -> ProfileResult<Profile> {
        let all = self.list();
        if let Some(p) = all.iter().find(|p| p.id == name_or_id) {
            return Ok(p.clone());
        }
        let wanted = name_or_id.trim().to_lowercase();
        let named: Vec<_> = all
            .into_iter()
            .filter(|p| p.name.trim().to_lowercase() == wanted)
            .collect();
        match named.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(ProfileError::NotFound(format!(
                "There is no profile named \"{}\". See `kluis profiles list`, or add one with `kluis profiles add`.",
                name_or_id.chars().take(80).collect::<String>()
            ))),
            many => Err(ProfileError::NotFound(format!(
                "{} profiles are named \"{}\"; name one by its id: {}.",
                many.len(),
                name_or_id.trim(),
                many.iter().map(|p| p.id.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// Adds or replaces a profile as a whole (an edited profile, a new one; demo profiles
    /// stay in memory). To change one part of a profile, use [`ProfileStore::update`].
    pub fn put(&self, profile: Profile) -> ProfileResult<()> {
        if profile.demo {
            let mut demo = self.demo.lock().unwrap();
            demo.retain(|p| p.id != profile.id);
            demo.push(profile);
            return Ok(());
        }
        self.file.change(|stored| {
            match stored.profiles.iter_mut().find(|p| p.id == profile.id) {
                Some(existing) => *existing = profile,
                None => stored.profiles.push(profile),
            }
            Ok(())
        })
    }

    /// Changes profile `id` as `change` says, made to its newest saved state (what another
    /// process saved a moment ago included), and returns it as saved. When `change` fails,
    /// nothing is saved.
    pub fn update(
        &self,
        id: &str,
        change: impl FnOnce(&mut Profile) -> ProfileResult<()>,
    ) -> ProfileResult<Profile> {
        if let Some(profile) = self.demo.lock().unwrap().iter_mut().find(|p| p.id == id) {
            let mut changed = profile.clone();
            change(&mut changed)?;
            *profile = changed.clone();
            return Ok(changed);
        }
        self.file.change(|stored| {
            let profile = stored
                .profiles
                .iter_mut()
                .find(|p| p.id == id)
                .ok_or_else(gone)?;
            change(profile)?;
            Ok(profile.clone())
        })
    }

    pub fn remove(&self, id: &str) -> ProfileResult<()> {
        self.demo.lock().unwrap().retain(|p| p.id != id);
        self.file.change(|stored| {
            stored.profiles.retain(|p| p.id != id);
            stored.settings.paused_together.retain(|p| p != id);
            Ok(())
        })
    }

    pub fn settings(&self) -> Settings {
        self.file.read(|stored| stored.settings.clone())
    }

    /// Changes the settings as `change` says, made to their newest saved state (so a setting
    /// another process changed a moment ago is kept), and returns them as saved. When
    /// `change` fails, nothing is saved.
    pub fn update_settings(
        &self,
        change: impl FnOnce(&mut Settings) -> ProfileResult<()>,
    ) -> ProfileResult<Settings> {
        self.file.change(|stored| {
            change(&mut stored.settings)?;
            Ok(stored.settings.clone())
        })
    }

    /// Adds `target` to the copy targets (checked and tested by the caller); refused when
    /// another is already named so, since targets are chosen by name.
    pub fn add_copy_target(&self, target: kluis_copies::CopyTarget) -> ProfileResult<Settings> {
        self.update_settings(|settings| {
            let taken = (settings.copy_targets.iter())
                .any(|t| t.name.eq_ignore_ascii_case(&target.name));
            if taken {
                return Err(ProfileError::Core(kluis_core::Error::Config(format!(
                    "A copy target is already named \"{}\": choose another name, or remove that one first.",
                    target.name
                ))));
            }
            settings.copy_targets.push(target);
            Ok(())
        })
    }

    /// Sets target `id`'s own retention rule for its copies (`None`: every copy is kept).
    pub fn set_copy_target_rule(
        &self,
        id: &str,
        rule: Option<kluis_core::retention::Retention>,
    ) -> ProfileResult<Settings> {
        self.update_settings(|settings| {
            let target = (settings.copy_targets.iter_mut()).find(|t| t.id == id);
            let Some(target) = target else {
                return Err(ProfileError::NotFound(
                    "That copy target is no longer set.".into(),
                ));
            };
            target.keep = rule.filter(|r| !r.keeps_everything());
            Ok(())
        })
    }

    /// Stops copying to target `id` (the copies it holds, and their record, stay).
    pub fn remove_copy_target(&self, id: &str) -> ProfileResult<Settings> {
        self.update_settings(|settings| {
            settings.copy_targets.retain(|t| t.id != id);
            Ok(())
        })
    }

    /// "Pause plans": pauses every plan that runs, at once, and remembers which (see
    /// [`Settings::paused_together`]). Returns how many it paused; none when already paused.
    pub fn pause_plans(&self) -> ProfileResult<usize> {
        self.file.change(|stored| {
            if stored.settings.plans_paused() {
                return Ok(0);
            }
            let mut demo = self.demo.lock().unwrap();
            let mut paused = Vec::new();
            for profile in demo.iter_mut().chain(stored.profiles.iter_mut()) {
                if let Some(plan) = profile.plan.as_mut().filter(|plan| !plan.paused) {
                    plan.paused = true;
                    paused.push(profile.id.clone());
                }
            }
            let count = paused.len();
            stored.settings.paused_together = paused;
            Ok(count)
        })
    }

    /// "Resume plans": resumes the plans [`ProfileStore::pause_plans`] paused (those since
    /// removed or set again by hand are left as they are). Returns how many it resumed.
    pub fn resume_plans(&self) -> ProfileResult<usize> {
        self.file.change(|stored| {
            let ids = std::mem::take(&mut stored.settings.paused_together);
            let mut demo = self.demo.lock().unwrap();
            let mut resumed = 0;
            for profile in demo.iter_mut().chain(stored.profiles.iter_mut()) {
                if let Some(plan) = profile.plan.as_mut().filter(|_| ids.contains(&profile.id)) {
                    resumed += usize::from(plan.paused);
                    plan.paused = false;
                }
            }
            Ok(resumed)
        })
    }

    /// Whether any plan would run by itself, now or once "Resume plans" is chosen: a plan
    /// that is not paused, or one paused by "Pause plans".
    pub fn plans_active(&self) -> bool {
        let paused_together = self.settings().paused_together;
        self.list().iter().any(|p| {
            p.plan.as_ref().is_some_and(|plan| {
                plan.schedule != kluis_core::plan::Schedule::Manual
                    && (!plan.paused || paused_together.contains(&p.id))
            })
        })
    }
}

fn gone() -> ProfileError {
    ProfileError::NotFound("That profile no longer exists. Choose or add another one.".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::DEFAULT_AT_ONCE;

    /// Where a klant's backups go: `--out` (a folder per klant in it) over its own folder
    /// (itself) over the office's (a folder per klant in it); nowhere when none is set.
    #[test]
    fn the_backup_folder_is_the_most_specific_one() {
        // (A / in a name is part of it: not the folder "B.V" another klant may share.)
        let mut p = Profile::new("Bakker/B.V.", "https://h/webservice_v2", "u");
        let (out, office) = (Path::new("/run/out"), Path::new("/srv/kluis"));
        assert_eq!(
            p.backup_folder(None, Some(office)),
            Some(office.join("Bakker_B.V"))
        );
        assert_eq!(p.backup_folder(None, None), None);
        p.save_folder = Some("/mnt/bakker".into());
        assert_eq!(
            p.backup_folder(None, Some(office)),
            Some(PathBuf::from("/mnt/bakker"))
        );
        assert_eq!(
            p.backup_folder(Some(out), Some(office)),
            Some(out.join("Bakker_B.V"))
        );
    }

    /// Tags are kept trimmed, without empty ones or repeats (case aside); a tag with a line
    /// break, a very long one, or too many are refused and change nothing.
    #[test]
    fn tags_are_cleaned_or_refused() {
        let mut p = Profile::new("Klant", "https://h/webservice_v2", "u");
        let given = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        p.set_tags(&given(&[" Jan ", "", "jan", "Bakkers"]))
            .unwrap();
        assert_eq!(p.tags, ["Jan", "Bakkers"]);
        for bad in [
            given(&["twee\nregels"]),
            given(&[&"x".repeat(41)]),
            (0..21).map(|i| i.to_string()).collect(),
        ] {
            let refused = p.set_tags(&bad).unwrap_err();
            assert_eq!(refused.code(), "config", "{refused}");
            assert_eq!(p.tags, ["Jan", "Bakkers"], "unchanged");
        }
        assert!(p.has_tag(" JAN"));
    }

    fn profile(id: &str) -> Profile {
        Profile {
            id: id.into(),
            name: "Klant".into(),
            base_url: "https://h/webservice_v2".into(),
            username: "u".into(),
            openapi_url: None,
            denied: vec![],
            allowed: vec![],
            demo: false,
            extra_ca_pem: None,
            plan: None,
            ping_url: None,
            retention: None,
            verify_monthly: false,
            restore_test_monthly: true,
            encryption: None,
            copy_to: None,
            tags: Vec::new(),
            save_folder: None,
        }
    }

    /// Profiles survive a reopen; demo profiles never reach the file.
    #[test]
    fn persists_real_profiles_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        let store = ProfileStore::open(path.clone()).unwrap();
        store.put(profile("a")).unwrap();
        store
            .put(Profile {
                demo: true,
                ..profile("demo")
            })
            .unwrap();
        let reopened = ProfileStore::open(path.clone()).unwrap();
        assert_eq!(
            reopened
                .list()
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>(),
            ["a"]
        );
        assert!(!std::fs::read_to_string(&path).unwrap().contains("demo"));
    }

    fn planned(id: &str, paused: bool) -> Profile {
        let schedule: kluis_core::plan::Schedule =
            serde_json::from_str(r#"{"kind":"daily","at":"02:00"}"#).unwrap();
        let plan =
            kluis_core::plan::Plan::reschedule(None, schedule, paused, jiff::Timestamp::now());
        Profile {
            plan: plan.unwrap(),
            ..profile(id)
        }
    }

    fn paused_ids(store: &ProfileStore) -> Vec<String> {
        (store.list().into_iter())
            .filter(|p| p.plan.as_ref().is_some_and(|plan| plan.paused))
            .map(|p| p.id)
            .collect()
    }

    /// "Pause plans" pauses every running plan and says so across a restart; "Resume plans"
    /// resumes exactly those, leaving a plan paused by hand paused.
    #[test]
    fn pause_plans_resumes_only_what_it_paused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        let store = ProfileStore::open(path.clone()).unwrap();
        store.put(planned("a", false)).unwrap();
        store.put(planned("by-hand", true)).unwrap();
        store.put(profile("manual")).unwrap();
        assert!(store.plans_active());

        assert_eq!(store.pause_plans().unwrap(), 1, "only a's plan was running");
        assert_eq!(
            store.pause_plans().unwrap(),
            0,
            "a second pause changes nothing"
        );
        let reopened = ProfileStore::open(path).unwrap();
        assert_eq!(paused_ids(&reopened), ["a", "by-hand"]);
        assert_eq!(reopened.settings().paused_together, ["a"]);
        assert!(
            reopened.plans_active(),
            "paused together, the plans are still meant to run"
        );

        assert_eq!(reopened.resume_plans().unwrap(), 1);
        assert_eq!(paused_ids(&reopened), ["by-hand"]);
        assert!(reopened.settings().paused_together.is_empty());
        reopened.pause_plans().unwrap();
        reopened.remove("a").unwrap();
        assert!(
            !reopened.plans_active(),
            "with only a plan paused by hand left, nothing would run"
        );
        assert!(
            reopened.settings().paused_together.is_empty(),
            "a removed profile is not remembered as paused"
        );
    }

    /// The app and a `kluis` command each hold the profiles file open: each sees what the
    /// other saved, and neither's change is written over by the other's older copy — a
    /// setting, another profile, or another part of the same profile.
    #[test]
    fn two_processes_keep_each_others_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        let app = ProfileStore::open(path.clone()).unwrap();
        let cli = ProfileStore::open(path.clone()).unwrap();
        app.put(profile("a")).unwrap();
        assert_eq!(
            cli.get("a").unwrap().name,
            "Klant",
            "the CLI sees the app's new profile"
        );
        cli.put(profile("b")).unwrap();
        cli.update_settings(|s| {
            s.notify_desktop = false;
            Ok(())
        })
        .unwrap();
        app.update_settings(|s| {
            s.unattended_at_once = 3;
            Ok(())
        })
        .unwrap();
        cli.update("a", |p| {
            p.ping_url = Some("https://hc.example/ping/a".into());
            Ok(())
        })
        .unwrap();
        app.update("a", |p| {
            p.username = "changed".into();
            Ok(())
        })
        .unwrap();

        let later = ProfileStore::open(path).unwrap();
        let settings = later.settings();
        assert!(
            !settings.notify_desktop,
            "the CLI's setting survived the app's write"
        );
        assert_eq!(settings.unattended_at_once, 3);
        let ids: Vec<_> = later.list().into_iter().map(|p| p.id).collect();
        assert_eq!(
            ids,
            ["a", "b"],
            "the CLI's profile survived the app's writes"
        );
        let a = later.get("a").unwrap();
        assert_eq!(a.ping_url.as_deref(), Some("https://hc.example/ping/a"));
        assert_eq!(a.username, "changed");
        assert_eq!(app.settings().notify_desktop, settings.notify_desktop);
    }

    /// Two processes adding profiles at the same moment: every one lands (the lock beside
    /// the file puts their changes one after the other).
    #[test]
    fn changes_at_the_same_moment_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        std::thread::scope(|scope| {
            for process in ["app", "cli"] {
                let store = ProfileStore::open(path.clone()).unwrap();
                scope.spawn(move || {
                    for n in 0..25 {
                        store.put(profile(&format!("{process}-{n}"))).unwrap();
                    }
                });
            }
        });
        assert_eq!(ProfileStore::open(path).unwrap().list().len(), 50);
    }

    /// A change that fails (a missing profile, a refused value) writes nothing.
    #[test]
    fn a_failed_change_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        let store = ProfileStore::open(path.clone()).unwrap();
        store.put(profile("a")).unwrap();
        let before = std::fs::read(&path).unwrap();
        let refused = store.update_settings(|s| {
            s.unattended_at_once = 99;
            Err(ProfileError::NotFound("refused".into()))
        });
        assert!(refused.is_err());
        assert!(matches!(
            store.update("gone", |_| Ok(())),
            Err(ProfileError::NotFound(_))
        ));
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(store.settings().unattended_at_once, DEFAULT_AT_ONCE);
    }

    /// In memory too (the demo's and the tests' store), a change that fails half-way leaves
    /// the settings as they were.
    #[test]
    fn a_failed_change_leaves_memory_as_it_was() {
        let store = ProfileStore::in_memory();
        let refused = store.update_settings(|s| {
            s.unattended_at_once = 99;
            Err(ProfileError::NotFound("refused".into()))
        });
        assert!(refused.is_err());
        assert_eq!(store.settings().unattended_at_once, DEFAULT_AT_ONCE);
    }

    /// A file another program spoilt while the app runs is kept aside; the app goes on with
    /// what it last read, and its next change writes that back whole.
    #[test]
    fn a_file_spoilt_while_open_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        let store = ProfileStore::open(path.clone()).unwrap();
        store.put(profile("a")).unwrap();
        std::fs::write(&path, b"{half written").unwrap();
        assert_eq!(store.list().len(), 1, "the copy read before is kept");
        assert_eq!(
            std::fs::read(path.with_extension("unreadable")).unwrap(),
            b"{half written"
        );
        store.put(profile("b")).unwrap();
        assert_eq!(ProfileStore::open(path).unwrap().list().len(), 2);
    }

    /// A corrupt file is kept aside, not overwritten or fatal.
    #[test]
    fn corrupt_file_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        std::fs::write(&path, b"{not json").unwrap();
        let store = ProfileStore::open(path.clone()).unwrap();
        assert!(store.list().is_empty());
        assert_eq!(
            std::fs::read(path.with_extension("unreadable")).unwrap(),
            b"{not json"
        );
    }
}
