//! *Import klanten…* against the simulator over TLS: an office's list previewed (each row's
//! action and problems, no password on the page), completed with the office's api key,
//! imported — only the klanten that sign in saved, each able to sign in with what the file
//! gave it — imported again without doubling anyone; stopped halfway; exported and read back.

use std::sync::{Arc, Mutex};

use kluis_desktop::secrets::SecretKind;
use kluis_desktop::{
    AppPaths, DesktopApp, Field, ImportDefaults, ImportProgress, MemoryStore, SecretStore,
};
use kluis_import::{Action, Outcome};
use kluis_sim::config::{klant_password, klant_username, Account, DEMO_API_KEY};
use kluis_sim::{Sim, SimConfig};

use crate::common::{self, Chooses};

/// A simulator with klanten 1 to `n`.
async fn office_sim(n: usize) -> Sim {
    let mut config = SimConfig::default();
    config.accounts.extend((1..=n).map(Account::klant));
    Sim::start(config).await.unwrap()
}

/// The app with the profile "Office" at `sim`, trusting its CA (picked in the dialog): the
/// office's first klant, set up by hand.
async fn app_with_office(dir: &tempfile::TempDir, sim: &Sim) -> (DesktopApp, Arc<MemoryStore>) {
    let keyring = Arc::new(MemoryStore::default());
    let app = DesktopApp::open(AppPaths::under(dir.path()), keyring.clone(), None).unwrap();
    let profile = (app.accounts.save_profile(common::office(sim, None)))
        .await
        .unwrap();
    let ca = dir.path().join("service-ca.pem");
    std::fs::write(&ca, sim.ca_pem()).unwrap();
    app.set_dialogs(Chooses::new(&ca));
    app.accounts.choose_profile_ca(&profile.id).await.unwrap();
    (app, keyring)
}

/// Rows of klanten `numbers` (as the office's spreadsheet has them, `;` and Dutch headers);
/// `wrong` ones with a password that is not theirs.
fn office_list(numbers: &[usize], wrong: &[usize]) -> String {
    let mut text = String::from("Naam;Gebruikersnaam;Wachtwoord;Plan;Tags\n");
    for n in numbers {
        let password = match wrong.contains(n) {
            true => "niet-het-wachtwoord".to_string(),
            false => klant_password(*n),
        };
        text += &format!(
            "Klant {n};{};{password};dagelijks 02:00;Jan, groep {}\n",
            klant_username(*n),
            n % 2
        );
    }
    text
}

/// The list in `file` opened in *Import klanten…* and given the service's address and the
/// office's api key for its rows.
async fn opened_with_key(app: &DesktopApp, sim: &Sim, file: &std::path::Path) {
    app.set_dialogs(Chooses::new(file));
    app.imports.open_import().await.unwrap().unwrap();
    app.imports
        .import_defaults(ImportDefaults {
            base_url: sim.base_url().to_string(),
            api_key: Some(DEMO_API_KEY.to_string()),
        })
        .unwrap();
}

/// Collects the progress an import sends.
fn heard() -> (kluis_desktop::ImportSink, Arc<Mutex<Vec<ImportProgress>>>) {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    (Arc::new(move |p| sink.lock().unwrap().push(p)), heard)
}

/// Preview: a row without a username skipped with why, every other row waiting for the
/// office's api key until it is given, the address of the saved klanten taken for rows
/// without one; no password in what the page gets. Import: the klanten that sign in added
/// (plan, tags, the office's CA, secrets in the keyring — each signs in afterwards), the wrong
/// password said and nothing stored for it, each row's progress heard, the file named as
/// still holding passwords. Again: updated, nobody doubled. Closed: nothing left to run.
#[tokio::test(flavor = "multi_thread")]
async fn an_office_list_is_previewed_imported_and_imported_again() {
    let sim = office_sim(4).await;
    let dir = tempfile::tempdir().unwrap();
    let (app, keyring) = app_with_office(&dir, &sim).await;
    let file = dir.path().join("klanten.csv");
    let mut list = office_list(&[1, 2, 3, 4], &[3]);
    list += "Zonder;;geheim-zonder;;\n";
    std::fs::write(&file, list).unwrap();
    app.set_dialogs(Chooses::new(&file));

    let preview = app
        .imports
        .open_import()
        .await
        .unwrap()
        .expect("a file was chosen");
    assert_eq!(preview.rows.len(), 5);
    assert_eq!(
        preview.base_url.as_deref(),
        Some(sim.base_url().as_str()),
        "the saved klanten's address"
    );
    assert!(preview.holds_passwords);
    assert!(
        preview.rows.iter().all(|r| r.action == Action::Skip),
        "no api key yet: {:?}",
        preview.rows
    );
    assert!(
        preview.rows[0]
            .problems
            .iter()
            .any(|p| p.contains("the office's api key")),
        "{:?}",
        preview.rows[0].problems
    );
    let preview = app
        .imports
        .import_defaults(ImportDefaults {
            base_url: sim.base_url().to_string(),
            api_key: Some(DEMO_API_KEY.to_string()),
        })
        .unwrap();
    let actions: Vec<Action> = preview.rows.iter().map(|r| r.action).collect();
    assert_eq!(
        actions,
        [
            Action::Add,
            Action::Add,
            Action::Add,
            Action::Add,
            Action::Skip
        ]
    );
    assert_eq!(preview.rows[4].problems, ["no username"]);
    assert!(preview.office_key && preview.rows[0].schedule.is_some());
    let shown = serde_json::to_string(&preview).unwrap();
    for secret in [
        klant_password(1),
        "niet-het-wachtwoord".into(),
        DEMO_API_KEY.to_string(),
        "geheim-zonder".into(),
    ] {
        assert!(!shown.contains(&secret), "no secret on the page: {shown}");
    }

    let (sink, progress) = heard();
    let result = app.imports.run_import(sink).await.unwrap();
    let outcomes: Vec<Outcome> = result.outcomes.iter().map(|o| o.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Added,
            Outcome::Added,
            Outcome::WrongPassword,
            Outcome::Added,
            Outcome::Skipped
        ]
    );
    assert_eq!(
        progress.lock().unwrap().len(),
        5,
        "each row heard as it ended"
    );
    assert_eq!(result.holding_passwords, [file.display().to_string()]);
    let saved = app.accounts.list();
    assert_eq!(saved.len(), 4, "Office and three klanten: {saved:?}");
    assert!(
        !saved.iter().any(|p| p.name == "Klant 3"),
        "a wrong password saves nothing"
    );
    for name in ["Klant 1", "Klant 2", "Klant 4"] {
        let klant = saved.iter().find(|p| p.name == name).unwrap();
        assert!(klant.plan.is_some(), "{name}'s plan");
        assert_eq!(klant.trusted_cas.len(), 1, "{name} trusts the office's CA");
        assert!(keyring
            .get(&klant.id, SecretKind::Password)
            .unwrap()
            .is_some());
        app.accounts
            .sign_in(&klant.id)
            .await
            .expect("signs in with what the file gave it");
    }
    assert!(!std::fs::read_to_string(dir.path().join("profiles.json"))
        .unwrap()
        .contains("wachtwoord"));

    let again = app.imports.open_import().await.unwrap().unwrap();
    assert!(!again.office_key, "a new file: the key is asked again");
    app.imports
        .import_defaults(ImportDefaults {
            base_url: sim.base_url().to_string(),
            api_key: Some(DEMO_API_KEY.to_string()),
        })
        .unwrap();
    let (sink, _) = heard();
    let second = app.imports.run_import(sink).await.unwrap();
    let outcomes: Vec<Outcome> = second.outcomes.iter().map(|o| o.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Updated,
            Outcome::Updated,
            Outcome::WrongPassword,
            Outcome::Updated,
            Outcome::Skipped
        ]
    );
    assert_eq!(app.accounts.list().len(), 4, "nobody doubled");

    app.imports.close_import();
    let (sink, _) = heard();
    let closed = app.imports.run_import(sink).await.unwrap_err();
    assert_eq!(closed.code(), "not_found");
}

/// A column changed by hand is read as chosen; a column the file does not have is refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_column_is_chosen_by_hand() {
    let sim = office_sim(1).await;
    let dir = tempfile::tempdir().unwrap();
    let (app, _) = app_with_office(&dir, &sim).await;
    let file = dir.path().join("relaties.csv");
    std::fs::write(
        &file,
        format!(
            "Relatie,Login,Geheim\nBakker,{},{}\n",
            klant_username(1),
            klant_password(1)
        ),
    )
    .unwrap();
    app.set_dialogs(Chooses::new(&file));
    let preview = app.imports.open_import().await.unwrap().unwrap();
    let column = |p: &kluis_desktop::ImportPreview, f: Field| {
        p.columns.iter().find(|c| c.field == f).unwrap().column
    };
    assert_eq!(column(&preview, Field::Name), Some(0), "Relatie is a name");
    assert_eq!(
        column(&preview, Field::Password),
        None,
        "Geheim is not guessed"
    );
    let preview = app.imports.import_column(Field::Password, Some(2)).unwrap();
    assert_eq!(column(&preview, Field::Password), Some(2));
    assert!(preview.rows[0].has_password && preview.holds_passwords);
    let refused = app.imports.import_column(Field::Tags, Some(9)).unwrap_err();
    assert_eq!(refused.code(), "config");
}

/// Cancel while klanten sign in: those signing in finish whole (saved with their secrets),
/// the rows not begun are not tried and nothing of them is stored.
#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_import_stores_whole_klanten_only() {
    let sim = office_sim(20).await;
    let dir = tempfile::tempdir().unwrap();
    let (app, keyring) = app_with_office(&dir, &sim).await;
    let file = dir.path().join("klanten.csv");
    std::fs::write(&file, office_list(&(1..=20).collect::<Vec<_>>(), &[])).unwrap();
    opened_with_key(&app, &sim, &file).await;
    let app = Arc::new(app);
    // Cancel is pressed as the first klant is heard.
    let canceller = app.clone();
    let result = app
        .imports
        .run_import(Arc::new(move |_| canceller.imports.cancel_import()))
        .await
        .unwrap();
    let added = result
        .outcomes
        .iter()
        .filter(|o| o.outcome == Outcome::Added)
        .count();
    let cancelled = result
        .outcomes
        .iter()
        .filter(|o| o.outcome == Outcome::Cancelled)
        .count();
    assert_eq!(
        (added, cancelled),
        (
            kluis_import::run::DEFAULT_AT_ONCE,
            20 - kluis_import::run::DEFAULT_AT_ONCE
        ),
        "those signing in finish, the rest are not tried: {:?}",
        result.outcomes
    );
    let saved = app.accounts.list();
    assert_eq!(saved.len(), 1 + added);
    for klant in saved.iter().filter(|p| p.name != "Office") {
        assert!(
            keyring
                .get(&klant.id, SecretKind::ApiKey)
                .unwrap()
                .is_some(),
            "{} is whole",
            klant.name
        );
    }
}

/// *Export klanten…*: the list (no secret, no demo klant) where the save dialog says, read
/// back by the import as the same klanten (each an update).
#[tokio::test(flavor = "multi_thread")]
async fn the_klant_list_is_exported_and_reads_back() {
    let sim = office_sim(0).await;
    let dir = tempfile::tempdir().unwrap();
    let (app, _) = app_with_office(&dir, &sim).await;
    app.accounts.start_demo().await.unwrap();
    let out = dir.path().join("export.csv");
    app.set_dialogs(Chooses::new(&out));
    let written = app.imports.export_klanten().await.unwrap();
    assert_eq!(written.as_deref(), Some(out.display().to_string().as_str()));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("Office") && !text.contains("Demo"), "{text}");
    assert!(
        !text.contains(&DEMO_API_KEY.to_string())
            && !text.contains(kluis_sim::config::DEMO_PASSWORD)
    );
    let preview = app.imports.open_import().await.unwrap().unwrap();
    let rows: Vec<(&str, Action)> = preview
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.action))
        .collect();
    assert_eq!(rows, [("Office", Action::Update)]);
}

/// The service goes down halfway: the klanten signed in before are saved whole, every later
/// one is reported as unreachable with nothing of it stored, and the import ends (no hang).
#[tokio::test(flavor = "multi_thread")]
async fn the_service_down_halfway_is_reported_per_row() {
    let sim = Arc::new(office_sim(20).await);
    let dir = tempfile::tempdir().unwrap();
    let (app, keyring) = app_with_office(&dir, &sim).await;
    let file = dir.path().join("klanten.csv");
    std::fs::write(&file, office_list(&(1..=20).collect::<Vec<_>>(), &[])).unwrap();
    opened_with_key(&app, &sim, &file).await;
    // The service stops as the first klant is heard.
    let stopping = sim.clone();
    let result = app
        .imports
        .run_import(Arc::new(move |_| stopping.stop()))
        .await
        .unwrap();
    let count = |o: Outcome| result.outcomes.iter().filter(|r| r.outcome == o).count();
    let (added, unreachable) = (count(Outcome::Added), count(Outcome::Unreachable));
    assert!(added >= 1 && unreachable >= 1, "{:?}", result.outcomes);
    assert_eq!(
        added + unreachable,
        20,
        "each row said: {:?}",
        result.outcomes
    );
    let saved: Vec<_> = (app.accounts.list().into_iter())
        .filter(|p| p.name != "Office")
        .collect();
    assert_eq!(
        saved.len(),
        added,
        "only the klanten that signed in are saved"
    );
    for klant in &saved {
        assert!(
            keyring
                .get(&klant.id, SecretKind::Password)
                .unwrap()
                .is_some(),
            "{} is whole",
            klant.name
        );
    }
}

/// Counts the secrets written to the keyring it stands for.
#[derive(Default)]
struct CountingStore {
    inner: MemoryStore,
    written: std::sync::atomic::AtomicUsize,
}

impl SecretStore for CountingStore {
    fn get(
        &self,
        profile: &str,
        kind: SecretKind,
    ) -> kluis_profiles::ProfileResult<Option<kluis_core::Secret>> {
        self.inner.get(profile, kind)
    }
    fn set(
        &self,
        profile: &str,
        kind: SecretKind,
        value: &kluis_core::Secret,
    ) -> kluis_profiles::ProfileResult<()> {
        self.written
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.set(profile, kind, value)
    }
    fn delete(&self, profile: &str, kind: SecretKind) -> kluis_profiles::ProfileResult<()> {
        self.inner.delete(profile, kind)
    }
}

/// Importing the same list again signs each klant in and updates it, but writes no secret that
/// did not change (a keyring of a thousand items is slow to write to); a first import writes
/// each klant's two.
#[tokio::test(flavor = "multi_thread")]
async fn importing_again_writes_no_unchanged_secret() {
    let sim = office_sim(3).await;
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(CountingStore::default());
    let app = DesktopApp::builder(crate::common::english_under(dir.path()), keyring.clone())
        .open()
        .unwrap();
    let office = (app.accounts.save_profile(common::office(&sim, None)))
        .await
        .unwrap();
    let ca = dir.path().join("service-ca.pem");
    std::fs::write(&ca, sim.ca_pem()).unwrap();
    app.set_dialogs(Chooses::new(&ca));
    app.accounts.choose_profile_ca(&office.id).await.unwrap();
    let file = dir.path().join("klanten.csv");
    std::fs::write(&file, office_list(&[1, 2, 3], &[])).unwrap();
    let written = || keyring.written.load(std::sync::atomic::Ordering::SeqCst);
    let mut rounds = Vec::new();
    for _ in 0..2 {
        opened_with_key(&app, &sim, &file).await;
        let before = written();
        let (sink, _) = heard();
        let result = app.imports.run_import(sink).await.unwrap();
        let outcomes: Vec<Outcome> = result.outcomes.iter().map(|o| o.outcome).collect();
        rounds.push((outcomes, written() - before));
    }
    assert_eq!(
        rounds[0],
        (vec![Outcome::Added; 3], 6),
        "a first import writes two secrets a klant"
    );
    assert_eq!(
        rounds[1],
        (vec![Outcome::Updated; 3], 0),
        "again: each signed in and updated, nothing written"
    );
}
