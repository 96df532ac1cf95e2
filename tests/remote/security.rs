//! The tools over a real Kafka 4.3.1 broker's secured listeners: SASL_SSL with SCRAM-SHA-512,
//! SCRAM-SHA-256 and PLAIN, SASL_PLAINTEXT, and SSL with a client certificate (mutual TLS),
//! configured with Kafka's client properties (`--command-config`, `--command-property`). Every
//! failure (wrong password, untrusted or mismatched certificate, plaintext against TLS) is one
//! line with exit 1, and the password never appears in any output.

use std::path::Path;
use std::process::Output;

use crate::common::broker::{self, Secured, kafkit_at};
use crate::common::text;

/// Writes a Java properties file with `lines` into `dir`.
fn config_file(dir: &Path, name: &str, lines: &[String]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").expect("write the command config");
    path.display().to_string()
}

/// The `sasl.jaas.config` line for `module` with the broker's user and `password`.
fn jaas(module: &str, user: &str, password: &str) -> String {
    format!(
        "sasl.jaas.config=org.apache.kafka.common.security.{module} required username=\"{user}\" password=\"{password}\";"
    )
}

/// A SASL_SSL config for `mechanism` that trusts the broker's CA.
fn sasl_ssl(s: &Secured, mechanism: &str, password: &str) -> Vec<String> {
    let module = match mechanism {
        "PLAIN" => "plain.PlainLoginModule",
        _ => "scram.ScramLoginModule",
    };
    vec![
        "security.protocol=SASL_SSL".to_string(),
        format!("sasl.mechanism={mechanism}"),
        jaas(module, &s.user, password),
        "ssl.truststore.type=PEM".to_string(),
        format!("ssl.truststore.location={}", s.ca.display()),
    ]
}

/// Asserts a failed run: exit 1, one line on stderr containing `expected`, nothing on stdout,
/// and no `secret` anywhere.
fn assert_one_line_failure(out: &Output, expected: &str, secret: &str) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in: {stderr}"
    );
    assert!(!stderr.contains(secret), "the secret leaked: {stderr}");
    assert!(!text(&out.stdout).contains(secret));
    stderr
}

/// kafka-topics --create and --list, then a produce/consume round trip, all through `server`
/// with `config`; the password appears in no output. Returns the topic (three records).
fn round_trip(server: &str, config: &str, password: &str, prefix: &str) -> String {
    let topic = broker::unique_topic(prefix);
    let out = kafkit_at("kafka-topics", server)
        .args(["--command-config", config, "--create", "--topic", &topic])
        .args(["--partitions", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "create: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("Created topic {topic}.\n"));

    let out = kafkit_at("kafka-topics", server)
        .args(["--command-config", config, "--list"])
        .output()
        .unwrap();
    assert!(out.status.success(), "list: {}", text(&out.stderr));
    assert!(
        text(&out.stdout).lines().any(|l| l == topic),
        "{topic} listed: {}",
        text(&out.stdout)
    );
    let listed = out;

    let produced = kafkit_at("kafka-console-producer", server)
        .args(["--command-config", config, "--topic", &topic])
        .write_stdin("one\ntwo\nthree\n")
        .output()
        .unwrap();
    assert!(
        produced.status.success(),
        "produce: {}",
        text(&produced.stderr)
    );

    let consumed = kafkit_at("kafka-console-consumer", server)
        .args(["--command-config", config, "--topic", &topic])
        .args(["--from-beginning", "--max-messages", "3"])
        .output()
        .unwrap();
    assert!(
        consumed.status.success(),
        "consume: {}",
        text(&consumed.stderr)
    );
    let mut values: Vec<String> = text(&consumed.stdout).lines().map(String::from).collect();
    values.sort();
    assert_eq!(values, ["one", "three", "two"]);

    // A consumer group through the same listener: join, commit, and the group's offsets
    // described by kafka-consumer-groups.
    let group = format!("{topic}-group");
    let in_group = kafkit_at("kafka-console-consumer", server)
        .args([
            "--command-config",
            config,
            "--topic",
            &topic,
            "--group",
            &group,
        ])
        .args(["--from-beginning", "--max-messages", "3"])
        .output()
        .unwrap();
    assert!(
        in_group.status.success(),
        "consume in a group: {}",
        text(&in_group.stderr)
    );
    assert_eq!(text(&in_group.stdout).lines().count(), 3);
    let described = kafkit_at("kafka-consumer-groups", server)
        .args(["--command-config", config, "--describe", "--group", &group])
        .output()
        .unwrap();
    assert!(
        described.status.success(),
        "describe the group: {}",
        text(&described.stderr)
    );
    let committed: i64 = text(&described.stdout)
        .lines()
        .filter(|l| l.contains(&topic))
        .filter_map(|l| l.split_whitespace().nth(3)?.parse::<i64>().ok())
        .sum();
    assert_eq!(committed, 3, "{}", text(&described.stdout));

    for out in [&listed, &produced, &consumed, &in_group, &described] {
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(!all.contains(password), "the password leaked: {all}");
    }
    topic
}

#[test]
fn scram_sha_512_over_sasl_ssl() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "scram512.properties",
        &sasl_ssl(&s, "SCRAM-SHA-512", &s.password),
    );
    round_trip(&s.sasl_ssl, &config, &s.password, "sec-scram512");
}

#[test]
fn plain_over_sasl_ssl() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "plain.properties",
        &sasl_ssl(&s, "PLAIN", &s.password),
    );
    round_trip(&s.sasl_ssl, &config, &s.password, "sec-plain");
}

#[test]
fn scram_sha_256_over_sasl_plaintext() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Lower-case protocol and mechanism, as Kafka accepts them; the trust store is ignored.
    let config = config_file(
        dir.path(),
        "scram256.properties",
        &[
            "security.protocol=sasl_plaintext".to_string(),
            "sasl.mechanism=SCRAM-SHA-256".to_string(),
            jaas("scram.ScramLoginModule", &s.user, &s.password),
        ],
    );
    round_trip(&s.sasl_plaintext, &config, &s.password, "sec-scram256");
}

#[test]
fn mutual_tls_over_ssl_with_a_pem_key_store() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "mtls.properties",
        &[
            "security.protocol=SSL".to_string(),
            "ssl.truststore.type=PEM".to_string(),
            format!("ssl.truststore.location={}", s.ca.display()),
            "ssl.keystore.type=PEM".to_string(),
            format!("ssl.keystore.location={}", s.client_pem.display()),
        ],
    );
    let topic = round_trip(&s.ssl, &config, &s.password, "sec-mtls");

    // The same identity inline (ssl.keystore.key + ssl.keystore.certificate.chain) and the CA
    // inline (ssl.truststore.certificates), as --command-property values.
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let out = kafkit_at("kafka-console-consumer", &s.ssl)
        .args(["--topic", &topic, "--from-beginning", "--max-messages", "3"])
        .args(["--command-property", "security.protocol=SSL"])
        .args(["--command-property", "ssl.truststore.type=PEM"])
        .arg("--command-property")
        .arg(format!("ssl.truststore.certificates={}", read(&s.ca)))
        .args(["--command-property", "ssl.keystore.type=PEM"])
        .arg("--command-property")
        .arg(format!("ssl.keystore.key={}", read(&s.client_key)))
        .arg("--command-property")
        .arg(format!(
            "ssl.keystore.certificate.chain={}",
            read(&s.client_cert)
        ))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout).lines().count(), 3, "{stderr}");
    assert!(!stderr.contains("PRIVATE KEY"), "{stderr}");

    // Without a client certificate the broker refuses the connection.
    let config = config_file(
        dir.path(),
        "no-client-cert.properties",
        &[
            "security.protocol=SSL".to_string(),
            "ssl.truststore.type=PEM".to_string(),
            format!("ssl.truststore.location={}", s.ca.display()),
        ],
    );
    let out = kafkit_at("kafka-topics", &s.ssl)
        .args(["--command-config", &config, "--list"])
        .output()
        .unwrap();
    assert_one_line_failure(&out, "set ssl.keystore.location", &s.password);
}

#[test]
fn wrong_password_is_one_clear_line_without_the_password() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let wrong = "Wr0ng-Pa55-XyZ";
    for (mechanism, message) in [
        (
            "SCRAM-SHA-512",
            "invalid credentials with SASL mechanism SCRAM-SHA-512",
        ),
        ("PLAIN", "Invalid username or password"),
    ] {
        let config = config_file(
            dir.path(),
            "wrong.properties",
            &sasl_ssl(&s, mechanism, wrong),
        );
        let out = kafkit_at("kafka-topics", &s.sasl_ssl)
            .args(["--command-config", &config, "--list"])
            .output()
            .unwrap();
        let line = assert_one_line_failure(&out, message, wrong);
        assert!(
            line.contains(&format!("authentication failed at {}: ", s.sasl_ssl)),
            "{line}"
        );
        assert!(
            line.contains("check sasl.jaas.config username and password"),
            "{line}"
        );

        // The producer and consumer say the same.
        let out = kafkit_at("kafka-console-producer", &s.sasl_ssl)
            .args(["--command-config", &config, "--topic", "any"])
            .write_stdin("x\n")
            .output()
            .unwrap();
        assert_one_line_failure(&out, message, wrong);
    }
}

#[test]
fn untrusted_certificates_are_one_clear_line() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut configs = Vec::new();
    // No trust store: the public web roots, which did not sign the test CA.
    let mut none = sasl_ssl(&s, "SCRAM-SHA-512", &s.password);
    none.retain(|l| !l.starts_with("ssl.truststore"));
    configs.push(config_file(dir.path(), "no-truststore.properties", &none));
    // Some other CA.
    let mut other = sasl_ssl(&s, "SCRAM-SHA-512", &s.password);
    other.push(format!("ssl.truststore.location={}", s.other_ca.display()));
    configs.push(config_file(dir.path(), "other-ca.properties", &other));
    for config in configs {
        let out = kafkit_at("kafka-topics", &s.sasl_ssl)
            .args(["--command-config", &config, "--list"])
            .output()
            .unwrap();
        let expected = format!(
            "TLS handshake with {} failed: the broker's certificate is not trusted (invalid peer certificate: UnknownIssuer); set ssl.truststore.location to the PEM file of the CA that signed it",
            s.sasl_ssl
        );
        assert_one_line_failure(&out, &expected, &s.password);
    }
}

#[test]
fn host_name_verification_is_on_unless_turned_off() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The broker's certificate names only 127.0.0.1, not localhost.
    let port = s.sasl_ssl.rsplit_once(':').unwrap().1;
    let by_name = format!("localhost:{port}");
    let lines = sasl_ssl(&s, "SCRAM-SHA-512", &s.password);
    let config = config_file(dir.path(), "verify.properties", &lines);
    let out = kafkit_at("kafka-topics", &by_name)
        .args(["--command-config", &config, "--list"])
        .output()
        .unwrap();
    assert_one_line_failure(
        &out,
        "the broker's certificate is not valid for the name localhost",
        &s.password,
    );
    assert!(text(&out.stderr).contains("ssl.endpoint.identification.algorithm="));

    let mut lines = lines;
    lines.push("ssl.endpoint.identification.algorithm=".to_string());
    let config = config_file(dir.path(), "no-verify.properties", &lines);
    let out = kafkit_at("kafka-topics", &by_name)
        .args(["--command-config", &config, "--list"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));

    // The chain is still checked.
    lines.push(format!("ssl.truststore.location={}", s.other_ca.display()));
    let config = config_file(dir.path(), "no-verify-other-ca.properties", &lines);
    let out = kafkit_at("kafka-topics", &by_name)
        .args(["--command-config", &config, "--list"])
        .output()
        .unwrap();
    assert_one_line_failure(&out, "UnknownIssuer", &s.password);
}

#[test]
fn mismatched_protocols_say_what_to_set() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // PLAINTEXT (no config) against the TLS listener.
    let out = kafkit_at("kafka-topics", &s.sasl_ssl)
        .arg("--list")
        .output()
        .unwrap();
    assert_one_line_failure(
        &out,
        "answered in TLS: it is an SSL or SASL_SSL listener; set security.protocol to SSL or SASL_SSL",
        &s.password,
    );
    // SASL_SSL against the PLAINTEXT listener.
    let config = config_file(
        dir.path(),
        "sasl-ssl.properties",
        &sasl_ssl(&s, "SCRAM-SHA-512", &s.password),
    );
    let out = kafkit_at("kafka-topics", &broker::bootstrap())
        .args(["--command-config", &config, "--list"])
        .output()
        .unwrap();
    assert_one_line_failure(&out, "is it a TLS listener?", &s.password);
    // SASL_PLAINTEXT against the PLAINTEXT listener.
    let config = config_file(
        dir.path(),
        "sasl-plaintext.properties",
        &[
            "security.protocol=SASL_PLAINTEXT".to_string(),
            "sasl.mechanism=PLAIN".to_string(),
            jaas("plain.PlainLoginModule", &s.user, &s.password),
        ],
    );
    let out = kafkit_at("kafka-topics", &broker::bootstrap())
        .args(["--command-config", &config, "--list"])
        .output()
        .unwrap();
    assert_one_line_failure(&out, "this listener does not use SASL", &s.password);
}

#[test]
fn unsupported_settings_are_clear_errors_without_secrets() {
    let Some(s) = broker::try_secured() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let base = sasl_ssl(&s, "SCRAM-SHA-512", &s.password);
    let with = |extra: &[&str], drop: &str| {
        let mut lines: Vec<String> = base
            .iter()
            .filter(|l| drop.is_empty() || !l.starts_with(drop))
            .cloned()
            .collect();
        lines.extend(extra.iter().map(|l| l.to_string()));
        lines
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            with(&[], "sasl.mechanism"),
            "GSSAPI/Kerberos, is not supported; use PLAIN or SCRAM-SHA-256/512",
        ),
        (
            with(&["sasl.mechanism=GSSAPI"], ""),
            "GSSAPI/Kerberos is not supported; use PLAIN or SCRAM-SHA-256/512",
        ),
        (
            with(&["sasl.mechanism=OAUTHBEARER"], ""),
            "sasl.mechanism OAUTHBEARER is not supported",
        ),
        (
            with(
                &[&format!(
                    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"{}\" password=\"{}\"",
                    s.user, s.password
                )],
                "sasl.jaas.config",
            ),
            "invalid sasl.jaas.config: missing the ';'",
        ),
        (
            with(&["ssl.truststore.type=JKS"], ""),
            "is a JKS store; kafkit reads PEM stores only: convert it with keytool",
        ),
        (
            with(&["ssl.truststore.location=/no/such/ca.pem"], ""),
            "cannot read ssl.truststore.location /no/such/ca.pem",
        ),
    ];
    for (lines, expected) in cases {
        let config = config_file(dir.path(), "bad.properties", &lines);
        let out = kafkit_at("kafka-topics", &s.sasl_ssl)
            .args(["--command-config", &config, "--list"])
            .output()
            .unwrap();
        let line = assert_one_line_failure(&out, expected, &s.password);
        assert!(!line.contains("omit --bootstrap-server"), "{line}");
    }
}
