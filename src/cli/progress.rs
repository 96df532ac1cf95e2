//! Progress on stderr for long runs (indicatif), only when stderr is a terminal and
//! `--no-progress` was not given: records, bytes and rates such as `12.3k rec/s` and
//! `1.2 MiB/s`, with a bar and ETA when the total is known; or a count of items such as the
//! partitions of an offset reset ([`Counter`]).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the numbers are redrawn.
const REDRAW: Duration = Duration::from_millis(100);

/// What is being counted toward the total, when there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Total {
    Unknown,
    Bytes(u64),
    Records(u64),
}

/// A progress display; does nothing when disabled.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: Total,
    start: Instant,
    last_draw: Instant,
    records: u64,
    bytes: u64,
}

/// A bar counting items of a known number (partitions of an offset reset), with an ETA; does
/// nothing when disabled.
pub struct Counter {
    bar: Option<ProgressBar>,
}

impl Counter {
    /// A bar for `total` items named `unit` (e.g. "partitions"), drawn at once when `enabled`.
    pub fn new(enabled: bool, total: u64, unit: &str) -> Counter {
        let bar = enabled.then(|| {
            let bar = ProgressBar::new(total);
            bar.set_draw_target(ProgressDrawTarget::stderr());
            let template =
                format!("{{spinner}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} ETA {{eta}}");
            bar.set_style(
                ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| ProgressStyle::default_spinner())
                    .progress_chars("=> "),
            );
            bar.enable_steady_tick(REDRAW);
            bar
        });
        Counter { bar }
    }

    /// Says what is being done now (e.g. "reading offsets", "committing").
    pub fn stage(&self, what: &'static str) {
        if let Some(bar) = &self.bar {
            bar.set_message(what);
        }
    }

    /// Counts `n` more items done.
    pub fn add(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// Whether progress should be drawn: stderr is a terminal and `--no-progress` is absent.
pub fn wanted(no_progress: bool) -> bool {
    !no_progress && std::io::stderr().is_terminal()
}

/// `12.3k` style numbers.
fn human(n: f64) -> String {
    if n >= 1e6 {
        format!("{:.1}M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

/// `1.2 MiB` style sizes.
fn human_bytes(n: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

impl Progress {
    /// A display for `what` (e.g. "records"), drawn from the first moment when `enabled`.
    pub fn new(enabled: bool, total: Total) -> Progress {
        let bar = enabled.then(|| {
            let bar = match total {
                Total::Unknown => ProgressBar::new_spinner(),
                Total::Bytes(n) | Total::Records(n) => ProgressBar::new(n),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr());
            let template = match total {
                Total::Unknown => "{spinner} {msg}",
                _ => "{spinner} [{bar:30}] {percent:>3}% {msg} ETA {eta}",
            };
            bar.set_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_spinner())
                    .progress_chars("=> "),
            );
            bar.set_message("starting");
            bar.enable_steady_tick(REDRAW);
            bar
        });
        let now = Instant::now();
        Progress {
            bar,
            total,
            start: now,
            last_draw: now,
            records: 0,
            bytes: 0,
        }
    }

    /// Counts `records` more records of `bytes` bytes.
    pub fn add(&mut self, records: u64, bytes: u64) {
        self.records += records;
        self.bytes += bytes;
        if self.bar.is_some() && self.last_draw.elapsed() >= REDRAW {
            self.redraw();
        }
    }

    fn redraw(&mut self) {
        let Some(bar) = &self.bar else { return };
        self.last_draw = Instant::now();
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        bar.set_message(format!(
            "{} records, {} ({} rec/s, {}/s)",
            human(self.records as f64),
            human_bytes(self.bytes as f64),
            human(self.records as f64 / secs),
            human_bytes(self.bytes as f64 / secs)
        ));
        match self.total {
            Total::Unknown => {}
            Total::Bytes(_) => bar.set_position(self.bytes),
            Total::Records(_) => bar.set_position(self.records),
        }
    }

    /// Removes the display (the final numbers are not left on screen).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_numbers() {
        assert_eq!(human(12_345.0), "12.3k");
        assert_eq!(human(999.0), "999");
        assert_eq!(human(2_500_000.0), "2.5M");
        assert_eq!(human_bytes(1_258_291.0), "1.2 MiB");
        assert_eq!(human_bytes(10.0), "10 B");
    }

    #[test]
    fn disabled_progress_draws_nothing() {
        let mut p = Progress::new(false, Total::Unknown);
        p.add(10, 100);
        assert!(p.bar.is_none());
    }
}
