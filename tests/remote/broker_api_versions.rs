//! `kafka-broker-api-versions` against a real Kafka 4.3.1 broker, compared line for line with
//! Kafka's `BrokerApiVersionsCommand` from the same jars.
//!
//! The broker line and every API's name, key and version range must be Java's. The `usable`
//! annotations are each client's own, so they may differ (docs/differences.md):
//! - where kafkit sends an API it names the version kafkit would use, which is Java's except for
//!   the APIs listed in [`OURS_DIFFER`];
//! - an API kafkit never sends is `[unusable: not used by kafkit]`;
//! - Java also lists its own client's APIs that the broker lacks (`UNSUPPORTED`): kafkit lists
//!   those of the APIs it sends. A Kafka broker has all of those; our server (the `served`
//!   binary) lacks some (SASL, KIP-848), and serves nothing past kafkit's own versions, so
//!   there every usable version is Java's.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::collections::BTreeMap;

use crate::common::broker;
use crate::common::text;

const TOOL: &str = "kafka-broker-api-versions";
const BROKER_API_VERSIONS: &str = "org.apache.kafka.tools.BrokerApiVersionsCommand";

/// APIs kafkit sends at a lower version than Java's client on a 4.3.1 broker: (API, kafkit's
/// usable version, Java's, whether our server advertises more than kafkit sends too). Each cap
/// is explained in src/wire/versions.rs; WriteTxnMarkers v2 and ShareFetch and ShareAcknowledge
/// v2 are newer than the kafka-protocol crate.
const OURS_DIFFER: [(&str, i16, i16, bool); 11] = [
    ("Produce(0)", 12, 13, false),
    ("Fetch(1)", 12, 18, false),
    ("Metadata(3)", 12, 13, false),
    ("OffsetCommit(8)", 9, 10, false),
    ("OffsetFetch(9)", 9, 10, false),
    // Transaction version 1: v4+ are for brokers (our server answers them too).
    ("AddPartitionsToTxn(24)", 3, 5, true),
    ("EndTxn(26)", 4, 5, false),
    ("TxnOffsetCommit(28)", 4, 5, false),
    ("WriteTxnMarkers(27)", 1, 2, false),
    // v2 (RENEW acknowledgements, KIP-1222) is newer than the crate.
    ("ShareFetch(78)", 1, 2, false),
    ("ShareAcknowledge(79)", 1, 2, false),
];

/// Java's client APIs that the test broker does not advertise (telemetry is off).
const JAVA_ONLY_UNSUPPORTED: [&str; 2] = ["GetTelemetrySubscriptions(71)", "PushTelemetry(72)"];

/// One broker's block: its header line, and per API (`Name(key)`) the rest of its line.
fn parse(output: &str) -> (String, BTreeMap<String, String>) {
    let mut lines = output.lines();
    let header = lines.next().expect("a broker line").to_string();
    assert!(header.ends_with(" -> ("), "{header}");
    let mut apis = BTreeMap::new();
    for line in lines {
        if line == ")" {
            break;
        }
        let line = line
            .strip_prefix('\t')
            .unwrap_or_else(|| panic!("{line:?}"));
        let line = line.strip_suffix(',').unwrap_or(line);
        let (api, rest) = line.split_once(": ").expect("Name(key): ...");
        apis.insert(api.to_string(), rest.to_string());
    }
    (header, apis)
}

/// `"0 to 13 [usable: 13]"` -> `("0 to 13", Some("[usable: 13]"))`.
fn split_annotation(rest: &str) -> (&str, Option<&str>) {
    match rest.find(" [") {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    }
}

#[test]
fn output_is_javas_but_for_the_usable_versions() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let ours = broker::ok(TOOL, &[], None);
    let java = broker::java_ok(BROKER_API_VERSIONS, &[]);
    assert!(
        ours.lines()
            .all(|l| l.ends_with(" -> (") || l.starts_with('\t') || l == ")"),
        "{ours}"
    );
    let (our_header, our_apis) = parse(&ours);
    let (java_header, java_apis) = parse(&java);
    assert_eq!(our_header, java_header);
    assert!(our_header.starts_with(&format!("{bootstrap} (id: 1 rack: null isFenced: false)")));
    assert!(ours.ends_with("\n)\n") && java.ends_with("\n)\n"));
    let mut same_usable = 0;
    let mut java_unsupported = Vec::new();
    for (api, java_rest) in &java_apis {
        if java_rest == "UNSUPPORTED" {
            // The broker lacks it: kafkit says so too where it sends it, else omits it.
            if let Some(ours) = our_apis.get(api) {
                assert_eq!(ours, "UNSUPPORTED", "{api}");
            }
            java_unsupported.push(api.as_str());
            continue;
        }
        let our_rest = our_apis.get(api).unwrap_or_else(|| panic!("{api} missing"));
        let (our_range, our_note) = split_annotation(our_rest);
        let (java_range, java_note) = split_annotation(java_rest);
        assert_eq!(our_range, java_range, "{api}");
        let java_usable: i16 = java_note
            .and_then(|n| n.strip_prefix("[usable: "))
            .and_then(|n| n.strip_suffix(']'))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{api}: {java_rest}"));
        // Our server serves none of these past kafkit's own version, so there both clients
        // use the same one.
        let differs = OURS_DIFFER
            .iter()
            .find(|(name, _, _, _)| name == api)
            .filter(|(_, _, _, on_our_server)| *on_our_server || !broker::served());
        match our_note {
            Some("[unusable: not used by kafkit]") => {}
            Some(note) => {
                let ours: i16 = note
                    .strip_prefix("[usable: ")
                    .and_then(|n| n.strip_suffix(']'))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{api}: {our_rest}"));
                match differs {
                    Some((_, expect_ours, expect_java, _)) => {
                        assert_eq!((ours, java_usable), (*expect_ours, *expect_java), "{api}");
                    }
                    None => {
                        assert_eq!(ours, java_usable, "{api}");
                        same_usable += 1;
                    }
                }
            }
            None => panic!("{api}: no annotation in {our_rest}"),
        }
    }
    for api in our_apis.keys() {
        assert!(java_apis.contains_key(api), "{api} is not Java's");
    }
    for api in ["ApiVersions(18)", "ListOffsets(2)", "DeleteRecords(21)"] {
        assert!(
            our_apis[api].contains("[usable: "),
            "{api}: {}",
            our_apis[api]
        );
    }
    if broker::served() {
        return;
    }
    // What a Kafka 4.3.1 broker has: everything but telemetry, and all that kafkit sends.
    assert_eq!(java_unsupported, JAVA_ONLY_UNSUPPORTED);
    // The APIs kafkit sends, less the eleven that differ: each at Java's version.
    assert_eq!(same_usable, 33, "{ours}");
    assert!(
        our_apis["ConsumerGroupHeartbeat(68)"].contains("[usable: "),
        "{}",
        our_apis["ConsumerGroupHeartbeat(68)"]
    );
    assert!(
        our_apis["CreateAcls(30)"].ends_with(" [unusable: not used by kafkit]"),
        "{}",
        our_apis["CreateAcls(30)"]
    );
}

#[test]
fn an_unreachable_cluster_is_one_line() {
    let out = broker::kafkit_at(TOOL, "127.0.0.1:1").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "cannot connect to 127.0.0.1:1 (connection refused)\n"
    );
}
