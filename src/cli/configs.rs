//! The `kafka-configs` tool (Kafka's `kafka.admin.ConfigCommand`): describe and alter the
//! configs of topics, brokers, the broker defaults and groups, on a cluster or the embedded log.
//!
//! [`options`] reads and checks the command line as Kafka's tool does; this module runs the
//! describe and alter actions and prints Kafka's output.

pub mod options;

use std::process::ExitCode;

use clap::{ArgAction, Command};

use self::options::{Action, Entity, EntityType, Options};
use super::{CliError, connection_args, emit, flag_option, open_client, run_tool};
use crate::client::Client;
use crate::client::configs::{ConfigResource, ConfigSource, DescribedConfig};

/// The clap definition of `kafka-configs`, with Kafka's option names.
pub fn command() -> Command {
    let value = |name, value_name, help| super::value_option(name, value_name, help, "Configs");
    let cmd = Command::new("kafka-configs")
        .about("This tool helps to manipulate and describe entity config for a topic, broker or group")
        .arg(flag_option("describe", "List configs for the given entity.", "Actions", ArgAction::SetTrue))
        .arg(flag_option("alter", "Alter the configuration for the entity.", "Actions", ArgAction::SetTrue))
        .arg(value("entity-type", "String", "Type of entity (topics/brokers/groups)").action(ArgAction::Append)
            .value_parser(super::Suggest(&["topics", "brokers", "groups"])))
        .arg(value("entity-name", "String", "Name of entity (topic name/broker id/group id)").action(ArgAction::Append))
        .arg(flag_option("entity-default", "Default entity name for brokers (applies to corresponding entity type)", "Configs", ArgAction::SetTrue))
        .arg(value("topic", "String", "The topic's name.").action(ArgAction::Append))
        .arg(value("broker", "String", "The broker's ID.").action(ArgAction::Append))
        .arg(flag_option("broker-defaults", "The config defaults for all brokers.", "Configs", ArgAction::SetTrue))
        .arg(value("group", "String", "The group's ID.").action(ArgAction::Append))
        .arg(value("add-config", "String", "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.")
            .conflicts_with("describe"))
        .arg(value("add-config-file", "String", "Path to a properties file with configs to add.")
            .value_parser(clap::value_parser!(std::path::PathBuf))
            .conflicts_with("describe"))
        .arg(value("delete-config", "String", "config keys to remove 'k1,k2'").conflicts_with("describe"))
        .arg(flag_option("all", "List all configs for the given entity, including static configs if available.", "Configs", ArgAction::SetTrue))
        .arg(crate::cli::admin_config_arg(
            "command config property file",
            "Property file containing configs to be passed to Admin Client.",
        ));
    connection_args(cmd)
}

/// Entry point of the `kafka-configs` binary.
pub fn main() -> ExitCode {
    // Kafka's tool names the whole command line in its error line.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let prefix = format!(
        "Error while executing config command with args '{}': ",
        args.join(" ")
    );
    run_tool(command(), &prefix, run)
}

fn run(m: &clap::ArgMatches) -> Result<(), CliError> {
    let opts = Options::from_matches(m)?;
    let command_config = super::command_config(m)?;
    // The changes are read before connecting, so that a bad file changes nothing.
    match &opts.action {
        Action::Alter => {
            let changes = opts.changes()?;
            let mut client = open_client(m, command_config.as_ref())?;
            let entity = opts.single_entity();
            client.alter_resource_configs(&entity.resource(), &changes)?;
            emit(&format!("{}\n", entity.completed_line()))
        }
        Action::Describe { all } => {
            let mut client = open_client(m, command_config.as_ref())?;
            describe(&mut client, &opts, *all)
        }
    }
}

/// `--describe`: each named entity, or every entity of the type, with its configs.
fn describe(client: &mut Client, opts: &Options, all: bool) -> Result<(), CliError> {
    for entity in expand(client, opts)? {
        // Entities listed by `expand` exist; only a named one is looked up.
        let known = opts.entity.is_none() || exists(client, &entity)?;
        // A group that has configs but no members still counts, as in Kafka's tool (which
        // lists config resources too); a missing topic or broker is not asked about.
        let entries = match (known, entity.kind) {
            (true, _) | (false, EntityType::Groups) => {
                client.describe_resource_configs(&entity.resource())?
            }
            (false, _) => Vec::new(),
        };
        let wanted = entity.dynamic_source();
        if !known && !entries.iter().any(|e| e.source == wanted) {
            emit(&format!(
                "The {} '{}' doesn't exist and doesn't have dynamic config.\n",
                entity.kind.singular(),
                entity.name().unwrap_or_default()
            ))?;
            continue;
        }
        let mut text = format!("{}\n", entity.describe_header(all));
        let mut entries: Vec<DescribedConfig> = entries
            .into_iter()
            .filter(|e| all || e.source == wanted)
            .collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        for entry in entries {
            text.push_str(&format!("  {}\n", entry_line(&entry)));
        }
        emit(&text)?;
    }
    Ok(())
}

/// The entities to describe: the one named, or every one of the type (each broker, then
/// the broker defaults, as Kafka lists them).
fn expand(client: &mut Client, opts: &Options) -> Result<Vec<Entity>, CliError> {
    if let Some(entity) = opts.entity.clone() {
        return Ok(vec![entity]);
    }
    let entity = |name: Option<String>| Entity {
        kind: opts.kind,
        name,
    };
    Ok(match opts.kind {
        EntityType::Topics => client
            .list_topics()?
            .into_iter()
            .map(|t| entity(Some(t.name)))
            .collect(),
        EntityType::Brokers => client
            .live_brokers()?
            .into_iter()
            .map(|id| entity(Some(id.to_string())))
            .chain(std::iter::once(entity(None)))
            .collect(),
        EntityType::Groups => {
            let mut ids = client.group_admin().group_ids()?;
            ids.sort();
            ids.into_iter().map(|g| entity(Some(g))).collect()
        }
    })
}

/// Whether a named entity exists (Kafka's tool checks before describing it); the broker
/// defaults always do.
fn exists(client: &mut Client, entity: &Entity) -> Result<bool, CliError> {
    let Some(name) = entity.name() else {
        return Ok(true);
    };
    Ok(match entity.kind {
        EntityType::Topics => client.list_topics()?.iter().any(|t| t.name == name),
        EntityType::Brokers => client
            .live_brokers()?
            .iter()
            .any(|id| id.to_string() == name),
        EntityType::Groups => client.group_admin().group_ids()?.iter().any(|g| g == name),
    })
}

/// One entry as Kafka's tool prints it:
/// `name=value sensitive=false synonyms={SOURCE:name=value, ...}`.
fn entry_line(e: &DescribedConfig) -> String {
    let value = |v: &Option<String>| v.clone().unwrap_or_else(|| "null".to_string());
    let synonyms: Vec<String> = e
        .synonyms
        .iter()
        .map(|s| format!("{}:{}={}", s.source.kafka_name(), s.name, value(&s.value)))
        .collect();
    format!(
        "{}={} sensitive={} synonyms={{{}}}",
        e.name,
        value(&e.value),
        e.sensitive,
        synonyms.join(", ")
    )
}

impl Entity {
    /// The client's resource for it.
    fn resource(&self) -> ConfigResource {
        let name = self.name.clone().unwrap_or_default();
        match (self.kind, &self.name) {
            (EntityType::Topics, _) => ConfigResource::Topic(name),
            (EntityType::Groups, _) => ConfigResource::Group(name),
            (EntityType::Brokers, None) => ConfigResource::BrokerDefaults,
            // The options checked that a broker name is an integer.
            (EntityType::Brokers, Some(id)) => ConfigResource::Broker(id.parse().unwrap_or(-1)),
        }
    }

    /// The source of the entity's own (dynamic) configs, the ones `--describe` lists.
    fn dynamic_source(&self) -> ConfigSource {
        match (self.kind, &self.name) {
            (EntityType::Topics, _) => ConfigSource::DynamicTopicConfig,
            (EntityType::Groups, _) => ConfigSource::DynamicGroupConfig,
            (EntityType::Brokers, None) => ConfigSource::DynamicDefaultBrokerConfig,
            (EntityType::Brokers, Some(_)) => ConfigSource::DynamicBrokerConfig,
        }
    }

    fn describe_header(&self, all: bool) -> String {
        match &self.name {
            None => "Default configs for brokers in the cluster are:".to_string(),
            Some(name) => format!(
                "{} configs for {} {name} are:",
                if all { "All" } else { "Dynamic" },
                self.kind.singular()
            ),
        }
    }

    fn completed_line(&self) -> String {
        match &self.name {
            None => "Completed updating default config for brokers in the cluster.".to_string(),
            Some(name) => format!(
                "Completed updating config for {} {name}.",
                self.kind.singular()
            ),
        }
    }
}
