//! The admin client: the bootstrap connection, Metadata, CreateTopics and DeleteTopics.
//!
//! Admin requests go to the bootstrap connection: on KRaft clusters every broker forwards
//! CreateTopics and DeleteTopics to the active controller itself.

use base64::Engine;
use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::{
    BrokerId, CreateTopicsRequest, DeleteTopicsRequest, MetadataRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::connection::{ClientConfig, ConnectFailure, Connection};
use super::error::{RemoteError, Result};

/// A broker of the cluster, as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerInfo {
    pub id: i32,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
}

/// One partition of a topic, as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionInfo {
    pub partition: i32,
    /// -1 when the partition has no leader.
    pub leader: i32,
    pub leader_epoch: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub offline: Vec<i32>,
    /// The partition's error code (LEADER_NOT_AVAILABLE while it is being created, ...).
    pub error_code: i16,
}

/// A topic, as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    pub name: String,
    /// The topic id as Kafka prints it: URL-safe base64 without padding (22 characters).
    pub id: String,
    /// Set by the broker for `__consumer_offsets`, `__transaction_state` and the like.
    pub internal: bool,
    /// The topic-level error code (e.g. UNKNOWN_TOPIC_OR_PARTITION when asked for by name).
    pub error_code: i16,
    /// Sorted by partition.
    pub partitions: Vec<PartitionInfo>,
}

/// The cluster and its topics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterMetadata {
    pub cluster_id: Option<String>,
    pub controller_id: i32,
    pub brokers: Vec<BrokerInfo>,
    /// Sorted by name.
    pub topics: Vec<TopicInfo>,
}

/// A topic to create. `None` leaves the choice to the broker (`num.partitions`,
/// `default.replication.factor`), as Kafka's admin client does by sending -1.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewTopic {
    pub name: String,
    pub partitions: Option<i32>,
    pub replication_factor: Option<i16>,
    /// Replica broker ids per partition, in partition order; when given, the counts are unset.
    pub assignments: Vec<Vec<i32>>,
    pub configs: Vec<(String, String)>,
}

/// A per-topic outcome of CreateTopics or DeleteTopics.
pub type TopicOutcome = (String, Result<()>);

/// Splits `host:port[,host:port...]`. Spaces around entries are ignored, as Kafka does.
pub fn parse_bootstrap(servers: &str) -> Result<Vec<(String, u16)>> {
    let mut out = Vec::new();
    for entry in servers.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let invalid = || RemoteError::InvalidBootstrap(entry.to_string());
        let (host, port) = entry.rsplit_once(':').ok_or_else(invalid)?;
        let host = match host.strip_prefix('[') {
            Some(v6) => v6.strip_suffix(']').ok_or_else(invalid)?,
            None if host.contains(':') => return Err(invalid()),
            None => host,
        };
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(invalid)?;
        if host.is_empty() {
            return Err(invalid());
        }
        out.push((host.to_string(), port));
    }
    if out.is_empty() {
        return Err(RemoteError::InvalidBootstrap(servers.to_string()));
    }
    Ok(out)
}

/// An admin client connected to one broker of the cluster.
#[derive(Debug)]
pub struct Client {
    pub(super) conn: Connection,
}

impl Client {
    /// Connects to the first bootstrap server that answers, trying them in order. A refused
    /// connection moves on at once; a silent host costs `socket.connection.setup.timeout.ms`,
    /// and the whole attempt never takes longer than `request.timeout.ms`.
    pub async fn connect(servers: &str, config: ClientConfig) -> Result<Client> {
        let addresses = parse_bootstrap(servers)?;
        let deadline = tokio::time::Instant::now() + config.request_timeout;
        let mut unreachable = Vec::new();
        let mut handshake_error = None;
        for (host, port) in &addresses {
            let name = if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            if remaining.is_zero() {
                unreachable.push(format!("{name} (not tried: request.timeout.ms elapsed)"));
                continue;
            }
            let mut attempt = config.clone();
            attempt.connect_timeout = attempt.connect_timeout.min(remaining);
            let resolved = match tokio::time::timeout(
                attempt.connect_timeout,
                tokio::net::lookup_host((host.as_str(), *port)),
            )
            .await
            {
                Ok(Ok(addrs)) => addrs.collect::<Vec<_>>(),
                Ok(Err(e)) => {
                    unreachable.push(format!("{name} (cannot resolve {host}: {e})"));
                    continue;
                }
                Err(_) => {
                    unreachable.push(format!("{name} (cannot resolve {host}: timed out)"));
                    continue;
                }
            };
            let mut reason = format!("{host} resolves to no address");
            for socket in resolved {
                match Connection::open(&name, socket, &attempt).await {
                    Ok(conn) => return Ok(Client { conn }),
                    Err(ConnectFailure::Unreachable(r)) => reason = r,
                    Err(ConnectFailure::Handshake(e)) => {
                        reason = e.to_string();
                        handshake_error.get_or_insert(e);
                    }
                }
            }
            unreachable.push(format!("{name} ({reason})"));
        }
        // A server that accepted TCP but failed the handshake says more than the list would.
        match handshake_error {
            Some(e) if addresses.len() == 1 => Err(RemoteError::Handshake(Box::new(e))),
            _ => Err(RemoteError::Connect {
                attempts: unreachable.join(", "),
            }),
        }
    }

    /// The address of the broker this client talks to.
    pub fn addr(&self) -> &str {
        self.conn.addr()
    }

    /// Metadata for all topics (`None`) or the named ones. Never creates topics.
    pub async fn metadata(&mut self, topics: Option<&[String]>) -> Result<ClusterMetadata> {
        let version = self.conn.version::<MetadataRequest>()?;
        let request = MetadataRequest::default()
            .with_topics(topics.map(|names| {
                names
                    .iter()
                    .map(|n| {
                        kafka_protocol::messages::metadata_request::MetadataRequestTopic::default()
                            .with_name(Some(topic_name(n)))
                    })
                    .collect()
            }))
            .with_allow_auto_topic_creation(false);
        let response = self.conn.send(&request, version).await?;
        if response.error_code != 0 {
            return Err(RemoteError::broker(response.error_code, None));
        }
        let mut brokers: Vec<BrokerInfo> = response
            .brokers
            .iter()
            .map(|b| BrokerInfo {
                id: b.node_id.0,
                host: b.host.to_string(),
                port: b.port,
                rack: b.rack.as_ref().map(|r| r.to_string()),
            })
            .collect();
        brokers.sort_by_key(|b| b.id);
        let mut topics: Vec<TopicInfo> = response
            .topics
            .iter()
            .filter_map(|t| {
                // A topic without a name only answers a lookup by id, which we never send.
                let name = t.name.as_ref()?.0.to_string();
                let mut partitions: Vec<PartitionInfo> = t
                    .partitions
                    .iter()
                    .map(|p| PartitionInfo {
                        partition: p.partition_index,
                        leader: p.leader_id.0,
                        leader_epoch: p.leader_epoch,
                        replicas: ids(&p.replica_nodes),
                        isr: ids(&p.isr_nodes),
                        offline: ids(&p.offline_replicas),
                        error_code: p.error_code,
                    })
                    .collect();
                partitions.sort_by_key(|p| p.partition);
                Some(TopicInfo {
                    name,
                    id: base64::engine::general_purpose::URL_SAFE_NO_PAD
                        .encode(t.topic_id.as_bytes()),
                    internal: t.is_internal,
                    error_code: t.error_code,
                    partitions,
                })
            })
            .collect();
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ClusterMetadata {
            cluster_id: response.cluster_id.as_ref().map(|c| c.to_string()),
            controller_id: response.controller_id.0,
            brokers,
            topics,
        })
    }

    /// Creates topics; the outcome of each, in request order. The controller may take up to
    /// the request timeout, which is what Kafka's admin client sends too.
    pub async fn create_topics(&mut self, topics: &[NewTopic]) -> Result<Vec<TopicOutcome>> {
        let version = self.conn.version::<CreateTopicsRequest>()?;
        let request = CreateTopicsRequest::default()
            .with_timeout_ms(self.timeout_ms())
            .with_topics(
                topics
                    .iter()
                    .map(|t| {
                        CreatableTopic::default()
                            .with_name(topic_name(&t.name))
                            .with_num_partitions(t.partitions.unwrap_or(-1))
                            .with_replication_factor(t.replication_factor.unwrap_or(-1))
                            .with_assignments(
                                t.assignments
                                    .iter()
                                    .enumerate()
                                    .map(|(i, brokers)| {
                                        CreatableReplicaAssignment::default()
                                            .with_partition_index(i as i32)
                                            .with_broker_ids(
                                                brokers.iter().map(|b| BrokerId(*b)).collect(),
                                            )
                                    })
                                    .collect(),
                            )
                            .with_configs(
                                t.configs
                                    .iter()
                                    .map(|(k, v)| {
                                        CreatableTopicConfig::default()
                                            .with_name(StrBytes::from_string(k.clone()))
                                            .with_value(Some(StrBytes::from_string(v.clone())))
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let response = self.conn.send(&request, version).await?;
        let results = response
            .topics
            .iter()
            .map(|r| {
                let outcome = match r.error_code {
                    0 => Ok(()),
                    code => Err(RemoteError::broker(
                        code,
                        r.error_message.as_ref().map(|m| m.as_str()),
                    )),
                };
                (r.name.0.to_string(), outcome)
            })
            .collect::<Vec<_>>();
        Ok(in_request_order(
            topics.iter().map(|t| t.name.as_str()),
            results,
            self.conn.addr(),
            "CreateTopics",
        ))
    }

    /// Deletes topics by name; the outcome of each, in request order.
    pub async fn delete_topics(&mut self, names: &[String]) -> Result<Vec<TopicOutcome>> {
        let version = self.conn.version::<DeleteTopicsRequest>()?;
        let mut request = DeleteTopicsRequest::default().with_timeout_ms(self.timeout_ms());
        // v6 moved the names into `topics` (which may carry ids instead); v1-5 have a list.
        if version >= 6 {
            request = request.with_topics(
                names
                    .iter()
                    .map(|n| DeleteTopicState::default().with_name(Some(topic_name(n))))
                    .collect(),
            );
        } else {
            request = request.with_topic_names(names.iter().map(|n| topic_name(n)).collect());
        }
        let response = self.conn.send(&request, version).await?;
        let results = response
            .responses
            .iter()
            .map(|r| {
                let name = r.name.as_ref().map(|n| n.0.to_string()).unwrap_or_default();
                let outcome = match r.error_code {
                    0 => Ok(()),
                    code => Err(RemoteError::broker(
                        code,
                        r.error_message.as_ref().map(|m| m.as_str()),
                    )),
                };
                (name, outcome)
            })
            .collect::<Vec<_>>();
        Ok(in_request_order(
            names.iter().map(String::as_str),
            results,
            self.conn.addr(),
            "DeleteTopics",
        ))
    }

    fn timeout_ms(&self) -> i32 {
        i32::try_from(self.conn.request_timeout().as_millis()).unwrap_or(i32::MAX)
    }
}

pub(super) fn topic_name(name: &str) -> TopicName {
    TopicName(StrBytes::from_string(name.to_string()))
}

fn ids(brokers: &[BrokerId]) -> Vec<i32> {
    brokers.iter().map(|b| b.0).collect()
}

/// Orders per-topic results as the request listed the topics; a topic the broker left out of
/// its answer gets an error rather than silently counting as done.
fn in_request_order<'a>(
    requested: impl Iterator<Item = &'a str>,
    mut results: Vec<TopicOutcome>,
    addr: &str,
    api: &'static str,
) -> Vec<TopicOutcome> {
    requested
        .map(|name| match results.iter().position(|(n, _)| n == name) {
            Some(i) => results.swap_remove(i),
            None => (
                name.to_string(),
                Err(RemoteError::Protocol {
                    addr: addr.to_string(),
                    api,
                    reason: format!("no result for topic '{name}'"),
                }),
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_lists() {
        assert_eq!(
            parse_bootstrap(" a:1, 127.0.0.1:9092 ,[::1]:9093").unwrap(),
            vec![
                ("a".to_string(), 1),
                ("127.0.0.1".to_string(), 9092),
                ("::1".to_string(), 9093)
            ]
        );
        for bad in [
            "",
            "a",
            "a:",
            "a:0",
            "a:70000",
            ":9092",
            "::1:9092",
            "[::1:9092",
            ",",
        ] {
            assert!(parse_bootstrap(bad).is_err(), "{bad}");
        }
    }
}
