//! Entity configs on a cluster: DescribeConfigs (with synonyms) and IncrementalAlterConfigs
//! for one topic, broker, broker-defaults or group resource, as `kafka-configs` uses them.

use kafka_protocol::ResponseError;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{DescribeConfigsRequest, IncrementalAlterConfigsRequest};
use kafka_protocol::protocol::StrBytes;

use super::Cluster;
use super::admin::Client;
use super::error::{RemoteError, Result};
use super::net::connection::{Connection, connect_broker};
use crate::kafka::configs::{
    ConfigChange, ConfigResource, ConfigSource, ConfigSynonym, DescribedConfig,
};

/// IncrementalAlterConfigs' operations.
const SET_CONFIG: i8 = 0;
const DELETE_CONFIG: i8 = 1;

impl Client {
    /// Every config of the resource with its source and synonyms, in the broker's order.
    pub async fn describe_resource_configs(
        &mut self,
        resource: &ConfigResource,
    ) -> Result<Vec<DescribedConfig>> {
        let mut named = self.broker_connection(resource).await?;
        let conn = named.as_mut().unwrap_or(&mut self.conn);
        let version = conn.version::<DescribeConfigsRequest>()?;
        let (resource_type, name) = resource.wire();
        let request = DescribeConfigsRequest::default()
            .with_include_synonyms(true)
            .with_resources(vec![
                DescribeConfigsResource::default()
                    .with_resource_type(resource_type)
                    .with_resource_name(StrBytes::from_string(name))
                    .with_configuration_keys(None),
            ]);
        let response = conn.send(&request, version).await?;
        let Some(result) = response.results.first() else {
            return Err(RemoteError::Protocol {
                addr: conn.addr().to_string(),
                api: "DescribeConfigs",
                reason: "the answer names no resource".to_string(),
            });
        };
        RemoteError::check(result.error_code, result.error_message.as_deref())?;
        Ok(result
            .configs
            .iter()
            .map(|c| DescribedConfig {
                name: c.name.to_string(),
                value: c.value.as_ref().map(|v| v.to_string()),
                source: ConfigSource::from_code(c.config_source),
                sensitive: c.is_sensitive,
                read_only: c.read_only,
                synonyms: c
                    .synonyms
                    .iter()
                    .map(|s| ConfigSynonym {
                        name: s.name.to_string(),
                        value: s.value.as_ref().map(|v| v.to_string()),
                        source: ConfigSource::from_code(s.source),
                    })
                    .collect(),
            })
            .collect())
    }

    /// Applies the changes to the resource's configs (SET and DELETE), all or none.
    pub async fn alter_resource_configs(
        &mut self,
        resource: &ConfigResource,
        changes: &[ConfigChange],
    ) -> Result<()> {
        let mut named = self.broker_connection(resource).await?;
        let conn = named.as_mut().unwrap_or(&mut self.conn);
        let version = conn.version::<IncrementalAlterConfigsRequest>()?;
        let request = IncrementalAlterConfigsRequest::default()
            .with_resources(vec![alterable(resource, changes)]);
        let response = conn.send(&request, version).await?;
        match response.responses.first() {
            Some(r) => RemoteError::check(r.error_code, r.error_message.as_deref()),
            None => Err(RemoteError::Protocol {
                addr: conn.addr().to_string(),
                api: "IncrementalAlterConfigs",
                reason: "the answer names no resource".to_string(),
            }),
        }
    }
}

impl Client {
    /// A connection to the broker a BROKER resource names: a broker answers only for its own
    /// configs, so they are asked of it, as Kafka's admin client does. `None`: any broker
    /// answers (topics, groups, the cluster-wide broker defaults).
    async fn broker_connection(&mut self, resource: &ConfigResource) -> Result<Option<Connection>> {
        let ConfigResource::Broker(id) = resource else {
            return Ok(None);
        };
        let meta = self.metadata(Some(&[])).await?;
        let Some(broker) = meta.brokers.iter().find(|b| b.id == *id) else {
            return Err(RemoteError::Broker {
                code: ResponseError::BrokerNotAvailable.code(),
                message: format!("broker {id} is not in the cluster's metadata"),
            });
        };
        let config = self.conn.config().clone();
        Ok(Some(
            connect_broker(broker.id, &broker.host, broker.port, &config).await?,
        ))
    }
}

/// One resource's changes as IncrementalAlterConfigs carries them (SET and DELETE).
pub(super) fn alterable(
    resource: &ConfigResource,
    changes: &[ConfigChange],
) -> AlterConfigsResource {
    let (resource_type, name) = resource.wire();
    let configs = changes.iter().map(|change| {
        let (operation, value) = match change {
            ConfigChange::Set { value, .. } => (SET_CONFIG, Some(value.clone())),
            ConfigChange::Delete { .. } => (DELETE_CONFIG, None),
        };
        AlterableConfig::default()
            .with_name(StrBytes::from_string(change.name().to_string()))
            .with_config_operation(operation)
            .with_value(value.map(StrBytes::from_string))
    });
    AlterConfigsResource::default()
        .with_resource_type(resource_type)
        .with_resource_name(StrBytes::from_string(name))
        .with_configs(configs.collect())
}

impl Cluster {
    /// What the client API's `Client::describe_resource_configs` does on a cluster.
    pub fn describe_resource_configs(
        &mut self,
        resource: &ConfigResource,
    ) -> Result<Vec<DescribedConfig>> {
        self.runtime
            .block_on(self.client.describe_resource_configs(resource))
    }

    /// What the client API's `Client::alter_resource_configs` does on a cluster.
    pub fn alter_resource_configs(
        &mut self,
        resource: &ConfigResource,
        changes: &[ConfigChange],
    ) -> Result<()> {
        self.runtime
            .block_on(self.client.alter_resource_configs(resource, changes))
    }
}
