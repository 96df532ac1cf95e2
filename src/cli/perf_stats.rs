//! What the perf tests share: `kafka-producer-perf-test`'s latency statistics and their
//! lines (Kafka's `ProducerPerformance.Stats` formats), its throughput throttle, Java's
//! rendering of doubles, and the `--print-metrics` table layout of Kafka's `ToolsUtils`.

use std::time::Duration;

/// At most this many latencies are kept for the percentiles (one every `n / 500000` records).
const MAX_SAMPLES: u64 = 500_000;
/// The throttle sleeps only once it owes at least this long (Kafka's `MIN_SLEEP_NS`).
const MIN_SLEEP: Duration = Duration::from_millis(2);

/// Java's `%.Nf` of a double: `NaN`, `Infinity` and `-Infinity` as Java spells them.
pub fn java_fixed(value: f64, decimals: usize) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        format!("{value:.decimals$}")
    }
}

/// Records sent and their latencies, in total and per reporting window.
#[derive(Debug)]
pub struct Stats {
    start: i64,
    window_start: i64,
    latencies: Vec<i32>,
    sampling: u64,
    reporting_interval: i64,
    iteration: u64,
    index: usize,
    count: u64,
    bytes: u64,
    max_latency: i32,
    total_latency: i64,
    window_count: u64,
    window_max_latency: i32,
    window_total_latency: i64,
    window_bytes: u64,
    steady_state: bool,
    suppressed: bool,
}

impl Stats {
    /// Statistics of `num_records` records (`num_records` > 0) starting at `now` (ms).
    pub fn new(num_records: u64, reporting_interval: i64, steady_state: bool, now: i64) -> Stats {
        let sampling = num_records / num_records.clamp(1, MAX_SAMPLES);
        Stats {
            start: now,
            window_start: now,
            latencies: vec![0; (num_records / sampling.max(1)) as usize + 1],
            sampling: sampling.max(1),
            reporting_interval,
            iteration: 0,
            index: 0,
            count: 0,
            bytes: 0,
            max_latency: 0,
            total_latency: 0,
            window_count: 0,
            window_max_latency: 0,
            window_total_latency: 0,
            window_bytes: 0,
            steady_state,
            suppressed: false,
        }
    }

    /// Records counted so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The records are counted in the steady-state statistics from now on: this window's
    /// lines are no longer printed.
    pub fn suppress_printing(&mut self) {
        self.suppressed = true;
    }

    /// One record acknowledged at `time` (ms) after `latency` ms; returns the lines to print
    /// when a reporting window ends with it.
    pub fn record(&mut self, latency: i32, bytes: u64, time: i64) -> Option<String> {
        self.count += 1;
        self.bytes += bytes;
        self.total_latency += i64::from(latency);
        self.max_latency = self.max_latency.max(latency);
        self.window_count += 1;
        self.window_bytes += bytes;
        self.window_total_latency += i64::from(latency);
        self.window_max_latency = self.window_max_latency.max(latency);
        if self.iteration.is_multiple_of(self.sampling) && self.index < self.latencies.len() {
            self.latencies[self.index] = latency;
            self.index += 1;
        }
        let mut lines = None;
        if time - self.window_start >= self.reporting_interval {
            let mut text = String::new();
            if self.steady_state && self.count == self.window_count {
                text.push_str("In steady state.\n");
            }
            if !self.suppressed {
                text.push_str(&self.window_line(time));
                text.push('\n');
            }
            lines = Some(text).filter(|t| !t.is_empty());
            self.window_start = time;
            self.window_count = 0;
            self.window_max_latency = 0;
            self.window_total_latency = 0;
            self.window_bytes = 0;
        }
        self.iteration += 1;
        lines
    }

    /// The line of the window ending at `now`.
    fn window_line(&self, now: i64) -> String {
        let elapsed = (now - self.window_start) as f64;
        let count = self.window_count as f64;
        format!(
            "{} records sent, {} records/sec ({} MB/sec), {} ms avg latency, {} ms max latency.",
            self.window_count,
            java_fixed(1000.0 * count / elapsed, 1),
            java_fixed(
                1000.0 * self.window_bytes as f64 / elapsed / (1024.0 * 1024.0),
                2
            ),
            java_fixed(self.window_total_latency as f64 / count, 1),
            java_fixed(f64::from(self.window_max_latency), 1),
        )
    }

    /// The summary line, for the records acknowledged by `now`.
    pub fn total_line(&mut self, now: i64) -> String {
        let elapsed = (now - self.start) as f64;
        let count = self.count as f64;
        let size = self.index.min(self.latencies.len());
        self.latencies[..size].sort_unstable();
        let percentile = |p: f64| self.latencies[(p * size as f64) as usize];
        format!(
            "{}{} records sent, {} records/sec ({} MB/sec), {} ms avg latency, {} ms max latency, {} ms 50th, {} ms 95th, {} ms 99th, {} ms 99.9th.",
            self.count,
            if self.steady_state {
                " steady state"
            } else {
                ""
            },
            java_fixed(1000.0 * count / elapsed, 6),
            java_fixed(1000.0 * self.bytes as f64 / elapsed / (1024.0 * 1024.0), 2),
            java_fixed(self.total_latency as f64 / count, 2),
            java_fixed(f64::from(self.max_latency), 2),
            percentile(0.5),
            percentile(0.95),
            percentile(0.99),
            percentile(0.999),
        )
    }
}

/// `--throughput`: keeps the send rate near a target (records per second) by sleeping once the
/// rate so far is above it; a negative target never throttles, 0 stops sending.
#[derive(Debug)]
pub struct Throttler {
    target: f64,
    start: i64,
    /// One record's share of a second at the target rate.
    per_record: Duration,
    /// Sleep owed but not yet taken (short sleeps add up first).
    owed: Duration,
}

/// What the throttle asks for after a record.
#[derive(Debug, PartialEq, Eq)]
pub enum Throttle {
    /// Send the next record.
    Go,
    /// Sleep this long first.
    Sleep(Duration),
    /// Send nothing more (a target of 0 records per second).
    Stop,
}

impl Throttler {
    /// A throttle of `target` records per second from `start` (ms).
    pub fn new(target: f64, start: i64) -> Throttler {
        let per_record = if target > 0.0 {
            Duration::try_from_secs_f64(1.0 / target).unwrap_or(Duration::MAX)
        } else {
            Duration::MAX
        };
        Throttler {
            target,
            start,
            per_record,
            owed: Duration::ZERO,
        }
    }

    /// After `sent` records (the one just sent not counted) whose last went at `now` (ms).
    pub fn after(&mut self, sent: u64, now: i64) -> Throttle {
        if self.target < 0.0 {
            return Throttle::Go;
        }
        if now < self.start {
            return Throttle::Go;
        }
        // Within the first millisecond the rate counts as over that millisecond, so that the
        // throttle holds from the first record: a fast sender put hundreds of records into
        // a millisecond that Kafka's tool (elapsed 0: no throttle) sends few in.
        let elapsed = (now - self.start).max(1) as f32 / 1000.0;
        if f64::from(sent as f32 / elapsed) <= self.target {
            return Throttle::Go;
        }
        if self.target == 0.0 {
            return Throttle::Stop;
        }
        self.owed = self.owed.saturating_add(self.per_record);
        if self.owed < MIN_SLEEP {
            return Throttle::Go;
        }
        Throttle::Sleep(std::mem::take(&mut self.owed))
    }
}

/// Kafka's `--print-metrics` table: a blank line, a header, then one `group:name:{tags} : value`
/// line per metric, sorted, names padded to the longest.
pub fn metrics_table(metrics: &[(String, MetricValue)]) -> String {
    let mut sorted: Vec<&(String, MetricValue)> = metrics.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let width = sorted.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out = format!("\n{:<width$}   Value\n", "Metric Name");
    for (name, value) in sorted {
        let value = match value {
            MetricValue::Number(v) => java_fixed(*v, 3),
            MetricValue::Text(t) => t.clone(),
        };
        out.push_str(&format!("{name:<width$} : {value}\n"));
    }
    out
}

/// A metric's value: a number (printed with three decimals) or text.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricValue {
    Number(f64),
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_and_total_lines_have_kafkas_shape() {
        let mut stats = Stats::new(4, 1000, false, 0);
        assert_eq!(stats.record(10, 100, 10), None);
        assert_eq!(
            stats.record(30, 100, 1000).as_deref(),
            Some(
                "2 records sent, 2.0 records/sec (0.00 MB/sec), 20.0 ms avg latency, 30.0 ms max latency.\n"
            )
        );
        stats.record(20, 100, 1500);
        assert_eq!(
            stats.total_line(2000),
            "3 records sent, 1.500000 records/sec (0.00 MB/sec), 20.00 ms avg latency, 30.00 ms max latency, 20 ms 50th, 30 ms 95th, 30 ms 99th, 30 ms 99.9th."
        );
    }

    #[test]
    fn steady_state_lines() {
        let mut stats = Stats::new(2, 10, true, 0);
        assert_eq!(
            stats.record(5, 1, 20).as_deref(),
            Some(
                "In steady state.\n1 records sent, 50.0 records/sec (0.00 MB/sec), 5.0 ms avg latency, 5.0 ms max latency.\n"
            )
        );
        assert!(
            stats
                .total_line(20)
                .starts_with("1 steady state records sent, 50.000000")
        );
    }

    #[test]
    fn java_renders_doubles() {
        assert_eq!(java_fixed(f64::NAN, 2), "NaN");
        assert_eq!(java_fixed(f64::INFINITY, 1), "Infinity");
        assert_eq!(java_fixed(1.0 / 3.0, 6), "0.333333");
    }

    #[test]
    fn throttle_sleeps_once_ahead_of_the_target() {
        let mut t = Throttler::new(100.0, 0);
        assert_eq!(t.after(0, 0), Throttle::Go);
        // From the first record: one sent within the first millisecond is 1,000 a second.
        assert_eq!(t.after(1, 0), Throttle::Sleep(Duration::from_millis(10)));
        assert_eq!(t.after(5, 1000), Throttle::Go);
        assert_eq!(
            t.after(500, 1000),
            Throttle::Sleep(Duration::from_millis(10))
        );
        assert_eq!(Throttler::new(-1.0, 0).after(1_000_000, 1), Throttle::Go);
        assert_eq!(Throttler::new(0.0, 0).after(1, 1), Throttle::Stop);
    }

    #[test]
    fn metrics_table_layout() {
        let table = metrics_table(&[
            ("b:x:{}".to_string(), MetricValue::Number(2.0)),
            ("a:long-name:{}".to_string(), MetricValue::Text("v".into())),
        ]);
        assert_eq!(
            table,
            "\nMetric Name      Value\na:long-name:{} : v\nb:x:{}         : 2.000\n"
        );
    }
}
