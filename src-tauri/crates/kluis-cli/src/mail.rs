//! `kluis mail set|test|remove` — e-mail through the office's SMTP server, the same settings
//! the app's Settings → *E-mail* shows (for a server where nobody runs the app) — and the
//! daily report that `run-due` and `backup --all` send when it is due (once a day between
//! them and the app). A batch's failures are mailed by its outbox (see `unattended`).

use std::io::BufRead;

use kluis_core::plan::ClockTime;
use kluis_core::{Error, History, Result, Secret};
use kluis_profiles::mail::test_mail;
use kluis_profiles::{
    klant_status, DailyReport, MailSettings, MailWhen, OfficeMail, ProfileError, ProfileStore,
    SecretKind, APP,
};

use crate::profiles::secret_store;
use crate::settings::{open_profiles, Cli, MailArgs, MailCommand};

pub async fn run(cli: &Cli, command: &MailCommand) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let core = ProfileError::into_core;
    match command {
        MailCommand::Set(args) => set(&profiles, args).await,
        MailCommand::Test => {
            let mail = profiles.settings().mail.ok_or_else(|| {
                Error::Config("E-mail is not set up: see `kluis mail set --help`.".into())
            })?;
            let mailer = OfficeMail::new(secret_store()).mailer(&mail).await;
            mailer
                .map_err(core)?
                .send(&test_mail())
                .await
                .map_err(core)?;
            eprintln!("kluis: a test e-mail was sent to {}.", mail.to.join(", "));
            Ok(())
        }
        MailCommand::Remove => {
            let store = secret_store();
            kluis_profiles::secrets::off_thread(store, |s| s.delete(APP, SecretKind::MailPassword))
                .await
                .map_err(core)?;
            let settings = kluis_profiles::Settings {
                mail: None,
                ..profiles.settings()
            };
            profiles.set_settings(settings).map_err(core)
        }
    }
}

/// `kluis mail set`: checks the settings, keeps the password (from `KLUIS_MAIL_PASSWORD` or a
/// line on standard input, never an argument) in the keyring, and saves.
async fn set(profiles: &ProfileStore, args: &MailArgs) -> Result<()> {
    let core = ProfileError::into_core;
    let when = match &args.daily {
        Some(at) => MailWhen::Daily {
            at: ClockTime::parse(at)?,
        },
        None => MailWhen::EachFailure,
    };
    let mut mail = MailSettings {
        server: args.server.clone(),
        port: args.port,
        username: args.user.clone(),
        password_saved: false,
        from: args.from.clone(),
        to: args.to.clone(),
        when,
    }
    .checked()
    .map_err(core)?;
    if !mail.username.is_empty() {
        let password = match args.stdin {
            true => read_password(std::io::stdin().lock())?,
            false => std::env::var("KLUIS_MAIL_PASSWORD")
                .ok()
                .filter(|p| !p.is_empty())
                .map(Secret::new)
                .ok_or_else(|| {
                    Error::Config(
                        "Give the mail server's password in KLUIS_MAIL_PASSWORD, or on standard input with --stdin.".into(),
                    )
                })?,
        };
        kluis_profiles::secrets::off_thread(secret_store(), move |s| {
            s.set(APP, SecretKind::MailPassword, &password)
        })
        .await
        .map_err(core)?;
        mail.password_saved = true;
    }
    let settings = kluis_profiles::Settings {
        mail: Some(mail),
        ..profiles.settings()
    };
    profiles.set_settings(settings).map_err(core)
}

fn read_password(input: impl BufRead) -> Result<Secret> {
    let line = input
        .lines()
        .next()
        .transpose()
        .map_err(|e| Error::Config(format!("Could not read standard input: {e}.")))?
        .unwrap_or_default();
    match line.trim_end_matches('\r') {
        "" => Err(Error::Config(
            "Standard input has no password: give it on the first line.".into(),
        )),
        password => Ok(Secret::new(password.to_string())),
    }
}

/// Sends the daily report when e-mail asks for one and it is due (see
/// [`DailyReport::send_if_due`]). A report that cannot be sent is said; the backups' exit
/// code is theirs.
pub async fn daily_report(cli: &Cli, profiles: &ProfileStore, history: &History) {
    let db = match &cli.history_db {
        Some(path) => path.clone(),
        None => match History::default_path() {
            Ok(path) => path,
            Err(_) => return,
        },
    };
    let now = jiff::Zoned::now();
    let statuses = || {
        (profiles.list().iter())
            .map(|p| Ok(klant_status(p, history, &now)?))
            .collect()
    };
    let office = OfficeMail::new(secret_store());
    let mail = profiles.settings().mail;
    match DailyReport::beside(&db)
        .send_if_due(&office, mail.as_ref(), history, statuses, &now)
        .await
    {
        Ok(true) => eprintln!("kluis: the daily report was mailed."),
        Ok(false) => {}
        Err(e) => eprintln!("kluis: the daily report could not be sent: {e}"),
    }
}
