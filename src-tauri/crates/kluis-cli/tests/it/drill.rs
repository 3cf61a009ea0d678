//! The recovery drill (run by `tests/recovery/drill.sh`, as root: it needs moto's S3 server
//! and Debian's sshd): what an office does after a fire, on each kind of copy target at once.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use crate::common::*;
use crate::moto::Moto;
use crate::sshd::{password, Sshd, USER};
use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD};

/// A computer of the office: its own profiles file, history and secrets folder under `dir`.
struct Computer {
    dir: PathBuf,
}

impl Computer {
    fn at(dir: PathBuf) -> Computer {
        std::fs::create_dir_all(&dir).unwrap();
        Computer { dir }
    }

    /// `kluis ARGS` on this computer, with `vars`, and `input` on standard input.
    async fn run(&self, e: &Env, args: &[&str], vars: &[(&str, &str)], input: &str) -> Output {
        let mut command = e.command(args);
        command
            .env("KLUIS_PROFILES_FILE", self.dir.join("profiles.json"))
            .env("KLUIS_HISTORY_DB", self.dir.join("history.sqlite3"))
            .env("KLUIS_SECRETS_DIR", self.dir.join("secrets"))
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let input = input.to_string();
        tokio::task::spawn_blocking(move || {
            let mut child = command.spawn().unwrap();
            write!(child.stdin.take().unwrap(), "{input}").unwrap();
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap()
    }

    async fn ok(&self, e: &Env, args: &[&str], vars: &[(&str, &str)], input: &str) -> Output {
        let output = self.run(e, args, vars, input).await;
        assert_succeeded(&output);
        output
    }

    /// The three targets added, each with its secret on standard input (as the kit's page says).
    async fn add_targets(&self, e: &Env, targets: &[(Vec<String>, String)]) {
        for (args, secret) in targets {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            self.ok(e, &args, &[], &format!("{secret}\n")).await;
            let rule = ["copy-target", "keep", args[2], "--keep-last", "2"];
            self.ok(e, &rule, &[], "").await;
        }
    }
}

/// The JSON lines of `output`.
fn lines(output: &Output) -> Vec<serde_json::Value> {
    (String::from_utf8_lossy(&output.stdout).lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The office after a fire, on a folder, an S3 bucket with Object Lock (moto) and an SFTP
/// server (OpenSSH) at once. Computer A backs up three klanten — one plain, one encrypted with
/// a passphrase, one to an age recipient the office holds — to the three targets, and makes a
/// kit. A's profiles, history and secrets are then deleted. Computer B, with only the kit's key
/// file, the recipient's identity and the targets' secrets, lists every backup on each target,
/// restores each klant from each target byte for byte (the passphrase one with the kit alone),
/// adopts, and — its passwords imported — its next backup of each klant is copied to each target
/// beside A's copy, which the targets' rule keeps; each target's listing then names every copy
/// once, under B.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server and sshd as root: tests/recovery/drill.sh"]
async fn the_office_recovers_every_klant_from_each_kind_of_target_after_a_fire() {
    let (moto, sshd) = (Moto::start().await, Sshd::start().await);
    let e = crate::profiles::office().await;
    moto.make_bucket("office", true).await;
    let nas = e.dir.path().join("nas");
    std::fs::create_dir(&nas).unwrap();
    let owned = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let (s3_port, sftp_port) = (moto.port.to_string(), sshd.port.to_string());
    let endpoint = format!("https://127.0.0.1:{s3_port}");
    let targets = [
        (
            owned(&[
                "copy-target",
                "add",
                "NAS",
                "--folder",
                nas.to_str().unwrap(),
            ]),
            String::new(),
        ),
        (
            owned(&[
                "copy-target",
                "add",
                "Cloud",
                "--s3-endpoint",
                &endpoint,
                "--s3-bucket",
                "office",
                "--s3-path-style",
                "--s3-access-key-id",
                &moto.access_key_id,
                "--s3-prefix",
                "kluis",
                "--s3-ca-cert",
                moto.ca_file.to_str().unwrap(),
                "--s3-lock-days",
                "30",
                "--stdin",
            ]),
            moto.secret.clone(),
        ),
        (
            owned(&[
                "copy-target",
                "add",
                "Server",
                "--sftp-host",
                "127.0.0.1",
                "--sftp-port",
                &sftp_port,
                "--sftp-user",
                USER,
                "--sftp-path",
                sshd.folder.to_str().unwrap(),
                "--stdin",
            ]),
            password().to_string(),
        ),
    ];

    // Computer A.
    let a = Computer::at(e.dir.path().join("a"));
    let klant_password = crate::profiles::KLANT_PASSWORD;
    for (name, username, password) in [
        ("Bakker", "bakker", klant_password),
        ("Visser", "visser", klant_password),
        ("Jansen", "demo", DEMO_PASSWORD),
    ] {
        let vars = [("KLUIS_USERNAME", username), ("KLUIS_PASSWORD", password)];
        a.ok(&e, &["profiles", "add", name], &vars, "").await;
    }
    let phrase = "bakker bewaart zijn brood veilig";
    let passphrase = [("KLUIS_ENCRYPTION_PASSPHRASE", phrase)];
    a.ok(
        &e,
        &["encryption", "Bakker", "--passphrase"],
        &passphrase,
        "",
    )
    .await;
    let jansen = kluis_recovery::RecoveryKey::generate(); // (an age X25519 identity)
    let recipient = jansen.office_key().to_text();
    a.ok(
        &e,
        &["encryption", "Jansen", "--recipient", &recipient],
        &[],
        "",
    )
    .await;
    a.add_targets(&e, &targets).await;
    let kit = e.dir.path().join("kit.key");
    let make_kit = [
        "recovery-kit",
        "--key-file",
        kit.to_str().unwrap(),
        "--pc-name",
        "OUD",
    ];
    a.ok(&e, &make_kit, &[], "").await;
    let a_out = a.dir.join("backups");
    a.ok(
        &e,
        &["backup", "--all", "--out", a_out.to_str().unwrap()],
        &[],
        "",
    )
    .await;
    // The names A saved Visser's plain backup under (each its minute's), before they burn.
    let names_in = |folder: &std::path::Path| -> std::collections::BTreeSet<String> {
        (std::fs::read_dir(folder).unwrap().flatten())
            .map(|f| f.file_name().to_string_lossy().into_owned())
            .collect()
    };
    let mut visser_names = names_in(&a_out.join("Visser"));
    // The fire.
    std::fs::remove_dir_all(&a.dir).unwrap();

    // Computer B.
    let b = Computer::at(e.dir.path().join("b"));
    let identity = b.dir.join("jansen.identity");
    std::fs::write(&identity, jansen.to_text().expose()).unwrap();
    b.add_targets(&e, &targets).await;
    let key = ["--recovery-key", kit.to_str().unwrap()];
    let payload = 256 * 1024; // the office's (crate::profiles::office)
    for target in ["NAS", "Cloud", "Server"] {
        let mut list = vec!["recover", "list", "--json", "--target", target];
        list.extend(key);
        let listed = lines(&b.ok(&e, &list, &[], "").await);
        let mut klanten: Vec<(&str, &str)> = (listed.iter())
            .map(|l| {
                (
                    l["klant"].as_str().unwrap(),
                    l["encrypted"].as_str().unwrap(),
                )
            })
            .collect();
        klanten.sort();
        assert_eq!(
            klanten,
            [
                ("Bakker", "passphrase"),
                ("Jansen", "recipient"),
                ("Visser", "no")
            ],
            "every klant's backup on {target}: {listed:?}"
        );
        assert!(
            listed
                .iter()
                .all(|l| l["on_target"] == true && l["pc"] == "OUD"),
            "{listed:?}"
        );
        for klant in ["Bakker", "Visser", "Jansen"] {
            let to = b.dir.join(format!("restored/{target}/{klant}"));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let mut restore = vec!["recover", "restore", "--target", target, "--klant", klant];
            restore.extend(["--to", to.to_str().unwrap()]);
            restore.extend(key);
            if klant == "Jansen" {
                restore.extend(["--identity", identity.to_str().unwrap()]);
            }
            b.ok(&e, &restore, &[], "").await;
            assert!(
                std::fs::read(to.join("owner-data.bin")).ok()
                    == Some(crate::recovery::entry_of_sim_backup(payload)),
                "{klant} restored from {target} byte for byte"
            );
        }
        let mut adopt = vec!["recover", "adopt", "--target", target, "--pc-name", "NIEUW"];
        adopt.extend(key);
        let adopted = b.ok(&e, &adopt, &[], "").await;
        assert!(
            said(&adopted).contains("3 klanten of OUD taken over, 3 copies added"),
            "{target}: {}",
            said(&adopted)
        );
    }

    // B's passwords imported, then its next backup of each klant.
    let csv = b.dir.join("klanten.csv");
    std::fs::write(
        &csv,
        format!(
            "name,username,password\nBakker,bakker,{klant_password}\nVisser,visser,{klant_password}\nJansen,demo,{DEMO_PASSWORD}\n"
        ),
    )
    .unwrap();
    let api_key = DEMO_API_KEY.to_string();
    let import = ["profiles", "import", csv.to_str().unwrap()];
    b.ok(&e, &import, &[("KLUIS_API_KEY", &api_key)], "").await;
    let b_out = b.dir.join("backups");
    b.ok(
        &e,
        &["backup", "--all", "--out", b_out.to_str().unwrap()],
        &[],
        "",
    )
    .await;
    // (The simulator's plain backups are the same bytes each time: when B saved Visser's in
    // the same minute as A, under the same name, B's copy is A's, found in its place, and
    // listed once; saved in another minute, it is a second copy.)
    visser_names.extend(names_in(&b_out.join("Visser")));
    let visser = visser_names.len();
    for target in ["NAS", "Cloud", "Server"] {
        let mut list = vec!["recover", "list", "--json", "--target", target];
        list.extend(key);
        let listed = b.ok(&e, &list, &[], "").await;
        let lines = lines(&listed);
        let of = |klant: &str| lines.iter().filter(|l| l["klant"] == klant).count();
        assert_eq!(
            [of("Bakker"), of("Jansen"), of("Visser")],
            [2, 2, visser],
            "A's copy and B's of each klant on {target}: {lines:?}"
        );
        assert!(
            lines
                .iter()
                .all(|l| l["pc"] == "NIEUW" && l["on_target"] == true),
            "each once, under the computer that carries on: {lines:?}"
        );
        assert!(
            said(&listed).contains("NIEUW carries on for OUD"),
            "{}",
            said(&listed)
        );
    }
    let cloud = (lines(
        &b.ok(
            &e,
            &[
                "recover", "list", "--json", "--target", "Cloud", key[0], key[1],
            ],
            &[],
            "",
        )
        .await,
    )
    .into_iter())
    .filter(|l| l["klant"] == "Visser")
    .collect::<Vec<_>>();
    assert!(
        cloud.iter().all(|l| !l["locked_until"].is_null()),
        "the bucket's locks are kept in what B records: {cloud:?}"
    );
}
