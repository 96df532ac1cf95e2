//! The admin client: the bootstrap connection, Metadata, DescribeTopicPartitions,
//! DescribeConfigs, DescribeCluster, CreateTopics, CreatePartitions and DeleteTopics.
//!
//! Admin requests go to the bootstrap connection: on KRaft clusters every broker forwards
//! CreateTopics and DeleteTopics to the active controller itself.

use kafka_protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_topic_partitions_request::{self, TopicRequest};
use kafka_protocol::messages::{
    BrokerId, CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest,
    DescribeClusterRequest, DescribeConfigsRequest, DescribeTopicPartitionsRequest,
    IncrementalAlterConfigsRequest, MetadataRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::configs::alterable;
use super::error::{RemoteError, Result};
use super::net::connection::{ClientConfig, ConnectFailure, Connection};
use crate::kafka::configs::{ConfigEntry, ConfigResource, TopicConfigChanges};
use crate::kafka::topics::{NewTopic, PartitionIncrease};
use crate::kafka::uuid::uuid_to_string;

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
    /// Eligible leader replicas (KIP-966): `None` when the answer came from Metadata, which
    /// does not carry them (Kafka's tool then prints `N/A`).
    pub elr: Option<Vec<i32>>,
    /// Last known eligible leader replicas; `None` as for `elr`.
    pub last_known_elr: Option<Vec<i32>>,
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

/// DescribeConfigs' DEFAULT_CONFIG source.
const DEFAULT_CONFIG: i8 = 5;
/// DescribeConfigs' resource type for topics.
const TOPIC_RESOURCE: i8 = 2;

/// A per-topic outcome of CreateTopics or DeleteTopics.
pub type TopicOutcome = (String, Result<()>);

/// Splits `host:port[,host:port...]`. Spaces around entries are ignored, as Kafka does.
pub fn parse_bootstrap(servers: &str) -> Result<Vec<(String, u16)>> {
    let mut out = Vec::new();
    for entry in servers.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let invalid = || RemoteError::InvalidBootstrap(entry.to_string());
        // Kafka accepts a listener prefix (`SASL_SSL://host:9093`), as the producer's check does.
        let hostport = entry.split_once("://").map_or(entry, |(_, rest)| rest);
        let (host, port) = hostport.rsplit_once(':').ok_or_else(invalid)?;
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
    /// The bootstrap list, to connect again after the connection was lost.
    servers: String,
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
            // This attempt's share of the deadline; the connection keeps the user's settings.
            let connect_timeout = config.connect_timeout.min(remaining);
            let resolved = match tokio::time::timeout(
                connect_timeout,
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
                match Connection::open(&name, socket, &config, connect_timeout).await {
                    Ok(conn) => {
                        return Ok(Client {
                            conn,
                            servers: servers.to_string(),
                        });
                    }
                    Err(ConnectFailure::Unreachable(r)) => reason = r,
                    // Settings to fix and refused credentials: trying on would not help.
                    Err(ConnectFailure::Handshake(e)) if e.is_security() => return Err(e),
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

    /// The bootstrap connection, connecting again (to the first server of the bootstrap list
    /// that answers) when a failure left it unusable: a broker that restarted, say.
    pub(crate) async fn live_connection(&mut self) -> Result<&mut Connection> {
        if !self.conn.is_usable() {
            let config = self.conn.config().clone();
            self.conn = Client::connect(&self.servers, config).await?.conn;
        }
        Ok(&mut self.conn)
    }

    /// The bootstrap connection, for the requests of other modules (Produce, InitProducerId).
    pub(crate) fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The address of the broker this client talks to.
    pub fn addr(&self) -> &str {
        self.conn.addr()
    }

    /// Metadata for all topics (`None`) or the named ones. Never creates topics.
    pub async fn metadata(&mut self, topics: Option<&[String]>) -> Result<ClusterMetadata> {
        self.metadata_creating(topics, false).await
    }

    /// Metadata, asking the broker to create missing named topics when `auto_create` (as a
    /// consumer with `allow.auto.create.topics` does; the broker's `auto.create.topics.enable`
    /// decides).
    pub async fn metadata_creating(
        &mut self,
        topics: Option<&[String]>,
        auto_create: bool,
    ) -> Result<ClusterMetadata> {
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
            .with_allow_auto_topic_creation(auto_create);
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
                        elr: None,
                        last_known_elr: None,
                    })
                    .collect();
                partitions.sort_by_key(|p| p.partition);
                Some(TopicInfo {
                    name,
                    id: uuid_to_string(t.topic_id.as_bytes()),
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
        let answered = response.topics.iter().map(|r| {
            let outcome = RemoteError::check(r.error_code, r.error_message.as_deref());
            (r.name.0.to_string(), outcome)
        });
        Ok(self.in_request_order(
            "CreateTopics",
            topics.iter().map(|t| t.name.as_str()),
            answered,
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
        let answered = response.responses.iter().map(|r| {
            let outcome = RemoteError::check(r.error_code, r.error_message.as_deref());
            (
                r.name.as_ref().map(|n| n.0.to_string()).unwrap_or_default(),
                outcome,
            )
        });
        Ok(self.in_request_order("DeleteTopics", names.iter().map(String::as_str), answered))
    }

    /// The named topics with their partitions and eligible leader replicas, through
    /// DescribeTopicPartitions (pages of at most `page_limit` partitions, followed by cursor),
    /// or Metadata on a broker without it (ELR then `None`), as Kafka's admin client does.
    /// Sorted by name; a topic the broker could not describe carries its error code.
    pub async fn describe_topics(
        &mut self,
        names: &[String],
        page_limit: i32,
    ) -> Result<Vec<TopicInfo>> {
        let Ok(version) = self.conn.version::<DescribeTopicPartitionsRequest>() else {
            let mut topics = self.metadata(Some(names)).await?.topics;
            topics.retain(|t| names.contains(&t.name));
            return Ok(topics);
        };
        let mut topics: Vec<TopicInfo> = Vec::new();
        let mut cursor: Option<describe_topic_partitions_request::Cursor> = None;
        loop {
            let request = DescribeTopicPartitionsRequest::default()
                .with_topics(
                    names
                        .iter()
                        .map(|n| TopicRequest::default().with_name(topic_name(n)))
                        .collect(),
                )
                .with_response_partition_limit(page_limit)
                .with_cursor(cursor.take());
            let response = self.conn.send(&request, version).await?;
            for t in &response.topics {
                let name = t.name.as_ref().map(|n| n.0.to_string()).unwrap_or_default();
                let partitions = t.partitions.iter().map(|p| PartitionInfo {
                    partition: p.partition_index,
                    leader: p.leader_id.0,
                    leader_epoch: p.leader_epoch,
                    replicas: ids(&p.replica_nodes),
                    isr: ids(&p.isr_nodes),
                    offline: ids(&p.offline_replicas),
                    error_code: p.error_code,
                    elr: p.eligible_leader_replicas.as_deref().map(ids),
                    last_known_elr: p.last_known_elr.as_deref().map(ids),
                });
                match topics.iter_mut().find(|known| known.name == name) {
                    // The continuation of a topic split across pages.
                    Some(known) => known.partitions.extend(partitions),
                    None => topics.push(TopicInfo {
                        name,
                        id: uuid_to_string(t.topic_id.as_bytes()),
                        internal: t.is_internal,
                        error_code: t.error_code,
                        partitions: partitions.collect(),
                    }),
                }
            }
            match response.next_cursor {
                Some(next) => {
                    cursor = Some(
                        describe_topic_partitions_request::Cursor::default()
                            .with_topic_name(next.topic_name)
                            .with_partition_index(next.partition_index),
                    );
                }
                None => break,
            }
        }
        for t in &mut topics {
            t.partitions.sort_by_key(|p| p.partition);
            t.partitions.dedup_by_key(|p| p.partition);
        }
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(topics)
    }

    /// The config entries of each named topic, in the broker's order (defaults included, with
    /// `is_default` set); per topic, the broker's error when it could not describe it.
    pub async fn describe_configs(
        &mut self,
        names: &[String],
    ) -> Result<Vec<(String, Result<Vec<ConfigEntry>>)>> {
        let version = self.conn.version::<DescribeConfigsRequest>()?;
        let request = DescribeConfigsRequest::default().with_resources(
            names
                .iter()
                .map(|n| {
                    DescribeConfigsResource::default()
                        .with_resource_type(TOPIC_RESOURCE)
                        .with_resource_name(StrBytes::from_string(n.clone()))
                        .with_configuration_keys(None)
                })
                .collect(),
        );
        let response = self.conn.send(&request, version).await?;
        Ok(response
            .results
            .iter()
            .map(|r| {
                let outcome = match r.error_code {
                    0 => Ok(r
                        .configs
                        .iter()
                        .map(|c| ConfigEntry {
                            name: c.name.to_string(),
                            value: c.value.as_ref().map(|v| v.to_string()),
                            is_default: c.config_source == DEFAULT_CONFIG,
                        })
                        .collect()),
                    code => Err(RemoteError::broker(
                        code,
                        r.error_message.as_ref().map(|m| m.as_str()),
                    )),
                };
                (r.resource_name.to_string(), outcome)
            })
            .collect())
    }

    /// The ids of the live (unfenced) brokers, sorted: DescribeCluster, or Metadata's brokers
    /// on a broker without it.
    pub async fn live_brokers(&mut self) -> Result<Vec<i32>> {
        let Ok(version) = self.conn.version::<DescribeClusterRequest>() else {
            return Ok(self
                .metadata(Some(&[]))
                .await?
                .brokers
                .iter()
                .map(|b| b.id)
                .collect());
        };
        let response = self
            .conn
            .send(&DescribeClusterRequest::default(), version)
            .await?;
        if response.error_code != 0 {
            return Err(RemoteError::broker(
                response.error_code,
                response.error_message.as_ref().map(|m| m.as_str()),
            ));
        }
        let mut live: Vec<i32> = response
            .brokers
            .iter()
            .filter(|b| !b.is_fenced)
            .map(|b| b.broker_id.0)
            .collect();
        live.sort();
        Ok(live)
    }

    /// Raises each topic's partition count to its `count`, with the replicas of the new
    /// partitions when given; the outcome of each, in request order.
    pub async fn create_partitions(
        &mut self,
        increases: &[PartitionIncrease],
    ) -> Result<Vec<TopicOutcome>> {
        let version = self.conn.version::<CreatePartitionsRequest>()?;
        let request = CreatePartitionsRequest::default()
            .with_timeout_ms(self.timeout_ms())
            .with_topics(
                increases
                    .iter()
                    .map(|i| {
                        CreatePartitionsTopic::default()
                            .with_name(topic_name(&i.name))
                            .with_count(i.count)
                            .with_assignments(i.assignments.as_ref().map(|a| {
                                a.iter()
                                    .map(|brokers| {
                                        CreatePartitionsAssignment::default().with_broker_ids(
                                            brokers.iter().map(|b| BrokerId(*b)).collect(),
                                        )
                                    })
                                    .collect()
                            }))
                    })
                    .collect(),
            );
        let response = self.conn.send(&request, version).await?;
        let answered = response.results.iter().map(|r| {
            let outcome = RemoteError::check(r.error_code, r.error_message.as_deref());
            (r.name.0.to_string(), outcome)
        });
        Ok(self.in_request_order(
            "CreatePartitions",
            increases.iter().map(|i| i.name.as_str()),
            answered,
        ))
    }

    /// Applies each topic's config changes (IncrementalAlterConfigs: SET and DELETE); the
    /// outcome of each, in request order.
    pub async fn alter_topic_configs(
        &mut self,
        alterations: &[TopicConfigChanges],
    ) -> Result<Vec<TopicOutcome>> {
        let version = self.conn.version::<IncrementalAlterConfigsRequest>()?;
        let resource =
            |a: &TopicConfigChanges| alterable(&ConfigResource::Topic(a.topic.clone()), &a.changes);
        let request = IncrementalAlterConfigsRequest::default()
            .with_resources(alterations.iter().map(resource).collect());
        let response = self.conn.send(&request, version).await?;
        let answered = response.responses.iter().map(|r| {
            let outcome = RemoteError::check(r.error_code, r.error_message.as_deref());
            (r.resource_name.to_string(), outcome)
        });
        Ok(self.in_request_order(
            "IncrementalAlterConfigs",
            alterations.iter().map(|a| a.topic.as_str()),
            answered,
        ))
    }

    /// [`in_request_order`] for an answer from this client's broker.
    fn in_request_order<'a>(
        &self,
        api: &'static str,
        requested: impl Iterator<Item = &'a str>,
        answered: impl Iterator<Item = TopicOutcome>,
    ) -> Vec<TopicOutcome> {
        in_request_order(requested, answered, self.conn.addr(), api)
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
    answered: impl Iterator<Item = TopicOutcome>,
    addr: &str,
    api: &'static str,
) -> Vec<TopicOutcome> {
    let mut results: Vec<TopicOutcome> = answered.collect();
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
        assert_eq!(
            parse_bootstrap("SASL_SSL://b:9093").unwrap(),
            vec![("b".to_string(), 9093)]
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
