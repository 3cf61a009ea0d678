//! `kluis profiles import`, against the simulator over TLS: a Dutch spreadsheet's CSV
//! (semicolons, Windows-1252) previewed with `--dry-run`, then imported — each klant signed in,
//! only those that sign in saved, their secrets in the secrets folder only — and imported again
//! without doubling anyone.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::*;
use crate::profiles::KLANT_PASSWORD;

/// What a run said on standard error.
fn said(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json_lines(stdout: &[u8]) -> Vec<Value> {
    (String::from_utf8_lossy(stdout).lines())
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

/// The file an office's Excel writes: `;`, Windows-1252 (the é of Café), a header in Dutch.
/// Bakker signs in; Visser's password is wrong; Café's row is the demo user's; the last row
/// has no username.
fn office_file(dir: &std::path::Path) -> PathBuf {
    let text = format!(
        "Naam;Gebruikersnaam;Wachtwoord;Plan;Bewaren;Tags;Notities\r\n\
         Bakker B.V.;bakker;{KLANT_PASSWORD};dagelijks 02:00;laatste 14;Jan, Bakkers;\r\n\
         Visser;visser;niet-het-wachtwoord;;;Jan;\r\n\
         Café Brûlé;{};{};werkdagen 18:30;;Piet;=cmd|' /C calc'!A0\r\n\
         Zonder;;x;;;;\r\n",
        kluis_sim::config::DEMO_USERNAME,
        kluis_sim::config::DEMO_PASSWORD,
    );
    let path = dir.join("klanten.csv");
    std::fs::write(&path, encoding_rs::WINDOWS_1252.encode(&text).0).unwrap();
    path
}

/// Dry run: each row said (three to add, one skipped with why), the mapping said, nothing
/// stored (exit 2: a row is not imported). Import: Bakker and Café added with their plans,
/// rules and tags, Visser refused as a wrong password, the empty username skipped — exit 2,
/// the secrets only in the secrets folder, the file's passwords never said. Again: the two
/// updated, no third profile.
#[tokio::test(flavor = "multi_thread")]
async fn an_office_file_is_previewed_imported_and_imported_again() {
    let e = env(|config| {
        config.accounts.push(kluis_sim::config::Account {
            username: "bakker".into(),
            password: KLANT_PASSWORD.into(),
            ..kluis_sim::config::Account::demo()
        });
    })
    .await;
    let file = office_file(e.dir.path());
    let path = file.to_str().unwrap();
    let outcomes = |output: &std::process::Output| -> Vec<(String, String)> {
        (json_lines(&output.stdout).iter())
            .map(|l| {
                (
                    l["name"].as_str().unwrap().to_string(),
                    l["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };

    let dry = e
        .saved(&["profiles", "import", path, "--dry-run", "--json"], &[])
        .await;
    assert_eq!(
        dry.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let said = said(&dry);
    assert!(
        said.contains("name ← \"Naam\"") && said.contains("not read: \"Notities\""),
        "{said}"
    );
    assert_eq!(
        outcomes(&dry),
        [
            ("Bakker B.V.".into(), "would_add".into()),
            ("Visser".into(), "would_add".into()),
            ("Café Brûlé".into(), "would_add".into()),
            ("Zonder".into(), "skipped".into()),
        ]
    );
    assert!(
        !e.dir.path().join("profiles.json").exists(),
        "a dry run stores nothing"
    );

    let imported = e.saved(&["profiles", "import", path, "--json"], &[]).await;
    assert_eq!(
        imported.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    assert_eq!(
        outcomes(&imported)
            .iter()
            .map(|(_, o)| o.as_str())
            .collect::<Vec<_>>(),
        ["added", "wrong_password", "added", "skipped"]
    );
    assert_no_secrets(
        &imported,
        &[
            KLANT_PASSWORD,
            "niet-het-wachtwoord",
            kluis_sim::config::DEMO_PASSWORD,
        ],
    );
    let stored = std::fs::read_to_string(e.dir.path().join("profiles.json")).unwrap();
    assert!(
        !stored.contains(KLANT_PASSWORD) && !stored.contains("Visser"),
        "{stored}"
    );
    let listed = json_lines(&e.saved(&["profiles", "list", "--json"], &[]).await.stdout);
    assert_eq!(listed.len(), 2, "{listed:?}");
    let bakker = listed
        .iter()
        .find(|p| p["name"] == "Bakker B.V.")
        .expect("Bakker saved");
    assert_eq!(bakker["plan"]["schedule"]["kind"], "daily", "{bakker}");
    assert_eq!(bakker["retention"]["keep_last"], 14, "{bakker}");
    assert_eq!(
        bakker["tags"],
        serde_json::json!(["Jan", "Bakkers"]),
        "{bakker}"
    );
    // The saved klant backs up with the secrets the import stored.
    let root = e.dir.path().join("backups");
    let backup = e
        .saved(
            &[
                "backup",
                "--profile",
                "Bakker B.V.",
                "--out",
                root.to_str().unwrap(),
            ],
            &[],
        )
        .await;
    assert_succeeded(&backup);

    let again = e.saved(&["profiles", "import", path, "--json"], &[]).await;
    assert_eq!(
        outcomes(&again)
            .iter()
            .map(|(_, o)| o.as_str())
            .collect::<Vec<_>>(),
        ["updated", "wrong_password", "updated", "skipped"]
    );
    let listed = json_lines(&e.saved(&["profiles", "list", "--json"], &[]).await.stdout);
    assert_eq!(listed.len(), 2, "imported again: no one doubled");
}

/// An Excel workbook (a spreadsheet library's) is read as its first sheet: the same preview.
#[tokio::test(flavor = "multi_thread")]
async fn a_workbook_is_previewed() {
    let e = env(|_| {}).await;
    let mut workbook = rust_xlsxwriter::Workbook::new();
    let sheet = workbook.add_worksheet();
    for (col, cell) in ["Naam", "Gebruikersnaam", "Wachtwoord", "Plan"]
        .iter()
        .enumerate()
    {
        sheet.write_string(0, col as u16, *cell).unwrap();
    }
    for (col, cell) in ["Demo B.V.", "demo", "demo-password", "werkdagen 07:30"]
        .iter()
        .enumerate()
    {
        sheet.write_string(1, col as u16, *cell).unwrap();
    }
    let file = e.dir.path().join("klanten.xlsx");
    std::fs::write(&file, workbook.save_to_buffer().unwrap()).unwrap();
    let dry = e
        .saved(
            &[
                "profiles",
                "import",
                file.to_str().unwrap(),
                "--dry-run",
                "--json",
            ],
            &[],
        )
        .await;
    assert_succeeded(&dry);
    let row = &json_lines(&dry.stdout)[0];
    assert_eq!(
        (&row["name"], &row["outcome"]),
        (&Value::from("Demo B.V."), &Value::from("would_add"))
    );
}

/// `--map` reads a field from another column (by name, or by number from 1): a column named
/// as no field is is not read until mapped; a column the file does not have is refused with
/// the columns it has.
#[tokio::test(flavor = "multi_thread")]
async fn the_mapping_is_changed_with_map() {
    let e = env(|_| {}).await;
    let file = e.dir.path().join("relaties.csv");
    std::fs::write(
        &file,
        "Omschrijving,Klantcode,Wachtwoord\nDemo B.V.,demo,demo-password\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let unmapped = e
        .saved(&["profiles", "import", path, "--dry-run", "--json"], &[])
        .await;
    assert_eq!(json_lines(&unmapped.stdout)[0]["outcome"], "skipped");
    let args = [
        "profiles",
        "import",
        path,
        "--dry-run",
        "--json",
        "--map",
        "name=Omschrijving",
        "--map",
        "username=2",
    ];
    let mapped = e.saved(&args, &[]).await;
    assert_succeeded(&mapped);
    assert_eq!(json_lines(&mapped.stdout)[0]["outcome"], "would_add");
    let refused = e
        .saved(
            &[
                "profiles",
                "import",
                path,
                "--dry-run",
                "--map",
                "name=Klantnaam",
            ],
            &[],
        )
        .await;
    assert_eq!(refused.status.code(), Some(2));
    let said = said(&refused);
    assert!(
        said.contains("Omschrijving, Klantcode, Wachtwoord"),
        "{said}"
    );
}

/// `profiles export` writes the klant list with no secret in it (owner-only with --out, never
/// over an existing file); imported again it updates the same klanten, with nothing to fix.
#[tokio::test(flavor = "multi_thread")]
async fn an_export_imports_again_as_the_same_klanten() {
    let e = env(|_| {}).await;
    let id = e
        .add(
            "Demo B.V.",
            kluis_sim::config::DEMO_USERNAME,
            &kluis_sim::config::DEMO_API_KEY.to_string(),
            kluis_sim::config::DEMO_PASSWORD,
        )
        .await;
    assert_succeeded(
        &e.saved(
            &[
                "plan",
                "Demo B.V.",
                "--weekly",
                "friday",
                "18:00",
                "--keep-last",
                "5",
            ],
            &[],
        )
        .await,
    );
    let out = e.dir.path().join("klanten.csv");
    let export = e
        .saved(&["profiles", "export", "--out", out.to_str().unwrap()], &[])
        .await;
    assert_succeeded(&export);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("name,username,base_url,plan,retention,tags\r\n"),
        "{text}"
    );
    assert!(
        text.contains("Demo B.V.,demo,https://") && text.contains("weekly friday 18:00,last 5"),
        "{text}"
    );
    assert!(
        !text.contains(kluis_sim::config::DEMO_PASSWORD) && !text.contains(&id),
        "no secret, no id: {text}"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o077,
        0,
        "owner-only"
    );
    let again = e
        .saved(&["profiles", "export", "--out", out.to_str().unwrap()], &[])
        .await;
    assert_eq!(again.status.code(), Some(2), "never over an existing file");

    let back = e
        .saved(
            &["profiles", "import", out.to_str().unwrap(), "--json"],
            &[],
        )
        .await;
    assert_succeeded(&back);
    assert_eq!(json_lines(&back.stdout)[0]["outcome"], "updated");
    let listed = json_lines(&e.saved(&["profiles", "list", "--json"], &[]).await.stdout);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["plan"]["schedule"]["day"], "friday");
}

/// The passwords from the office's password manager (a Bitwarden JSON export) fill a file that
/// has none: the klant of that name is signed in and saved; the export's passwords are never
/// said, and Kluis says that export still holds them.
#[tokio::test(flavor = "multi_thread")]
async fn passwords_come_from_a_password_manager_export() {
    let e = env(|_| {}).await;
    let file = e.dir.path().join("klanten.csv");
    std::fs::write(&file, "naam;gebruikersnaam;tags\nDemo B.V.;demo;Jan\n").unwrap();
    let vault = e.dir.path().join("bitwarden.json");
    let export = serde_json::json!({
        "encrypted": false,
        "items": [{"type": 1, "name": "Demo B.V.", "login": {
            "username": "demo", "password": kluis_sim::config::DEMO_PASSWORD,
            "uris": [{"uri": e.sim.base_url().as_str()}]}}]
    });
    std::fs::write(&vault, export.to_string()).unwrap();
    let args = [
        "profiles",
        "import",
        file.to_str().unwrap(),
        "--secrets",
        vault.to_str().unwrap(),
        "--json",
    ];
    let imported = e.saved(&args, &[]).await;
    assert_succeeded(&imported);
    assert_eq!(json_lines(&imported.stdout)[0]["outcome"], "added");
    assert_no_secrets(&imported, &[kluis_sim::config::DEMO_PASSWORD]);
    let said = said(&imported);
    assert!(
        said.contains("bitwarden.json still holds passwords"),
        "{said}"
    );
}

/// Tags, from the CLI: `plan --tag` changes every klant with the tag at once (`--all`: every
/// klant), `status --tag` and `backup --all --tag` take only those; a tag nobody has is refused
/// with the tags there are.
#[tokio::test(flavor = "multi_thread")]
async fn many_klanten_are_planned_and_backed_up_by_tag() {
    let e = env(|config| config.payload_size = 4096).await;
    let file = e.dir.path().join("klanten.csv");
    let pw = kluis_sim::config::DEMO_PASSWORD;
    std::fs::write(
        &file,
        format!("name,username,password,tags\nAnker,demo,{pw},Jan\nBoei,demo,{pw},\"Jan, Piet\"\nCijfer,demo,{pw},Piet\n"),
    )
    .unwrap();
    assert_succeeded(
        &e.saved(&["profiles", "import", file.to_str().unwrap()], &[])
            .await,
    );

    let planned = e
        .saved(&["plan", "--tag", "jan", "--weekdays", "07:00"], &[])
        .await;
    assert_succeeded(&planned);
    let listed = json_lines(&e.saved(&["profiles", "list", "--json"], &[]).await.stdout);
    let kind = |name: &str| {
        let p = listed.iter().find(|p| p["name"] == name).unwrap();
        p["plan"]["schedule"]["kind"]
            .as_str()
            .unwrap_or("none")
            .to_string()
    };
    assert_eq!(
        [kind("Anker"), kind("Boei"), kind("Cijfer")],
        ["weekdays", "weekdays", "none"]
    );
    assert_succeeded(&e.saved(&["plan", "--all", "--keep-last", "3"], &[]).await);
    let listed = json_lines(&e.saved(&["profiles", "list", "--json"], &[]).await.stdout);
    assert!(
        listed.iter().all(|p| p["retention"]["keep_last"] == 3),
        "{listed:?}"
    );

    let status = e.saved(&["status", "--json", "--tag", "Piet"], &[]).await;
    let mut names: Vec<String> = json_lines(&status.stdout)
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["Boei", "Cijfer"]);
    let root = e.dir.path().join("backups");
    let backup = e
        .saved(
            &[
                "backup",
                "--all",
                "--tag",
                "piet",
                "--out",
                root.to_str().unwrap(),
                "--json",
            ],
            &[],
        )
        .await;
    assert_succeeded(&backup);
    let mut saved: Vec<String> = json_lines(&backup.stdout)
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_string())
        .collect();
    saved.sort();
    assert_eq!(saved, ["Boei", "Cijfer"]);

    let nobody = e
        .saved(&["plan", "--tag", "Karel", "--daily", "02:00"], &[])
        .await;
    assert_eq!(nobody.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&nobody.stderr).contains("the tags are Jan, Piet"),
        "{}",
        String::from_utf8_lossy(&nobody.stderr)
    );
}

/// Ctrl-C during an import (the service slow to sign in, one klant at a time): the klant
/// signing in finishes and is saved, the others are not tried (`cancelled`), nothing half
/// stored; exit 130.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_an_import_between_klanten() {
    // The sign-in is held until the test lets it go: the signal surely comes while the first
    // klant signs in (a two-second delay made that only likely).
    let e = env(|config| config.faults.hold_sign_ins = true).await;
    let file = e.dir.path().join("klanten.csv");
    let pw = kluis_sim::config::DEMO_PASSWORD;
    std::fs::write(
        &file,
        format!("name,username,password\nAnker,demo,{pw}\nBoei,demo,{pw}\nCijfer,demo,{pw}\n"),
    )
    .unwrap();
    let mut command = e.command(&[
        "profiles",
        "import",
        file.to_str().unwrap(),
        "--jobs",
        "1",
        "--json",
    ]);
    command
        .env("KLUIS_SECRETS_DIR", e.dir.path().join("secrets"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = command.spawn().unwrap();
    // Once the simulator has the first klant's sign-in, it is under way.
    wait_until("the first klant signs in", || {
        e.sim.stats().authenticate == 1
    })
    .await;
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    e.sim.release_sign_ins();
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(130));
    let outcomes: Vec<String> = json_lines(&output.stdout)
        .iter()
        .map(|l| l["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["added", "cancelled", "cancelled"]);
    let listed = json_lines(&e.saved(&["profiles", "list", "--json"], &[]).await.stdout);
    assert_eq!(listed.len(), 1, "only the klant that finished is saved");
}

/// Issue 43: a spreadsheet's row cannot move a saved klant to another server. A row with the
/// klant's name and username, another service address and no password is skipped and says
/// why — the other server is not even asked, and the klant keeps its address (it was
/// `updated` there unasked, and its next backup sent the saved password and api key to it).
/// With a password in the row, the move is shown (`--dry-run`: `moved_from`) and made by
/// signing in at the new address with the row's password and the import's api key — not the
/// klant's saved ones (the other server knows only those the row and the import give).
#[tokio::test(flavor = "multi_thread")]
async fn a_row_moves_a_saved_klant_only_with_the_secrets_it_gives() {
    let own_key = uuid::Uuid::new_v4();
    let e = env(|config| {
        config.accounts.push(kluis_sim::config::Account {
            api_key: own_key,
            username: "bakker".into(),
            password: KLANT_PASSWORD.into(),
            ..kluis_sim::config::Account::demo()
        });
    })
    .await;
    let other = kluis_sim::SimConfig {
        accounts: vec![kluis_sim::config::Account {
            username: "bakker".into(),
            password: "van-de-rij".into(),
            ..kluis_sim::config::Account::demo()
        }],
        ..Default::default()
    };
    let other = kluis_sim::Sim::start(other).await.unwrap();
    let trust = e.trust_also(other.ca_pem());
    let trust = [("KLUIS_CA_CERT", trust.to_str().unwrap())];
    e.add("Bakker", "bakker", &own_key.to_string(), KLANT_PASSWORD)
        .await;
    let (own_url, other_url) = (e.sim.base_url().to_string(), other.base_url().to_string());

    let file = e.dir.path().join("gemaild.csv");
    std::fs::write(
        &file,
        format!("naam;gebruikersnaam;url\nBakker;bakker;{other_url}\n"),
    )
    .unwrap();
    let moved = e
        .saved(
            &["profiles", "import", file.to_str().unwrap(), "--json"],
            &trust,
        )
        .await;
    assert_eq!(moved.status.code(), Some(2), "{}", said(&moved));
    let line = &json_lines(&moved.stdout)[0];
    assert_eq!(line["outcome"], "skipped", "{line}");
    assert!(
        line["why"]
            .as_str()
            .unwrap()
            .contains("never sent to another address"),
        "{line}"
    );
    assert_eq!(
        other.stats().authenticate,
        0,
        "the other server was not asked"
    );
    let listed = json_lines(&e.saved(&["profiles", "list", "--json"], &[]).await.stdout);
    assert_eq!(
        listed[0]["base_url"],
        own_url.as_str(),
        "the klant stays where it was"
    );

    std::fs::write(
        &file,
        format!("naam;gebruikersnaam;url;wachtwoord\nBakker;bakker;{other_url};van-de-rij\n"),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let dry = e
        .saved(&["profiles", "import", path, "--dry-run", "--json"], &trust)
        .await;
    assert_succeeded(&dry);
    let line = &json_lines(&dry.stdout)[0];
    assert_eq!(
        (line["outcome"].as_str(), line["moved_from"].as_str()),
        (Some("would_update"), Some(own_url.as_str())),
        "the move is shown: {line}"
    );
    let said_dry = e
        .saved(&["profiles", "import", path, "--dry-run"], &trust)
        .await;
    let text = String::from_utf8_lossy(&said_dry.stdout);
    assert!(
        text.contains(&format!("moved from {own_url} to {other_url}")),
        "{text}"
    );
    let imported = e
        .saved(&["profiles", "import", path, "--json"], &trust)
        .await;
    assert_succeeded(&imported);
    assert_eq!(json_lines(&imported.stdout)[0]["outcome"], "updated");
    assert_eq!(
        other.stats().authenticate,
        1,
        "signed in there once, with the row's password and the import's api key"
    );
    assert_no_secrets(&imported, &[KLANT_PASSWORD, "van-de-rij"]);
    let listed = json_lines(&e.saved(&["profiles", "list", "--json"], &[]).await.stdout);
    assert_eq!(listed[0]["base_url"], other_url.as_str());
}
