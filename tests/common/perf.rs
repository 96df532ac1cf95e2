//! The line formats of Kafka's perf tests (`ProducerPerformance`, `ConsumerPerformance`), as
//! regular expressions: both the Java tools' output and ours must match them, numbers aside.

use regex::Regex;

/// A number as Java's `%.Nf` prints it (or its `NaN` and `Infinity`).
const DECIMAL: &str = r"(?:-?\d+\.\d+|NaN|Infinity)";

/// The producer's periodic line: `N records sent, X records/sec (Y MB/sec), Z ms avg latency, W
/// ms max latency.`
pub fn producer_window() -> Regex {
    Regex::new(&format!(
        r"^\d+ records sent, {d} records/sec \({d} MB/sec\), {d} ms avg latency, {d} ms max latency\.$",
        d = DECIMAL
    ))
    .unwrap()
}

/// The producer's summary line (`steady` for the steady-state one); captures the count.
pub fn producer_total(steady: bool) -> Regex {
    Regex::new(&format!(
        r"^(\d+){} records sent, {d} records/sec \({d} MB/sec\), {d} ms avg latency, {d} ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$",
        if steady { " steady state" } else { "" },
        d = DECIMAL
    ))
    .unwrap()
}

/// The consumer's header, without and with `--show-detailed-stats`.
pub const CONSUMER_HEADER: &str = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec";
pub const CONSUMER_DETAILED_HEADER: &str = "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec";

/// A time in the default `--date-format`, `yyyy-MM-dd HH:mm:ss:SSS`.
const TIME: &str = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}:\d{3}";

/// The consumer's line of totals; captures the record count.
pub fn consumer_totals() -> Regex {
    Regex::new(&format!(
        r"^{t}, {t}, {d}, {d}, (\d+), {d}, -?\d+, -?\d+, {d}, {d}$",
        t = TIME,
        d = DECIMAL
    ))
    .unwrap()
}

/// A `--show-detailed-stats` line; captures the record count so far.
pub fn consumer_detailed() -> Regex {
    Regex::new(&format!(
        r"^{t}, 0, {d}, {d}, (\d+), {d}, -?\d+, -?\d+, {d}, {d}$",
        t = TIME,
        d = DECIMAL
    ))
    .unwrap()
}

/// A `--print-metrics` row: `group:name:{tags}   : value`.
pub fn metric_row() -> Regex {
    Regex::new(r"^[a-z-]+:[a-z0-9-]+:\{[^}]*\} *: \S+$").unwrap()
}

/// The count captured by `re` in `line`, which must match it.
pub fn count(re: &Regex, line: &str) -> u64 {
    let caps = re
        .captures(line)
        .unwrap_or_else(|| panic!("{line:?} does not match {re}"));
    caps[1].parse().unwrap()
}
