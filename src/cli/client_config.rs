//! Kafka's checks of the producer and consumer properties the tools take (`--command-property`,
//! `--command-config`): each known key's type and range, with the `ConfigException` text of
//! Java's `ConfigDef` (`Invalid value abc for configuration max.poll.records: Not a number of
//! type INT`). Java checks every given property when the client is built, whether or not the
//! tool uses it, so these run on every start, on both backends.

use super::properties::Properties;
use super::{CliError, usage};

/// A property's type and the smallest value Kafka allows.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Int(i64),
    Long(i64),
    Boolean,
    /// One of these words, compared without case.
    OneOf(&'static [&'static str]),
}

/// Which client the properties configure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    Producer,
    Consumer,
}

/// Properties both clients define.
const COMMON: &[(&str, Kind)] = &[
    ("request.timeout.ms", Kind::Int(0)),
    ("retry.backoff.ms", Kind::Long(0)),
    ("retry.backoff.max.ms", Kind::Long(0)),
    ("reconnect.backoff.ms", Kind::Long(0)),
    ("reconnect.backoff.max.ms", Kind::Long(0)),
    ("metadata.max.age.ms", Kind::Long(0)),
    ("connections.max.idle.ms", Kind::Long(i64::MIN)),
    ("send.buffer.bytes", Kind::Int(-1)),
    ("receive.buffer.bytes", Kind::Int(-1)),
];

/// The consumer's, as `ConsumerConfig` defines them.
const CONSUMER: &[(&str, Kind)] = &[
    ("max.poll.records", Kind::Int(1)),
    ("max.poll.interval.ms", Kind::Int(1)),
    ("session.timeout.ms", Kind::Int(i64::MIN)),
    ("heartbeat.interval.ms", Kind::Int(i64::MIN)),
    ("enable.auto.commit", Kind::Boolean),
    ("auto.commit.interval.ms", Kind::Int(0)),
    ("fetch.min.bytes", Kind::Int(0)),
    ("fetch.max.bytes", Kind::Int(0)),
    ("fetch.max.wait.ms", Kind::Int(0)),
    ("max.partition.fetch.bytes", Kind::Int(0)),
    ("default.api.timeout.ms", Kind::Int(0)),
    ("check.crcs", Kind::Boolean),
    ("exclude.internal.topics", Kind::Boolean),
    ("allow.auto.create.topics", Kind::Boolean),
    ("group.protocol", Kind::OneOf(&["CLASSIC", "CONSUMER"])),
];

/// The producer's, as `ProducerConfig` defines them.
const PRODUCER: &[(&str, Kind)] = &[
    ("batch.size", Kind::Int(0)),
    ("linger.ms", Kind::Long(0)),
    ("retries", Kind::Int(0)),
    ("max.in.flight.requests.per.connection", Kind::Int(1)),
    ("max.request.size", Kind::Int(0)),
    ("buffer.memory", Kind::Long(0)),
    ("max.block.ms", Kind::Long(0)),
    ("delivery.timeout.ms", Kind::Int(0)),
    ("enable.idempotence", Kind::Boolean),
];

fn kind(client: Client, key: &str) -> Option<Kind> {
    let own = match client {
        Client::Producer => PRODUCER,
        Client::Consumer => CONSUMER,
    };
    own.iter()
        .chain(COMMON)
        .find(|(name, _)| *name == key)
        .map(|(_, kind)| *kind)
}

/// Checks every known property in `props`; unknown keys pass, as Kafka only logs them.
pub fn validate(client: Client, props: &Properties) -> Result<(), CliError> {
    for (key, value) in props {
        if let Some(kind) = kind(client, key) {
            check(key, value, kind)?;
        }
    }
    Ok(())
}

/// A numeric property's value, `None` if not given, checked as [`validate`] checks it.
pub fn number(client: Client, props: &Properties, key: &str) -> Result<Option<i64>, CliError> {
    let Some(value) = props.get(key) else {
        return Ok(None);
    };
    check(
        key,
        value,
        kind(client, key).unwrap_or(Kind::Long(i64::MIN)),
    )?;
    Ok(value.trim().parse().ok())
}

fn check(key: &str, value: &str, kind: Kind) -> Result<(), CliError> {
    let invalid = |why: String| {
        usage(format!(
            "Invalid value {value} for configuration {key}: {why}"
        ))
    };
    let trimmed = value.trim();
    match kind {
        Kind::Int(min) | Kind::Long(min) => {
            let parsed = match kind {
                Kind::Int(_) => trimmed.parse::<i32>().map(i64::from).ok(),
                _ => trimmed.parse::<i64>().ok(),
            };
            let type_name = if matches!(kind, Kind::Int(_)) {
                "INT"
            } else {
                "LONG"
            };
            match parsed {
                None => invalid(format!("Not a number of type {type_name}")),
                Some(n) if n < min => invalid(format!("Value must be at least {min}")),
                Some(_) => Ok(()),
            }
        }
        Kind::Boolean if trimmed.eq_ignore_ascii_case("true") => Ok(()),
        Kind::Boolean if trimmed.eq_ignore_ascii_case("false") => Ok(()),
        Kind::Boolean => invalid("Expected value to be either true or false".into()),
        Kind::OneOf(words) if words.iter().any(|w| w.eq_ignore_ascii_case(trimmed)) => Ok(()),
        Kind::OneOf(words) => invalid(format!(
            "String must be one of (case insensitive): {}",
            words.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(client: Client, key: &str, value: &str) -> String {
        let props = Properties::from([(key.to_string(), value.to_string())]);
        match validate(client, &props) {
            Err(CliError::Usage(m)) => m,
            other => panic!("{key}={value}: {other:?}"),
        }
    }

    #[test]
    fn java_texts_for_bad_values() {
        let c = Client::Consumer;
        assert_eq!(
            message(c, "max.poll.records", "abc"),
            "Invalid value abc for configuration max.poll.records: Not a number of type INT"
        );
        assert_eq!(
            message(c, "max.poll.records", "0"),
            "Invalid value 0 for configuration max.poll.records: Value must be at least 1"
        );
        assert_eq!(
            message(c, "enable.auto.commit", "maybe"),
            "Invalid value maybe for configuration enable.auto.commit: Expected value to be either true or false"
        );
        assert_eq!(
            message(c, "group.protocol", "bogus"),
            "Invalid value bogus for configuration group.protocol: String must be one of (case insensitive): CLASSIC, CONSUMER"
        );
        assert_eq!(
            message(Client::Producer, "batch.size", "x"),
            "Invalid value x for configuration batch.size: Not a number of type INT"
        );
        assert_eq!(
            message(Client::Producer, "linger.ms", "x"),
            "Invalid value x for configuration linger.ms: Not a number of type LONG"
        );
        // An INT that does not fit in 32 bits is not an INT.
        assert!(message(c, "fetch.max.bytes", "3000000000").ends_with("type INT"));
    }

    #[test]
    fn good_and_unknown_values_pass() {
        let props = Properties::from([
            ("max.poll.records".to_string(), " 500 ".to_string()),
            ("enable.auto.commit".to_string(), "FALSE".to_string()),
            ("group.protocol".to_string(), "consumer".to_string()),
            ("no.such.key".to_string(), "anything".to_string()),
        ]);
        assert!(validate(Client::Consumer, &props).is_ok());
    }
}
