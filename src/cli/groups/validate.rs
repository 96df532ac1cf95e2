//! Kafka's option checks for `kafka-consumer-groups`, in the order `ConsumerGroupCommandOptions`
//! runs them (parse-time `availableIf` first, then `checkArgs`, then the one-action rule), with
//! its messages. All of them are usage errors (exit 2).

use super::options::{Action, Given, SCENARIOS};
use crate::cli::{CliError, usage};

/// Options that jopt-simple only accepts alongside one of these actions.
const AVAILABLE_IF: [(&str, &[&str]); 5] = [
    ("members", &["describe"]),
    ("offsets", &["describe"]),
    ("state", &["describe", "list"]),
    ("verbose", &["describe"]),
    ("type", &["list"]),
];

/// Runs every check; returns the one action given.
pub(super) fn check(o: &Given) -> Result<Action, CliError> {
    available_if(o)?;
    describe_rules(o)?;
    delete_rules(o)?;
    reset_rules(o)?;
    group_and_topic_rules(o)?;
    let given: Vec<Action> = Action::ALL
        .into_iter()
        .filter(|a| o.has(a.flag()))
        .collect();
    match given.as_slice() {
        [one] => Ok(*one),
        _ => usage(
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets, --validate-regex",
        ),
    }
}

fn available_if(o: &Given) -> Result<(), CliError> {
    for (opt, actions) in AVAILABLE_IF {
        if o.has(opt) && !actions.iter().any(|a| o.has(a)) {
            return usage(format!(
                "Option(s) [{opt}] are unavailable given other options on the command line"
            ));
        }
    }
    Ok(())
}

fn needs_group_selection(o: &Given, action: &str) -> Result<(), CliError> {
    if !o.has("group") && !o.has("all-groups") {
        return usage(format!(
            "Option [{action}] takes one of these options: [all-groups], [group]"
        ));
    }
    Ok(())
}

fn describe_rules(o: &Given) -> Result<(), CliError> {
    if !o.has("describe") {
        return Ok(());
    }
    needs_group_selection(o, "describe")?;
    let views = ["members", "offsets", "state"]
        .iter()
        .filter(|v| o.has(v))
        .count();
    if views > 1 {
        return usage(
            "Option [describe] takes at most one of these options: [members], [offsets], [state]",
        );
    }
    if o.has("state") && o.value("state").is_some() {
        return usage("Option [describe] does not take a value for [state]");
    }
    Ok(())
}

fn delete_rules(o: &Given) -> Result<(), CliError> {
    if o.has("delete") {
        needs_group_selection(o, "delete")?;
        if o.has("topic") {
            return usage(
                "The consumer does not support topic-specific offset deletion from a consumer group.",
            );
        }
    }
    if o.has("delete-offsets") && (!o.has("group") || !o.has("topic")) {
        return usage("Option [delete-offsets] takes the following options: [topic], [group]");
    }
    Ok(())
}

fn reset_rules(o: &Given) -> Result<(), CliError> {
    if !o.has("reset-offsets") {
        return Ok(());
    }
    if o.has("dry-run") && o.has("execute") {
        return usage("Option [reset-offsets] only accepts one of [execute] and [dry-run]");
    }
    if !o.has("dry-run") && !o.has("execute") {
        eprintln!(
            "WARN: No action will be performed as the --execute option is missing. In version 5.0, this command will require either --dry-run or --execute to be specified. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting."
        );
    }
    needs_group_selection(o, "reset-offsets")?;
    for (used, _) in SCENARIOS {
        if !o.has(used) {
            continue;
        }
        if let Some(other) = SCENARIOS
            .iter()
            .map(|(s, _)| *s)
            .find(|s| *s != used && o.has(s))
        {
            return usage(format!(
                "Option \"[{used}]\" can't be used with option \"[{other}]\""
            ));
        }
    }
    Ok(())
}

fn group_and_topic_rules(o: &Given) -> Result<(), CliError> {
    let rules: [(&str, &[&str]); 3] = [
        ("group", &["all-groups"]),
        ("group", &["list"]),
        ("topic", &["list", "describe"]),
    ];
    for (used, invalid) in rules {
        if !o.has(used) {
            continue;
        }
        if let Some(other) = invalid.iter().find(|i| o.has(i)) {
            return usage(format!(
                "Option \"[{used}]\" can't be used with option \"[{other}]\""
            ));
        }
    }
    Ok(())
}
