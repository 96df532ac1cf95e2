//! Kafka 4.x topic-level configs: the table of every name a topic accepts, with its type, its
//! default and its validator, plus validation with Kafka's own error text and typed look-ups of
//! a topic's effective values for the embedded log.
//!
//! The facts follow Kafka 4.3's `LogConfig` definitions (`TopicConfig` names, `ServerLogConfigs`
//! defaults, `ConfigDef` parsing and validators). Validation reproduces what `kafka-topics
//! --create --config name=value` reports before anything is sent: `Unknown topic config name:
//! <name>`, or a `ConfigException` message such as `Invalid value 12 for configuration
//! segment.bytes: Value must be at least 1048576`.
//!
//! Removed in 4.0 and therefore unknown here: `message.format.version`,
//! `message.timestamp.difference.max.ms` and `message.downconversion.enable`.

use std::collections::BTreeMap;
use std::fmt;

use super::java_number::java_double;

use ConfigType as T;
use Validator as V;

/// A config's type, as Kafka's `ConfigDef.Type` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConfigType {
    Boolean,
    Int,
    Long,
    Double,
    String,
    List,
    Class,
}

impl ConfigType {
    /// The Java enum name, as in `Not a number of type INT`.
    pub fn kafka_name(self) -> &'static str {
        match self {
            ConfigType::Boolean => "BOOLEAN",
            ConfigType::Int => "INT",
            ConfigType::Long => "LONG",
            ConfigType::Double => "DOUBLE",
            ConfigType::String => "STRING",
            ConfigType::List => "LIST",
            ConfigType::Class => "CLASS",
        }
    }

    /// The lower-case name Kafka's documentation uses (`int`, `long`, …).
    pub fn doc_name(self) -> &'static str {
        match self {
            ConfigType::Boolean => "boolean",
            ConfigType::Int => "int",
            ConfigType::Long => "long",
            ConfigType::Double => "double",
            ConfigType::String => "string",
            ConfigType::List => "list",
            ConfigType::Class => "class",
        }
    }
}

/// What values a config accepts beyond its type; one variant per Kafka validator kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validator {
    /// No validator: any value of the right type.
    None,
    /// `Range.atLeast(min)`.
    AtLeast(i64),
    /// `Range.between(min, max)`, both bounds inclusive.
    Between(i64, i64),
    /// `min..=max`, or exactly `or` (the gzip level, where `or` is zlib's "default level").
    BetweenOr { min: i64, max: i64, or: i64 },
    /// `ValidString.in(...)`: one of these strings, case-sensitive.
    OneOf(&'static [&'static str]),
    /// `ValidList.in(...)`: a comma-separated list whose items are each one of these strings
    /// (case-sensitive); the empty list is allowed, an empty item is not, duplicates are dropped.
    ListOf(&'static [&'static str]),
    /// Kafka's `ThrottledReplicaListValidator`: `*`, or a list of `partitionId:brokerId` items.
    ThrottledReplicas,
}

impl fmt::Display for Validator {
    /// The "Valid Values" text of Kafka's config documentation (empty for [`Validator::None`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Validator::None => Ok(()),
            Validator::AtLeast(min) => write!(f, "[{min},...]"),
            Validator::Between(min, max) => write!(f, "[{min},...,{max}]"),
            Validator::BetweenOr { min, max, or } => write!(f, "[{min},...,{max}] or {or}"),
            Validator::OneOf(values) | Validator::ListOf(values) => {
                write!(f, "[{}]", values.join(", "))
            }
            Validator::ThrottledReplicas => {
                f.write_str("[partitionId]:[brokerId],[partitionId]:[brokerId],...")
            }
        }
    }
}

/// One topic-level config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigDef {
    /// The config name, e.g. `retention.ms`.
    pub name: &'static str,
    /// Its type.
    pub kind: ConfigType,
    /// The default as Kafka documents it for a topic (`1073741824`, `delete`, `false`, `""` for
    /// an empty list). The only config with no default at all is the internal
    /// `internal.segment.bytes`, whose `default` is `""`; see [`ConfigDef::has_default`].
    pub default: &'static str,
    /// The values it accepts beyond its type.
    pub validator: Validator,
    /// The broker property that supplies the cluster-wide default (Kafka's "Server Default
    /// Property"), if there is one.
    pub server_default_property: Option<&'static str>,
    /// Kafka defines it with `defineInternal`: accepted, but left out of the documentation.
    pub internal: bool,
}

impl ConfigDef {
    /// False only for a config whose Kafka default is `null` (`internal.segment.bytes`).
    pub fn has_default(&self) -> bool {
        !(self.internal && self.default.is_empty())
    }

    /// Checks `value` for this config; the error is Kafka's `ConfigException` text.
    pub fn validate(&self, value: &str) -> Result<(), String> {
        self.parse(value).map(|_| ())
    }

    /// Checks `value` given for the broker property that sets this config's cluster-wide
    /// default (`log.message.timestamp.type` for `message.timestamp.type`): the same rules, and
    /// the error names that property, as the broker's does.
    pub fn validate_server_default(&self, value: &str) -> Result<(), String> {
        let name = self.server_default_property.unwrap_or(self.name);
        self.parse_as(name, value).map(|_| ())
    }

    /// Parses and validates `value` as Kafka does (trimmed, then typed, then validated).
    fn parse(&self, value: &str) -> Result<Value, String> {
        self.parse_as(self.name, value)
    }

    /// [`ConfigDef::parse`], with errors that name `name`.
    fn parse_as(&self, name: &str, value: &str) -> Result<Value, String> {
        let parsed = parse_type(name, value, self.kind)?;
        let parsed = match (parsed, self.validator) {
            // Kafka drops duplicate items before a `ValidList` sees them.
            (Value::List(items), Validator::ListOf(_)) => Value::List(dedup(items)),
            (parsed, _) => parsed,
        };
        check(name, &parsed, self.validator)?;
        Ok(parsed)
    }
}

/// Shorthand for the table below.
const fn def(
    name: &'static str,
    kind: ConfigType,
    default: &'static str,
    validator: Validator,
    server_default_property: Option<&'static str>,
) -> ConfigDef {
    ConfigDef {
        name,
        kind,
        default,
        validator,
        server_default_property,
        internal: false,
    }
}

const I64_MAX: &str = "9223372036854775807";
const COMPRESSION_TYPES: &[&str] = &["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"];
const TIMESTAMP_TYPES: &[&str] = &["CreateTime", "LogAppendTime"];
const CLEANUP_POLICIES: &[&str] = &["compact", "delete"];

/// Every topic config, in the order Kafka's `LogConfig` defines them.
#[rustfmt::skip]
static CONFIGS: [ConfigDef; 34] = [
    def("segment.bytes", T::Int, "1073741824", V::AtLeast(1024 * 1024), Some("log.segment.bytes")),
    def("segment.ms", T::Long, "604800000", V::AtLeast(1), Some("log.roll.ms")),
    def("segment.jitter.ms", T::Long, "0", V::AtLeast(0), Some("log.roll.jitter.ms")),
    def("segment.index.bytes", T::Int, "10485760", V::AtLeast(4), Some("log.index.size.max.bytes")),
    def("flush.messages", T::Long, I64_MAX, V::AtLeast(1), Some("log.flush.interval.messages")),
    def("flush.ms", T::Long, I64_MAX, V::AtLeast(0), Some("log.flush.interval.ms")),
    def("retention.bytes", T::Long, "-1", V::None, Some("log.retention.bytes")),
    def("retention.ms", T::Long, "604800000", V::AtLeast(-1), Some("log.retention.ms")),
    def("max.message.bytes", T::Int, "1048588", V::AtLeast(0), Some("message.max.bytes")),
    def("index.interval.bytes", T::Int, "4096", V::AtLeast(0), Some("log.index.interval.bytes")),
    def("delete.retention.ms", T::Long, "86400000", V::AtLeast(0), Some("log.cleaner.delete.retention.ms")),
    def("min.compaction.lag.ms", T::Long, "0", V::AtLeast(0), Some("log.cleaner.min.compaction.lag.ms")),
    def("max.compaction.lag.ms", T::Long, I64_MAX, V::AtLeast(1), Some("log.cleaner.max.compaction.lag.ms")),
    def("file.delete.delay.ms", T::Long, "60000", V::AtLeast(0), Some("log.segment.delete.delay.ms")),
    def("min.cleanable.dirty.ratio", T::Double, "0.5", V::Between(0, 1), Some("log.cleaner.min.cleanable.ratio")),
    def("cleanup.policy", T::List, "delete", V::ListOf(CLEANUP_POLICIES), Some("log.cleanup.policy")),
    def("unclean.leader.election.enable", T::Boolean, "false", V::None, Some("unclean.leader.election.enable")),
    def("min.insync.replicas", T::Int, "1", V::AtLeast(1), Some("min.insync.replicas")),
    def("compression.type", T::String, "producer", V::OneOf(COMPRESSION_TYPES), Some("compression.type")),
    def("compression.gzip.level", T::Int, "-1", V::BetweenOr { min: 1, max: 9, or: -1 }, Some("compression.gzip.level")),
    def("compression.lz4.level", T::Int, "9", V::Between(1, 17), Some("compression.lz4.level")),
    def("compression.zstd.level", T::Int, "3", V::Between(-131072, 22), Some("compression.zstd.level")),
    def("preallocate", T::Boolean, "false", V::None, Some("log.preallocate")),
    def("message.timestamp.type", T::String, "CreateTime", V::OneOf(TIMESTAMP_TYPES), Some("log.message.timestamp.type")),
    def("message.timestamp.before.max.ms", T::Long, I64_MAX, V::AtLeast(0), Some("log.message.timestamp.before.max.ms")),
    def("message.timestamp.after.max.ms", T::Long, "3600000", V::AtLeast(0), Some("log.message.timestamp.after.max.ms")),
    def("leader.replication.throttled.replicas", T::List, "", V::ThrottledReplicas, None),
    def("follower.replication.throttled.replicas", T::List, "", V::ThrottledReplicas, None),
    def("remote.storage.enable", T::Boolean, "false", V::None, None),
    def("local.retention.ms", T::Long, "-2", V::AtLeast(-2), Some("log.local.retention.ms")),
    def("local.retention.bytes", T::Long, "-2", V::AtLeast(-2), Some("log.local.retention.bytes")),
    def("remote.log.copy.disable", T::Boolean, "false", V::None, None),
    def("remote.log.delete.on.disable", T::Boolean, "false", V::None, None),
    // Kafka's test-only override of `segment.bytes` without its 1 MiB floor; no default (null).
    ConfigDef {
        name: "internal.segment.bytes",
        kind: T::Int,
        default: "",
        validator: V::None,
        server_default_property: None,
        internal: true,
    },
];

/// Every topic config Kafka 4.x accepts, in Kafka's definition order (which is also the order
/// [`validate_all`] checks values in). Includes the one internal config,
/// `internal.segment.bytes`, marked [`ConfigDef::internal`].
pub fn all() -> &'static [ConfigDef] {
    &CONFIGS
}

/// The config called exactly `name` (names are case-sensitive).
pub fn find(name: &str) -> Option<&'static ConfigDef> {
    CONFIGS.iter().find(|d| d.name == name)
}

/// Validates one `name=value` pair the way Kafka's `LogConfig.validate` does. The error is
/// Kafka's text: `Unknown topic config name: <name>` for a name not in [`all`], otherwise a
/// `ConfigException` message, `Invalid value <value> for configuration <name>: <reason>`:
///
/// - bad number: `Not a number of type INT` (or `LONG`, `DOUBLE`), with the value as given;
/// - bad boolean (only `true`/`false`, any case): `Expected value to be either true or false`;
/// - ranges: `Value must be at least <min>`, `Value must be no more than <max>`, and for
///   `compression.gzip.level` `Value must be between 1 and 9 or equal to -1`;
/// - strings: `String must be one of: <v1>, <v2>, …` (for a list, about the offending item);
/// - an empty list item: `Configuration '<name>' values must not be empty.` (no prefix);
/// - throttled replicas: `<name> must be the literal '*' or a list of replicas in the following
///   format: [partitionId]:[brokerId],[partitionId]:[brokerId],...`.
///
/// After parsing, a number is shown as Java prints it (`+5` becomes `5`, `2` as a double
/// becomes `2.0`). Cross-config rules need the whole set: see [`validate_all`].
pub fn validate(name: &str, value: &str) -> Result<(), String> {
    find(name)
        .ok_or_else(|| format!("Unknown topic config name: {name}"))?
        .validate(value)
}

/// Validates a whole set of overrides as `kafka-topics --create` does: every name first, then
/// every value in Kafka's definition order, then the cross-config rule
/// `conflict topic config setting min.compaction.lag.ms (<min>) > max.compaction.lag.ms (<max>)`
/// (defaults fill in whichever side is not set).
pub fn validate_all(configs: &BTreeMap<String, String>) -> Result<(), String> {
    if let Some(unknown) = configs.keys().find(|name| find(name).is_none()) {
        return Err(format!("Unknown topic config name: {unknown}"));
    }
    for def in all() {
        if let Some(value) = configs.get(def.name) {
            def.validate(value)?;
        }
    }
    let min = effective_i64(configs, "min.compaction.lag.ms");
    let max = effective_i64(configs, "max.compaction.lag.ms");
    if min > max {
        return Err(format!(
            "conflict topic config setting min.compaction.lag.ms ({min}) > max.compaction.lag.ms ({max})"
        ));
    }
    Ok(())
}

/// The warning Kafka logs (at WARN, from `org.apache.kafka.common.config.ConfigDef`) when a
/// list config such as `cleanup.policy` repeats an item, which it then drops:
/// `Configuration key "cleanup.policy" contains duplicate values. Duplicates will be removed.
/// The original value is: [delete, delete], the updated value is: [delete]`.
/// `None` when there is nothing to warn about (including unknown names and invalid values).
pub fn duplicate_warning(name: &str, value: &str) -> Option<String> {
    let def = find(name)?;
    if !matches!(def.validator, Validator::ListOf(_)) {
        return None;
    }
    let Ok(Value::List(items)) = parse_type(def.name, value, def.kind) else {
        return None;
    };
    let unique = dedup(items.clone());
    (unique.len() != items.len()).then(|| {
        format!(
            "Configuration key \"{name}\" contains duplicate values. Duplicates will be removed. \
             The original value is: {}, the updated value is: {}",
            java_list(&items),
            java_list(&unique)
        )
    })
}

/// The effective value of `name` for a topic: its override in `overrides` as stored, else the
/// Kafka default from the table (`""` for a name the table does not know). Borrowed, because
/// both the override and the `'static` default outlive the call.
pub fn effective<'a>(overrides: &'a BTreeMap<String, String>, name: &str) -> &'a str {
    match overrides.get(name) {
        Some(value) => value,
        None => find(name).map_or("", |d| d.default),
    }
}

/// The parsed effective value of `name`: a valid override, else the default. An override that
/// does not pass [`validate`] (a hand-edited metadata file, say) is ignored in favour of the
/// default, so the log never runs with, e.g., a negative `segment.bytes`.
fn effective_value(overrides: &BTreeMap<String, String>, name: &str) -> Value {
    let def = find(name).unwrap_or_else(|| panic!("unknown topic config name {name:?}"));
    if let Some(value) = overrides.get(name).and_then(|v| def.parse(v).ok()) {
        return value;
    }
    assert!(def.has_default(), "topic config {name:?} has no default");
    def.parse(def.default)
        .unwrap_or_else(|e| panic!("bad default for {name:?}: {e}"))
}

/// The effective value of an `Int` or `Long` config: a valid override, else the default. An
/// override that fails [`validate`] (a hand-edited metadata file, say) is ignored in favour of
/// the default, so the log never runs with, e.g., a negative `segment.bytes`.
///
/// # Panics
/// If `name` is not a known `Int`/`Long` config, or has no default (`internal.segment.bytes`;
/// use [`effective_segment_bytes`]). These are programming errors, never user input.
pub fn effective_i64(overrides: &BTreeMap<String, String>, name: &str) -> i64 {
    match effective_value(overrides, name) {
        Value::Int(n) => n,
        _ => panic!("topic config {name:?} is not an INT or LONG"),
    }
}

/// The effective value of a `Boolean` config (a valid override, else the default).
///
/// # Panics
/// If `name` is not a known `Boolean` config.
pub fn effective_bool(overrides: &BTreeMap<String, String>, name: &str) -> bool {
    match effective_value(overrides, name) {
        Value::Bool(b) => b,
        _ => panic!("topic config {name:?} is not a BOOLEAN"),
    }
}

/// The effective value of a `Double` config (a valid override, else the default).
///
/// # Panics
/// If `name` is not a known `Double` config.
pub fn effective_f64(overrides: &BTreeMap<String, String>, name: &str) -> f64 {
    match effective_value(overrides, name) {
        Value::Double(x) => x,
        _ => panic!("topic config {name:?} is not a DOUBLE"),
    }
}

/// The effective items of a `List` config, split on commas as Kafka does, duplicates dropped
/// for `cleanup.policy` (a valid override, else the default; `[]` for an empty list).
///
/// # Panics
/// If `name` is not a known `List` config.
pub fn effective_list(overrides: &BTreeMap<String, String>, name: &str) -> Vec<String> {
    match effective_value(overrides, name) {
        Value::List(items) => items,
        _ => panic!("topic config {name:?} is not a LIST"),
    }
}

/// The segment size the log rolls at, as Kafka's `LogConfig.segmentSize()` computes it:
/// `internal.segment.bytes` when it is set (and valid), else the effective `segment.bytes`.
pub fn effective_segment_bytes(overrides: &BTreeMap<String, String>) -> i64 {
    let internal = find("internal.segment.bytes").expect("in the table");
    match overrides.get(internal.name).map(|v| internal.parse(v)) {
        Some(Ok(Value::Int(n))) => n,
        _ => effective_i64(overrides, "segment.bytes"),
    }
}

/// A parsed value. `Int` holds both INT and LONG values (already range-checked for their type).
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Bool(bool),
    Int(i64),
    Double(f64),
    Str(String),
    List(Vec<String>),
}

/// Kafka's `ConfigException(name, value, message)` text.
fn invalid(name: &str, value: impl fmt::Display, message: impl fmt::Display) -> String {
    format!("Invalid value {value} for configuration {name}: {message}")
}

/// Java's `String.trim()`: strips every char up to and including U+0020 from both ends.
fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// Kafka's `ConfigDef.parseType` for a string value. Errors name the value as given (untrimmed).
fn parse_type(name: &str, value: &str, kind: ConfigType) -> Result<Value, String> {
    let trimmed = java_trim(value);
    let not_a_number = || {
        invalid(
            name,
            value,
            format_args!("Not a number of type {}", kind.kafka_name()),
        )
    };
    match kind {
        ConfigType::Boolean => {
            if java_equals_ignore_case(trimmed, "true") {
                Ok(Value::Bool(true))
            } else if java_equals_ignore_case(trimmed, "false") {
                Ok(Value::Bool(false))
            } else {
                Err(invalid(
                    name,
                    value,
                    "Expected value to be either true or false",
                ))
            }
        }
        ConfigType::Int => java_parse_integer(trimmed)
            .and_then(|n| i32::try_from(n).ok())
            .map(|n| Value::Int(n.into()))
            .ok_or_else(not_a_number),
        ConfigType::Long => java_parse_integer(trimmed)
            .map(Value::Int)
            .ok_or_else(not_a_number),
        ConfigType::Double => java_parse_double(trimmed)
            .map(Value::Double)
            .ok_or_else(not_a_number),
        // No topic config is a class; Kafka would load the class, we keep the name.
        ConfigType::String | ConfigType::Class => Ok(Value::Str(trimmed.to_string())),
        ConfigType::List => Ok(Value::List(split_list(trimmed))),
    }
}

/// Kafka's list parsing of an already-trimmed value: empty means no items, otherwise split on
/// commas with the whitespace around each comma removed; empty items are kept (`a,,b`, `a,`).
fn split_list(trimmed: &str) -> Vec<String> {
    if trimmed.is_empty() {
        return Vec::new();
    }
    // Java's `\s`: space, tab, newline, vertical tab, form feed, carriage return.
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r');
    trimmed
        .split(',')
        .map(|item| item.trim_matches(is_space).to_string())
        .collect()
}

/// Keeps the first occurrence of each item, in order (Java's `stream().distinct()`).
fn dedup(items: Vec<String>) -> Vec<String> {
    let mut unique: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    unique
}

/// Java's `List.toString()`: `[a, b]`.
fn java_list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// Applies a validator to a parsed value; the error is Kafka's text for that validator.
fn check(name: &str, value: &Value, validator: Validator) -> Result<(), String> {
    match (validator, value) {
        (Validator::None, _) => Ok(()),
        (Validator::AtLeast(min), _) => check_range(name, value, Some(min), None),
        (Validator::Between(min, max), _) => check_range(name, value, Some(min), Some(max)),
        (Validator::BetweenOr { min, max, or }, Value::Int(n)) => {
            if *n > max || (*n < min && *n != or) {
                Err(invalid(
                    name,
                    n,
                    format_args!("Value must be between {min} and {max} or equal to {or}"),
                ))
            } else {
                Ok(())
            }
        }
        (Validator::OneOf(allowed), Value::Str(s)) => check_one_of(name, s, allowed),
        (Validator::ListOf(allowed), Value::List(items)) => {
            for item in items {
                if item.is_empty() {
                    return Err(format!("Configuration '{name}' values must not be empty."));
                }
                check_one_of(name, item, allowed)?;
            }
            Ok(())
        }
        (Validator::ThrottledReplicas, Value::List(items)) => {
            let all_replicas = items
                .iter()
                .all(|item| is_replica_or_empty(java_trim(item)));
            let joined: String = items.iter().map(|item| java_trim(item)).collect();
            if all_replicas || joined == "*" {
                Ok(())
            } else {
                Err(invalid(
                    name,
                    java_list(items),
                    format_args!(
                        "{name} must be the literal '*' or a list of replicas in the following format: \
                         [partitionId]:[brokerId],[partitionId]:[brokerId],..."
                    ),
                ))
            }
        }
        // The table pairs each validator with a matching type, so nothing else can occur.
        _ => Ok(()),
    }
}

/// `Range.ensureValid`: bounds are compared as doubles, so NaN passes, as in Kafka.
fn check_range(
    name: &str,
    value: &Value,
    min: Option<i64>,
    max: Option<i64>,
) -> Result<(), String> {
    let (x, shown) = match value {
        Value::Int(n) => (*n as f64, n.to_string()),
        Value::Double(x) => (*x, java_double(*x)),
        _ => return Ok(()),
    };
    if let Some(min) = min
        && x < min as f64
    {
        return Err(invalid(
            name,
            shown,
            format_args!("Value must be at least {min}"),
        ));
    }
    if let Some(max) = max
        && x > max as f64
    {
        return Err(invalid(
            name,
            shown,
            format_args!("Value must be no more than {max}"),
        ));
    }
    Ok(())
}

/// `ValidString.ensureValid`: case-sensitive membership.
fn check_one_of(name: &str, value: &str, allowed: &[&str]) -> Result<(), String> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(invalid(
            name,
            value,
            format_args!("String must be one of: {}", allowed.join(", ")),
        ))
    }
}

/// Matches the regex `([0-9]+:[0-9]+)?` against the whole item.
fn is_replica_or_empty(item: &str) -> bool {
    if item.is_empty() {
        return true;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(item.split_once(':'), Some((p, b)) if digits(p) && digits(b))
}

/// Java's `String.equalsIgnoreCase` (per UTF-16 unit: equal, or equal after upper-casing, or
/// after upper- then lower-casing). `expected` must be ASCII.
fn java_equals_ignore_case(s: &str, expected: &str) -> bool {
    if s.encode_utf16().count() != expected.len() {
        return false;
    }
    let simple_upper = |c: char| {
        let mut up = c.to_uppercase();
        match (up.next(), up.next()) {
            (Some(u), None) => u,
            _ => c,
        }
    };
    let simple_lower = |c: char| {
        let mut low = c.to_lowercase();
        match (low.next(), low.next()) {
            (Some(l), None) => l,
            _ => c,
        }
    };
    s.chars().zip(expected.chars()).all(|(a, b)| {
        let (ua, ub) = (simple_upper(a), simple_upper(b));
        a == b || ua == ub || simple_lower(ua) == simple_lower(ub)
    })
}

/// Java's `Long.parseLong` of an already-trimmed string: an optional `+` or `-`, then ASCII
/// digits. (Java also accepts non-ASCII Unicode digits; kafkit does not.)
fn java_parse_integer(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Java's `Double.parseDouble` of an already-trimmed string: optional sign, then `NaN`,
/// `Infinity`, a decimal (`1`, `1.`, `.5`, `1e-3`) or a hexadecimal (`0x1.8p1`) literal, with an
/// optional `f`/`F`/`d`/`D` suffix on the literals.
fn java_parse_double(s: &str) -> Option<f64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = match body {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        _ => {
            let literal = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
            match literal
                .strip_prefix("0x")
                .or_else(|| literal.strip_prefix("0X"))
            {
                Some(hex) => parse_hex_double(hex)?,
                None => parse_decimal_double(literal)?,
            }
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// `digits? ('.' digits?)? ([eE] [+-]? digits)?` with at least one mantissa digit.
fn parse_decimal_double(literal: &str) -> Option<f64> {
    let (mantissa, exponent) = match literal.find(['e', 'E']) {
        Some(i) => (&literal[..i], Some(&literal[i + 1..])),
        None => (literal, None),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.len() + frac_part.len() == 0 || !all_digits(int_part) || !all_digits(frac_part) {
        return None;
    }
    if let Some(exp) = exponent {
        let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        if exp_digits.is_empty() || !all_digits(exp_digits) {
            return None;
        }
    }
    literal.parse().ok()
}

/// `hexdigits? ('.' hexdigits?)? [pP] [+-]? digits` with at least one mantissa digit.
fn parse_hex_double(hex: &str) -> Option<f64> {
    let (mantissa, exponent) = hex.split_once(['p', 'P'])?;
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.len() + frac_part.len() == 0 {
        return None;
    }
    let mut value = 0.0f64;
    for c in int_part.chars().chain(frac_part.chars()) {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let exp_digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    if exp_digits.is_empty() || !exp_digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Saturate huge exponents: the result is 0 or infinity either way.
    let exp: i32 = exponent.parse().unwrap_or(if exponent.starts_with('-') {
        i32::MIN / 2
    } else {
        i32::MAX / 2
    });
    let frac_bits = i32::try_from(frac_part.len() * 4).ok()?;
    Some(value * 2f64.powi(exp.saturating_sub(frac_bits)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn err(name: &str, value: &str) -> String {
        validate(name, value).unwrap_err()
    }

    #[test]
    fn table_has_every_4x_topic_config_once() {
        let names: Vec<&str> = all().iter().map(|d| d.name).collect();
        for name in [
            "cleanup.policy",
            "compression.type",
            "compression.gzip.level",
            "compression.lz4.level",
            "compression.zstd.level",
            "delete.retention.ms",
            "file.delete.delay.ms",
            "flush.messages",
            "flush.ms",
            "follower.replication.throttled.replicas",
            "index.interval.bytes",
            "leader.replication.throttled.replicas",
            "local.retention.bytes",
            "local.retention.ms",
            "max.compaction.lag.ms",
            "max.message.bytes",
            "message.timestamp.after.max.ms",
            "message.timestamp.before.max.ms",
            "message.timestamp.type",
            "min.cleanable.dirty.ratio",
            "min.compaction.lag.ms",
            "min.insync.replicas",
            "preallocate",
            "remote.log.copy.disable",
            "remote.log.delete.on.disable",
            "remote.storage.enable",
            "retention.bytes",
            "retention.ms",
            "segment.bytes",
            "segment.index.bytes",
            "segment.jitter.ms",
            "segment.ms",
            "unclean.leader.election.enable",
            "internal.segment.bytes",
        ] {
            assert!(names.contains(&name), "{name} missing");
        }
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicate names");
        for removed in [
            "message.downconversion.enable",
            "message.format.version",
            "message.timestamp.difference.max.ms",
        ] {
            assert_eq!(find(removed), None);
            assert_eq!(
                err(removed, "x"),
                format!("Unknown topic config name: {removed}")
            );
        }
        assert_eq!(all().iter().filter(|d| d.internal).count(), 1);
    }

    #[test]
    fn every_default_is_valid() {
        for def in all().iter().filter(|d| d.has_default()) {
            assert_eq!(def.validate(def.default), Ok(()), "{}", def.name);
        }
        assert!(!find("internal.segment.bytes").unwrap().has_default());
    }

    #[test]
    fn documented_defaults() {
        let default = |name| find(name).unwrap().default;
        assert_eq!(default("segment.bytes"), "1073741824");
        assert_eq!(default("retention.ms"), "604800000");
        assert_eq!(default("retention.bytes"), "-1");
        assert_eq!(default("max.message.bytes"), "1048588");
        assert_eq!(default("segment.ms"), "604800000");
        assert_eq!(default("index.interval.bytes"), "4096");
        assert_eq!(default("segment.index.bytes"), "10485760");
        assert_eq!(default("cleanup.policy"), "delete");
        assert_eq!(default("compression.type"), "producer");
        assert_eq!(default("message.timestamp.type"), "CreateTime");
        assert_eq!(default("min.insync.replicas"), "1");
        assert_eq!(default("message.timestamp.after.max.ms"), "3600000");
        assert_eq!(default("flush.ms"), "9223372036854775807");
        assert_eq!(default("local.retention.ms"), "-2");
        assert_eq!(default("leader.replication.throttled.replicas"), "");
        assert_eq!(find("segment.ms").unwrap().kind, ConfigType::Long);
        assert_eq!(find("segment.bytes").unwrap().kind, ConfigType::Int);
        assert_eq!(
            find("segment.ms").unwrap().server_default_property,
            Some("log.roll.ms")
        );
    }

    #[test]
    fn valid_values_text() {
        let text = |name| find(name).unwrap().validator.to_string();
        assert_eq!(text("segment.bytes"), "[1048576,...]");
        assert_eq!(text("min.cleanable.dirty.ratio"), "[0,...,1]");
        assert_eq!(text("compression.gzip.level"), "[1,...,9] or -1");
        assert_eq!(text("cleanup.policy"), "[compact, delete]");
        assert_eq!(
            text("compression.type"),
            "[uncompressed, zstd, lz4, snappy, gzip, producer]"
        );
        assert_eq!(text("retention.bytes"), "");
    }

    #[test]
    fn unknown_name() {
        assert_eq!(
            err("segment.byte", "1"),
            "Unknown topic config name: segment.byte"
        );
        assert_eq!(
            err("Segment.bytes", "1"),
            "Unknown topic config name: Segment.bytes"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(validate("segment.bytes", "1048576"), Ok(()));
        assert_eq!(validate("segment.bytes", " 2097152 "), Ok(()));
        assert_eq!(validate("segment.bytes", "+2097152"), Ok(()));
        assert_eq!(
            err("segment.bytes", "abc"),
            "Invalid value abc for configuration segment.bytes: Not a number of type INT"
        );
        assert_eq!(
            err("segment.bytes", "12"),
            "Invalid value 12 for configuration segment.bytes: Value must be at least 1048576"
        );
        assert_eq!(
            err("segment.bytes", "2147483648"),
            "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT"
        );
        assert_eq!(
            err("segment.bytes", ""),
            "Invalid value  for configuration segment.bytes: Not a number of type INT"
        );
        assert_eq!(
            err("segment.bytes", "1_000_000"),
            "Invalid value 1_000_000 for configuration segment.bytes: Not a number of type INT"
        );
        assert_eq!(
            err("segment.ms", "1.5"),
            "Invalid value 1.5 for configuration segment.ms: Not a number of type LONG"
        );
        assert_eq!(
            err("segment.ms", "+0"),
            "Invalid value 0 for configuration segment.ms: Value must be at least 1"
        );
        assert_eq!(validate("retention.ms", "-1"), Ok(()));
        assert_eq!(
            err("retention.ms", "-2"),
            "Invalid value -2 for configuration retention.ms: Value must be at least -1"
        );
        assert_eq!(validate("retention.bytes", "-12345"), Ok(()));
        assert_eq!(validate("flush.messages", "9223372036854775807"), Ok(()));
        assert_eq!(
            err("flush.messages", "9223372036854775808"),
            "Invalid value 9223372036854775808 for configuration flush.messages: Not a number of type LONG"
        );
        assert_eq!(
            err("local.retention.bytes", "-3"),
            "Invalid value -3 for configuration local.retention.bytes: Value must be at least -2"
        );
        assert_eq!(validate("internal.segment.bytes", "-5"), Ok(()));
    }

    #[test]
    fn compression_levels() {
        for ok in ["-1", "1", "9"] {
            assert_eq!(validate("compression.gzip.level", ok), Ok(()));
        }
        for bad in ["0", "10", "-2"] {
            assert_eq!(
                err("compression.gzip.level", bad),
                format!(
                    "Invalid value {bad} for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1"
                )
            );
        }
        assert_eq!(
            err("compression.lz4.level", "18"),
            "Invalid value 18 for configuration compression.lz4.level: Value must be no more than 17"
        );
        assert_eq!(
            err("compression.lz4.level", "0"),
            "Invalid value 0 for configuration compression.lz4.level: Value must be at least 1"
        );
        assert_eq!(validate("compression.zstd.level", "-131072"), Ok(()));
        assert_eq!(
            err("compression.zstd.level", "-131073"),
            "Invalid value -131073 for configuration compression.zstd.level: Value must be at least -131072"
        );
    }

    #[test]
    fn doubles() {
        for ok in [
            "0", "1", "0.5", ".5", "1.", "5e-1", "0.25d", "0x0.8p0", "NaN", "-0",
        ] {
            assert_eq!(validate("min.cleanable.dirty.ratio", ok), Ok(()), "{ok}");
        }
        assert_eq!(
            err("min.cleanable.dirty.ratio", "2"),
            "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"
        );
        assert_eq!(
            err("min.cleanable.dirty.ratio", "-0.5"),
            "Invalid value -0.5 for configuration min.cleanable.dirty.ratio: Value must be at least 0"
        );
        assert_eq!(
            err("min.cleanable.dirty.ratio", "1e10"),
            "Invalid value 1.0E10 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"
        );
        assert_eq!(
            err("min.cleanable.dirty.ratio", "Infinity"),
            "Invalid value Infinity for configuration min.cleanable.dirty.ratio: Value must be no more than 1"
        );
        for bad in ["abc", "inf", "nan", "1e", "", ".", "0x1", "1,5"] {
            assert_eq!(
                err("min.cleanable.dirty.ratio", bad),
                format!(
                    "Invalid value {bad} for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE"
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn booleans() {
        for ok in ["true", "false", "TRUE", "False", " true ", "fal\u{17f}e"] {
            assert_eq!(validate("preallocate", ok), Ok(()), "{ok}");
        }
        for bad in ["x", "yes", "1", "", "truee"] {
            assert_eq!(
                err("preallocate", bad),
                format!(
                    "Invalid value {bad} for configuration preallocate: Expected value to be either true or false"
                )
            );
        }
    }

    #[test]
    fn strings() {
        assert_eq!(validate("compression.type", "zstd"), Ok(()));
        assert_eq!(validate("compression.type", " lz4 "), Ok(()));
        assert_eq!(
            err("compression.type", "GZIP"),
            "Invalid value GZIP for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"
        );
        assert_eq!(
            err("compression.type", ""),
            "Invalid value  for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"
        );
        assert_eq!(validate("message.timestamp.type", "LogAppendTime"), Ok(()));
        assert_eq!(
            err("message.timestamp.type", "createtime"),
            "Invalid value createtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime"
        );
    }

    #[test]
    fn cleanup_policy_list() {
        for ok in [
            "delete",
            "compact",
            "compact,delete",
            "delete , compact",
            "",
            "  ",
            "delete,delete",
        ] {
            assert_eq!(validate("cleanup.policy", ok), Ok(()), "{ok:?}");
        }
        assert_eq!(
            err("cleanup.policy", "foo"),
            "Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete"
        );
        assert_eq!(
            err("cleanup.policy", "delete,Compact"),
            "Invalid value Compact for configuration cleanup.policy: String must be one of: compact, delete"
        );
        assert_eq!(
            err("cleanup.policy", "delete,"),
            "Configuration 'cleanup.policy' values must not be empty."
        );
        assert_eq!(
            err("cleanup.policy", ",delete"),
            "Configuration 'cleanup.policy' values must not be empty."
        );
        assert_eq!(
            err("cleanup.policy", "foo,,"),
            "Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete"
        );
    }

    #[test]
    fn duplicate_list_items_warn() {
        assert_eq!(
            duplicate_warning("cleanup.policy", "delete, delete,compact").as_deref(),
            Some(
                "Configuration key \"cleanup.policy\" contains duplicate values. Duplicates will be removed. \
                 The original value is: [delete, delete, compact], the updated value is: [delete, compact]"
            )
        );
        assert_eq!(duplicate_warning("cleanup.policy", "delete,compact"), None);
        assert_eq!(duplicate_warning("segment.bytes", "1"), None);
        assert_eq!(duplicate_warning("nope", "a,a"), None);
    }

    #[test]
    fn throttled_replicas() {
        let name = "leader.replication.throttled.replicas";
        for ok in ["", "*", "0:1", "0:1,1:2", "0:1, 1:2", "*,", "0:1,"] {
            assert_eq!(validate(name, ok), Ok(()), "{ok:?}");
        }
        assert_eq!(
            err(name, "0:1,x"),
            "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: \
             leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: \
             [partitionId]:[brokerId],[partitionId]:[brokerId],..."
        );
        assert!(validate("follower.replication.throttled.replicas", "*,0:1").is_err());
        assert!(validate("follower.replication.throttled.replicas", "0:").is_err());
    }

    #[test]
    fn validate_all_checks_names_values_and_compaction_lags() {
        assert_eq!(validate_all(&map(&[])), Ok(()));
        assert_eq!(
            validate_all(&map(&[("retention.ms", "1"), ("bogus", "1")])),
            Err("Unknown topic config name: bogus".to_string())
        );
        assert_eq!(
            validate_all(&map(&[("retention.ms", "-5")])),
            Err(
                "Invalid value -5 for configuration retention.ms: Value must be at least -1"
                    .to_string()
            )
        );
        assert_eq!(
            validate_all(&map(&[("min.compaction.lag.ms", "10"), ("max.compaction.lag.ms", "5")])),
            Err("conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)".to_string())
        );
        assert_eq!(
            validate_all(&map(&[
                ("min.compaction.lag.ms", "10"),
                ("max.compaction.lag.ms", "10")
            ])),
            Ok(())
        );
    }

    #[test]
    fn effective_values() {
        let overrides = map(&[
            ("retention.ms", "1000"),
            ("segment.bytes", "bogus"),
            ("preallocate", "TRUE"),
            ("cleanup.policy", "compact, delete,compact"),
            ("min.cleanable.dirty.ratio", "0.1"),
        ]);
        assert_eq!(effective(&overrides, "retention.ms"), "1000");
        assert_eq!(effective(&overrides, "retention.bytes"), "-1");
        assert_eq!(effective(&overrides, "not.a.config"), "");
        assert_eq!(effective_i64(&overrides, "retention.ms"), 1000);
        assert_eq!(effective_i64(&overrides, "retention.bytes"), -1);
        // An invalid stored override falls back to the default.
        assert_eq!(effective_i64(&overrides, "segment.bytes"), 1_073_741_824);
        assert_eq!(effective_i64(&overrides, "flush.messages"), i64::MAX);
        assert!(effective_bool(&overrides, "preallocate"));
        assert!(!effective_bool(&overrides, "remote.storage.enable"));
        assert_eq!(effective_f64(&overrides, "min.cleanable.dirty.ratio"), 0.1);
        assert_eq!(
            effective_list(&overrides, "cleanup.policy"),
            ["compact", "delete"]
        );
        assert_eq!(effective_list(&map(&[]), "cleanup.policy"), ["delete"]);
        assert!(effective_list(&map(&[]), "leader.replication.throttled.replicas").is_empty());
    }

    #[test]
    fn segment_bytes_honours_the_internal_override() {
        assert_eq!(effective_segment_bytes(&map(&[])), 1_073_741_824);
        assert_eq!(
            effective_segment_bytes(&map(&[("segment.bytes", "2097152")])),
            2_097_152
        );
        assert_eq!(
            effective_segment_bytes(&map(&[
                ("segment.bytes", "2097152"),
                ("internal.segment.bytes", "1024")
            ])),
            1024
        );
    }

    #[test]
    #[should_panic(expected = "is not an INT or LONG")]
    fn effective_i64_rejects_non_numeric_configs() {
        effective_i64(&BTreeMap::new(), "cleanup.policy");
    }

    #[test]
    #[should_panic(expected = "unknown topic config name")]
    fn effective_i64_rejects_unknown_names() {
        effective_i64(&BTreeMap::new(), "retention.mss");
    }
}
