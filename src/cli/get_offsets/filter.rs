//! Which topic-partitions `kafka-get-offsets` asks about, as Kafka's `GetOffsetShell` reads its
//! options: `--topic` (a Java regex of whole names) with `--partitions` (a comma list of ids),
//! or the rules of `--topic-partitions`, each `TOPIC_REGEX[:PARTITIONS]` where PARTITIONS is
//! `N`, `N-M` (M excluded), `N-` or `-M`, any rule matching being enough.
//!
//! Lists are split as Java's `String.split(",")` splits them (trailing empty parts dropped), so
//! `--partitions 1,2,` is `1,2` and `--topic-partitions ,` has no rule at all.

use crate::cli::java_split;
use crate::client::TopicPattern;

/// The partitions one rule takes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Partitions {
    /// These ids; none listed means every partition.
    Set(Vec<i32>),
    /// `lower <= p < upper`.
    Range(i32, i32),
}

impl Partitions {
    fn allows(&self, partition: i32) -> bool {
        match self {
            Partitions::Set(ids) => ids.is_empty() || ids.contains(&partition),
            Partitions::Range(lower, upper) => (*lower..*upper).contains(&partition),
        }
    }
}

/// A topic pattern and the partitions it takes.
#[derive(Debug)]
struct Rule {
    topic: TopicPattern,
    partitions: Partitions,
}

/// The topic-partitions a run asks about: those any rule allows.
#[derive(Debug)]
pub(super) struct TopicPartitionFilter {
    rules: Vec<Rule>,
}

impl TopicPartitionFilter {
    /// `--topic` (every topic when absent) with `--partitions` (every partition when absent or
    /// empty). The error is Kafka's message.
    pub fn from_topic_and_partitions(
        topic: Option<&str>,
        partitions: Option<&str>,
    ) -> Result<TopicPartitionFilter, String> {
        // Kafka builds the topic filter first, so a bad regex is reported before bad ids.
        let topic = include_list(topic.unwrap_or(".*"))?;
        let ids = match partitions.filter(|p| !p.is_empty()) {
            None => Vec::new(),
            Some(list) => java_split(list, ',')
                .into_iter()
                .map(|id| id.parse::<i32>())
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    format!(
                        "--partitions expects a comma separated list of numeric partition ids, but received: {list}"
                    )
                })?,
        };
        Ok(TopicPartitionFilter {
            rules: vec![Rule {
                topic,
                partitions: Partitions::Set(ids),
            }],
        })
    }

    /// The rules of `--topic-partitions`, checked in order: the first bad one is the error.
    pub fn from_rules(spec: &str) -> Result<TopicPartitionFilter, String> {
        let rules = java_split(spec, ',')
            .into_iter()
            .map(parse_rule)
            .collect::<Result<_, _>>()?;
        Ok(TopicPartitionFilter { rules })
    }

    /// Whether any rule takes some partition of `topic`.
    pub fn allows_topic(&self, topic: &str) -> bool {
        self.rules.iter().any(|r| r.topic.is_match(topic))
    }

    /// Whether any rule takes this partition of `topic`.
    pub fn allows(&self, topic: &str, partition: i32) -> bool {
        self.rules
            .iter()
            .any(|r| r.topic.is_match(topic) && r.partitions.allows(partition))
    }
}

/// Kafka's `IncludeList` topic filter, with its error text.
fn include_list(raw: &str) -> Result<TopicPattern, String> {
    TopicPattern::include_list(raw)
        .map_err(|(cleaned, why)| format!("{cleaned} is an invalid regex. ({why})"))
}

/// One `--topic-partitions` rule, read as Kafka's pattern
/// `([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?` reads it: an empty part is absent.
fn parse_rule(spec: &str) -> Result<Rule, String> {
    let invalid = || format!("Invalid rule specification: {spec}");
    let (topic, partitions) = match spec.split_once(':') {
        None => (spec, None),
        Some((topic, rest)) => (topic, Some(rest)),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    // The parts as the pattern's groups: one id, or the two bounds of a range.
    let (single, lower, upper) = match partitions {
        None => (None, None, None),
        Some(p) if digits(p) => (Some(p), None, None),
        Some(p) => match p.split_once('-') {
            Some((lo, hi)) if digits(lo) && digits(hi) => (None, Some(lo), Some(hi)),
            _ => return Err(invalid()),
        },
    };
    let topic = include_list(present(Some(topic)).unwrap_or(".*"))?;
    // Digits only, so the one failure is an id past i32: Java's NumberFormatException text.
    let number = |s: &str| {
        s.parse::<i32>()
            .map_err(|_| format!("For input string: \"{s}\""))
    };
    let partitions = match present(single) {
        Some(id) => {
            let id = number(id)?;
            Partitions::Range(id, id.saturating_add(1))
        }
        None => Partitions::Range(
            present(lower).map(number).transpose()?.unwrap_or(0),
            present(upper).map(number).transpose()?.unwrap_or(i32::MAX),
        ),
    };
    Ok(Rule { topic, partitions })
}

/// A group of the rule pattern: an empty match counts as absent, as in Kafka.
fn present(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn takes(filter: &TopicPartitionFilter, topic: &str) -> Vec<i32> {
        (0..12).filter(|p| filter.allows(topic, *p)).collect()
    }

    #[test]
    fn rules_take_ids_ranges_and_bounds() {
        let f = TopicPartitionFilter::from_rules("t1:1,t2:3-5,t3:10-,t4:-2,t5,t6:,:7").unwrap();
        assert_eq!(takes(&f, "t1"), vec![1, 7]);
        assert_eq!(takes(&f, "t2"), vec![3, 4, 7]);
        assert_eq!(takes(&f, "t3"), vec![7, 10, 11]);
        assert_eq!(takes(&f, "t4"), vec![0, 1, 7]);
        assert_eq!(takes(&f, "t5"), (0..12).collect::<Vec<_>>());
        assert_eq!(takes(&f, "t6"), (0..12).collect::<Vec<_>>());
        assert_eq!(takes(&f, "other"), vec![7]);
        assert!(f.allows_topic("other"));
        let none = TopicPartitionFilter::from_rules(",,").unwrap();
        assert!(!none.allows_topic("t1"));
    }

    #[test]
    fn topic_patterns_are_whole_name_regexes() {
        let f = TopicPartitionFilter::from_topic_and_partitions(Some(" 't.*, x'"), None).unwrap();
        assert!(f.allows_topic("t1") && f.allows_topic("x"));
        assert!(!f.allows_topic("at1"));
        let f = TopicPartitionFilter::from_topic_and_partitions(None, Some("+1,2,")).unwrap();
        assert_eq!(takes(&f, "any"), vec![1, 2]);
        let f = TopicPartitionFilter::from_topic_and_partitions(None, Some(",")).unwrap();
        assert_eq!(takes(&f, "any").len(), 12, "no ids: every partition");
    }

    #[test]
    fn bad_specs_have_kafka_messages() {
        let rule_error = |spec: &str| TopicPartitionFilter::from_rules(spec).unwrap_err();
        assert_eq!(rule_error("t1:x"), "Invalid rule specification: t1:x");
        assert_eq!(rule_error("t1:1:2"), "Invalid rule specification: t1:1:2");
        assert_eq!(
            rule_error("t1:1-2-3"),
            "Invalid rule specification: t1:1-2-3"
        );
        assert_eq!(
            rule_error("t1:99999999999"),
            "For input string: \"99999999999\""
        );
        assert!(
            rule_error("(:x").starts_with("Invalid rule"),
            "rule shape first"
        );
        assert!(rule_error("(:1").starts_with("( is an invalid regex."));
        let topic_error = |t: Option<&str>, p: Option<&str>| {
            TopicPartitionFilter::from_topic_and_partitions(t, p).unwrap_err()
        };
        assert_eq!(
            topic_error(None, Some("0-2")),
            "--partitions expects a comma separated list of numeric partition ids, but received: 0-2"
        );
        assert_eq!(
            topic_error(None, Some("1,,2")),
            "--partitions expects a comma separated list of numeric partition ids, but received: 1,,2"
        );
        assert!(topic_error(Some("("), Some("x")).starts_with("( is an invalid regex. ("));
    }
}
