//! Produces records and reads them back with the same code on the embedded log and on a
//! Kafka cluster: kafkit used as a Rust library.
//!
//! ```sh
//! cargo run --example roundtrip                                  # a fresh embedded log
//! cargo run --example roundtrip -- --log-dir /tmp/kafkit-demo    # a log dir of your choice
//! cargo run --example roundtrip -- --bootstrap-server localhost:9092
//! ```
//!
//! It creates a topic of three partitions, sends 1,000 keyed records, reads them all back
//! from the beginning and checks that each came back once, in order per partition, and that
//! the partitions' log offsets account for all of them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafkit::client::consumer::{ConsumerConfig, Handled, Isolation, OffsetReset, Subscription};
use kafkit::client::offsets::OffsetSpec;
use kafkit::client::{
    BatchSettings, Client, ConnectOptions, NewTopic, ProducerRecord, ProducerSettings,
};
use kafkit::record::Compression;

const RECORDS: usize = 1000;

fn main() -> std::process::ExitCode {
    match roundtrip() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roundtrip: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn roundtrip() -> Result<(), Box<dyn std::error::Error>> {
    // The scratch log dir, if any, is removed when this returns, failed or not.
    let (options, _scratch) = connect_options()?;
    let topic = format!("roundtrip-{}", now_ms());

    // Create the topic: the same call creates it on the embedded log or on a cluster.
    let mut admin = Client::open(&options)?;
    let new_topic = NewTopic {
        name: topic.clone(),
        partitions: Some(3),
        ..NewTopic::default()
    };
    for (name, outcome) in admin.create_topics(&[new_topic])? {
        outcome.map_err(|e| format!("cannot create {name}: {e}"))?;
    }

    // Produce: records are batched per partition and made durable (or acknowledged) at flush.
    let mut producer = Client::open(&options)?.into_producer(
        &topic,
        BatchSettings {
            compression: Compression::Lz4,
            batch_size: 16_384,
            batch_size_given: false,
            max_request_size: 1_048_576,
        },
        ProducerSettings {
            acks: -1,
            retries: 3,
            retry_backoff: Duration::from_millis(100),
            max_block: Duration::from_secs(60),
            idempotence: true,
            max_in_flight: 5,
            delivery_timeout: Duration::from_secs(120),
            // No transactions: Producer::commit_transaction is a no-op then.
            transactional_id: None,
            transaction_timeout_ms: 60_000,
        },
    );
    for i in 0..RECORDS {
        let key = format!("key-{}", i % 10);
        let value = format!("value-{i}");
        producer.send(ProducerRecord {
            key: Some(key.as_bytes()),
            value: Some(value.as_bytes()),
            headers: &[],
            timestamp: now_ms(),
            partition: None,
        })?;
    }
    producer.close()?;

    check_offsets(&mut admin, &topic)?;

    let by_partition = read_back(&options, &topic)?;

    let total: usize = by_partition.values().map(Vec::len).sum();
    if total != RECORDS {
        return Err(format!("read {total} records back, expected {RECORDS}").into());
    }
    for (partition, values) in &by_partition {
        if !values.windows(2).all(|w| w[0] < w[1]) {
            return Err(format!("partition {partition} is out of order").into());
        }
    }
    let counts: Vec<String> = by_partition
        .iter()
        .map(|(p, v)| format!("{p}: {}", v.len()))
        .collect();
    println!(
        "{RECORDS} records through topic {topic} and back, in order per partition ({})",
        counts.join(", ")
    );
    Ok(())
}

/// Consumes `topic` from the beginning until every partition reaches the end it had at the
/// start; the values' numbers by partition, in the order read.
fn read_back(
    options: &ConnectOptions,
    topic: &str,
) -> Result<BTreeMap<i32, Vec<usize>>, Box<dyn std::error::Error>> {
    let mut consumer = Client::open(options)?.into_consumer(ConsumerConfig {
        subscription: Subscription::Topic(topic.to_string()),
        reset: OffsetReset::Earliest,
        isolation: Isolation::ReadUncommitted,
        from_time: None,
        until_end: true,
        until_time: None,
        group: None,
        allow_auto_create_topics: true,
    })?;
    let mut by_partition: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let round = consumer.poll(|r| {
            let value = String::from_utf8_lossy(r.record.value.unwrap_or_default());
            let i: usize = value
                .trim_start_matches("value-")
                .parse()
                .unwrap_or(usize::MAX);
            by_partition.entry(r.partition).or_default().push(i);
            Handled {
                output_end: 0,
                delivered: true,
                stop: false,
            }
        })?;
        consumer.settle(0);
        if round.done {
            break;
        }
        if Instant::now() > deadline {
            return Err("timed out reading the records back".into());
        }
        if !round.read {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    consumer.close()?;
    Ok(by_partition)
}

/// The partitions' log offsets account for every record sent: the ends add up to
/// [`RECORDS`], every start is 0, and a fourth partition does not exist.
fn check_offsets(admin: &mut Client, topic: &str) -> Result<(), Box<dyn std::error::Error>> {
    let partitions: Vec<(String, i32)> = (0..4).map(|p| (topic.to_string(), p)).collect();
    let ends = admin.list_offsets(&partitions, OffsetSpec::Latest)?;
    let starts = admin.list_offsets(&partitions[..3], OffsetSpec::Earliest)?;
    let sent: i64 = partitions[..3]
        .iter()
        .map(|tp| ends[tp].as_ref().map_or(0, |end| end.unwrap_or(0)))
        .sum();
    if sent != RECORDS as i64 || starts.values().any(|s| !matches!(s, Ok(Some(0)))) {
        return Err(
            format!("log offsets {starts:?} to {ends:?} do not hold {RECORDS} records").into(),
        );
    }
    if ends[&partitions[3]].is_ok() {
        return Err("partition 3 should not exist".into());
    }
    Ok(())
}

/// `--bootstrap-server HOST:PORT` for a cluster, `--log-dir DIR` for an embedded log;
/// without either, a fresh embedded log in a temporary directory (removed at the end).
fn connect_options() -> Result<(ConnectOptions, Option<tempfile::TempDir>), String> {
    let mut options = ConnectOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--bootstrap-server" => options.bootstrap_servers = Some(value),
            "--log-dir" => options.log_dir = Some(value.into()),
            other => return Err(format!("unknown option {other}")),
        }
    }
    let mut scratch = None;
    if options.bootstrap_servers.is_none() && options.log_dir.is_none() {
        let dir = tempfile::Builder::new()
            .prefix("kafkit-roundtrip-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary log dir: {e}"))?;
        options.log_dir = Some(dir.path().join("log"));
        scratch = Some(dir);
    }
    Ok((options, scratch))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
