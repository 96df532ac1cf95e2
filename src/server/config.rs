//! The server's settings, from Kafka's broker properties (`server.properties` plus
//! `--override key=value`): the keys that mean something for one embedded-log node are read and
//! checked; the others (a KRaft quorum, replication, thread pools) are accepted and ignored, so
//! that Kafka's own `server.properties` works as it is.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::kafka::configs::{ConfigSource, ConfigSynonym, DescribedConfig};
use crate::kafka::topic_config;

/// Kafka's default `message.max.bytes`: the largest record batch a produce may carry.
const DEFAULT_MESSAGE_MAX_BYTES: i32 = 1_048_588;
/// Kafka's defaults for the consumer protocol's heartbeat interval and session timeout.
const DEFAULT_CONSUMER_HEARTBEAT_MS: i32 = 5_000;
const DEFAULT_CONSUMER_SESSION_MS: i32 = 45_000;
/// The listener when none is configured.
pub const DEFAULT_LISTENER: &str = "PLAINTEXT://127.0.0.1:9092";

/// A listener as `listeners` gives it: the address to bind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    /// The name before `://` (PLAINTEXT, or a name mapped to PLAINTEXT).
    pub name: String,
    /// The host to bind; empty means all interfaces, as in Kafka.
    pub host: String,
    /// The port; 0 picks a free one (the ready line names it).
    pub port: u16,
}

/// Everything the server needs to start, checked.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The one listener clients connect to.
    pub listener: Listener,
    /// The host and port told to clients in Metadata; `None`: the listener's own (with the
    /// bound port when it was 0, and `localhost` when it binds all interfaces).
    pub advertised: Option<(String, u16)>,
    /// The embedded log's directory (`log.dirs`, else `--log-dir`, else the tools' default).
    pub log_dir: Option<PathBuf>,
    /// `node.id`: the broker id clients see as leader of every partition.
    pub node_id: i32,
    /// `num.partitions` for auto-created topics; `None`: the log dir's setting (default 1).
    pub num_partitions: Option<u32>,
    /// `auto.create.topics.enable`; `None`: the log dir's setting (default true).
    pub auto_create_topics: Option<bool>,
    /// `message.max.bytes`: the largest batch a produce may carry, unless a topic's
    /// `max.message.bytes` says otherwise.
    pub message_max_bytes: i32,
    /// Topic config defaults from the broker's `log.*` keys (`retention.ms`, `retention.bytes`,
    /// `segment.bytes`), applied to topics that do not set them.
    pub topic_defaults: BTreeMap<String, String>,
    /// `group.consumer.heartbeat.interval.ms`: how often members of the consumer protocol
    /// (KIP-848) are told to heartbeat.
    pub consumer_heartbeat_interval_ms: i32,
    /// `group.consumer.session.timeout.ms`: how long such a member may stay silent.
    pub consumer_session_timeout_ms: i32,
    /// The log cleaner's settings (`log.cleaner.*`).
    pub cleaner: CleanerSettings,
    /// The properties of [`READ_KEYS`] as given (file and `--override`), for DescribeConfigs.
    pub given: BTreeMap<String, String>,
}

/// The server's log cleaner, from Kafka's `log.cleaner.*` keys.
#[derive(Clone, Debug, PartialEq)]
pub struct CleanerSettings {
    /// `log.cleaner.enable` (true): without it compacted topics grow forever, as in Kafka.
    pub enabled: bool,
    /// `log.cleaner.backoff.ms` (15,000): the pause when no partition needed cleaning.
    pub backoff_ms: i64,
    /// `log.cleaner.io.max.bytes.per.second` (unlimited): bytes read and written per second.
    pub max_bytes_per_second: f64,
    /// `log.cleaner.dedupe.buffer.size` (128 MiB): the memory for a round's key map.
    pub dedupe_buffer_size: i64,
}

/// Kafka's default `log.cleaner.io.max.bytes.per.second` (Java's `Double.MAX_VALUE`).
const UNTHROTTLED: &str = "1.7976931348623157E308";

/// What the server takes for each of [`READ_KEYS`] when it is not given (`None`: nothing),
/// as DescribeConfigs reports it (source DEFAULT_CONFIG). The topic-level defaults the `log.*`
/// keys stand for are the embedded log's own (retention 7 days, no size limit, 1 GiB segments).
fn default_of(key: &str) -> Option<String> {
    Some(match key {
        "listeners" => DEFAULT_LISTENER.to_string(),
        "listener.security.protocol.map" => {
            "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
                .to_string()
        }
        "node.id" | "broker.id" => "0".to_string(),
        "num.partitions" => "1".to_string(),
        "auto.create.topics.enable" => "true".to_string(),
        "message.max.bytes" => DEFAULT_MESSAGE_MAX_BYTES.to_string(),
        "log.retention.hours" => "168".to_string(),
        // The topic configs' defaults, whose cluster-wide property these are.
        "log.retention.bytes" => topic_default("retention.bytes"),
        "log.segment.bytes" => topic_default("segment.bytes"),
        "log.message.timestamp.type" => topic_default("message.timestamp.type"),
        "group.consumer.heartbeat.interval.ms" => DEFAULT_CONSUMER_HEARTBEAT_MS.to_string(),
        "group.consumer.session.timeout.ms" => DEFAULT_CONSUMER_SESSION_MS.to_string(),
        "log.cleaner.enable" => "true".to_string(),
        "log.cleaner.backoff.ms" => "15000".to_string(),
        "log.cleaner.io.max.bytes.per.second" => UNTHROTTLED.to_string(),
        "log.cleaner.dedupe.buffer.size" => "134217728".to_string(),
        _ => return None,
    })
}

/// The documented default of a topic config.
fn topic_default(name: &str) -> String {
    topic_config::find(name).map_or_else(String::new, |def| def.default.to_string())
}

/// Every broker property the server reads (the others are accepted and ignored, as a Kafka
/// `server.properties` holds many that mean nothing here).
pub const READ_KEYS: &[&str] = &[
    "listeners",
    "advertised.listeners",
    "listener.security.protocol.map",
    "controller.listener.names",
    "log.dirs",
    "log.dir",
    "node.id",
    "broker.id",
    "num.partitions",
    "auto.create.topics.enable",
    "message.max.bytes",
    "log.retention.ms",
    "log.retention.minutes",
    "log.retention.hours",
    "log.retention.bytes",
    "log.segment.bytes",
    "log.message.timestamp.type",
    "group.consumer.heartbeat.interval.ms",
    "group.consumer.session.timeout.ms",
    "log.cleaner.enable",
    "log.cleaner.backoff.ms",
    "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.dedupe.buffer.size",
];

/// Given keys the server does not read that look like a misspelling of one it does (at most two
/// edits away), each with the key it resembles. Kafka warns of every key it does not know; the
/// server ignores most of Kafka's keys, and a typo matters only where it hides one it reads.
pub fn near_misses(props: &BTreeMap<String, String>) -> Vec<(String, &'static str)> {
    props
        .keys()
        .filter(|given| !READ_KEYS.contains(&given.as_str()))
        .filter_map(|given| {
            READ_KEYS
                .iter()
                .map(|known| (strsim::damerau_levenshtein(given, known), *known))
                .filter(|(distance, _)| *distance <= 2)
                .min()
                .map(|(_, known)| (given.clone(), known))
        })
        .collect()
}

impl ServerConfig {
    /// Reads the settings from broker properties. A value that Kafka would refuse is an error
    /// naming the key and what it accepts.
    pub fn from_properties(props: &BTreeMap<String, String>) -> Result<ServerConfig, String> {
        let get = |key: &str| {
            debug_assert!(READ_KEYS.contains(&key), "{key} is missing from READ_KEYS");
            props.get(key).map(|v| v.trim()).filter(|v| !v.is_empty())
        };
        let listener = match get("listeners") {
            Some(list) => client_listener(list, props)?,
            None => parse_listener(DEFAULT_LISTENER)?,
        };
        let advertised = get("advertised.listeners")
            .map(|list| {
                let names: Vec<Listener> = split_list(list)
                    .map(parse_listener)
                    .collect::<Result<_, _>>()?;
                names
                    .into_iter()
                    .find(|l| l.name == listener.name)
                    .map(|l| (l.host, l.port))
                    .ok_or_else(|| {
                        format!(
                            "advertised.listeners '{list}' has no entry for listener {}; name it as in listeners",
                            listener.name
                        )
                    })
            })
            .transpose()?;
        let log_dir = match get("log.dirs").or_else(|| get("log.dir")) {
            None => None,
            Some(dirs) => {
                let all: Vec<&str> = split_list(dirs).collect();
                if all.len() != 1 {
                    return Err(format!(
                        "log.dirs '{dirs}' names {} directories; kafka-server-start serves one log directory",
                        all.len()
                    ));
                }
                Some(PathBuf::from(all[0]))
            }
        };
        let node_id = int(get("node.id").or_else(|| get("broker.id")), "node.id", 0, 0)?;
        let num_partitions = get("num.partitions")
            .map(|v| int(Some(v), "num.partitions", 1, 1).map(|n| n as u32))
            .transpose()?;
        let auto_create_topics = get("auto.create.topics.enable")
            .map(|v| boolean(v, "auto.create.topics.enable"))
            .transpose()?;
        let message_max_bytes = int(
            get("message.max.bytes"),
            "message.max.bytes",
            DEFAULT_MESSAGE_MAX_BYTES,
            0,
        )?;
        let consumer_ms = |key: &str, default: i32| int(get(key), key, default, 1);
        let consumer_heartbeat_interval_ms = consumer_ms(
            "group.consumer.heartbeat.interval.ms",
            DEFAULT_CONSUMER_HEARTBEAT_MS,
        )?;
        let consumer_session_timeout_ms = consumer_ms(
            "group.consumer.session.timeout.ms",
            DEFAULT_CONSUMER_SESSION_MS,
        )?;
        // As Kafka refuses it: members would be removed between two heartbeats, and their
        // records read again by the next.
        if consumer_heartbeat_interval_ms >= consumer_session_timeout_ms {
            return Err(format!(
                "group.consumer.heartbeat.interval.ms ({consumer_heartbeat_interval_ms}) must be less than group.consumer.session.timeout.ms ({consumer_session_timeout_ms})"
            ));
        }
        Ok(ServerConfig {
            listener,
            advertised,
            log_dir,
            node_id,
            num_partitions,
            auto_create_topics,
            message_max_bytes,
            topic_defaults: topic_defaults(&get)?,
            consumer_heartbeat_interval_ms,
            consumer_session_timeout_ms,
            cleaner: cleaner_settings(&get)?,
            given: READ_KEYS
                .iter()
                .filter_map(|&k| get(k).map(|v| (k.to_string(), v.to_string())))
                .collect(),
        })
    }

    /// The broker's own configs as DescribeConfigs reports them for its id: every key the
    /// server reads, given (STATIC_BROKER_CONFIG) or not (DEFAULT_CONFIG), with its synonyms.
    /// `log.dirs` and `log.dir` are the directory served (`served`), however it was given
    /// (`--log-dir`, `log.dirs`, `KAFKIT_LOG_DIR`).
    pub fn static_configs(&self, served: &std::path::Path) -> Vec<DescribedConfig> {
        let served = served.display().to_string();
        READ_KEYS
            .iter()
            .map(|&key| {
                let default = default_of(key).map(|d| ConfigSynonym {
                    name: key.to_string(),
                    value: Some(d),
                    source: ConfigSource::DefaultConfig,
                });
                // broker.id and node.id are one setting in KRaft: either names both.
                let alias = match key {
                    "broker.id" => Some("node.id"),
                    "node.id" => Some("broker.id"),
                    _ => None,
                };
                let given = if key == "log.dirs" || key == "log.dir" {
                    Some(&served)
                } else {
                    self.given
                        .get(key)
                        .or_else(|| alias.and_then(|a| self.given.get(a)))
                };
                let given = given.map(|v| ConfigSynonym {
                    name: key.to_string(),
                    value: Some(v.clone()),
                    source: ConfigSource::StaticBrokerConfig,
                });
                let synonyms: Vec<ConfigSynonym> = given.into_iter().chain(default).collect();
                let (value, source) = synonyms
                    .first()
                    .map_or((None, ConfigSource::DefaultConfig), |s| {
                        (s.value.clone(), s.source)
                    });
                DescribedConfig {
                    name: key.to_string(),
                    value,
                    source,
                    sensitive: false,
                    read_only: true,
                    synonyms,
                }
            })
            .collect()
    }

    /// `group.consumer.session.timeout.ms` as a duration.
    pub fn consumer_session_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.consumer_session_timeout_ms as u64)
    }
}

/// The log cleaner's settings, checked as Kafka checks them.
fn cleaner_settings<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<CleanerSettings, String> {
    let enabled = get("log.cleaner.enable")
        .map(|v| boolean(v, "log.cleaner.enable"))
        .transpose()?
        .unwrap_or(true);
    let backoff_ms = long(
        get("log.cleaner.backoff.ms"),
        "log.cleaner.backoff.ms",
        15_000,
        0,
    )?;
    let key = "log.cleaner.io.max.bytes.per.second";
    let max_bytes_per_second = match get(key) {
        None => f64::MAX,
        Some(v) => match v.parse::<f64>() {
            Ok(n) if n.is_finite() => n,
            _ => return Err(not_a_number(v, key, "DOUBLE")),
        },
    };
    let dedupe_buffer_size = long(
        get("log.cleaner.dedupe.buffer.size"),
        "log.cleaner.dedupe.buffer.size",
        134_217_728,
        i64::MIN,
    )?;
    Ok(CleanerSettings {
        enabled,
        backoff_ms,
        max_bytes_per_second,
        dedupe_buffer_size,
    })
}

/// The topic config defaults the broker's `log.*` keys set, under the topic configs' names.
fn topic_defaults<'a>(
    get: &impl Fn(&str) -> Option<&'a str>,
) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    // Kafka reads the finest of the three retention units that is set.
    let retention_ms = [
        ("log.retention.ms", 1),
        ("log.retention.minutes", 60_000),
        ("log.retention.hours", 3_600_000),
    ]
    .into_iter()
    .find_map(|(key, unit)| get(key).map(|v| (key, v, unit)));
    if let Some((key, value, unit)) = retention_ms {
        let n = if unit == 1 {
            long(Some(value), key, 0, -1)?
        } else {
            int(Some(value), key, 0, -1)?.into()
        };
        let ms = if n < 0 { -1 } else { n.saturating_mul(unit) };
        out.insert("retention.ms".to_string(), ms.to_string());
    }
    if let Some(v) = get("log.retention.bytes") {
        let n = long(Some(v), "log.retention.bytes", 0, i64::MIN)?;
        out.insert("retention.bytes".to_string(), n.to_string());
    }
    if let Some(v) = get("log.segment.bytes") {
        // Kafka's floor for the broker-wide setting (a topic's segment.bytes has the same).
        let n = int(Some(v), "log.segment.bytes", 0, 1024 * 1024)?;
        out.insert("segment.bytes".to_string(), n.to_string());
    }
    if let Some(v) = get("log.message.timestamp.type") {
        topic_config::find("message.timestamp.type")
            .expect("a topic config")
            .validate_server_default(v)?;
        out.insert("message.timestamp.type".to_string(), v.to_string());
    }
    Ok(out)
}

/// The listener clients use: the first of `listeners` that is not a controller listener
/// (Kafka's combined-mode `server.properties` also lists `CONTROLLER://`).
fn client_listener(list: &str, props: &BTreeMap<String, String>) -> Result<Listener, String> {
    let controllers: Vec<&str> = props
        .get("controller.listener.names")
        .map_or("CONTROLLER", |v| v.as_str())
        .split(',')
        .map(str::trim)
        .collect();
    let protocols = security_protocol_map(props)?;
    let mut candidates = Vec::new();
    for entry in split_list(list) {
        let listener = parse_listener(entry)?;
        if !controllers.contains(&listener.name.as_str()) {
            candidates.push(listener);
        }
    }
    if candidates.len() > 1 {
        return Err(format!(
            "listeners '{list}' names {} client listeners; kafka-server-start serves one (keep one, such as {DEFAULT_LISTENER})",
            candidates.len()
        ));
    }
    let Some(listener) = candidates.into_iter().next() else {
        return Err(format!(
            "listeners '{list}' has no client listener (only controller listeners); add one such as {DEFAULT_LISTENER}"
        ));
    };
    let protocol = protocols
        .get(&listener.name)
        .cloned()
        .unwrap_or_else(|| listener.name.clone());
    if protocol != "PLAINTEXT" {
        return Err(format!(
            "listener {} uses security protocol {protocol}; kafka-server-start serves PLAINTEXT only (no TLS or SASL yet)",
            listener.name
        ));
    }
    Ok(listener)
}

/// `listener.security.protocol.map`: listener name to security protocol.
fn security_protocol_map(
    props: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let Some(map) = props.get("listener.security.protocol.map") else {
        return Ok(BTreeMap::new());
    };
    split_list(map)
        .map(|pair| {
            pair.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| {
                    format!("listener.security.protocol.map entry '{pair}' is not NAME:PROTOCOL")
                })
        })
        .collect()
}

/// Parses `NAME://host:port` (host may be empty or a bracketed IPv6 address).
fn parse_listener(entry: &str) -> Result<Listener, String> {
    let bad = || {
        format!("listener '{entry}' is not of the form NAME://host:port (e.g. {DEFAULT_LISTENER})")
    };
    let (name, address) = entry.trim().split_once("://").ok_or_else(bad)?;
    let (host, port) = address.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| match port.parse::<u64>() {
        Ok(_) => {
            format!("listener '{entry}' has port {port}; a port is 0 to 65535 (0 picks a free one)")
        }
        Err(_) => bad(),
    })?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if name.is_empty() {
        return Err(bad());
    }
    Ok(Listener {
        name: name.to_uppercase(),
        host: host.to_string(),
        port,
    })
}

/// The entries of a comma-separated list, trimmed, empty ones dropped.
fn split_list(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// A property of Kafka's type INT (32 bits) at or above `min`, or `default` when absent.
fn int(value: Option<&str>, key: &str, default: i32, min: i32) -> Result<i32, String> {
    let n = number(value, key, default.into(), min.into(), "INT")?;
    i32::try_from(n).map_err(|_| not_a_number(value.unwrap_or_default(), key, "INT"))
}

/// A property of Kafka's type LONG at or above `min`, or `default` when absent.
fn long(value: Option<&str>, key: &str, default: i64, min: i64) -> Result<i64, String> {
    number(value, key, default, min, "LONG")
}

fn number(
    value: Option<&str>,
    key: &str,
    default: i64,
    min: i64,
    kind: &str,
) -> Result<i64, String> {
    let Some(v) = value else {
        return Ok(default);
    };
    match v.trim().parse::<i64>() {
        Ok(n) if kind == "INT" && i32::try_from(n).is_err() => Err(not_a_number(v, key, kind)),
        Ok(n) if n >= min => Ok(n),
        Ok(_) => Err(format!(
            "Invalid value {v} for configuration {key}: Value must be at least {min}"
        )),
        Err(_) => Err(not_a_number(v, key, kind)),
    }
}

fn not_a_number(v: &str, key: &str, kind: &str) -> String {
    format!("Invalid value {v} for configuration {key}: Not a number of type {kind}")
}

/// A boolean property as Kafka reads it (`true` or `false`, any case).
fn boolean(v: &str, key: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!(
            "Invalid value {v} for configuration {key}: Expected value to be either true or false"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_keys_that_the_server_reads_are_named() {
        let props: BTreeMap<String, String> = [
            "num.partitionz",
            "log.retention.hour",
            "advertized.listeners",
            "num.network.threads",
            "log.dirs",
            "broker.rack",
        ]
        .into_iter()
        .map(|k| (k.to_string(), "1".to_string()))
        .collect();
        assert_eq!(
            near_misses(&props),
            [
                ("advertized.listeners".to_string(), "advertised.listeners"),
                ("log.retention.hour".to_string(), "log.retention.hours"),
                ("num.partitionz".to_string(), "num.partitions"),
            ]
        );
    }

    fn config(pairs: &[(&str, &str)]) -> Result<ServerConfig, String> {
        let props = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ServerConfig::from_properties(&props)
    }

    #[test]
    fn defaults() {
        let c = config(&[]).unwrap();
        assert_eq!(c.listener.host, "127.0.0.1");
        assert_eq!(c.listener.port, 9092);
        assert_eq!(c.node_id, 0);
        assert_eq!(c.message_max_bytes, DEFAULT_MESSAGE_MAX_BYTES);
        assert!(c.topic_defaults.is_empty());
    }

    #[test]
    fn numbers_past_their_kafka_type_are_refused() {
        for key in [
            "message.max.bytes",
            "node.id",
            "group.consumer.session.timeout.ms",
        ] {
            let err = config(&[(key, "3000000000")]).err().unwrap();
            assert_eq!(
                err,
                format!(
                    "Invalid value 3000000000 for configuration {key}: Not a number of type INT"
                )
            );
        }
        // LONG: fine; INT hours: refused.
        let c = config(&[("log.retention.ms", "3000000000000")]).unwrap();
        assert_eq!(c.topic_defaults["retention.ms"], "3000000000000");
        let err = config(&[("log.retention.hours", "3000000000")])
            .err()
            .unwrap();
        assert!(err.ends_with("Not a number of type INT"), "{err}");
        assert_eq!(config(&[("node.id", " 3 ")]).unwrap().node_id, 3);
    }

    #[test]
    fn kafka_quickstart_properties() {
        let c = config(&[
            ("process.roles", "broker,controller"),
            ("node.id", "1"),
            ("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093"),
            (
                "advertised.listeners",
                "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093",
            ),
            ("log.dirs", "/tmp/kraft-combined-logs"),
            ("num.partitions", "3"),
            ("log.retention.hours", "168"),
            ("log.segment.bytes", "1073741824"),
        ])
        .unwrap();
        assert_eq!(c.listener.host, "");
        assert_eq!(c.advertised, Some(("localhost".to_string(), 9092)));
        assert_eq!(c.node_id, 1);
        assert_eq!(c.num_partitions, Some(3));
        assert_eq!(c.topic_defaults["retention.ms"], "604800000");
        assert_eq!(c.log_dir, Some(PathBuf::from("/tmp/kraft-combined-logs")));
    }

    #[test]
    fn the_broker_timestamp_type_is_every_topics_default() {
        let c = config(&[("log.message.timestamp.type", "LogAppendTime")]).unwrap();
        assert_eq!(c.topic_defaults["message.timestamp.type"], "LogAppendTime");
        assert_eq!(
            config(&[("log.message.timestamp.type", "logappendtime")])
                .err()
                .unwrap(),
            "Invalid value logappendtime for configuration log.message.timestamp.type: String must be one of: CreateTime, LogAppendTime"
        );
    }

    #[test]
    fn refusals_name_the_key() {
        for (pairs, expected) in [
            (vec![("num.partitions", "0")], "num.partitions"),
            (vec![("listeners", "SSL://:9093")], "PLAINTEXT only"),
            (vec![("listeners", "localhost:9092")], "NAME://host:port"),
            (vec![("log.dirs", "/a,/b")], "one log directory"),
            (vec![("auto.create.topics.enable", "yes")], "true or false"),
            (vec![("message.max.bytes", "x")], "message.max.bytes"),
            (
                vec![("listeners", "CONTROLLER://:9093")],
                "no client listener",
            ),
            (
                vec![("group.consumer.session.timeout.ms", "10")],
                "must be less than group.consumer.session.timeout.ms",
            ),
        ] {
            let err = config(&pairs).unwrap_err();
            assert!(err.contains(expected), "{err}");
        }
    }
}
