//! `kafka-configs --bootstrap-server` on group and broker configs, which only a real Kafka
//! broker has (`kafka-server-start` serves topic configs alone), so these run in the `remote`
//! binary only, with Kafka's `ConfigCommand` as the oracle as in `configs`.
//!
//! The broker is shared: only this test's groups are named, and the broker default altered
//! (`log.cleaner.backoff.ms`) is one no topic config falls back to.

use crate::common::broker;
use crate::configs::{TOOL, same, same_error};

#[test]
fn group_and_broker_configs_match_kafkas_tool() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let p = broker::unique_topic("configs-group");
    same(&["--describe", "--group", "{}"], Some(&p));
    same(
        &[
            "--alter",
            "--group",
            "{}",
            "--add-config",
            "consumer.session.timeout.ms=50000",
        ],
        Some(&p),
    );
    same(&["--describe", "--group", "{}"], Some(&p));
    same(&["--describe", "--group", "{}", "--all"], Some(&p));
    same(
        &[
            "--alter",
            "--entity-type",
            "groups",
            "--entity-name",
            "{}",
            "--delete-config",
            "consumer.session.timeout.ms",
        ],
        Some(&p),
    );
    same(&["--describe", "--group", "{}"], Some(&p));

    let out = broker::ok(
        TOOL,
        &[
            "--alter",
            "--broker-defaults",
            "--add-config",
            "log.cleaner.backoff.ms=15001",
        ],
        None,
    );
    assert_eq!(
        out,
        "Completed updating default config for brokers in the cluster.\n"
    );
    wait_for_broker_defaults(|d| d.contains("log.cleaner.backoff.ms=15001"));
    let described = same(
        &["--describe", "--entity-type", "brokers", "--entity-default"],
        None,
    );
    assert!(described.contains("  log.cleaner.backoff.ms=15001 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.backoff.ms=15001}\n"), "{described}");
    same(&["--describe", "--entity-type", "brokers"], None);
    same(&["--describe", "--broker", "1", "--all"], None);
    same(&["--describe", "--broker", "7"], None);
    let out = broker::ok(
        TOOL,
        &[
            "--alter",
            "--broker-defaults",
            "--delete-config",
            "log.cleaner.backoff.ms",
        ],
        None,
    );
    assert_eq!(
        out,
        "Completed updating default config for brokers in the cluster.\n"
    );
    wait_for_broker_defaults(|d| !d.contains("log.cleaner.backoff.ms"));
    same(&["--describe", "--broker-defaults"], None);
    same_error(
        &[
            "--alter",
            "--broker-defaults",
            "--add-config",
            "num.partitions=3",
        ],
        &p,
    );
}

/// A broker applies a dynamic config change through its metadata log, a moment after it
/// answers: waits (up to 60 s) until its default configs, as our tool describes them, pass
/// `shown`, so that both tools then describe the same state.
fn wait_for_broker_defaults(shown: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !shown(&broker::ok(
        TOOL,
        &["--describe", "--broker-defaults"],
        None,
    )) && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
