//! The brokers of a cluster and the API versions each one supports, with the version kafkit
//! would use of each (what `kafka-broker-api-versions` prints). The embedded log has no broker
//! to ask.

use super::{Backend, Client, ClientError, Result};

/// A broker, as the cluster's metadata names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerNode {
    pub id: i32,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
}

/// Whether kafkit can use an API the broker advertises, and at which version (Kafka's
/// `NodeApiVersions` annotations, for kafkit's own client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiUsability {
    /// The highest version both sides speak.
    Usable(i16),
    /// The broker's oldest version is newer than kafkit's newest.
    NodeTooNew,
    /// The broker's newest version is older than kafkit's oldest.
    NodeTooOld,
    /// kafkit never sends this API.
    NotUsed,
}

/// One API of a broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiVersionSupport {
    pub key: i16,
    /// Kafka's name of the API; `None` for a key kafkit does not know.
    pub name: Option<String>,
    /// The broker's `(min, max)` versions; `None` for an API kafkit sends that the broker does
    /// not advertise.
    pub versions: Option<(i16, i16)>,
    /// `None` for an API kafkit does not know, and for one the broker does not advertise.
    pub usability: Option<ApiUsability>,
}

/// One broker's answer: its APIs by ascending key, or why it could not be asked.
#[derive(Debug)]
pub struct BrokerApiVersions {
    pub node: BrokerNode,
    pub apis: Result<Vec<ApiVersionSupport>>,
}

impl Client {
    /// Every broker of the cluster (by id) with the API versions it advertises, asked with an
    /// ApiVersions request on a connection of its own. The embedded log has no broker:
    /// [`ClientError::NoBroker`].
    pub fn broker_api_versions(&mut self) -> Result<Vec<BrokerApiVersions>> {
        match &mut self.backend {
            Backend::Local(_) => Err(ClientError::NoBroker),
            Backend::Remote(cluster) => Ok(cluster
                .broker_api_versions()?
                .into_iter()
                .map(|(node, apis)| BrokerApiVersions {
                    node,
                    apis: apis.map_err(ClientError::from),
                })
                .collect()),
        }
    }
}
