//! Entity configs as Kafka's admin API names them: the entity (a topic, a broker, the brokers'
//! defaults, a group), each config with its source and synonyms, and the changes that alter
//! them.

/// An entity whose configs are described or altered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigResource {
    Topic(String),
    /// One broker, by id.
    Broker(i32),
    /// The cluster-wide defaults of all brokers.
    BrokerDefaults,
    Group(String),
}

impl ConfigResource {
    /// DescribeConfigs' resource type and name for it.
    pub(crate) fn wire(&self) -> (i8, String) {
        match self {
            ConfigResource::Topic(name) => (2, name.clone()),
            ConfigResource::Broker(id) => (4, id.to_string()),
            ConfigResource::BrokerDefaults => (4, String::new()),
            ConfigResource::Group(name) => (32, name.clone()),
        }
    }
}

/// Where a config value comes from, named as Kafka's `ConfigEntry.ConfigSource` prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    Unknown,
    DynamicTopicConfig,
    DynamicBrokerConfig,
    DynamicDefaultBrokerConfig,
    StaticBrokerConfig,
    DefaultConfig,
    DynamicBrokerLoggerConfig,
    DynamicClientMetricsConfig,
    DynamicGroupConfig,
}

impl ConfigSource {
    /// The source of DescribeConfigs' `config_source` code.
    pub fn from_code(code: i8) -> ConfigSource {
        match code {
            1 => ConfigSource::DynamicTopicConfig,
            2 => ConfigSource::DynamicBrokerConfig,
            3 => ConfigSource::DynamicDefaultBrokerConfig,
            4 => ConfigSource::StaticBrokerConfig,
            5 => ConfigSource::DefaultConfig,
            6 => ConfigSource::DynamicBrokerLoggerConfig,
            7 => ConfigSource::DynamicClientMetricsConfig,
            8 => ConfigSource::DynamicGroupConfig,
            _ => ConfigSource::Unknown,
        }
    }

    /// DescribeConfigs' `config_source` code for it.
    pub fn code(self) -> i8 {
        match self {
            ConfigSource::Unknown => -1,
            ConfigSource::DynamicTopicConfig => 1,
            ConfigSource::DynamicBrokerConfig => 2,
            ConfigSource::DynamicDefaultBrokerConfig => 3,
            ConfigSource::StaticBrokerConfig => 4,
            ConfigSource::DefaultConfig => 5,
            ConfigSource::DynamicBrokerLoggerConfig => 6,
            ConfigSource::DynamicClientMetricsConfig => 7,
            ConfigSource::DynamicGroupConfig => 8,
        }
    }

    /// Kafka's name for it (`DYNAMIC_TOPIC_CONFIG`, ...).
    pub fn kafka_name(self) -> &'static str {
        match self {
            ConfigSource::Unknown => "UNKNOWN",
            ConfigSource::DynamicTopicConfig => "DYNAMIC_TOPIC_CONFIG",
            ConfigSource::DynamicBrokerConfig => "DYNAMIC_BROKER_CONFIG",
            ConfigSource::DynamicDefaultBrokerConfig => "DYNAMIC_DEFAULT_BROKER_CONFIG",
            ConfigSource::StaticBrokerConfig => "STATIC_BROKER_CONFIG",
            ConfigSource::DefaultConfig => "DEFAULT_CONFIG",
            ConfigSource::DynamicBrokerLoggerConfig => "DYNAMIC_BROKER_LOGGER_CONFIG",
            ConfigSource::DynamicClientMetricsConfig => "DYNAMIC_CLIENT_METRICS_CONFIG",
            ConfigSource::DynamicGroupConfig => "DYNAMIC_GROUP_CONFIG",
        }
    }
}

/// A value that would apply if the entry's own were not set, in order of precedence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigSynonym {
    pub name: String,
    /// `None` for sensitive values.
    pub value: Option<String>,
    pub source: ConfigSource,
}

/// One config of an entity, with its source and synonyms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescribedConfig {
    pub name: String,
    /// `None` for sensitive values (Kafka's tool prints `null`).
    pub value: Option<String>,
    pub source: ConfigSource,
    pub sensitive: bool,
    pub read_only: bool,
    /// The entry's own value first, then what it overrides.
    pub synonyms: Vec<ConfigSynonym>,
}

/// One config entry of a topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    pub name: String,
    /// `None` for sensitive values (Kafka's tool prints `null`).
    pub value: Option<String>,
    /// A default, not an override of any kind.
    pub is_default: bool,
}

/// One change to a topic's config, as Kafka's IncrementalAlterConfigs carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigChange {
    /// Sets the config to this value.
    Set { name: String, value: String },
    /// Removes the topic's value, so the default applies again.
    Delete { name: String },
}

impl ConfigChange {
    /// The config it changes.
    pub fn name(&self) -> &str {
        match self {
            ConfigChange::Set { name, .. } | ConfigChange::Delete { name } => name,
        }
    }
}

/// The config changes of one topic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicConfigChanges {
    pub topic: String,
    pub changes: Vec<ConfigChange>,
}
