//! The typed options of one `kafka-consumer-groups` run, built once from clap after Kafka's
//! option checks (`validate`); the actions read only these, never clap's matches.

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::output::{self, Format};
use super::validate;
use crate::cli::CliError;

/// The one action of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Action {
    List,
    Describe,
    Delete,
    ResetOffsets,
    DeleteOffsets,
    ValidateRegex,
}

impl Action {
    /// In Kafka's order.
    pub(super) const ALL: [Action; 6] = [
        Action::List,
        Action::Describe,
        Action::Delete,
        Action::ResetOffsets,
        Action::DeleteOffsets,
        Action::ValidateRegex,
    ];

    /// The option that selects it.
    pub(super) fn flag(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Describe => "describe",
            Action::Delete => "delete",
            Action::ResetOffsets => "reset-offsets",
            Action::DeleteOffsets => "delete-offsets",
            Action::ValidateRegex => "validate-regex",
        }
    }
}

/// The reset scenarios' options, in Kafka's order (at most one may be given), each with the
/// [`Scenario`] it makes.
pub(super) const SCENARIOS: [(&str, MakeScenario); 8] = [
    ("to-offset", |g| {
        Scenario::ToOffset(g.long("to-offset").unwrap_or_default())
    }),
    ("to-datetime", |g| {
        Scenario::ToDatetime(g.text("to-datetime"))
    }),
    ("by-duration", |g| {
        Scenario::ByDuration(g.text("by-duration"))
    }),
    ("to-earliest", |_| Scenario::ToEarliest),
    ("to-latest", |_| Scenario::ToLatest),
    ("to-current", |_| Scenario::ToCurrent),
    ("shift-by", |g| {
        Scenario::ShiftBy(g.long("shift-by").unwrap_or_default())
    }),
    ("from-file", |g| Scenario::FromFile(g.text("from-file"))),
];

/// Reads a scenario's value from the command line.
type MakeScenario = fn(&Given) -> Scenario;

/// How `--reset-offsets` computes the new offsets (texts are parsed when planning, where Kafka
/// reports their errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Scenario {
    ToOffset(i64),
    ToDatetime(String),
    ByDuration(String),
    ToEarliest,
    ToLatest,
    ToCurrent,
    ShiftBy(i64),
    FromFile(String),
}

/// What `--describe` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum View {
    /// `--offsets`, the default.
    Offsets,
    Members,
    State,
}

/// A `--list` filter option: absent, given alone (show the column), or given with a value.
pub(super) type ListFilter = Option<Option<String>>;

/// The parsed command line.
pub(super) struct GroupsOptions {
    pub(super) action: Action,
    /// `--group` values as given (their count decides the CSV shape, as in Kafka).
    pub(super) groups: Vec<String>,
    pub(super) all_groups: bool,
    /// `--topic` values as given: `t` or `t:0,1`.
    pub(super) topics: Vec<String>,
    pub(super) all_topics: bool,
    /// `--timeout` in ms.
    pub(super) timeout_ms: Option<i64>,
    pub(super) view: View,
    pub(super) verbose: bool,
    /// `--type` with `--list`.
    pub(super) type_filter: ListFilter,
    /// `--state` with `--list`.
    pub(super) state_filter: ListFilter,
    /// `--reset-offsets` writes only with `--execute` (a dry run is the default).
    pub(super) execute: bool,
    pub(super) export: bool,
    pub(super) scenario: Option<Scenario>,
    pub(super) no_progress: bool,
    /// `--validate-regex`'s pattern.
    pub(super) regex: String,
    pub(super) format: Format,
}

/// Which options the command line gave, with jopt-simple's notion of "given" (a default value
/// does not count): what Kafka's checks look at.
pub(super) struct Given<'a>(&'a ArgMatches);

impl<'a> Given<'a> {
    /// Whether the option was given on the command line.
    pub(super) fn has(&self, id: &str) -> bool {
        self.0.value_source(id) == Some(ValueSource::CommandLine)
    }

    /// The value of a single-valued string option.
    pub(super) fn value(&self, id: &str) -> Option<&'a str> {
        self.0.get_one::<String>(id).map(String::as_str)
    }

    fn strings(&self, id: &str) -> Vec<String> {
        self.0
            .get_many::<String>(id)
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    fn long(&self, id: &str) -> Option<i64> {
        self.0.get_one::<i64>(id).copied()
    }

    fn list_filter(&self, id: &str) -> ListFilter {
        self.has(id).then(|| self.value(id).map(str::to_string))
    }

    /// A string option's value, empty if not given.
    fn text(&self, id: &str) -> String {
        self.value(id).unwrap_or_default().to_string()
    }

    fn scenario(&self) -> Option<Scenario> {
        SCENARIOS
            .iter()
            .find(|(id, _)| self.has(id))
            .map(|(_, make)| make(self))
    }
}

impl GroupsOptions {
    /// Runs Kafka's checks in its order, then reads every option once.
    pub(super) fn from_matches(m: &ArgMatches) -> Result<GroupsOptions, CliError> {
        let given = Given(m);
        let action = validate::check(&given)?;
        let format = output::format_from(given.value("output"), given.has("export"), action)?;
        let view = if given.has("members") {
            View::Members
        } else if given.has("state") {
            View::State
        } else {
            View::Offsets
        };
        Ok(GroupsOptions {
            action,
            groups: given.strings("group"),
            all_groups: given.has("all-groups"),
            topics: given.strings("topic"),
            all_topics: given.has("all-topics"),
            timeout_ms: given.long("timeout"),
            view,
            verbose: given.has("verbose"),
            type_filter: given.list_filter("type"),
            state_filter: given.list_filter("state"),
            execute: given.has("execute") && !given.has("dry-run"),
            export: given.has("export"),
            scenario: given.scenario(),
            no_progress: given.has("no-progress"),
            regex: given
                .value("validate-regex")
                .unwrap_or_default()
                .to_string(),
            format,
        })
    }
}
