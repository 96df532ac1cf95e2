//! Transaction admin for `kafka-transactions`, the same on both backends: the transactional
//! ids and their transactions, a partition's active producers, aborting one producer's
//! transaction on a partition, and fencing a transactional id's producers.

use kafka_protocol::ResponseError;

use super::{Backend, Client, ClientError, Result, TopicPattern};
use crate::kafka::TopicPartition;
use crate::kafka::transactions::{
    AbortSpec, ProducerDescription, TransactionDescription, TransactionFilter, TransactionListing,
};
use crate::local::logdir::LOCAL_NODE_ID;

/// The transaction timeout a fence gives the id (Kafka's Admin client sends its request
/// timeout, 30 s by default).
const FENCE_TIMEOUT_MS: i32 = 30_000;

impl Client {
    /// The transactional ids that pass `filter`, with their coordinators.
    pub fn list_transactions(
        &mut self,
        filter: &TransactionFilter,
    ) -> Result<Vec<TransactionListing>> {
        match &mut self.backend {
            Backend::Local(dir) => {
                let pattern = match &filter.pattern {
                    Some(p) => Some(TopicPattern::whole_names(p).map_err(|why| {
                        ClientError::kafka(
                            ResponseError::InvalidRegularExpression,
                            format!("the transactional id pattern '{p}' is not a regular expression: {why}"),
                        )
                    })?),
                    None => None,
                };
                let matches = |id: &str| pattern.as_ref().is_none_or(|p| p.is_match(id));
                Ok(crate::local::txn_admin::list_transactions(
                    dir, filter, matches,
                )?)
            }
            Backend::Remote(cluster) => Ok(cluster.list_transactions(filter)?),
        }
    }

    /// Transactional id `id` as its coordinator describes it; `None` if it does not know it.
    pub fn describe_transaction(&mut self, id: &str) -> Result<Option<TransactionDescription>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(crate::local::txn_admin::describe_transaction(dir, id)?),
            Backend::Remote(cluster) => Ok(cluster.describe_transaction(id)?),
        }
    }

    /// The active producers of a partition, from its leader or from broker `broker`.
    pub fn describe_producers(
        &mut self,
        tp: &TopicPartition,
        broker: Option<i32>,
    ) -> Result<Vec<ProducerDescription>> {
        match &mut self.backend {
            Backend::Local(dir) => {
                if let Some(id) = broker.filter(|&id| id != LOCAL_NODE_ID) {
                    return Err(ClientError::kafka(
                        ResponseError::BrokerNotAvailable,
                        format!(
                            "broker {id} is not in the cluster: the embedded log is broker {LOCAL_NODE_ID}"
                        ),
                    ));
                }
                Ok(crate::local::txn_admin::describe_producers(dir, tp)?)
            }
            Backend::Remote(cluster) => Ok(cluster.describe_producers(tp, broker)?),
        }
    }

    /// Writes an ABORT marker for one producer's transaction on one partition.
    pub fn abort_transaction(&mut self, spec: &AbortSpec) -> Result<()> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(crate::local::txn_admin::abort_transaction(dir, spec)?),
            Backend::Remote(cluster) => Ok(cluster.abort_transaction(spec)?),
        }
    }

    /// Fences the producers of transactional id `id`: a new epoch, and its open transaction
    /// aborted.
    pub fn fence_producers(&mut self, id: &str) -> Result<()> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(crate::local::txn_admin::fence_producers(
                dir,
                id,
                FENCE_TIMEOUT_MS,
            )?),
            Backend::Remote(cluster) => Ok(cluster.fence_producers(id)?),
        }
    }

    /// The partitions broker `id` leads (on the embedded log, every one for its broker).
    pub fn partitions_led_by(&mut self, id: i32) -> Result<Vec<TopicPartition>> {
        match &mut self.backend {
            Backend::Local(dir) => {
                if id != LOCAL_NODE_ID {
                    return Ok(Vec::new());
                }
                let mut out = Vec::new();
                for name in dir.topic_names()? {
                    if let Some(meta) = dir.topic(&name)? {
                        out.extend((0..meta.partitions as i32).map(|p| (name.clone(), p)));
                    }
                }
                Ok(out)
            }
            Backend::Remote(cluster) => Ok(cluster.partitions_led_by(id)?),
        }
    }
}
