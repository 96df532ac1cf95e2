//! kafkit's producer as a library, for tests that must hold batches in flight (their answers
//! unread) at a chosen moment: the console producer reads its answers as they come.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafkit::client::{
    BatchSettings, Client, ConnectOptions, Producer, ProducerRecord, ProducerSettings,
};
use kafkit::record::Compression;

/// An idempotent producer (acks=all, 5 requests in flight) for `topic` on the cluster at
/// `bootstrap`.
pub fn idempotent(bootstrap: &str, topic: &str) -> Producer {
    producer(Some(bootstrap), None, topic, None)
}

/// A transactional producer of `id` for `topic`: on the cluster at `bootstrap`, or on the
/// embedded log at `log_dir`.
pub fn transactional(
    bootstrap: Option<&str>,
    log_dir: Option<&std::path::Path>,
    topic: &str,
    id: &str,
) -> Producer {
    producer(bootstrap, log_dir, topic, Some(id))
}

fn producer(
    bootstrap: Option<&str>,
    log_dir: Option<&std::path::Path>,
    topic: &str,
    transactional_id: Option<&str>,
) -> Producer {
    let client = Client::open(&ConnectOptions {
        bootstrap_servers: bootstrap.map(str::to_string),
        log_dir: log_dir.map(std::path::Path::to_path_buf),
        properties: [("request.timeout.ms".to_string(), "10000".to_string())].into(),
    })
    .expect("connects");
    let batching = BatchSettings {
        compression: Compression::None,
        batch_size: 16384,
        batch_size_given: true,
        max_request_size: 1_048_576,
    };
    let delivery = ProducerSettings {
        acks: -1,
        retries: 10,
        retry_backoff: Duration::from_millis(100),
        max_block: Duration::from_secs(60),
        idempotence: true,
        max_in_flight: 5,
        delivery_timeout: Duration::from_secs(120),
        transactional_id: transactional_id.map(str::to_string),
        transaction_timeout_ms: 60_000,
    };
    client.into_producer(topic, batching, delivery)
}

/// Sends `value` to partition 0.
pub fn send(producer: &mut Producer, value: &str) {
    let record = ProducerRecord {
        key: None,
        value: Some(value.as_bytes()),
        headers: &[],
        timestamp: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_millis() as i64,
        partition: Some(0),
    };
    producer.send(record).expect("send");
}

/// Sends `value` to partition 0 as a batch of its own, without waiting for its answer.
pub fn send_alone(producer: &mut Producer, value: &str) {
    let record = ProducerRecord {
        key: None,
        value: Some(value.as_bytes()),
        headers: &[],
        // Now: a broker forgets, as expired, producers whose last batch is older than
        // producer.id.expiration.ms (a day) when it restarts.
        timestamp: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_millis() as i64,
        partition: Some(0),
    };
    producer.send(record).expect("send");
    producer.send_lingered().expect("hand over");
}
