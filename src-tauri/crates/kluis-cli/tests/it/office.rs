//! One office of two PCs around the office hub (a kluis-relay over TLS on 127.0.0.1), each PC a
//! `kluis` of its own (its own profiles file, history and secrets folder) against one
//! simulator: `kluis office join`, then `run-due` on both with the same klant planned (named
//! differently on each) — one backup a slot, the other PC skipping and saying so; the hub gone
//! or refusing this PC — said once, and no backup missed.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{assert_succeeded, Env};
use crate::profiles::{office, KLANT_PASSWORD};
use crate::test_hub::TestHub;

/// One PC of the office: its folder (profiles, history, secrets, backups).
struct Pc {
    name: &'static str,
    dir: PathBuf,
}

/// The hub and a file with its CA (for `--hub-ca`).
pub(crate) struct HubUnderTest {
    hub: TestHub,
    url: String,
    ca: PathBuf,
}

/// A hub on SQLite in memory (a one-instance relay).
async fn hub(env: &Env) -> HubUnderTest {
    hub_on(env, kluis_relay::SqliteStore::in_memory().unwrap()).await
}

/// A hub on `store` over TLS on 127.0.0.1, with the tenant `office`.
pub(crate) async fn hub_on(env: &Env, store: impl kluis_relay::Storage) -> HubUnderTest {
    let hub = TestHub::start(store).await;
    let ca = env.dir.path().join("hub-ca.pem");
    std::fs::write(&ca, &hub.ca_pem).unwrap();
    HubUnderTest {
        url: hub.url.clone(),
        ca,
        hub,
    }
}

impl HubUnderTest {
    /// A PC key for `name`, as `kluis-relay tenant pc-key add office NAME` makes it.
    async fn pc_key(&self, name: &str) -> String {
        self.hub.pc_key(name).await
    }
}

impl Pc {
    fn new(env: &Env, name: &'static str) -> Pc {
        let dir = env.dir.path().join(name);
        std::fs::create_dir_all(dir.join("out")).unwrap();
        Pc { name, dir }
    }

    fn out(&self) -> PathBuf {
        self.dir.join("out")
    }

    /// `kluis ARGS` as this PC, with `vars`.
    async fn kluis(&self, env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut command = env.command(args);
        command
            .env("KLUIS_PROFILES_FILE", self.dir.join("profiles.json"))
            .env("KLUIS_HISTORY_DB", self.dir.join("history.sqlite3"))
            .env("KLUIS_SECRETS_DIR", self.dir.join("secrets"))
            .envs(vars.iter().copied());
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    /// Plans klant `username` (named `name` here) every hour, as if set five hours ago: due.
    async fn plan_due(&self, env: &Env, name: &str, username: &str) {
        self.plan_due_since(env, name, username, 5).await
    }

    /// [`Pc::plan_due`], as if set `hours` ago.
    async fn plan_due_since(&self, env: &Env, name: &str, username: &str, hours: i64) {
        let key = kluis_sim::config::DEMO_API_KEY.to_string();
        let vars = [
            ("KLUIS_USERNAME", username),
            ("KLUIS_API_KEY", &key),
            ("KLUIS_PASSWORD", KLANT_PASSWORD),
        ];
        assert_succeeded(&self.kluis(env, &["profiles", "add", name], &vars).await);
        assert_succeeded(&self.kluis(env, &["plan", name, "--every", "1h"], &[]).await);
        let file = self.dir.join("profiles.json");
        let mut stored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let then = jiff::Timestamp::now().as_millisecond() - hours * 3_600_000;
        for profile in stored["profiles"].as_array_mut().unwrap() {
            if let Some(plan) = profile.get_mut("plan").filter(|p| p.is_object()) {
                plan["set_at_ms"] = then.into();
            }
        }
        std::fs::write(&file, serde_json::to_vec(&stored).unwrap()).unwrap();
    }

    /// Joins the office at `hub` with `pc_key` (and `office_key`, unless it is the first PC):
    /// the office key, printed when this PC made it.
    async fn join(
        &self,
        env: &Env,
        hub: &HubUnderTest,
        pc_key: &str,
        office_key: Option<&str>,
    ) -> String {
        let mut vars = vec![("KLUIS_OFFICE_PC_KEY", pc_key)];
        vars.extend(office_key.map(|k| ("KLUIS_OFFICE_KEY", k)));
        let args = [
            "office",
            "join",
            &hub.url,
            "--name",
            self.name,
            "--hub-ca",
            hub.ca.to_str().unwrap(),
        ];
        let joined = self.kluis(env, &args, &vars).await;
        assert_succeeded(&joined);
        let said = stderr(&joined);
        assert!(
            said.contains(&format!("this PC ({}) joined the office", self.name)),
            "{said}"
        );
        let all = format!("{said}{}", String::from_utf8_lossy(&joined.stdout));
        assert!(!all.contains(pc_key), "the PC key is never shown: {all}");
        String::from_utf8_lossy(&joined.stdout).trim().to_string()
    }

    /// Makes a join code for PC `name` on this PC (`kluis office invite`).
    async fn invite(&self, env: &Env, name: &str) -> String {
        let made = self.kluis(env, &["office", "invite", name], &[]).await;
        assert_succeeded(&made);
        let code = String::from_utf8_lossy(&made.stdout).trim().to_string();
        assert!(code.starts_with("KLUIS-JOIN-"), "{code}");
        code
    }

    /// Joins with a join code (`kluis office join --code`, the code from the environment).
    async fn join_with_code(&self, env: &Env, code: &str) -> Output {
        let args = ["office", "join", "--code"];
        self.kluis(env, &args, &[("KLUIS_OFFICE_JOIN_CODE", code)])
            .await
    }

    async fn run_due(&self, env: &Env) -> Output {
        let out = self.out();
        self.kluis(
            env,
            &["run-due", "--out", out.to_str().unwrap(), "--json"],
            &[],
        )
        .await
    }

    fn backups(&self) -> usize {
        files_below(&self.out())
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn files_below(dir: &Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        count += match path.is_dir() {
            true => files_below(&path),
            false => 1,
        };
    }
    count
}

/// Two PCs plan the same klant (named differently on each) and run `run-due` at once: the
/// klant is backed up once between them; the other PC skips it and says by whom, in words and
/// in its JSON line. A skip because the other PC had already backed it up counts on the
/// skipping PC as that klant's backup: `status` says it is not overdue and by whom, and the
/// plan is not due again this slot. No key is ever shown.
#[tokio::test]
async fn one_backup_per_slot_between_two_pcs_of_an_office() {
    let env = office().await;
    let hub = hub(&env).await;
    one_backup_per_slot(&env, &hub).await;
}

/// Two PCs, each with the klant Visser planned and due, join `hub` and run `run-due` at once.
pub(crate) async fn one_backup_per_slot(env: &Env, hub: &HubUnderTest) {
    let (receptie, balie) = (Pc::new(env, "RECEPTIE"), Pc::new(env, "BALIE"));
    receptie.plan_due(env, "Visser", "visser").await;
    balie.plan_due(env, "Visser B.V.", "visser").await;
    let office_key = receptie
        .join(env, hub, &hub.pc_key("RECEPTIE").await, None)
        .await;
    assert!(
        office_key.starts_with("kluis-office-key-"),
        "the first PC made the office key: {office_key}"
    );
    // BALIE joins with a join code RECEPTIE made (no key from the operator; the code holds the
    // office key and the hub's CA); the code works once.
    let code = receptie.invite(env, "BALIE").await;
    let joined = balie.join_with_code(env, &code).await;
    assert_succeeded(&joined);
    assert!(
        stderr(&joined).contains("this PC (BALIE) joined the office"),
        "{}",
        stderr(&joined)
    );
    assert_eq!(
        String::from_utf8_lossy(&joined.stdout),
        "",
        "no office key made or shown"
    );
    let again = Pc::new(env, "ELDERS").join_with_code(env, &code).await;
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("used already"),
        "{}",
        stderr(&again)
    );

    let (a, b) = tokio::join!(receptie.run_due(env), balie.run_due(env));
    assert_succeeded(&a);
    assert_succeeded(&b);
    assert_eq!(
        receptie.backups() + balie.backups(),
        1,
        "one backup between them\n{}\n{}",
        stderr(&a),
        stderr(&b)
    );
    let (made, skipped, maker) = match receptie.backups() {
        1 => (&a, &b, &receptie),
        _ => (&b, &a, &balie),
    };
    let skipper = if maker.name == "RECEPTIE" {
        &balie
    } else {
        &receptie
    };
    assert!(
        json_lines(made)[0]["path"].is_string(),
        "{:?}",
        json_lines(made)
    );
    let line = &json_lines(skipped)[0];
    assert_eq!(line["by"], maker.name, "{line}");
    let said = stderr(skipped);
    assert!(
        said.contains(&format!("by {}", maker.name)) && said.contains("skipped"),
        "{said}"
    );

    // Held (both at once) leaves the plan due: the next run is told the backup was made.
    if line["skipped"] == "held" {
        let next = skipper.run_due(env).await;
        assert_eq!(json_lines(&next)[0]["skipped"], "done", "{}", stderr(&next));
    }
    assert_eq!(skipper.backups(), 0, "the skipping PC made no backup");
    let status = json_lines(&skipper.kluis(env, &["status", "--json"], &[]).await);
    assert_eq!(status[0]["overdue"], false, "{status:?}");
    assert_eq!(status[0]["office_backup"]["by"], maker.name, "{status:?}");
    let later = skipper.run_due(env).await;
    assert!(
        stderr(&later).contains("no plan is due"),
        "this slot's backup was made: {}",
        stderr(&later)
    );
    assert_eq!(receptie.backups() + balie.backups(), 1);

    // The office view, from either desk: both PCs, the one klant with both, planned twice.
    let status = receptie
        .kluis(env, &["office", "status", "--json"], &[])
        .await;
    assert_succeeded(&status);
    let view = &json_lines(&status)[0];
    let pcs: Vec<&str> = (view["pcs"].as_array().unwrap().iter())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(pcs, ["BALIE", "RECEPTIE"], "{view}");
    let klanten = view["klanten"].as_array().unwrap();
    assert_eq!(
        klanten.len(),
        1,
        "one klant, however each PC named it: {view}"
    );
    let mut names: Vec<&str> = (klanten[0]["names"].as_array().unwrap().iter())
        .map(|n| n.as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["Visser", "Visser B.V."]);
    assert_eq!(klanten[0]["last_backup"][1], maker.name, "{view}");
    let flags = klanten[0]["flags"].as_array().unwrap();
    assert!(flags.iter().any(|f| f["flag"] == "planned_twice"), "{view}");
    assert_eq!(view["all_safe"], false);
    let words = balie.kluis(env, &["office", "status"], &[]).await;
    let said = String::from_utf8_lossy(&words.stdout);
    assert!(
        said.contains("planned on") && said.contains(&format!("by {}", maker.name)),
        "{said}"
    );
    let all = format!("{said}{}{view}", stderr(&words));
    assert!(
        !all.contains(&office_key),
        "the office key is never shown again"
    );
}

/// A PC that would join with another office key than the office's (made anew, or mistyped) is
/// refused, and keeps nothing: it would make other klant ids, and back up twice what the office
/// backs up once.
#[tokio::test]
async fn a_pc_joins_only_with_the_office_s_key() {
    let env = office().await;
    let hub = hub(&env).await;
    let (receptie, balie) = (Pc::new(&env, "RECEPTIE"), Pc::new(&env, "BALIE"));
    receptie
        .join(&env, &hub, &hub.pc_key("RECEPTIE").await, None)
        .await;
    let balie_key = hub.pc_key("BALIE").await;
    let ca = hub.ca.to_str().unwrap();
    let args = [
        "office", "join", &hub.url, "--name", "BALIE", "--hub-ca", ca,
    ];
    let made_anew = balie
        .kluis(&env, &args, &[("KLUIS_OFFICE_PC_KEY", &balie_key)])
        .await;
    assert_eq!(made_anew.status.code(), Some(2), "{}", stderr(&made_anew));
    assert!(
        stderr(&made_anew).contains("This office has PCs already (RECEPTIE)"),
        "{}",
        stderr(&made_anew)
    );
    let another = kluis_office::OfficeKey::generate().unwrap();
    let vars = [
        ("KLUIS_OFFICE_PC_KEY", balie_key.as_str()),
        ("KLUIS_OFFICE_KEY", another.text().expose()),
    ];
    let wrong = balie.kluis(&env, &args, &vars).await;
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).contains("not this office's"),
        "{}",
        stderr(&wrong)
    );
    let (vars, named_wrong) = (
        [("KLUIS_OFFICE_PC_KEY", balie_key.as_str())],
        [
            "office", "join", &hub.url, "--name", "RECEPTIE", "--hub-ca", ca,
        ],
    );
    let wrong_name = balie.kluis(&env, &named_wrong, &vars).await;
    assert_eq!(wrong_name.status.code(), Some(2), "{}", stderr(&wrong_name));
    assert!(
        stderr(&wrong_name).contains("This key is the office's PC \"BALIE\""),
        "{}",
        stderr(&wrong_name)
    );
    let status = balie.kluis(&env, &["office", "status"], &[]).await;
    assert!(
        stderr(&status).contains("in no office"),
        "nothing was kept: {}",
        stderr(&status)
    );

    // RECEPTIE leaves: its key revoked at the hub (the view says it left), nothing kept here.
    let left = receptie.kluis(&env, &["office", "leave"], &[]).await;
    assert_succeeded(&left);
    assert!(
        stderr(&left).contains("its key revoked at the hub"),
        "{}",
        stderr(&left)
    );
    let pcs = hub.hub.relay.store().pcs("office").await.unwrap();
    assert!(
        pcs.iter()
            .any(|p| p.name == "RECEPTIE" && p.revoked_ms.is_some()),
        "{pcs:?}"
    );
    let status = receptie.kluis(&env, &["office", "status"], &[]).await;
    assert!(
        stderr(&status).contains("in no office"),
        "{}",
        stderr(&status)
    );
}

/// Two PCs joining as the office's first at the same moment each make an office key: the hub
/// keeps a check of the first key checked, so the other is refused before either has
/// reported, keeping nothing, and joins with the office's key. A first PC that died before it
/// reported locks nobody out once it is revoked.
#[tokio::test]
async fn of_two_first_pcs_at_once_one_makes_the_office_key() {
    let env = office().await;
    let hub = hub(&env).await;
    // RECEPTIE halfway through its join: its key made and checked at the hub, no report yet.
    let made = kluis_office::OfficeKey::generate().unwrap();
    let membership = kluis_office::Membership {
        hub: hub.url.clone(),
        pc: "RECEPTIE".into(),
        hub_ca_pem: Some(std::fs::read_to_string(&hub.ca).unwrap()),
        joined_ms: 0,
    };
    let receptie_key = kluis_core::Secret::new(hub.pc_key("RECEPTIE").await);
    let receptie = kluis_office::Hub::new(&membership, receptie_key).unwrap();
    assert!(
        receptie.check_key(&made).await.unwrap(),
        "the office's first key"
    );
    assert!(
        receptie.check_key(&made).await.unwrap(),
        "and the same again"
    );
    assert!(hub
        .hub
        .relay
        .store()
        .reports("office")
        .await
        .unwrap()
        .is_empty());

    let balie = Pc::new(&env, "BALIE");
    let balie_key = hub.pc_key("BALIE").await;
    let ca = hub.ca.to_str().unwrap();
    let args = ["office", "join", &hub.url, "--hub-ca", ca];
    let first_too = balie
        .kluis(&env, &args, &[("KLUIS_OFFICE_PC_KEY", &balie_key)])
        .await;
    assert_eq!(first_too.status.code(), Some(2), "{}", stderr(&first_too));
    assert!(
        stderr(&first_too).contains("Another PC made this office's key first"),
        "{}",
        stderr(&first_too)
    );
    let another = kluis_office::OfficeKey::generate().unwrap();
    let wrong = balie
        .kluis(
            &env,
            &args,
            &[
                ("KLUIS_OFFICE_PC_KEY", balie_key.as_str()),
                ("KLUIS_OFFICE_KEY", another.text().expose()),
            ],
        )
        .await;
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).contains("not this office's"),
        "{}",
        stderr(&wrong)
    );
    let status = balie.kluis(&env, &["office", "status"], &[]).await;
    assert!(
        stderr(&status).contains("in no office"),
        "nothing was kept: {}",
        stderr(&status)
    );
    assert_eq!(
        files_below(&balie.dir.join("secrets")),
        0,
        "no key kept from a refused join"
    );

    // The same key joins (the hub's check is RECEPTIE's).
    let same = [
        ("KLUIS_OFFICE_PC_KEY", balie_key.as_str()),
        ("KLUIS_OFFICE_KEY", made.text().expose()),
    ];
    assert_succeeded(&balie.kluis(&env, &args, &same).await);
    assert_succeeded(&balie.kluis(&env, &["office", "leave"], &[]).await);

    // RECEPTIE dies before it ever reports, its key the only one made: once the operator
    // revokes it, a PC may make the office's key anew — no office is locked out for good.
    let store = hub.hub.relay.store();
    assert!(store.revoke_pc("office", "RECEPTIE").await.unwrap());
    let kassa = Pc::new(&env, "KASSA");
    let kassa_key = hub.pc_key("KASSA").await;
    let anew = kassa
        .kluis(&env, &args, &[("KLUIS_OFFICE_PC_KEY", &kassa_key)])
        .await;
    assert_succeeded(&anew);
    let key = String::from_utf8_lossy(&anew.stdout).trim().to_string();
    assert!(
        key.starts_with("kluis-office-key-") && key != made.text().expose(),
        "{key}"
    );
}

/// The hub gone (stopped mid-night) and a PC whose key the office revoked: each PC says so
/// once — not once per klant — and backs every due klant up alone: a klant may be backed up
/// twice, never by nobody. The hub back, the PC reports and tells it of what it backed up.
#[tokio::test]
async fn a_hub_that_is_gone_or_refuses_is_said_once_and_no_backup_is_missed() {
    let env = office().await;
    let mut hub = hub(&env).await;
    let (receptie, balie) = (Pc::new(&env, "RECEPTIE"), Pc::new(&env, "BALIE"));
    for pc in [&receptie, &balie] {
        pc.plan_due(&env, "Visser", "visser").await;
        pc.plan_due(&env, "Bakker", "bakker").await;
    }
    let office_key = receptie
        .join(&env, &hub, &hub.pc_key("RECEPTIE").await, None)
        .await;
    balie
        .join(&env, &hub, &hub.pc_key("BALIE").await, Some(&office_key))
        .await;

    // From RECEPTIE, BALIE is revoked (a stolen laptop).
    assert_succeeded(
        &receptie
            .kluis(&env, &["office", "revoke", "BALIE"], &[])
            .await,
    );
    let alone = balie.run_due(&env).await;
    assert_succeeded(&alone);
    assert_eq!(
        balie.backups(),
        2,
        "both klanten backed up: {}",
        stderr(&alone)
    );
    let said = stderr(&alone);
    assert_eq!(
        said.matches("refused this PC's key").count(),
        1,
        "said once: {said}"
    );

    // The hub stops; RECEPTIE's klanten are due still.
    hub.hub.stop.take().unwrap().send(()).unwrap();
    let night = receptie.run_due(&env).await;
    assert_succeeded(&night);
    assert_eq!(
        receptie.backups(),
        2,
        "both klanten backed up: {}",
        stderr(&night)
    );
    let said = stderr(&night);
    assert_eq!(
        said.matches("did not answer").count(),
        1,
        "said once: {said}"
    );
    assert!(said.contains("Kluis goes on without it"), "{said}");

    // The hub is back (restarted at its address, its data kept): RECEPTIE's next run tells it
    // of the two backups it made alone — a PC asking for either klant's turn now
    // hears "done by RECEPTIE".
    hub.hub.restart().await;
    let later = receptie.run_due(&env).await;
    assert_succeeded(&later);
    assert_eq!(
        receptie.backups(),
        2,
        "nothing due again: {}",
        stderr(&later)
    );
    let key = kluis_office::OfficeKey::parse(&office_key).unwrap();
    hub.pc_key("KASSA").await;
    let store = hub.hub.relay.store();
    for username in ["visser", "bakker"] {
        let klant = kluis_office::KlantId::of(&key, env.sim.base_url().as_str(), username).unwrap();
        let turn = store
            .take_turn("office", "KASSA", klant.as_str(), 3_600_000, 3_600_000)
            .await
            .unwrap();
        assert!(
            matches!(&turn, kluis_relay::storage::Turn::Done { by, .. } if by == "RECEPTIE"),
            "{username}: {turn:?}"
        );
    }
}

/// A backup made while the hub was away (out of reach for this PC) is told to the hub when it
/// answers again, with when it was made: the office's other PC then skips the klant within its
/// slot instead of backing it up a second time.
#[tokio::test]
async fn a_backup_made_while_the_hub_was_away_is_told_when_it_is_back() {
    let env = office().await;
    let hub = hub(&env).await;
    let (receptie, balie) = (Pc::new(&env, "RECEPTIE"), Pc::new(&env, "BALIE"));
    receptie.plan_due(&env, "Visser", "visser").await;
    balie.plan_due(&env, "Visser B.V.", "visser").await;
    receptie
        .join(&env, &hub, &hub.pc_key("RECEPTIE").await, None)
        .await;
    let code = receptie.invite(&env, "BALIE").await;
    assert_succeeded(&balie.join_with_code(&env, &code).await);

    // RECEPTIE cannot reach the hub tonight (its address leads nowhere): it backs Visser up
    // alone, and says so.
    let settings = receptie.dir.join("profiles.json");
    let joined = std::fs::read_to_string(&settings).unwrap();
    assert!(joined.contains(&hub.url));
    std::fs::write(&settings, joined.replace(&hub.url, "https://127.0.0.1:1")).unwrap();
    let alone = receptie.run_due(&env).await;
    assert_succeeded(&alone);
    assert_eq!(receptie.backups(), 1, "{}", stderr(&alone));
    assert!(
        stderr(&alone).contains("Kluis goes on without it"),
        "{}",
        stderr(&alone)
    );

    // The hub is back for RECEPTIE: its next run (nothing due) tells it of that backup.
    std::fs::write(&settings, joined).unwrap();
    let back = receptie.run_due(&env).await;
    assert_succeeded(&back);
    assert_eq!(receptie.backups(), 1, "nothing due: {}", stderr(&back));

    let skipped = balie.run_due(&env).await;
    assert_succeeded(&skipped);
    let said = stderr(&skipped);
    assert_eq!(balie.backups(), 0, "backed up once in the office: {said}");
    assert!(
        said.contains("skipped") && said.contains("by RECEPTIE"),
        "{said}"
    );
    assert_eq!(json_lines(&skipped)[0]["skipped"], "done", "{said}");
}

/// However often the hub says another PC backed a klant up, or is backing it up now, a PC
/// backs up a klant it has planned for over a week at least weekly itself: a hub or PC that
/// says "done" or "held" without a backup made cannot leave a klant backed up by nobody.
#[tokio::test]
async fn a_pc_backs_its_klant_up_at_least_weekly_whatever_it_is_told() {
    let env = office().await;
    let hub = hub(&env).await;
    let (receptie, balie) = (Pc::new(&env, "RECEPTIE"), Pc::new(&env, "BALIE"));
    receptie.plan_due(&env, "Visser", "visser").await;
    balie.plan_due_since(&env, "Visser", "visser", 8 * 24).await;
    balie.plan_due_since(&env, "Bakker", "bakker", 8 * 24).await;
    let office_key = receptie
        .join(&env, &hub, &hub.pc_key("RECEPTIE").await, None)
        .await;
    let code = receptie.invite(&env, "BALIE").await;
    assert_succeeded(&balie.join_with_code(&env, &code).await);
    // Visser: RECEPTIE backs it up ("done" for BALIE); Bakker: RECEPTIE holds its turn, and
    // holds it still when BALIE asks ("held").
    assert_succeeded(&receptie.run_due(&env).await);
    assert_eq!(receptie.backups(), 1);
    let key = kluis_office::OfficeKey::parse(&office_key).unwrap();
    let bakker = kluis_office::KlantId::of(&key, env.sim.base_url().as_str(), "bakker").unwrap();
    let store = hub.hub.relay.store();
    let held = store
        .take_turn("office", "RECEPTIE", bakker.as_str(), 3_600_000, 0)
        .await
        .unwrap();
    assert!(
        matches!(held, kluis_relay::storage::Turn::Yours { .. }),
        "{held:?}"
    );
    let own = balie.run_due(&env).await;
    assert_succeeded(&own);
    assert!(!stderr(&own).contains("skipped"), "{}", stderr(&own));
    assert_eq!(
        balie.backups(),
        2,
        "a week without a backup of its own: it makes them"
    );
}
