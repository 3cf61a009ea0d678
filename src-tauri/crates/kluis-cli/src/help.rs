//! `kluis --help` as a newcomer reads it: the commands listed by what they are for, each by
//! its one-line summary (its paragraph is for `kluis help COMMAND`). Clap lists subcommands in
//! one block; the top level's help template lists them in groups instead, built from the
//! commands themselves so that a summary is written once. A test holds every command to one
//! group.

use clap::{CommandFactory, FromArgMatches};

use crate::args::Cli;

/// The groups, in the order they are listed, and their commands in order.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Back up",
        &[
            "backup", "run-due", "schedule", "plan", "status", "history", "resume", "cancel",
        ],
    ),
    (
        "Restore and prove",
        &["contents", "restore", "restore-test", "verify", "decrypt"],
    ),
    (
        "Keep, copy and encrypt",
        &["prune", "copy-target", "copy", "encryption"],
    ),
    (
        "The day this computer is gone",
        &["recovery-kit", "recover"],
    ),
    (
        "Klanten and their service",
        &["profiles", "environment", "callback-test"],
    ),
    ("Tell and report", &["mail", "report"]),
    ("One office of several PCs", &["office"]),
    ("Kluis itself", &["demo", "update", "help"]),
];

/// The command line as clap parses it, its help listing the commands in [`GROUPS`].
pub fn command() -> clap::Command {
    let command = Cli::command();
    let template = template(&command);
    command.help_template(template)
}

/// The command line parsed (clap's own errors and help printed, and the process ended, as
/// `Cli::parse` does).
pub fn parse() -> Cli {
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The top level's help: clap's own parts around the commands in their groups.
fn template(command: &clap::Command) -> String {
    let summary = |name: &str| -> String {
        match name {
            "help" => "Print this help, or a command's (kluis help COMMAND)".into(),
            _ => (command.find_subcommand(name))
                .and_then(|c| c.get_about().map(|a| a.to_string()))
                .unwrap_or_default(),
        }
    };
    let width = name_width();
    let mut groups = String::new();
    for (heading, names) in GROUPS {
        groups.push_str(&format!("{heading}:\n"));
        for name in *names {
            groups.push_str(&format!("  {name:<width$}  {}\n", summary(name)));
        }
        groups.push('\n');
    }
    format!("{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{groups}Options:\n{{options}}{{after-help}}")
}

/// The column of the commands' names in the list: the longest name's.
fn name_width() -> usize {
    (GROUPS.iter().flat_map(|(_, names)| names.iter()))
        .map(|n| n.len())
        .max()
        .unwrap_or(0)
}

/// Where a command's summary starts on its line of the list (2 spaces, the names, 2 more):
/// what the test of the summaries' length measures by.
#[cfg(test)]
pub fn summary_column() -> usize {
    2 + name_width() + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command is in exactly one group (a new command is not left out of the help), and
    /// each group's commands are listed under its heading with their summary.
    #[test]
    fn every_command_is_listed_once_under_what_it_is_for() {
        let command = Cli::command();
        let mut names: Vec<&str> = GROUPS.iter().flat_map(|(_, n)| n.iter().copied()).collect();
        let listed = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), listed, "a command in two groups");
        let mut commands: Vec<&str> = (command.get_subcommands())
            .map(|c| c.get_name())
            .chain(["help"])
            .collect();
        commands.sort_unstable();
        assert_eq!(
            names, commands,
            "each command in a group, and only commands"
        );

        let help = super::command().render_help().to_string();
        let backup = help.find("Back up:").expect("the first group");
        let restore = help.find("Restore and prove:").expect("a later group");
        let at = |line: &str| {
            help.find(line)
                .unwrap_or_else(|| panic!("{line:?} in:\n{help}"))
        };
        assert!(backup < at("  run-due ") && at("  run-due ") < restore);
        assert!(
            help.contains("Back up the owner's data and save the file"),
            "{help}"
        );
        assert!(
            help.contains("Options:\n") && help.contains("--base-url"),
            "{help}"
        );
    }
}
