//! `kafka-configs`' command line: the action, the entity (from `--entity-type`/`--entity-name`
//! or the `--topic`, `--broker`, `--broker-defaults`, `--group` shorthands) and the config
//! changes, checked in Kafka's order with Kafka's messages.

use std::path::PathBuf;

use crate::cli::{CliError, properties, usage, validate_bootstrap};
use crate::client::{ConfigChange, topic_name};

/// The entity types kafkit's tool handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntityType {
    Topics,
    Brokers,
    Groups,
}

impl EntityType {
    /// Kafka's singular for messages (`topic t1`, `broker 1`, `group g`).
    pub fn singular(self) -> &'static str {
        match self {
            EntityType::Topics => "topic",
            EntityType::Brokers => "broker",
            EntityType::Groups => "group",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            EntityType::Topics => "topics",
            EntityType::Brokers => "brokers",
            EntityType::Groups => "groups",
        }
    }
}

/// One entity: a name, or `None` for the broker defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entity {
    pub kind: EntityType,
    pub name: Option<String>,
}

impl Entity {
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// What to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// `--describe`, with `--all` or not.
    Describe { all: bool },
    /// `--alter`.
    Alter,
}

/// The checked command line.
#[derive(Clone, Debug)]
pub struct Options {
    pub action: Action,
    pub kind: EntityType,
    /// The entity named, or `None`: every entity of the type (describe only).
    pub entity: Option<Entity>,
    add_config: Option<String>,
    add_config_file: Option<PathBuf>,
    delete_config: Option<String>,
}

/// Kafka's other entity types, which kafkit's tool does not handle.
const OTHER_TYPES: &[&str] = &[
    "clients",
    "users",
    "ips",
    "client-metrics",
    "broker-loggers",
];

impl Options {
    /// Reads and checks the options, in the order Kafka's tool checks them.
    pub fn from_matches(m: &clap::ArgMatches) -> Result<Options, CliError> {
        let values = |name: &str| -> Vec<String> {
            m.get_many::<String>(name)
                .map(|v| v.cloned().collect())
                .unwrap_or_default()
        };
        let action = match (m.get_flag("describe"), m.get_flag("alter")) {
            (true, false) => Action::Describe {
                all: m.get_flag("all"),
            },
            (false, true) => Action::Alter,
            _ => return usage("Command must include exactly one action: --describe, --alter"),
        };
        let (types, names, default) = entity_args(m, &values)?;
        let kind = entity_type(&types)?;
        if let Some(servers) = m.get_one::<String>("bootstrap-server") {
            validate_bootstrap(servers)?;
        }
        let entity = match (names.first(), default) {
            (Some(name), _) => Some(Entity {
                kind,
                name: Some(name.clone()),
            }),
            (None, true) => Some(Entity { kind, name: None }),
            (None, false) => None,
        };
        let opts = Options {
            action,
            kind,
            entity,
            add_config: m.get_one::<String>("add-config").cloned(),
            add_config_file: m.get_one::<PathBuf>("add-config-file").cloned(),
            delete_config: m.get_one::<String>("delete-config").cloned(),
        };
        opts.check(default)?;
        Ok(opts)
    }

    /// The rules that depend on the action and the entity type.
    fn check(&self, default: bool) -> Result<(), CliError> {
        let plural = self.kind.plural();
        if default && self.kind != EntityType::Brokers {
            return match self.action {
                Action::Describe { .. } => usage(format!(
                    "--entity-default must not be specified with --describe of {plural}"
                )),
                Action::Alter => usage(format!(
                    "--entity-default must not be specified with --alter of {plural}"
                )),
            };
        }
        if self.action == Action::Alter {
            if self.entity.is_none() {
                return match self.kind {
                    EntityType::Brokers => usage(
                        "An entity-name or default entity must be specified with --alter of users, clients, brokers or ips",
                    ),
                    _ => usage(format!(
                        "An entity name must be specified with --alter of {plural}"
                    )),
                };
            }
            if self.add_config.is_none()
                && self.add_config_file.is_none()
                && self.delete_config.is_none()
            {
                return usage(
                    "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter",
                );
            }
            if self.add_config.is_some() && self.add_config_file.is_some() {
                return usage("Only one of --add-config or --add-config-file must be specified");
            }
        }
        let Some(name) = self.entity.as_ref().and_then(|e| e.name.as_deref()) else {
            return Ok(());
        };
        match self.kind {
            EntityType::Brokers if name.parse::<i32>().is_err() => usage(format!(
                "The entity name for brokers must be a valid integer broker id, but it is: {name}"
            )),
            EntityType::Topics => topic_name::validate(name).map_err(CliError::Usage),
            _ => Ok(()),
        }
    }

    /// The one entity an alter names (checked by [`Options::from_matches`]).
    pub fn single_entity(&self) -> Entity {
        self.entity.clone().expect("--alter names its entity")
    }

    /// The changes of `--add-config` (or `--add-config-file`) then `--delete-config`.
    pub fn changes(&self) -> Result<Vec<ConfigChange>, CliError> {
        let mut changes = Vec::new();
        if let Some(text) = &self.add_config {
            for (name, value) in parse_add_config(text)? {
                changes.push(ConfigChange::Set { name, value });
            }
        }
        if let Some(path) = &self.add_config_file {
            let file = properties::load_file(path)?;
            for (name, value) in file {
                changes.push(ConfigChange::Set { name, value });
            }
        }
        if let Some(text) = &self.delete_config {
            for name in text.split(',') {
                changes.push(ConfigChange::Delete {
                    name: name.trim().to_string(),
                });
            }
        }
        Ok(changes)
    }
}

/// The entity types, names and default flag, from `--entity-*` or the shorthands (not both).
fn entity_args(
    m: &clap::ArgMatches,
    values: &dyn Fn(&str) -> Vec<String>,
) -> Result<(Vec<String>, Vec<String>, bool), CliError> {
    let mut types = Vec::new();
    let mut names = Vec::new();
    let mut default = false;
    for (flag, kind) in [
        ("topic", "topics"),
        ("broker", "brokers"),
        ("group", "groups"),
    ] {
        for name in values(flag) {
            types.push(kind.to_string());
            names.push(name);
        }
    }
    if m.get_flag("broker-defaults") {
        types.push("brokers".to_string());
        default = true;
    }
    let generic = !values("entity-type").is_empty()
        || !values("entity-name").is_empty()
        || m.get_flag("entity-default");
    if generic && (!types.is_empty() || default) {
        return usage(
            "--entity-{type,name,default} should not be used in conjunction with specific entity flags",
        );
    }
    if generic {
        types = values("entity-type");
        names = values("entity-name");
        default = m.get_flag("entity-default");
    }
    Ok((types, names, default))
}

/// The one entity type given, or Kafka's message about the types.
fn entity_type(types: &[String]) -> Result<EntityType, CliError> {
    let mut distinct: Vec<&String> = Vec::new();
    let mut duplicates: Vec<&str> = Vec::new();
    for t in types {
        if distinct.contains(&t) {
            if !duplicates.contains(&t.as_str()) {
                duplicates.push(t);
            }
        } else {
            distinct.push(t);
        }
    }
    if !duplicates.is_empty() {
        return usage(format!(
            "Duplicate entity type(s) specified: {}",
            duplicates.join(", ")
        ));
    }
    match distinct.as_slice() {
        [] => usage("At least one entity type must be specified"),
        [one] => match one.as_str() {
            "topics" => Ok(EntityType::Topics),
            "brokers" => Ok(EntityType::Brokers),
            "groups" => Ok(EntityType::Groups),
            other if OTHER_TYPES.contains(&other) => usage(format!(
                "--entity-type {other} is not supported by kafkit's kafka-configs; it handles topics, brokers and groups (use Kafka's own tool for {other})"
            )),
            other => usage(format!(
                "Invalid entity type {other}, the entity type must be one of topics, clients, users, brokers, ips, client-metrics, groups, broker-loggers with a --bootstrap-server or --bootstrap-controller argument"
            )),
        },
        _ => usage("Only 'users' and 'clients' entity types may be specified together"),
    }
}

/// `--add-config`: `k=v` pairs split at commas outside square brackets; a bracketed value
/// (`k=[a,b]`) loses its brackets. Spaces around keys and values are dropped, as Kafka does.
pub fn parse_add_config(text: &str) -> Result<Vec<(String, String)>, CliError> {
    let mut pairs = Vec::new();
    for item in split_outside_brackets(text) {
        let parts: Vec<&str> = item.split('=').collect();
        let [key, value] = parts.as_slice() else {
            return usage(
                "requirement failed: Invalid entity config: all configs to be added must be in the format \"key=val\" or  \"key=[val1,val2]\" to group values which contain commas.",
            );
        };
        let value = value.trim();
        let value = match value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Some(inner) => inner,
            None => value,
        };
        pairs.push((key.trim().to_string(), value.to_string()));
    }
    Ok(pairs)
}

/// Splits at commas that are not inside `[...]`, dropping trailing empty items as Java's
/// `String.split` does.
fn split_outside_brackets(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth <= 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    while items.last().is_some_and(|s| s.is_empty()) {
        items.pop();
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_config_splits_outside_brackets() {
        let pairs = parse_add_config("a=1, b = [x,y],c=").unwrap();
        assert_eq!(
            pairs,
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "x,y".into()),
                ("c".into(), "".into())
            ]
        );
        assert_eq!(parse_add_config("retention.ms=1,,").unwrap().len(), 1);
        assert!(parse_add_config("a").is_err());
        assert!(parse_add_config("a=b=c").is_err());
    }
}
