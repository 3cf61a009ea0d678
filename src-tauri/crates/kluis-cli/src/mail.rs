//! `kluis mail set|test|remove` — e-mail through the office's SMTP server, the same settings
//! the app's Settings → *E-mail* shows (for a server where nobody runs the app) — and the
//! daily report that `run-due` and `backup --all` send when it is due (once a day between
//! them and the app). A batch's failures are mailed by its outbox (see `unattended`).

use std::io::BufRead;

use kluis_core::plan::ClockTime;
use kluis_core::{Error, History, Result, Secret};
use kluis_profiles::{ProfileError, ProfileStore};
use kluis_reporting::mail::{self, test_mail};
use kluis_reporting::{mail_settings, MailSettings, MailWhen};
use kluis_reporting::{DailyReport, OfficeMail};

use crate::args::{Cli, MailArgs, MailCommand};
use crate::from_args::{history_path, open_profiles};
use crate::secrets::{secret_line, secret_store};

pub async fn run(cli: &Cli, command: &MailCommand) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let core = ProfileError::into_core;
    match command {
        MailCommand::Set(args) => set(&profiles, args).await,
        MailCommand::Test => {
            let settings = profiles.settings();
            let mail = mail_settings::of(&settings).map_err(core)?;
            let mail = mail.ok_or_else(|| {
                Error::Config("E-mail is not set up: see `kluis mail set --help`.".into())
            })?;
            let mailer = OfficeMail::new(secret_store()).mailer(&mail).await;
            mailer
                .map_err(core)?
                .send(&test_mail(settings.language()))
                .await
                .map_err(core)?;
            eprintln!("kluis: a test e-mail was sent to {}.", mail.to.join(", "));
            Ok(())
        }
        MailCommand::Remove => mail::remove(&profiles, secret_store()).await.map_err(core),
    }
}

/// `kluis mail set`: the settings, checked before the password is asked for (from
/// `KLUIS_MAIL_PASSWORD` or a line on standard input, never an argument), which it is
/// whenever a login is named.
async fn set(profiles: &ProfileStore, args: &MailArgs) -> Result<()> {
    let when = match &args.daily {
        Some(at) => MailWhen::Daily {
            at: ClockTime::parse(at)?,
        },
        None => MailWhen::EachFailure,
    };
    let settings = MailSettings {
        server: args.server.clone(),
        port: args.port,
        username: args.user.clone(),
        password_saved: false,
        from: args.from.clone(),
        to: args.to.clone(),
        when,
    }
    .checked()
    .map_err(ProfileError::into_core)?;
    let password = match (settings.username.is_empty(), args.stdin) {
        (true, _) => None,
        (false, true) => Some(secret_line(
            &mut std::io::stdin().lock().lines(),
            "Standard input has no password: give it on the first line.",
        )?),
        (false, false) => Some(
            std::env::var("KLUIS_MAIL_PASSWORD")
                .ok()
                .filter(|p| !p.is_empty())
                .map(Secret::new)
                .ok_or_else(|| {
                    Error::Config(
                        "Give the mail server's password in KLUIS_MAIL_PASSWORD, or on standard input with --stdin.".into(),
                    )
                })?,
        ),
    };
    mail::save(profiles, secret_store(), settings, password)
        .await
        .map_err(ProfileError::into_core)
}

/// Sends the daily report when e-mail asks for one and it is due (see
/// [`DailyReport::send_if_due`]). A report that cannot be sent is said; the backups' exit
/// code is theirs.
pub async fn daily_report(cli: &Cli, profiles: &ProfileStore, history: &History) {
    let Ok(db) = history_path(cli.history_db.as_ref()) else {
        return;
    };
    let office = OfficeMail::new(secret_store());
    let now = jiff::Zoned::now();
    match DailyReport::beside(&db)
        .send_if_due(&office, profiles, history, &now)
        .await
    {
        Ok(true) => eprintln!("kluis: the daily report was mailed."),
        Ok(false) => {}
        Err(e) => eprintln!("kluis: the daily report could not be sent: {e}"),
    }
}
