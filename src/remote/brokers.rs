//! The API versions of every broker: the brokers from Metadata, then each broker's ApiVersions
//! answer on a connection of its own, each API annotated with what kafkit can do with it.

use super::admin::Client;
use super::error::Result;
use super::net::connection::connect_broker;
use crate::kafka::brokers::{ApiUsability, ApiVersionSupport, BrokerNode};
use crate::wire::api::{api_name, sent_keys, sent_versions};
use crate::wire::versions::BrokerVersions;

impl Client {
    /// Every broker (by id) with its APIs, by ascending key, or why it could not be asked.
    pub async fn broker_api_versions(
        &mut self,
    ) -> Result<Vec<(BrokerNode, Result<Vec<ApiVersionSupport>>)>> {
        // No topics: only the brokers are wanted.
        let meta = self.metadata(Some(&[])).await?;
        let config = self.conn.config().clone();
        let mut out = Vec::with_capacity(meta.brokers.len());
        for b in meta.brokers {
            let apis = connect_broker(b.id, &b.host, b.port, &config)
                .await
                .map(|conn| annotate(conn.broker_versions()));
            let node = BrokerNode {
                id: b.id,
                host: b.host,
                port: b.port,
                rack: b.rack,
            };
            out.push((node, apis));
        }
        Ok(out)
    }
}

/// The broker's APIs with kafkit's use of each, plus the APIs kafkit sends that the broker
/// does not advertise, by ascending key (as Kafka's `NodeApiVersions` lists its own).
fn annotate(broker: &BrokerVersions) -> Vec<ApiVersionSupport> {
    let mut out: Vec<ApiVersionSupport> = broker
        .all()
        .into_iter()
        .map(|(key, range)| {
            let name = api_name(key);
            let usability = name.as_ref().map(|_| match sent_versions(key) {
                None => ApiUsability::NotUsed,
                Some(ours) if ours.max < range.min => ApiUsability::NodeTooNew,
                Some(ours) if range.max < ours.min => ApiUsability::NodeTooOld,
                Some(ours) => ApiUsability::Usable(ours.max.min(range.max)),
            });
            ApiVersionSupport {
                key,
                name,
                versions: Some((range.min, range.max)),
                usability,
            }
        })
        .collect();
    for key in sent_keys() {
        if broker.get(key).is_none() {
            out.push(ApiVersionSupport {
                key,
                name: api_name(key),
                versions: None,
                usability: None,
            });
        }
    }
    out.sort_by_key(|a| a.key);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_follow_kafka_rules_with_our_versions() {
        // Metadata: ours 4..=12. ListOffsets: ours 1..=11. 74: never sent. 1000: unknown.
        let broker = BrokerVersions::new([
            (3, 0, 13),
            (2, 12, 13),
            (74, 0, 1),
            (1000, 0, 2),
            (18, 0, 4),
        ]);
        let apis = annotate(&broker);
        let find = |key: i16| apis.iter().find(|a| a.key == key).unwrap();
        assert_eq!(find(3).usability, Some(ApiUsability::Usable(12)));
        assert_eq!(find(2).usability, Some(ApiUsability::NodeTooNew));
        assert_eq!(find(74).usability, Some(ApiUsability::NotUsed));
        assert_eq!(find(74).name.as_deref(), Some("ListConfigResources"));
        assert_eq!(
            (find(1000).name.clone(), find(1000).usability),
            (None, None)
        );
        // Produce is sent by kafkit but not advertised here.
        assert_eq!(find(0).versions, None);
        assert_eq!(find(0).name.as_deref(), Some("Produce"));
        let keys: Vec<i16> = apis.iter().map(|a| a.key).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    }

    #[test]
    fn a_broker_older_than_our_floor_is_too_old() {
        // OffsetFetch: ours 8..=9.
        let broker = BrokerVersions::new([(9, 1, 7)]);
        let apis = annotate(&broker);
        let find = |key: i16| apis.iter().find(|a| a.key == key).unwrap();
        assert_eq!(find(9).usability, Some(ApiUsability::NodeTooOld));
    }
}
