//! The new consumer group protocol (KIP-848) served by `kafka-server-start`: Java consumers on
//! `group.protocol=consumer` get their partitions from the server, split them, hand them over
//! when one leaves, and commit into the directory's group store; `kafka-consumer-groups`
//! (ours and Java's) describe the group; a classic member cannot join it, nor a member of the
//! new protocol a live classic group.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::broker::{GROUP_COMMAND, java_tool};
use crate::common::server::{Background, Server, wait_until};
use crate::common::{Kafkit, text};

/// Records `r<i>` keyed `k<i>`: keys spread them over every partition (keyless records from
/// librdkafka stick to one partition for a while, which could leave a consumer nothing).
fn kcat_produce(bootstrap: &str, topic: &str, lines: std::ops::Range<u32>) {
    use std::io::Write;
    let mut child = std::process::Command::new("kcat")
        .args(["-P", "-b", bootstrap, "-t", topic, "-K:"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("kcat is installed");
    let input: String = lines.map(|i| format!("k{i}:r{i}\n")).collect();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The records each consumer printed.
fn records(c: &Background) -> Vec<String> {
    c.stdout()
        .lines()
        .filter(|l| l.starts_with('r'))
        .map(str::to_string)
        .collect()
}

/// Every record read, and how many were read more than once.
fn union(consumers: &[Background]) -> (BTreeSet<String>, usize) {
    let all: Vec<String> = consumers.iter().flat_map(records).collect();
    let set: BTreeSet<String> = all.iter().cloned().collect();
    let twice = all.len() - set.len();
    (set, twice)
}

/// `kafka-consumer-groups --describe --members` rows of `group`, Java's or ours: the member
/// id and its partition count (the last column).
fn members(rows: &str, group: &str) -> Vec<(String, String)> {
    rows.lines()
        .filter(|l| l.starts_with(&format!("{group} ")))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .map(|f| (f[1].to_string(), f.last().unwrap().to_string()))
        .collect()
}

fn java_groups(b: &str, args: &[&str]) -> String {
    let mut all = vec!["--bootstrap-server", b];
    all.extend_from_slice(args);
    text(&java_tool(GROUP_COMMAND, &all).stdout)
}

#[test]
fn three_java_consumers_on_the_consumer_protocol_split_six_partitions() {
    let k = Kafkit::new();
    // Heartbeats every second, so that handing partitions over takes seconds, not tens.
    let fast = "group.consumer.heartbeat.interval.ms=1000";
    let server = Server::start(k.log_dir(), &[fast]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "six", "--partitions", "6"],
        None,
    );
    let dir = k.path("out");
    std::fs::create_dir_all(&dir).unwrap();
    let new_protocol = ["group.protocol=consumer"];
    let c: Vec<Background> = (0..3)
        .map(|i| {
            let name = format!("c{i}");
            Background::java_consumer_with(&dir, &name, (b, "six", "g848"), &new_protocol)
        })
        .collect();
    // The server hands out two partitions each, a later member's only once their earlier
    // owner gave them up: then every member's current assignment is its target.
    let described = || java_groups(b, &["--describe", "--group", "g848", "--members"]);
    let verbose = || {
        java_groups(
            b,
            &["--describe", "--group", "g848", "--members", "--verbose"],
        )
    };
    wait_until(
        Duration::from_secs(90),
        || {
            // GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT
            // TARGET-EPOCH TARGET-ASSIGNMENT
            let rows: Vec<Vec<String>> = verbose()
                .lines()
                .filter(|l| l.starts_with("g848 "))
                .map(|l| l.split_whitespace().map(str::to_string).collect())
                .collect();
            rows.len() == 3
                && rows
                    .iter()
                    .all(|r| r.len() == 9 && r[4] == "2" && r[5] == r[7] && r[6] == r[8])
        },
        || format!("{}\n{}", verbose(), server.stderr()),
    );
    kcat_produce(b, "six", 0..600);
    wait_until(
        Duration::from_secs(60),
        || union(&c).0.len() == 600,
        || format!("{} of 600: {}", union(&c).0.len(), server.stderr()),
    );
    assert_eq!(union(&c).1, 0, "a record was read twice");
    let counts: Vec<usize> = c.iter().map(|c| records(c).len()).collect();
    assert!(
        counts.iter().all(|&n| n > 0),
        "each reads a share: {counts:?}\n{}",
        server.stderr()
    );

    // Both tools see one consumer-protocol group of three members, two partitions each, print
    // the same offsets (once the consumers' auto-commits caught up: lag 0) and the same state.
    let ours_and_javas = |args: &[&str]| {
        let mut all = vec!["--bootstrap-server", b];
        all.extend_from_slice(args);
        let ours = text(&k.run("kafka-consumer-groups", &all, None).stdout);
        (ours, java_groups(b, args))
    };
    let offsets = ["--describe", "--group", "g848"];
    wait_until(
        Duration::from_secs(60),
        || {
            let (ours, java) = ours_and_javas(&offsets);
            let rows: Vec<&str> = java.lines().filter(|l| l.starts_with("g848 ")).collect();
            ours == java
                && rows.len() == 6
                && rows
                    .iter()
                    .all(|r| r.split_whitespace().nth(5) == Some("0"))
        },
        || format!("{:?}", ours_and_javas(&offsets)),
    );
    let (ours, java) = ours_and_javas(&["--describe", "--group", "g848", "--state"]);
    assert_eq!(ours, java);
    assert!(java.contains(" uniform "), "{java}");
    let java = members(&described(), "g848");
    let ours = k.ok(
        "kafka-consumer-groups",
        &[
            "--bootstrap-server",
            b,
            "--describe",
            "--group",
            "g848",
            "--members",
        ],
        None,
    );
    assert_eq!(members(&ours, "g848"), java, "{ours}");
    // The directory's own view (`--log-dir`) shows the same members, not the server's stand-in
    // (issue 24, item 10), once the server published them (it does every half second).
    let sorted = |mut rows: Vec<(String, String)>| {
        rows.sort();
        rows
    };
    let local_members = || {
        k.ok(
            "kafka-consumer-groups",
            &["--describe", "--group", "g848", "--members"],
            None,
        )
    };
    wait_until(
        Duration::from_secs(10),
        || sorted(members(&local_members(), "g848")) == sorted(java.clone()),
        || format!("{}\nJava: {java:?}", local_members()),
    );
    for listing in [
        java_groups(b, &["--list", "--type", "--state"]),
        k.ok(
            "kafka-consumer-groups",
            &["--bootstrap-server", b, "--list", "--type", "--state"],
            None,
        ),
    ] {
        let row: Vec<&str> = listing
            .lines()
            .find(|l| l.starts_with("g848 "))
            .map(|l| l.split_whitespace().collect())
            .unwrap_or_default();
        assert_eq!(row, ["g848", "Consumer", "Stable"], "{listing}");
    }

    // A classic member is refused while the group is live.
    let kcat = std::process::Command::new("timeout")
        .args(["20", "kcat", "-b", b, "-G", "g848", "six", "-e"])
        .output()
        .unwrap();
    assert_eq!(text(&kcat.stdout), "");
    assert!(
        text(&kcat.stderr).contains("Inconsistent group protocol"),
        "{}",
        text(&kcat.stderr)
    );

    // One leaves; the other two take its partitions over from its commits.
    c[0].signal("-TERM");
    kcat_produce(b, "six", 600..1200);
    wait_until(
        Duration::from_secs(60),
        || union(&c).0.len() == 1200,
        || format!("{} of 1200: {}", union(&c).0.len(), server.stderr()),
    );
    let (set, twice) = union(&c);
    assert_eq!(twice, 0, "a record was read twice");
    assert_eq!(set, (0..1200).map(|i| format!("r{i}")).collect());

    // Once all have left, the directory shows their commits: every partition at its end.
    c[1].signal("-TERM");
    c[2].signal("-TERM");
    let local = || {
        k.ok(
            "kafka-consumer-groups",
            &["--describe", "--group", "g848"],
            None,
        )
    };
    wait_until(
        Duration::from_secs(30),
        || {
            let rows: Vec<Vec<String>> = local()
                .lines()
                .filter(|l| l.starts_with("g848 "))
                .map(|l| l.split_whitespace().map(str::to_string).collect())
                .collect();
            rows.len() == 6 && rows.iter().all(|r| r[5] == "0" && r[6] == "-")
        },
        || format!("{}\n{}", local(), server.stderr()),
    );
}

#[test]
fn a_consumer_protocol_member_is_refused_from_a_live_classic_group() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "cl", "--partitions", "2"],
        None,
    );
    let dir = k.path("out");
    std::fs::create_dir_all(&dir).unwrap();
    let _classic = Background::spawn(&dir, "kcat", "kcat", &["-b", b, "-G", "classic", "cl"]);
    // (The group is not found until kcat has joined.)
    let state = || {
        let args = ["--describe", "--group", "classic", "--state"];
        let mut all = vec!["--bootstrap-server", b];
        all.extend_from_slice(&args);
        text(&k.run("kafka-consumer-groups", &all, None).stdout)
    };
    wait_until(
        Duration::from_secs(30),
        || state().contains(" Stable "),
        || format!("{}\n{}", state(), server.stderr()),
    );
    // `--log-dir` shows kcat, with both partitions, not the server's stand-in (issue 24, item
    // 10): GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS.
    let local_members = || {
        k.ok(
            "kafka-consumer-groups",
            &["--describe", "--group", "classic", "--members"],
            None,
        )
    };
    wait_until(
        Duration::from_secs(10),
        || {
            let rows: Vec<Vec<String>> = local_members()
                .lines()
                .filter(|l| l.starts_with("classic "))
                .map(|l| l.split_whitespace().map(str::to_string).collect())
                .collect();
            rows.len() == 1
                && rows[0][2] == "/127.0.0.1"
                && rows[0][3] == "rdkafka"
                && rows[0][4] == "2"
        },
        local_members,
    );
    let new_protocol = ["--consumer-property", "group.protocol=consumer"];
    let mut args = vec![
        "--bootstrap-server",
        b,
        "--topic",
        "cl",
        "--group",
        "classic",
    ];
    args.extend_from_slice(&new_protocol);
    let err = k.fails("kafka-console-consumer", &args, None, 1);
    assert!(
        err.contains("Group classic is not a consumer group."),
        "{err}"
    );
    let mut java = vec![
        "--bootstrap-server",
        b,
        "--topic",
        "cl",
        "--group",
        "classic",
    ];
    java.extend_from_slice(&new_protocol);
    java.extend_from_slice(&["--timeout-ms", "20000"]);
    let out = java_tool(crate::common::broker::CONSOLE_CONSUMER, &java);
    assert!(
        text(&out.stderr)
            .contains("GroupIdNotFoundException: Group classic is not a consumer group."),
        "{}",
        text(&out.stderr)
    );
}
