//! Share groups' (KIP-932) vocabulary, the same on every backend: how a consumer acknowledges
//! a record, the states a record goes through, and the group configs (`share.*`) with Kafka
//! 4.3.1's defaults and bounds.

use std::collections::BTreeMap;

/// How a share consumer acknowledges a record it was delivered (Kafka's codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AcknowledgeType {
    /// The offset holds no record for the consumer (a control record, a compacted one):
    /// archived, like a rejection.
    Gap,
    /// Processed: never delivered again.
    Accept,
    /// Given back: delivered again (to any member) until the delivery count limit.
    Release,
    /// Unprocessable: archived, never delivered again.
    Reject,
}

impl AcknowledgeType {
    /// The type's code on the wire (ShareFetch and ShareAcknowledge).
    pub fn code(self) -> i8 {
        match self {
            AcknowledgeType::Gap => 0,
            AcknowledgeType::Accept => 1,
            AcknowledgeType::Release => 2,
            AcknowledgeType::Reject => 3,
        }
    }

    /// The type of a wire code; `None` for codes this side does not take (RENEW, 4, included).
    pub fn from_code(code: i8) -> Option<AcknowledgeType> {
        Some(match code {
            0 => AcknowledgeType::Gap,
            1 => AcknowledgeType::Accept,
            2 => AcknowledgeType::Release,
            3 => AcknowledgeType::Reject,
            _ => return None,
        })
    }
}

/// Offsets `first..=last` delivered to a member, each for the `delivery_count`th time (Kafka's
/// `AcquiredRecords`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acquired {
    pub first: i64,
    pub last: i64,
    pub delivery_count: i16,
}

/// Acknowledgements of offsets `first..=last`, all of one type: `(first, last, type)`.
pub type AckRun = (i64, i64, AcknowledgeType);

/// Where a record of a share partition stands (Kafka's `RecordState`, with its codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordState {
    /// Waiting to be delivered (never yet, or given back).
    Available,
    /// Delivered to one member, locked to it until acknowledged or its lock expires.
    Acquired,
    /// Accepted: done.
    Acknowledged,
    /// Rejected, a gap, or delivered too often: done, never delivered again.
    Archived,
}

impl RecordState {
    /// Kafka's code for the state (in its persisted share state too).
    pub fn code(self) -> i8 {
        match self {
            RecordState::Available => 0,
            RecordState::Acquired => 1,
            RecordState::Acknowledged => 2,
            RecordState::Archived => 4,
        }
    }

    /// The state of a code; `None` for others.
    pub fn from_code(code: i8) -> Option<RecordState> {
        Some(match code {
            0 => RecordState::Available,
            1 => RecordState::Acquired,
            2 => RecordState::Acknowledged,
            4 => RecordState::Archived,
            _ => return None,
        })
    }

    /// Acknowledged or archived: the record is done with.
    pub fn is_terminal(self) -> bool {
        matches!(self, RecordState::Acknowledged | RecordState::Archived)
    }
}

/// Where a share group starts reading a partition it has no state for
/// (`share.auto.offset.reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareOffsetReset {
    /// The log start offset.
    Earliest,
    /// The log end offset: only records produced after the group first reads (Kafka's default).
    Latest,
    /// The first record whose timestamp is at least this many milliseconds before now.
    ByDuration(i64),
}

impl ShareOffsetReset {
    /// Parses Kafka's text: `earliest`, `latest`, or `by_duration:` and an ISO-8601 duration
    /// (`PnDTnHnMn.nS`, as Java's `Duration.parse` takes it).
    pub fn parse(text: &str) -> Result<ShareOffsetReset, String> {
        let lower = text.to_ascii_lowercase();
        if lower == "earliest" {
            return Ok(ShareOffsetReset::Earliest);
        }
        if lower == "latest" {
            return Ok(ShareOffsetReset::Latest);
        }
        if let Some(duration) = lower.strip_prefix("by_duration:") {
            return match parse_iso_duration_ms(duration) {
                Some(ms) if ms >= 0 => Ok(ShareOffsetReset::ByDuration(ms)),
                Some(_) => Err(format!(
                    "Invalid value {text} for configuration {AUTO_OFFSET_RESET}: the duration may not be negative"
                )),
                None => Err(format!(
                    "Invalid value {text} for configuration {AUTO_OFFSET_RESET}: by_duration takes an ISO-8601 duration such as PT1H"
                )),
            };
        }
        Err(format!(
            "Invalid value {text} for configuration {AUTO_OFFSET_RESET}: the value must be 'earliest', 'latest' or 'by_duration:' and an ISO-8601 duration (PnDTnHnMn.nS)"
        ))
    }
}

/// Milliseconds of an ISO-8601 duration `[-]P[nD][T[nH][nM][n[.n]S]]` (case-insensitive), as
/// Java's `Duration.parse` reads it; `None` when it is not one.
fn parse_iso_duration_ms(text: &str) -> Option<i64> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let rest = text.strip_prefix(['p', 'P'])?;
    let (days, time) = match rest.find(['t', 'T']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mut total: i64 = 0;
    let mut any = false;
    if !days.is_empty() {
        let n = days.strip_suffix(['d', 'D'])?;
        total = total.checked_add(n.parse::<i64>().ok()?.checked_mul(86_400_000)?)?;
        any = true;
    }
    if let Some(mut time) = time {
        if time.is_empty() {
            return None;
        }
        for (unit, ms) in [('h', 3_600_000i64), ('m', 60_000)] {
            if let Some(i) = time.find([unit, unit.to_ascii_uppercase()]) {
                let n: i64 = time[..i].parse().ok()?;
                total = total.checked_add(n.checked_mul(ms)?)?;
                time = &time[i + 1..];
                any = true;
            }
        }
        if !time.is_empty() {
            let seconds = time.strip_suffix(['s', 'S'])?;
            let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
            if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let millis: i64 = format!("{fraction:0<3}")[..3].parse().ok()?;
            let whole: i64 = whole.parse().ok()?;
            let ms = whole.checked_mul(1000)?.checked_add(millis)?;
            total = total.checked_add(ms)?;
            any = true;
        }
    }
    any.then_some(if negative { -total } else { total })
}

/// `share.record.lock.duration.ms`.
pub const RECORD_LOCK_DURATION: &str = "share.record.lock.duration.ms";
/// `share.delivery.count.limit`.
pub const DELIVERY_COUNT_LIMIT: &str = "share.delivery.count.limit";
/// `share.partition.max.record.locks`.
pub const PARTITION_MAX_RECORD_LOCKS: &str = "share.partition.max.record.locks";
/// `share.auto.offset.reset`.
pub const AUTO_OFFSET_RESET: &str = "share.auto.offset.reset";
/// `share.isolation.level`.
pub const ISOLATION_LEVEL: &str = "share.isolation.level";
/// `share.renew.acknowledge.enable`.
pub const RENEW_ACKNOWLEDGE_ENABLE: &str = "share.renew.acknowledge.enable";
/// `share.session.timeout.ms`.
pub const SESSION_TIMEOUT: &str = "share.session.timeout.ms";
/// `share.heartbeat.interval.ms`.
pub const HEARTBEAT_INTERVAL: &str = "share.heartbeat.interval.ms";

/// The integer group configs with their bounds (Kafka 4.3.1's broker minimum and maximum for
/// each: a group may not set a value the broker would not take).
const INT_CONFIGS: &[(&str, i64, i64)] = &[
    (RECORD_LOCK_DURATION, 15_000, 60_000),
    (DELIVERY_COUNT_LIMIT, 2, 10),
    (PARTITION_MAX_RECORD_LOCKS, 100, 4_000),
    (SESSION_TIMEOUT, 45_000, 60_000),
    (HEARTBEAT_INTERVAL, 5_000, 15_000),
];

/// Every share group config a group may set.
pub const CONFIG_NAMES: &[&str] = &[
    AUTO_OFFSET_RESET,
    DELIVERY_COUNT_LIMIT,
    HEARTBEAT_INTERVAL,
    ISOLATION_LEVEL,
    PARTITION_MAX_RECORD_LOCKS,
    RECORD_LOCK_DURATION,
    RENEW_ACKNOWLEDGE_ENABLE,
    SESSION_TIMEOUT,
];

/// Checks one group config value; the error says what is wrong, in Kafka's words where it has
/// them.
pub fn validate_config(name: &str, value: &str) -> Result<(), String> {
    if let Some((_, min, max)) = INT_CONFIGS.iter().find(|(n, _, _)| *n == name) {
        let n: i64 = value.trim().parse().map_err(|_| {
            format!("Invalid value {value} for configuration {name}: Not a number of type INT")
        })?;
        if n < *min {
            return Err(format!(
                "Invalid value {n} for configuration {name}: Value must be at least {min}"
            ));
        }
        if n > *max {
            return Err(format!(
                "Invalid value {n} for configuration {name}: Value must be no more than {max}"
            ));
        }
        return Ok(());
    }
    match name {
        AUTO_OFFSET_RESET => ShareOffsetReset::parse(value).map(|_| ()),
        ISOLATION_LEVEL => match value {
            "read_uncommitted" | "read_committed" => Ok(()),
            _ => Err(format!(
                "Invalid value {value} for configuration {name}: String must be one of: read_committed, read_uncommitted"
            )),
        },
        RENEW_ACKNOWLEDGE_ENABLE => match value.to_ascii_lowercase().as_str() {
            "true" | "false" => Ok(()),
            _ => Err(format!(
                "Invalid value {value} for configuration {name}: Expected value to be either true or false"
            )),
        },
        _ => Err(format!("Unknown group config name: {name}")),
    }
}

/// A share group's settings: its configs over Kafka's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareGroupConfig {
    /// How long a delivered record stays locked to its member.
    pub record_lock_duration_ms: i64,
    /// After this many deliveries a record given back is archived.
    pub delivery_count_limit: i16,
    /// At most this many records of a partition in flight (delivered and not yet done).
    pub partition_max_record_locks: u32,
    pub auto_offset_reset: ShareOffsetReset,
    /// `share.isolation.level=read_committed`.
    pub read_committed: bool,
}

impl Default for ShareGroupConfig {
    fn default() -> Self {
        ShareGroupConfig {
            record_lock_duration_ms: 30_000,
            delivery_count_limit: 5,
            partition_max_record_locks: 2_000,
            auto_offset_reset: ShareOffsetReset::Latest,
            read_committed: false,
        }
    }
}

impl ShareGroupConfig {
    /// The settings of a group's configs (names other than `share.*` ones, and values that do
    /// not validate, keep the default: configs are checked when they are set).
    pub fn from_configs(configs: &BTreeMap<String, String>) -> ShareGroupConfig {
        let mut config = ShareGroupConfig::default();
        let int = |name: &str| {
            configs
                .get(name)
                .filter(|v| validate_config(name, v).is_ok())
                .and_then(|v| v.trim().parse::<i64>().ok())
        };
        if let Some(ms) = int(RECORD_LOCK_DURATION) {
            config.record_lock_duration_ms = ms;
        }
        if let Some(limit) = int(DELIVERY_COUNT_LIMIT) {
            config.delivery_count_limit = limit as i16;
        }
        if let Some(locks) = int(PARTITION_MAX_RECORD_LOCKS) {
            config.partition_max_record_locks = locks as u32;
        }
        if let Some(reset) = configs
            .get(AUTO_OFFSET_RESET)
            .and_then(|v| ShareOffsetReset::parse(v).ok())
        {
            config.auto_offset_reset = reset;
        }
        config.read_committed = configs
            .get(ISOLATION_LEVEL)
            .is_some_and(|v| v == "read_committed");
        config
    }
}

/// A share group as `kafka-share-groups --describe --state` and `--members` show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareGroupDescription {
    pub group_id: String,
    /// `Empty`, `Stable` or `Dead`.
    pub state: String,
    /// The group coordinator: host, port and node id.
    pub coordinator: (String, i32, i32),
    pub group_epoch: i32,
    pub assignment_epoch: i32,
    /// Sorted by member id.
    pub members: Vec<ShareMemberDescription>,
}

/// A live member of a share group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareMemberDescription {
    pub member_id: String,
    pub client_id: String,
    /// As Kafka prints it: `/127.0.0.1`.
    pub host: String,
    pub member_epoch: i32,
    /// Its partitions, by topic (partitions ascending).
    pub assignment: BTreeMap<String, Vec<i32>>,
}

/// Where a share group stands in one partition (`kafka-share-groups --describe --offsets`):
/// `None` where the group has not initialized the partition (Kafka prints `-`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShareOffset {
    /// The share-partition start offset: every record below it is done.
    pub start_offset: Option<i64>,
    pub leader_epoch: Option<i32>,
    /// Records from the start offset to the end not yet done (Kafka: end offset, less the
    /// start offset, less the records in flight already done).
    pub lag: Option<i64>,
}

/// What became of a share group's offsets deletion (`--delete-offsets`): a refusal of the
/// whole request, or each topic's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShareOffsetsDeletion {
    /// The group-level error (`The group is not empty.`), if the request was refused.
    pub error: Option<String>,
    /// Each topic with its error (`None`: deleted).
    pub topics: Vec<(String, Option<String>)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_durations_read_as_java_reads_them() {
        assert_eq!(parse_iso_duration_ms("PT1H"), Some(3_600_000));
        assert_eq!(parse_iso_duration_ms("P1DT2M"), Some(86_400_000 + 120_000));
        assert_eq!(parse_iso_duration_ms("pt1.5s"), Some(1_500));
        assert_eq!(parse_iso_duration_ms("-PT10S"), Some(-10_000));
        assert_eq!(parse_iso_duration_ms("P"), None);
        assert_eq!(parse_iso_duration_ms("PT"), None);
        assert_eq!(parse_iso_duration_ms("1H"), None);
        assert_eq!(parse_iso_duration_ms("PT1X"), None);
    }

    #[test]
    fn offset_resets_and_configs_validate() {
        assert_eq!(
            ShareOffsetReset::parse("Earliest"),
            Ok(ShareOffsetReset::Earliest)
        );
        assert_eq!(
            ShareOffsetReset::parse("by_duration:PT1M"),
            Ok(ShareOffsetReset::ByDuration(60_000))
        );
        assert!(ShareOffsetReset::parse("first").is_err());
        assert!(validate_config(RECORD_LOCK_DURATION, "15000").is_ok());
        assert!(validate_config(RECORD_LOCK_DURATION, "1000").is_err());
        assert!(validate_config(DELIVERY_COUNT_LIMIT, "ten").is_err());
        assert!(validate_config("share.nope", "1").is_err());
        let configs = BTreeMap::from([
            (DELIVERY_COUNT_LIMIT.to_string(), "3".to_string()),
            (AUTO_OFFSET_RESET.to_string(), "earliest".to_string()),
        ]);
        let config = ShareGroupConfig::from_configs(&configs);
        assert_eq!(config.delivery_count_limit, 3);
        assert_eq!(config.auto_offset_reset, ShareOffsetReset::Earliest);
        assert_eq!(config.record_lock_duration_ms, 30_000);
    }
}
