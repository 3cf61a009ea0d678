//! `kluis schedule install|remove`: a systemd user timer that runs `kluis run-due` every 15
//! minutes, for computers where the app is not kept open. `Persistent=true` runs a slot missed
//! while the computer was off at the next boot; `run-due` itself runs each due plan once,
//! however many slots were missed, and never a klant the app is backing up (its turn). The
//! Windows Task Scheduler task is `task_scheduler`'s; macOS launchd is in docs/cli.md.

#![cfg_attr(windows, allow(dead_code))]

use std::path::{Path, PathBuf};
use std::process::Command;

use kluis_core::{Error, Result};

use crate::args::ScheduleCommand;

const SERVICE: &str = "kluis-run-due.service";
const TIMER: &str = "kluis-run-due.timer";

/// Variables `run-due` reads that name files, not secrets: kept in the unit so the timer uses
/// the same profiles, history and secrets folder as the command that installed it.
const KEPT_VARIABLES: [&str; 4] = [
    "KLUIS_PROFILES_FILE",
    "KLUIS_HISTORY_DB",
    "KLUIS_SECRETS_DIR",
    "KLUIS_CA_CERT",
];

pub fn run(command: &ScheduleCommand) -> Result<()> {
    let dir = units_folder()?;
    match command {
        ScheduleCommand::Install { out, no_enable } => {
            let program = std::env::current_exe()
                .map_err(|e| Error::Config(format!("Could not tell where kluis is: {e}.")))?;
            kluis_private::files::create_dir_all(&dir)
                .map_err(|e| Error::io(format!("create {}", dir.display()), e))?;
            let write = |name: &str, text: String| {
                let path = dir.join(name);
                kluis_private::files::write_atomic(&path, text.as_bytes())
                    .map_err(|e| Error::io(format!("write {}", path.display()), e))
            };
            write(SERVICE, service_unit(&program, out.as_deref())?)?;
            write(TIMER, TIMER_UNIT.to_string())?;
            eprintln!(
                "kluis: wrote {} and {}.",
                dir.join(SERVICE).display(),
                dir.join(TIMER).display()
            );
            if !no_enable {
                systemctl(&["daemon-reload"])?;
                systemctl(&["enable", "--now", TIMER])?;
                eprintln!("kluis: the timer runs `kluis run-due` every 15 minutes (`systemctl --user list-timers` shows it).");
            }
            Ok(())
        }
        ScheduleCommand::Remove { no_enable } => {
            if !no_enable {
                // Not enabled, or already gone: removing the files is what matters.
                let _ = systemctl(&["disable", "--now", TIMER]);
            }
            for name in [TIMER, SERVICE] {
                match std::fs::remove_file(dir.join(name)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(Error::io(format!("remove {}", dir.join(name).display()), e))
                    }
                }
            }
            if !no_enable {
                let _ = systemctl(&["daemon-reload"]);
            }
            eprintln!("kluis: the timer is removed.");
            Ok(())
        }
    }
}

/// `$XDG_CONFIG_HOME/systemd/user` (`~/.config/systemd/user`).
fn units_folder() -> Result<PathBuf> {
    let base = directories::BaseDirs::new()
        .ok_or_else(|| Error::Config("No home folder was found for the systemd units.".into()))?;
    Ok(base.config_dir().join("systemd").join("user"))
}

const TIMER_UNIT: &str = "\
[Unit]
Description=Kluis: back up the klanten whose plan is due, every 15 minutes

[Timer]
OnCalendar=*:0/15
# A slot missed while the computer was off runs at the next start.
Persistent=true
RandomizedDelaySec=60

[Install]
WantedBy=timers.target
";

fn service_unit(program: &Path, out: Option<&Path>) -> Result<String> {
    let mut exec = format!("{} run-due", exec_word(&program.to_string_lossy())?);
    if let Some(out) = out {
        exec.push_str(&format!(" --out {}", exec_word(&out.to_string_lossy())?));
    }
    let mut environment = String::new();
    for name in KEPT_VARIABLES {
        if let Some(value) = std::env::var(name).ok().filter(|v| !v.is_empty()) {
            let word = quoted(&format!("{name}={value}"))?;
            environment.push_str(&format!("Environment={word}\n"));
        }
    }
    Ok(format!(
        "\
[Unit]
Description=Kluis: back up the klanten whose plan is due

[Service]
Type=oneshot
{environment}ExecStart={exec}
"
    ))
}

/// A word for a unit file: in double quotes, with `\\`, `\"` and systemd's `%` escaped. A line
/// break cannot be carried (it would end the line and start a setting of its own): refused,
/// never changed into something else.
fn quoted(text: &str) -> Result<String> {
    if text.contains(['\n', '\r']) {
        return Err(Error::Config(format!(
            "{text:?} holds a line break, which a systemd unit cannot carry; choose a folder (or value) without one."
        )));
    }
    let escaped = text
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%");
    Ok(format!("\"{escaped}\""))
}

/// A word of `ExecStart=`: [`quoted`], and `$` as `$$` (systemd expands `$NAME` there).
fn exec_word(text: &str) -> Result<String> {
    Ok(quoted(text)?.replace('$', "$$"))
}

fn systemctl(args: &[&str]) -> Result<()> {
    let status = Command::new("systemctl").arg("--user").args(args).status();
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(Error::Config(format!(
            "`systemctl --user {}` failed ({status}). The unit files are written; enable them in a login session with `systemctl --user enable --now {TIMER}`.",
            args.join(" ")
        ))),
        Err(e) => Err(Error::Config(format!(
            "systemctl could not be run ({e}). The unit files are written; on a computer without systemd, run `kluis run-due` from cron or the system's scheduler every 15 minutes."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program path with spaces, quotes and `%` stays one word for systemd.
    #[test]
    fn unit_words_are_quoted() {
        assert_eq!(
            quoted("/opt/my \"k\" 100%/kluis").unwrap(),
            "\"/opt/my \\\"k\\\" 100%%/kluis\""
        );
        let unit = service_unit(
            Path::new("/usr/bin/kluis"),
            Some(Path::new("/srv/back ups")),
        )
        .unwrap();
        assert!(
            unit.contains("ExecStart=\"/usr/bin/kluis\" run-due --out \"/srv/back ups\""),
            "{unit}"
        );
    }

    /// A `$` in a folder reaches `kluis run-due` as written (systemd would expand `$HOME` in
    /// `ExecStart=`: it is `$$`); a line break (`\n` or `\r`) is refused with what to do, not
    /// turned into a space (the unit then named another folder) or left to end the line.
    #[test]
    fn a_dollar_is_escaped_and_a_line_break_refused() {
        let unit = service_unit(
            Path::new("/usr/bin/kluis"),
            Some(Path::new("/srv/$HOME/kosten 100%")),
        )
        .unwrap();
        assert!(
            unit.contains("--out \"/srv/$$HOME/kosten 100%%\""),
            "{unit}"
        );
        for broken in ["/srv/a\nExecStartPre=/bin/rm", "/srv/a\rb"] {
            let error = service_unit(Path::new("/usr/bin/kluis"), Some(Path::new(broken)))
                .expect_err("a line break is refused");
            assert!(error.to_string().contains("line break"), "{error}");
        }
    }
}
