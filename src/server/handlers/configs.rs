//! DescribeConfigs and IncrementalAlterConfigs for topics, this broker and the broker defaults,
//! through the embedded log's config code (the same as `kafka-configs --log-dir`).

use std::sync::Arc;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{
    DescribeConfigsRequest, DescribeConfigsResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};

use super::{blocking, error_code, str_bytes};
use crate::kafka::configs::{ConfigChange, ConfigResource, DescribedConfig};
use crate::local::LocalError;
use crate::local::configs as local_configs;
use crate::local::logdir::LOCAL_NODE_ID;
use crate::server::broker::Broker;

/// The resource a request names, with this server's id standing for the embedded log's node.
fn resource(broker: &Broker, kind: i8, name: &str) -> Result<ConfigResource, LocalError> {
    match kind {
        2 => Ok(ConfigResource::Topic(name.to_string())),
        4 if name.is_empty() => Ok(ConfigResource::BrokerDefaults),
        4 => match name.parse::<i32>() {
            Ok(id) if id == broker.config.node_id => Ok(ConfigResource::Broker(LOCAL_NODE_ID)),
            Ok(id) => Ok(ConfigResource::Broker(id)),
            Err(_) => Err(LocalError::kafka(
                ResponseError::InvalidRequest,
                format!("Invalid broker id {name}"),
            )),
        },
        32 => Ok(ConfigResource::Group(name.to_string())),
        _ => Err(LocalError::kafka(
            ResponseError::InvalidRequest,
            format!("Unsupported resource type {kind}"),
        )),
    }
}

pub async fn describe(
    broker: &Arc<Broker>,
    _: i16,
    request: DescribeConfigsRequest,
) -> Option<DescribeConfigsResponse> {
    let b = Arc::clone(broker);
    let results = blocking(move || {
        request
            .resources
            .into_iter()
            .map(|r| {
                let entry = DescribeConfigsResult::default()
                    .with_resource_type(r.resource_type)
                    .with_resource_name(r.resource_name.clone());
                let described = resource(&b, r.resource_type, &r.resource_name)
                    .and_then(|res| described(&b, &res));
                match described {
                    Ok(configs) => {
                        let keys = r.configuration_keys.as_ref();
                        let configs = configs
                            .into_iter()
                            .filter(|c| keys.is_none_or(|k| k.iter().any(|k| **k == *c.name)))
                            .map(|c| described_entry(c, request.include_synonyms))
                            .collect();
                        entry.with_configs(configs)
                    }
                    Err(e) => entry
                        .with_error_code(error_code(&e))
                        .with_error_message(Some(str_bytes(e.to_string()))),
                }
            })
            .collect()
    })
    .await;
    Some(DescribeConfigsResponse::default().with_results(results))
}

/// A resource's configs: the log directory's (dynamic ones), and for this broker its own
/// properties under them, sorted by name.
fn described(
    broker: &Broker,
    resource: &ConfigResource,
) -> Result<Vec<DescribedConfig>, LocalError> {
    let mut configs = local_configs::describe(&broker.dir, resource)?;
    if *resource == ConfigResource::Broker(LOCAL_NODE_ID) {
        let dynamic: Vec<String> = configs.iter().map(|c| c.name.clone()).collect();
        configs.extend(
            broker
                .config
                .static_configs(broker.dir.root())
                .into_iter()
                .filter(|c| !dynamic.contains(&c.name)),
        );
        configs.sort_by(|a, b| a.name.cmp(&b.name));
    }
    Ok(configs)
}

fn described_entry(c: DescribedConfig, synonyms: bool) -> DescribeConfigsResourceResult {
    let synonyms = if synonyms {
        c.synonyms
            .iter()
            .map(|s| {
                DescribeConfigsSynonym::default()
                    .with_name(str_bytes(s.name.clone()))
                    .with_value(s.value.clone().map(str_bytes))
                    .with_source(s.source.code())
            })
            .collect()
    } else {
        Vec::new()
    };
    DescribeConfigsResourceResult::default()
        .with_name(str_bytes(c.name))
        .with_value(c.value.map(str_bytes))
        .with_read_only(c.read_only)
        .with_config_source(c.source.code())
        .with_is_sensitive(c.sensitive)
        .with_synonyms(synonyms)
}

pub async fn alter(
    broker: &Arc<Broker>,
    _: i16,
    request: IncrementalAlterConfigsRequest,
) -> Option<IncrementalAlterConfigsResponse> {
    let b = Arc::clone(broker);
    let responses = blocking(move || {
        request
            .resources
            .into_iter()
            .map(|r| {
                let result = resource(&b, r.resource_type, &r.resource_name).and_then(|res| {
                    let changes = r
                        .configs
                        .iter()
                        .map(|c| change(c.config_operation, &c.name, c.value.as_deref()))
                        .collect::<Result<Vec<_>, _>>()?;
                    if request.validate_only {
                        return Ok(());
                    }
                    local_configs::alter_served(&b.dir, &res, &changes)
                });
                let entry = AlterConfigsResourceResponse::default()
                    .with_resource_type(r.resource_type)
                    .with_resource_name(r.resource_name);
                match result {
                    Ok(()) => entry,
                    Err(e) => entry
                        .with_error_code(error_code(&e))
                        .with_error_message(Some(str_bytes(e.to_string()))),
                }
            })
            .collect()
    })
    .await;
    Some(IncrementalAlterConfigsResponse::default().with_responses(responses))
}

/// One IncrementalAlterConfigs operation: 0 set, 1 delete; append and subtract (for list
/// configs) are refused.
fn change(op: i8, name: &str, value: Option<&str>) -> Result<ConfigChange, LocalError> {
    match op {
        0 => Ok(ConfigChange::Set {
            name: name.to_string(),
            value: value.unwrap_or("").to_string(),
        }),
        1 => Ok(ConfigChange::Delete {
            name: name.to_string(),
        }),
        _ => Err(LocalError::kafka(
            ResponseError::InvalidRequest,
            format!(
                "config operation {op} (APPEND or SUBTRACT) on {name} is not supported by kafka-server-start; use SET"
            ),
        )),
    }
}
