//! Entity configs on the embedded log (`kafka-configs`), answering as a one-broker cluster:
//! a topic's overrides live in its metadata file, the broker defaults in the log dir's
//! `config.properties`, a group's share configs in its group directory (`super::share`). There
//! is no per-broker dynamic config (broker 0 has none); altering one is refused with a message
//! saying what to use instead.

use kafka_protocol::ResponseError;

use super::Result;
use super::admin::alter_topic_config;
use super::logdir::LOCAL_NODE_ID;
use super::share::ShareGroupDir;
use super::{LocalError, LogDir};
use crate::kafka::configs::{
    ConfigChange, ConfigResource, ConfigSource, ConfigSynonym, DescribedConfig, TopicConfigChanges,
};
use crate::kafka::topic_config;

/// Broker properties whose Kafka default is null (the broker derives the value from another
/// property, `log.retention.hours` say), so a topic default has no synonym for them.
const NULL_BROKER_DEFAULTS: &[&str] = &[
    "log.flush.interval.ms",
    "log.retention.ms",
    "log.roll.jitter.ms",
    "log.roll.ms",
];

/// The `config.properties` settings the embedded log reads, with Kafka's type of each.
const SETTINGS: &[(&str, SettingType)] = &[
    ("auto.create.topics.enable", SettingType::Boolean),
    ("num.partitions", SettingType::PositiveInt),
];

/// Whether `config.properties` may hold `name` (the embedded log reads it).
pub(super) fn is_setting(name: &str) -> bool {
    SETTINGS.iter().any(|(n, _)| *n == name)
}

#[derive(Clone, Copy)]
enum SettingType {
    Boolean,
    PositiveInt,
}

/// Every config of the entity, sorted by name.
pub fn describe(dir: &LogDir, resource: &ConfigResource) -> Result<Vec<DescribedConfig>> {
    match resource {
        ConfigResource::Topic(name) => describe_topic(dir, name),
        ConfigResource::BrokerDefaults => Ok(dir
            .settings()?
            .into_iter()
            .map(|(name, value)| dynamic(name, value, ConfigSource::DynamicDefaultBrokerConfig))
            .collect()),
        ConfigResource::Broker(id) if *id == LOCAL_NODE_ID => Ok(Vec::new()),
        ConfigResource::Broker(id) => Err(no_broker(*id)),
        // A group's share configs (the only group configs the embedded log reads).
        ConfigResource::Group(group) => Ok(ShareGroupDir::new(dir.root(), group)?
            .configs()?
            .into_iter()
            .map(|(name, value)| dynamic(name, value, ConfigSource::DynamicGroupConfig))
            .collect()),
    }
}

/// Applies the changes, all or none; a topic's new retention is applied at once, and a
/// compacted topic is cleaned.
pub fn alter(dir: &LogDir, resource: &ConfigResource, changes: &[ConfigChange]) -> Result<()> {
    alter_then(dir, resource, changes, true)
}

/// [`alter`] for `kafka-server-start`, which answers at once: its cleaner thread cleans.
pub fn alter_served(
    dir: &LogDir,
    resource: &ConfigResource,
    changes: &[ConfigChange],
) -> Result<()> {
    alter_then(dir, resource, changes, false)
}

fn alter_then(
    dir: &LogDir,
    resource: &ConfigResource,
    changes: &[ConfigChange],
    clean: bool,
) -> Result<()> {
    refuse_duplicates(changes)?;
    match resource {
        ConfigResource::Topic(name) => {
            dir.topic(name)?.ok_or_else(|| unknown_topic(name))?;
            alter_topic_config(
                dir,
                &TopicConfigChanges {
                    topic: name.clone(),
                    changes: changes.to_vec(),
                },
                clean,
            )
        }
        ConfigResource::BrokerDefaults => alter_settings(dir, changes),
        ConfigResource::Broker(id) if *id == LOCAL_NODE_ID => Err(LocalError::kafka(
            ResponseError::InvalidRequest,
            "the embedded log has no per-broker dynamic configs; alter its settings with --entity-type brokers --entity-default",
        )),
        ConfigResource::Broker(id) => Err(no_broker(*id)),
        ConfigResource::Group(group) => {
            ShareGroupDir::new(dir.root(), group)?.alter_configs(changes)
        }
    }
}

/// A topic's overrides (DYNAMIC_TOPIC_CONFIG) and the defaults of its other configs
/// (DEFAULT_CONFIG), with the broker default each falls back to, as a broker reports them.
fn describe_topic(dir: &LogDir, name: &str) -> Result<Vec<DescribedConfig>> {
    let meta = dir.topic(name)?.ok_or_else(|| unknown_topic(name))?;
    let mut entries: Vec<DescribedConfig> = topic_config::all()
        .iter()
        .filter(|d| !d.internal)
        .map(|d| {
            let server_default = d
                .server_default_property
                .filter(|p| !NULL_BROKER_DEFAULTS.contains(p))
                .map(|p| ConfigSynonym {
                    name: p.to_string(),
                    value: Some(d.default.to_string()),
                    source: ConfigSource::DefaultConfig,
                });
            let (value, source, mut synonyms) = match meta.configs.get(d.name) {
                Some(v) => {
                    let own = ConfigSynonym {
                        name: d.name.to_string(),
                        value: Some(v.clone()),
                        source: ConfigSource::DynamicTopicConfig,
                    };
                    (v.clone(), ConfigSource::DynamicTopicConfig, vec![own])
                }
                None => (d.default.to_string(), ConfigSource::DefaultConfig, vec![]),
            };
            synonyms.extend(server_default);
            DescribedConfig {
                name: d.name.to_string(),
                value: Some(value),
                source,
                sensitive: false,
                read_only: false,
                synonyms,
            }
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// An entry set at `source`, its own only synonym.
fn dynamic(name: String, value: String, source: ConfigSource) -> DescribedConfig {
    DescribedConfig {
        synonyms: vec![ConfigSynonym {
            name: name.clone(),
            value: Some(value.clone()),
            source,
        }],
        name,
        value: Some(value),
        source,
        sensitive: false,
        read_only: false,
    }
}

/// Changes `config.properties`: only the settings the embedded log reads, checked as Kafka
/// checks those broker properties.
fn alter_settings(dir: &LogDir, changes: &[ConfigChange]) -> Result<()> {
    for change in changes {
        let Some((_, kind)) = SETTINGS.iter().find(|(n, _)| *n == change.name()) else {
            return Err(LocalError::kafka(
                ResponseError::InvalidConfig,
                format!(
                    "{} is not a setting of the embedded log: its config.properties takes only auto.create.topics.enable and num.partitions (topic configs go with --entity-type topics)",
                    change.name()
                ),
            ));
        };
        if let ConfigChange::Set { name, value } = change {
            check_setting(name, value, *kind)
                .map_err(|m| LocalError::kafka(ResponseError::InvalidRequest, m))?;
        }
    }
    let changes: Vec<(String, Option<String>)> = changes
        .iter()
        .map(|change| match change {
            ConfigChange::Set { name, value } => (name.clone(), Some(value.trim().to_string())),
            ConfigChange::Delete { name } => (name.clone(), None),
        })
        .collect();
    match dir.alter_settings(&changes) {
        Err(LocalError::Invalid(m)) => Err(LocalError::kafka(ResponseError::InvalidConfig, m)),
        other => Ok(other?),
    }
}

/// Kafka's ConfigException text for a bad value of a broker property.
fn check_setting(name: &str, value: &str, kind: SettingType) -> std::result::Result<(), String> {
    let v = value.trim();
    match kind {
        SettingType::Boolean
            if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") =>
        {
            Ok(())
        }
        SettingType::Boolean => Err(format!(
            "Invalid value {value} for configuration {name}: Expected value to be either true or false"
        )),
        SettingType::PositiveInt => match v.parse::<i32>() {
            Ok(n) if n >= 1 => Ok(()),
            Ok(_) => Err(format!(
                "Invalid value {v} for configuration {name}: Value must be at least 1"
            )),
            Err(_) => Err(format!(
                "Invalid value {value} for configuration {name}: Not a number of type INT"
            )),
        },
    }
}

/// Kafka's refusal of one request naming a config twice (a set and a delete, say).
fn refuse_duplicates(changes: &[ConfigChange]) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    if changes.iter().all(|c| seen.insert(c.name())) {
        return Ok(());
    }
    Err(LocalError::kafka(
        ResponseError::InvalidRequest,
        "Error due to duplicate config keys",
    ))
}

/// Kafka's refusal of a topic that does not exist.
fn unknown_topic(name: &str) -> LocalError {
    LocalError::kafka(
        ResponseError::UnknownTopicOrPartition,
        format!("The topic '{name}' does not exist."),
    )
}

fn no_broker(id: i32) -> LocalError {
    LocalError::kafka(
        ResponseError::InvalidRequest,
        format!("the embedded log has only broker {LOCAL_NODE_ID}, not broker {id}"),
    )
}
