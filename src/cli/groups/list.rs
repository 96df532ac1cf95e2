//! `--list`: group ids one per line (sorted; Kafka prints the brokers' order), or with
//! `--state [list]` / `--type [list]` Kafka's GROUP / TYPE / STATE table. Every group on the
//! embedded log has type `Classic`; on a cluster, groups of the new consumer protocol
//! (KIP-848) are `Consumer`.
//!
//! `--output json` prints `{"groups":[{"group":"g","type":"Classic","state":"Stable"}]}` and
//! `--output table` a GROUP / TYPE / STATE table: both always carry type and state, and apply
//! the `--state` / `--type` filters when given.

use serde::Serialize;

use super::options::GroupsOptions;
use super::output::{self, Format};
use super::{emit, java_split, pad};
use crate::cli::{CliError, usage};
use crate::client::groups::{GroupAdmin, GroupState, Listed};

/// The types Kafka accepts in `--type`.
const VALID_TYPES: [&str; 2] = ["Classic", "Consumer"];

pub(super) fn run(src: &mut GroupAdmin, o: &GroupsOptions) -> Result<(), CliError> {
    let with_type = o.type_filter.is_some();
    let with_state = o.state_filter.is_some();
    let listed = src.list()?;
    if o.format == Format::Text && !with_type && !with_state {
        let mut text = String::new();
        for l in &listed {
            text.push_str(&l.group);
            text.push('\n');
        }
        return emit(&text);
    }
    let types = parse_types(o.type_filter.as_ref().and_then(Option::as_deref))?;
    let states = parse_states(o.state_filter.as_ref().and_then(Option::as_deref))?;
    let rows: Vec<Listed> = listed
        .into_iter()
        .filter(|l| types.is_empty() || types.contains(&l.kind))
        .filter(|l| states.is_empty() || states.contains(&l.state))
        .collect();
    match o.format {
        Format::Text => emit(&table(&rows, with_type, with_state)),
        Format::Json => output::json(&ListDoc {
            groups: rows
                .iter()
                .map(|l| ListedGroup {
                    group: &l.group,
                    r#type: l.kind,
                    state: l.state.name(),
                })
                .collect(),
        }),
        Format::Table => {
            let mut t = output::table(&["GROUP", "TYPE", "STATE"], &[]);
            for l in &rows {
                t.add_row(vec![l.group.as_str(), l.kind, l.state.name()]);
            }
            emit(&output::render(&t))
        }
    }
}

/// `--list --output json`.
#[derive(Serialize)]
struct ListDoc<'a> {
    groups: Vec<ListedGroup<'a>>,
}

#[derive(Serialize)]
struct ListedGroup<'a> {
    group: &'a str,
    r#type: &'a str,
    state: &'a str,
}

/// `--state`: Kafka's `GroupState.parse` of each name (any case), each one a state of a
/// classic or consumer group.
fn parse_states(input: Option<&str>) -> Result<Vec<GroupState>, CliError> {
    let parse =
        |name: &str| Some(GroupState::parse(name)).filter(|s| GroupState::LISTABLE.contains(s));
    parse_filter(input, parse, &GroupState::LISTABLE_NAMES, "state", "states")
}

/// `--type`: `Classic` or `Consumer`, in any case.
fn parse_types(input: Option<&str>) -> Result<Vec<&'static str>, CliError> {
    let parse = |name: &str| {
        VALID_TYPES
            .iter()
            .find(|v| v.eq_ignore_ascii_case(name))
            .copied()
    };
    parse_filter(input, parse, &VALID_TYPES, "types", "types")
}

/// Parses a comma-separated filter with `parse` (which gives `None` for a name not in
/// `valid`); empty means none.
fn parse_filter<T>(
    input: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
    valid: &[&str],
    what: &str,
    plural: &str,
) -> Result<Vec<T>, CliError> {
    let Some(input) = input.filter(|s| !s.is_empty()) else {
        return Ok(Vec::new());
    };
    let mut parsed = Vec::new();
    for part in java_split(input, ',') {
        match parse(part.trim()) {
            Some(value) => parsed.push(value),
            None => {
                return usage(format!(
                    "Invalid {what} list '{input}'. Valid {plural} are: {}",
                    valid.join(", ")
                ));
            }
        }
    }
    Ok(parsed)
}

/// Kafka's `printGroupInfo`: GROUP padded to max(15, longest) + 10, then ` %-20s` columns.
fn table(rows: &[Listed], with_type: bool, with_state: bool) -> String {
    let width = rows
        .iter()
        .map(|r| r.group.len().max(15))
        .max()
        .unwrap_or(15)
        + 10;
    let line = |group: &str, kind: &str, state: &str| {
        let mut l = pad(group, width);
        if with_type {
            l.push(' ');
            l.push_str(&pad(kind, 20));
        }
        if with_state {
            l.push(' ');
            l.push_str(&pad(state, 20));
        }
        l.push('\n');
        l
    };
    let mut text = line("GROUP", "TYPE", "STATE");
    for l in rows {
        text.push_str(&line(&l.group, l.kind, l.state.name()));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_like_kafka() {
        assert_eq!(
            parse_states(Some("stable, EMPTY")).unwrap(),
            vec![GroupState::Stable, GroupState::Empty]
        );
        assert!(parse_states(Some("")).unwrap().is_empty());
        let Err(CliError::Usage(msg)) = parse_states(Some("Stable,Bogus")) else {
            panic!("expected a usage error")
        };
        assert_eq!(
            msg,
            "Invalid state list 'Stable,Bogus'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling"
        );
        // Kafka's parse knows `Unknown`, but the tool does not list by it.
        assert!(parse_states(Some("unknown")).is_err());
        assert_eq!(
            parse_types(Some("classic,CONSUMER")).unwrap(),
            vec!["Classic", "Consumer"]
        );
        let Err(CliError::Usage(msg)) = parse_types(Some("share")) else {
            panic!("expected a usage error")
        };
        assert_eq!(
            msg,
            "Invalid types list 'share'. Valid types are: Classic, Consumer"
        );
    }

    #[test]
    fn table_widths() {
        let rows = vec![Listed {
            group: "my-group".to_string(),
            kind: "Classic",
            state: GroupState::Stable,
        }];
        let t = table(&rows, false, true);
        assert_eq!(
            t,
            format!(
                "{:<25} {:<20}\n{:<25} {:<20}\n",
                "GROUP", "STATE", "my-group", "Stable"
            )
        );
    }
}
