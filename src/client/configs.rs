//! Entity configs (`kafka-configs`): describe and alter the configs of a topic, a broker, the
//! brokers' cluster-wide defaults or a group, with the sources and synonyms Kafka reports.
//!
//! A cluster answers with DescribeConfigs and IncrementalAlterConfigs. The embedded log keeps
//! a topic's overrides in its metadata file and the broker defaults in the log dir's
//! `config.properties`; it has no per-broker dynamic configs and no group configs, and says so.

use super::{Backend, Client, ConfigChange, Result};
pub use crate::kafka::configs::{ConfigResource, ConfigSource, ConfigSynonym, DescribedConfig};
use crate::local;

impl Client {
    /// Every config of the entity, with sources and synonyms, in the backend's order.
    pub fn describe_resource_configs(
        &mut self,
        resource: &ConfigResource,
    ) -> Result<Vec<DescribedConfig>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local::configs::describe(dir, resource)?),
            Backend::Remote(cluster) => Ok(cluster.describe_resource_configs(resource)?),
        }
    }

    /// Applies the changes to the entity's configs, all or none. On the embedded log a change
    /// of retention takes effect at once: segments past it are removed.
    pub fn alter_resource_configs(
        &mut self,
        resource: &ConfigResource,
        changes: &[ConfigChange],
    ) -> Result<()> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local::configs::alter(dir, resource, changes)?),
            Backend::Remote(cluster) => Ok(cluster.alter_resource_configs(resource, changes)?),
        }
    }
}
