//! `kluis schedule install|remove` on Windows: a Task Scheduler task, `Kluis\run-due`, that runs
//! `kluis.exe run-due` every 15 minutes while the user is logged on — as the systemd timer does
//! on Linux. The task is written as XML (Task Scheduler schema 1.2) and registered with
//! `schtasks /Create /XML`. It runs with the user's own logon (InteractiveToken), so `run-due`
//! reads the klanten's secrets from the user's Credential Manager; `StartWhenAvailable` runs a
//! slot missed while the computer was off or asleep, as `Persistent=true` does; a second
//! instance is not started while one runs.

// Built everywhere, so its command line and XML are tested on every machine; run on Windows.
#![cfg_attr(not(windows), allow(dead_code))]

use std::path::{Path, PathBuf};
use std::process::Command;

use kluis_core::{Error, Result};

use crate::args::{Cli, ScheduleCommand};

/// The task's name in the Task Scheduler library (folder `Kluis`).
pub const TASK: &str = r"Kluis\run-due";

/// The flags that name files (the environment variables of the Linux unit): a task has no
/// environment of its own, so they go on its command line. None is a secret.
fn kept_flags(cli: &Cli) -> Vec<String> {
    let mut flags = Vec::new();
    let mut keep = |flag: &str, value: Option<&PathBuf>| {
        if let Some(value) = value {
            flags.push(flag.to_string());
            flags.push(value.display().to_string());
        }
    };
    keep("--history-db", cli.history_db.as_ref());
    keep("--profiles-file", cli.profiles_file.as_ref());
    keep("--ca-cert", cli.connection.ca_cert.as_ref());
    flags
}

pub fn run(cli: &Cli, command: &ScheduleCommand) -> Result<()> {
    match command {
        ScheduleCommand::Install { out, no_enable } => {
            let program = std::env::current_exe()
                .map_err(|e| Error::Config(format!("Could not tell where kluis is: {e}.")))?;
            let mut arguments = kept_flags(cli);
            arguments.push("run-due".into());
            if let Some(out) = out {
                arguments.extend(["--out".into(), out.display().to_string()]);
            }
            refuse_variables(&arguments)?;
            let xml = task_xml(&program, &command_line(&arguments));
            let file = task_file()?;
            kluis_private::files::write_atomic(&file, &utf16_with_bom(&xml))
                .map_err(|e| Error::io(format!("write {}", file.display()), e))?;
            eprintln!("kluis: wrote {}.", file.display());
            if *no_enable {
                eprintln!(
                    "kluis: register it with: schtasks /Create /TN \"{TASK}\" /XML \"{}\" /F",
                    file.display()
                );
                return Ok(());
            }
            let file = file.display().to_string();
            schtasks(&["/Create", "/TN", TASK, "/XML", &file, "/F"])?;
            eprintln!("kluis: the task {TASK} runs `kluis run-due` every 15 minutes while you are logged on (Task Scheduler shows it under Kluis).");
            Ok(())
        }
        ScheduleCommand::Remove { no_enable } => {
            if !no_enable {
                // Not registered, or already gone: removing the file is what matters.
                let _ = schtasks(&["/Delete", "/TN", TASK, "/F"]);
            }
            let file = task_file()?;
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(format!("remove {}", file.display()), e)),
            }
            eprintln!("kluis: the task is removed.");
            Ok(())
        }
    }
}

/// Where the task's XML is kept: beside the profiles (%APPDATA%\Kluis\kluis\config).
fn task_file() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("nl", "Kluis", "kluis")
        .ok_or_else(|| Error::Config("No home folder was found for the task's file.".into()))?;
    let folder = dirs.config_dir();
    kluis_private::files::create_dir_all(folder)
        .map_err(|e| Error::io(format!("create {}", folder.display()), e))?;
    Ok(folder.join("kluis-run-due.xml"))
}

/// The task in Task Scheduler's XML (schema 1.2): every 15 minutes from midnight, for ever.
pub fn task_xml(program: &Path, arguments: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>Kluis: back up the klanten whose plan is due, every 15 minutes</Description>
  </RegistrationInfo>
  <Triggers>
    <TimeTrigger>
      <StartBoundary>2026-01-01T00:00:00</StartBoundary>
      <Repetition>
        <Interval>PT15M</Interval>
        <StopAtDurationEnd>false</StopAtDurationEnd>
      </Repetition>
      <Enabled>true</Enabled>
    </TimeTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <StartWhenAvailable>true</StartWhenAvailable>
    <ExecutionTimeLimit>PT12H</ExecutionTimeLimit>
    <Enabled>true</Enabled>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>{}</Command>
      <Arguments>{}</Arguments>
    </Exec>
  </Actions>
</Task>
"#,
        xml_text(&program.display().to_string()),
        xml_text(arguments)
    )
}

/// Text for an XML element: `&`, `<`, `>` and quotes escaped.
fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// Refuses an argument the Task Scheduler would change: it expands `%NAME%` in a task's
/// arguments, with no way to escape it, so a folder named `%TEMP%` (or any text between two
/// `%`) would name another folder on every run.
fn refuse_variables(arguments: &[String]) -> Result<()> {
    match arguments.iter().find(|a| a.matches('%').count() >= 2) {
        Some(argument) => Err(Error::Config(format!(
            "{argument:?} holds text between two %, which the Task Scheduler would read as a variable; choose a folder (or file) without it."
        ))),
        None => Ok(()),
    }
}

/// Arguments as one Windows command line, each read back as given by the program's C runtime
/// (and Rust's): quoted when it has a space, tab or quote or is empty; a quote escaped with a
/// backslash, and the backslashes before a quote (or the closing one) doubled.
pub fn command_line(arguments: &[String]) -> String {
    let words: Vec<String> = arguments.iter().map(|a| quote(a)).collect();
    words.join(" ")
}

fn quote(argument: &str) -> String {
    if !argument.is_empty() && !argument.contains([' ', '\t', '"']) {
        return argument.to_string();
    }
    let mut out = String::from("\"");
    let mut backslashes = 0;
    for c in argument.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                out.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            _ => {
                out.extend(std::iter::repeat_n('\\', backslashes));
                out.push(c);
                backslashes = 0;
            }
        }
    }
    out.extend(std::iter::repeat_n('\\', backslashes * 2));
    out.push('"');
    out
}

/// UTF-16 LE with a byte order mark: what the XML's declaration says, and what schtasks reads.
fn utf16_with_bom(text: &str) -> Vec<u8> {
    let mut bytes = vec![0xFF, 0xFE];
    for unit in text.replace('\n', "\r\n").encode_utf16() {
        bytes.extend(unit.to_le_bytes());
    }
    bytes
}

fn schtasks(args: &[&str]) -> Result<()> {
    match Command::new("schtasks").args(args).status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(Error::Config(format!(
            "`schtasks {}` failed ({status}). The task's file is written; register it in Task Scheduler (Action → Import Task…).",
            args.join(" ")
        ))),
        Err(e) => Err(Error::Config(format!("schtasks could not be run ({e})."))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each argument comes back as given when a Windows program splits the command line (the
    /// rules of the Microsoft C runtime, which Rust's standard library follows).
    #[test]
    fn arguments_survive_the_command_line() {
        let given: Vec<String> = [
            "run-due",
            "--out",
            r"C:\Users\Anne de Vries\Back-ups\",
            r#"say "hi""#,
            "",
            r"C:\plain\path",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            command_line(&given),
            r#"run-due --out "C:\Users\Anne de Vries\Back-ups\\" "say \"hi\"" "" C:\plain\path"#
        );
    }

    /// Text between two `%` (which the Task Scheduler expands, with no escape) is refused
    /// before the task is written; a single `%` goes through.
    #[test]
    fn a_variable_in_the_arguments_is_refused() {
        let args = |out: &str| vec!["run-due".to_string(), "--out".into(), out.into()];
        assert!(refuse_variables(&args(r"D:\kosten 100%")).is_ok());
        for out in [r"D:\%TEMP%\x", r"D:\a%b%c"] {
            let error = refuse_variables(&args(out)).expect_err("refused");
            assert!(error.to_string().contains("variable"), "{error}");
        }
    }

    /// The task runs the program with its arguments, escaped for XML, every 15 minutes, with
    /// the user's own logon (for the Credential Manager), catching up on a missed slot.
    #[test]
    fn the_task_runs_run_due_every_quarter_hour() {
        let xml = task_xml(
            Path::new(r"C:\Program Files\Kluis\kluis.exe"),
            &command_line(&[
                "run-due".into(),
                "--out".into(),
                r"D:\R&D <back-ups>".into(),
            ]),
        );
        assert!(xml.contains(r"<Command>C:\Program Files\Kluis\kluis.exe</Command>"));
        assert!(
            xml.contains(
                r#"<Arguments>run-due --out &quot;D:\R&amp;D &lt;back-ups&gt;&quot;</Arguments>"#
            ),
            "{xml}"
        );
        for part in [
            "<Interval>PT15M</Interval>",
            "<LogonType>InteractiveToken</LogonType>",
            "<StartWhenAvailable>true</StartWhenAvailable>",
            "<MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>",
        ] {
            assert!(xml.contains(part), "{part}");
        }
        let bytes = utf16_with_bom(&xml);
        assert_eq!(
            &bytes[..4],
            &[0xFF, 0xFE, b'<', 0],
            "UTF-16 LE with its mark"
        );
    }
}
