//! `kluis profiles add|list|remove`, `kluis plan` and `kluis status`: the klanten the app
//! shows, managed from a terminal. Profiles live in the app's profiles file
//! (kluis-profiles), their secrets where `secrets.rs` keeps them.

use std::io::BufRead;

use kluis_core::plan::{ClockTime, Day, Plan, Schedule};
use kluis_core::{Error, Result, Secret, ServiceClient, Session};
use kluis_profiles::{klant_status, klant_statuses, Profile, ProfileError, SecretKind};

use crate::args::{Cli, PlanArgs, ProfilesCommand};
use crate::display;
use crate::from_args::{open_history, open_profiles};
use crate::secrets::{on_store, secret_line, secret_store};

pub async fn run(cli: &Cli, command: &ProfilesCommand) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    match command {
        ProfilesCommand::Add { name, stdin } => add(cli, &profiles, name, *stdin).await,
        ProfilesCommand::Import {
            file,
            dry_run,
            map,
            secrets,
            jobs,
            json,
        } => {
            let how = crate::import::How {
                dry_run: *dry_run,
                map,
                secrets: secrets.as_deref(),
                jobs: *jobs as usize,
                json: *json,
            };
            crate::import::run(cli, &profiles, file, how).await
        }
        ProfilesCommand::Export { out } => crate::import::export(&profiles, out.as_deref()),
        ProfilesCommand::List { json } => {
            display::profiles(&profiles.list(), *json);
            Ok(())
        }
        ProfilesCommand::TestPing { profile } => {
            let profile = profiles.find(profile).map_err(ProfileError::into_core)?;
            let fallback = connection_ca(cli)?;
            let Some(monitor) = kluis_profiles::Monitor::of(&profile, fallback.as_deref()) else {
                return Err(Error::Config(format!(
                    "\"{}\" has no monitor; set one with `kluis plan \"{}\" --ping URL`.",
                    profile.name, profile.name
                )));
            };
            monitor.ping(&kluis_profiles::Ran::Test).await?;
            eprintln!(
                "kluis: the monitor of \"{}\" answered the test ping.",
                profile.name
            );
            Ok(())
        }
        ProfilesCommand::Remove { profile } => {
            let profile = profiles.find(profile).map_err(ProfileError::into_core)?;
            let id = profile.id.clone();
            on_store(&secret_store(), move |store| {
                for kind in [SecretKind::ApiKey, SecretKind::Password] {
                    store.delete(&id, kind)?;
                }
                Ok(())
            })
            .await?;
            profiles
                .remove(&profile.id)
                .map_err(ProfileError::into_core)?;
            eprintln!(
                "kluis: profile \"{}\" removed (its backups and history are kept).",
                profile.name
            );
            Ok(())
        }
    }
}

/// `kluis profiles add NAME`: signs in with the given settings first (a wrong password is said
/// now, not at two in the morning), then stores the secrets and the profile.
async fn add(
    cli: &Cli,
    profiles: &kluis_profiles::ProfileStore,
    name: &str,
    from_stdin: bool,
) -> Result<()> {
    if name.trim().is_empty() {
        return Err(Error::Config(
            "Give the profile a name, e.g. the klant's.".into(),
        ));
    }
    if profiles.find(name).is_ok() {
        return Err(Error::Config(format!(
            "A profile named \"{}\" exists already; remove it first or choose another name.",
            name.trim()
        )));
    }
    let connection = &cli.connection;
    for (flag, value, var) in [
        ("--api-key", &connection.api_key, "KLUIS_API_KEY"),
        ("--password", &connection.password, "KLUIS_PASSWORD"),
    ] {
        // clap fills these from the flag or the variable; a value that is not the variable's
        // came from an argument, which other users can read in the process list.
        if value.is_some() && std::env::var(var).ok() != *value {
            return Err(Error::Config(format!(
                "A saved secret is never taken from an argument ({flag}): other users of this computer can read those. Set {var}, or use --stdin."
            )));
        }
    }
    let (api_key, password) = if from_stdin {
        read_secrets(std::io::stdin().lock())?
    } else {
        let need = |value: &Option<String>, var: &str| {
            value.clone().map(Secret::new).ok_or_else(|| {
                Error::Config(format!(
                    "Set {var} (or use --stdin) to give the profile's secret."
                ))
            })
        };
        (
            need(&connection.api_key, "KLUIS_API_KEY")?,
            need(&connection.password, "KLUIS_PASSWORD")?,
        )
    };
    let base_url = connection.base_url.as_deref().ok_or_else(|| {
        Error::Config("The base url is not set. Use --base-url or KLUIS_BASE_URL.".into())
    })?;
    let username = connection.username.as_deref().ok_or_else(|| {
        Error::Config("The username is not set. Use --username or KLUIS_USERNAME.".into())
    })?;
    let mut profile = Profile::new(name, base_url, username);
    if let Some(pem) = connection.ca_pem()? {
        kluis_core::trust::describe(&pem)?;
        profile.extra_ca_pem = Some(pem);
    }
    let config = profile.service_config(api_key.clone(), password.clone(), None)?;
    Session::new(ServiceClient::new(config)?).sign_in().await?;

    let id = profile.id.clone();
    on_store(&secret_store(), move |store| {
        store.set(&id, SecretKind::ApiKey, &api_key)?;
        store.set(&id, SecretKind::Password, &password)
    })
    .await?;
    profiles
        .put(profile.clone())
        .map_err(ProfileError::into_core)?;
    println!("{}", profile.id);
    eprintln!(
        "kluis: profile \"{}\" added; signed in as {}.",
        profile.name, profile.username
    );
    Ok(())
}

/// Of `profiles`, those with `tag` (all without one); a tag no profile has is refused with
/// the tags there are.
pub fn tagged(profiles: Vec<Profile>, tag: Option<&str>) -> Result<Vec<Profile>> {
    let Some(tag) = tag else {
        return Ok(profiles);
    };
    let mut there: Vec<&str> = profiles
        .iter()
        .flat_map(|p| p.tags.iter().map(String::as_str))
        .collect();
    there.sort_unstable();
    there.dedup();
    let with: Vec<Profile> = profiles
        .iter()
        .filter(|p| p.has_tag(tag))
        .cloned()
        .collect();
    match (with.is_empty(), there.is_empty()) {
        (false, _) => Ok(with),
        (true, true) => Err(Error::Config(format!("No profile has the tag \"{tag}\": no profile has tags yet (they come with `profiles import`)."))),
        (true, false) => Err(Error::Config(format!("No profile has the tag \"{tag}\"; the tags are {}.", there.join(", ")))),
    }
}

/// `KLUIS_CA_CERT` / `--ca-cert`, trusted for profiles without a CA of their own.
pub fn connection_ca(cli: &Cli) -> Result<Option<String>> {
    cli.connection.ca_pem()
}

/// Two lines: the api key, then the password (a trailing newline is not part of either).
fn read_secrets(input: impl BufRead) -> Result<(Secret, Secret)> {
    let mut lines = input.lines();
    let how = "give the api key on the first line and the password on the second.";
    let api_key = secret_line(&mut lines, &format!("Standard input has no api key: {how}"))?;
    let password = secret_line(
        &mut lines,
        &format!("Standard input has no password: {how}"),
    )?;
    Ok((api_key, password))
}

/// `kluis plan PROFILE …`: sets, pauses or resumes a profile's plan.
pub fn plan(cli: &Cli, args: &PlanArgs) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    // One profile, or many at once (--tag, --all): each changed the same way.
    let ids: Vec<String> = match &args.profile {
        Some(name) => vec![profiles.find(name).map_err(ProfileError::into_core)?.id],
        None => {
            let all = profiles.list();
            match (&args.tag, all.is_empty()) {
                (None, true) => return Err(Error::Config("There are no profiles yet.".into())),
                _ => (tagged(all, args.tag.as_deref())?.into_iter())
                    .map(|p| p.id)
                    .collect(),
            }
        }
    };
    let now = jiff::Timestamp::now();
    let changes_schedule = args.daily.is_some()
        || args.weekdays.is_some()
        || args.weekly.is_some()
        || args.every.is_some()
        || args.manual
        || args.pause
        || args.resume;
    let retention = match (args.retention.rule(), args.keep_all) {
        (Some(rule), _) => Some(Some(rule)),
        (None, true) => Some(None),
        (None, false) => None,
    };
    let copy_to = match (args.copy_to.as_slice(), args.copy_to_all) {
        ([], false) => None,
        ([], true) => Some(None),
        (names, _) => {
            let targets = profiles.settings().copy_targets;
            let ids = (names.iter())
                .map(|name| crate::targets::named_in(&targets, name).map(|t| t.id))
                .collect::<Result<Vec<_>>>()?;
            Some(Some(ids))
        }
    };
    let nothing = args.ping.is_none()
        && !args.no_ping
        && args.verify_monthly.is_none()
        && args.restore_test_monthly.is_none()
        && copy_to.is_none();
    if !changes_schedule && nothing && retention.is_none() {
        return Err(Error::Config(
            "Say what to change: --daily HH:MM, --weekdays HH:MM, --weekly DAY HH:MM, --every 6h, --manual, --pause, --resume, --ping URL, --no-ping, --keep-last N (--keep-daily/--keep-weekly/--keep-monthly N), --keep-all, --verify-monthly on|off, --copy-to TARGET or --copy-to-all.".into(),
        ));
    }
    let ping_url = match &args.ping {
        Some(url) => Some(Some(kluis_profiles::monitor::check_ping_url(url)?)),
        None if args.no_ping => Some(None),
        None => None,
    };
    let schedule = match changes_schedule && !(args.pause || args.resume) {
        true => Some(schedule(args)?),
        false => None,
    };
    let mut first_error = None;
    for id in &ids {
        if let Err(e) = (|| -> Result<()> {
            // Changed in the profiles file as it is now, so an app saving at the same moment keeps
            // this change and this keeps the app's.
            let profile = profiles
                .update(id, |profile| {
                    if let Some(ping_url) = ping_url.clone() {
                        profile.ping_url = ping_url;
                    }
                    if let Some(retention) = retention.clone() {
                        profile.retention = retention;
                    }
                    if let Some(on) = args.verify_monthly {
                        profile.verify_monthly = on;
                    }
                    if let Some(on) = args.restore_test_monthly {
                        profile.restore_test_monthly = on;
                    }
                    if let Some(copy_to) = copy_to.clone() {
                        profile.copy_to = copy_to;
                    }
                    profile.plan = if let Some(schedule) = schedule.clone() {
                        Plan::reschedule(profile.plan.take(), schedule, false, now)?
                    } else if args.pause || args.resume {
                        let Some(plan) = profile.plan.take() else {
                            return Err(Error::Config(format!(
                                "\"{}\" has no plan to {}; set one first, e.g. --daily 02:00.",
                                profile.name,
                                if args.pause { "pause" } else { "resume" }
                            ))
                            .into());
                        };
                        Some(Plan {
                            paused: args.pause,
                            ..plan
                        })
                    } else {
                        profile.plan.take()
                    };
                    Ok(())
                })
                .map_err(ProfileError::into_core)?;
            let history = open_history(cli.history_db.as_ref())?;
            let all = profiles.settings().copy_targets;
            let targets = profile.copy_targets(&all);
            let status = klant_status(&profile, &history, &targets, &jiff::Zoned::now())?;
            let copies = match (all.is_empty(), targets.as_slice()) {
                (true, _) => String::new(),
                (false, []) => " Its backups are not copied off this computer.".into(),
                (false, chosen) => {
                    let names: Vec<&str> = chosen.iter().map(|t| t.name.as_str()).collect();
                    format!(" Its backups are copied to {}.", names.join(", "))
                }
            };
            eprintln!(
                "kluis: {}{} Retention: {}.{}{copies}",
                display::plan_line(&status),
                display::monitor_note(&profile),
                profile.retention.clone().unwrap_or_default().describe(),
                match profile.verify_monthly {
                    true => " Its backups are verified once a month.",
                    false => "",
                },
            );
            if !profile.restore_test_monthly {
                eprintln!(
                    "kluis: its backups are not restore-tested once a month (--restore-test-monthly on)."
                );
            }
            Ok(())
        })() {
            // Many at once: the others are changed all the same; this one is said.
            if ids.len() > 1 {
                eprintln!("kluis: {e}");
            }
            first_error.get_or_insert(e);
        }
    }
    if ids.len() > 1 {
        eprintln!(
            "kluis: {} profiles changed.",
            ids.len() - usize::from(first_error.is_some())
        );
    }
    first_error.map_or(Ok(()), Err)
}

fn schedule(args: &PlanArgs) -> Result<Schedule> {
    if let Some(at) = &args.daily {
        return Ok(Schedule::Daily {
            at: ClockTime::parse(at)?,
        });
    }
    if let Some(at) = &args.weekdays {
        return Ok(Schedule::Weekdays {
            at: ClockTime::parse(at)?,
        });
    }
    if let Some([day, at]) = args.weekly.as_deref() {
        let day: Day = serde_json::from_value(serde_json::Value::String(day.trim().to_lowercase()))
            .map_err(|_| {
                Error::Config(format!(
                    "\"{}\" is not a day; write monday, tuesday … sunday.",
                    day.chars().take(16).collect::<String>()
                ))
            })?;
        return Ok(Schedule::Weekly {
            day,
            at: ClockTime::parse(at)?,
        });
    }
    if let Some(every) = &args.every {
        let text = every.trim();
        let hours = text
            .strip_suffix('h')
            .unwrap_or(text)
            .parse::<u32>()
            .map_err(|_| {
                Error::Config(format!(
                    "\"{}\" is not a number of hours; write it as 6h.",
                    text.chars().take(16).collect::<String>()
                ))
            })?;
        let schedule = Schedule::Every { hours };
        schedule.check()?;
        return Ok(schedule);
    }
    Ok(Schedule::Manual)
}

/// `kluis status`.
pub fn status(cli: &Cli, json: bool, tag: Option<&str>) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let history = open_history(cli.history_db.as_ref())?;
    let now = jiff::Zoned::now();
    let mut statuses = klant_statuses(&profiles, &history, &now)?;
    if let Some(tag) = tag {
        let ids: Vec<String> = tagged(profiles.list(), Some(tag))?
            .into_iter()
            .map(|p| p.id)
            .collect();
        statuses.retain(|s| ids.contains(&s.profile_id));
    }
    display::status(&statuses, &now, json);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Secrets from standard input: two lines, CRLF or LF, and a clear error when one is
    /// missing that does not echo what was read.
    #[test]
    fn secrets_are_read_from_two_lines() {
        let (key, password) = read_secrets(&b"key-1\r\npass word\n"[..]).unwrap();
        assert_eq!((key.expose(), password.expose()), ("key-1", "pass word"));
        let error = read_secrets(&b"key-2\n"[..]).unwrap_err().to_string();
        assert!(error.contains("no password"), "{error}");
        assert!(!error.contains("key-2"), "{error}");
    }
}
