//! The brokers of a cluster and the API versions each one supports, with the version kafkit
//! would use of each (what `kafka-broker-api-versions` prints). The embedded log has no broker
//! to ask.

use super::{Backend, Client, ClientError, Result};
pub use crate::kafka::brokers::{ApiUsability, ApiVersionSupport, BrokerNode};

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
