//! The server's log lines on stderr, in Kafka's layout (`[time] LEVEL message (logger)`), with
//! `--quiet` (warnings and errors only) and `--verbose` (every request) levels. A server run
//! in-process (tests, an application) can take the lines itself instead.

use std::fmt;
use std::io::Write;
use std::sync::Arc;
use std::time::SystemTime;

/// How much the server says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }
}

/// Where the lines go when not to stderr: each line, without its line break.
type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// Writes log lines at or above a level to stderr (or to a sink).
#[derive(Clone)]
pub struct Logger {
    min: Level,
    sink: Option<Sink>,
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logger")
            .field("min", &self.min)
            .field("to_stderr", &self.sink.is_none())
            .finish()
    }
}

impl Logger {
    pub fn new(min: Level) -> Logger {
        Logger { min, sink: None }
    }

    /// Hands each line at or above `min` to `sink` instead of writing it to stderr.
    pub fn to(min: Level, sink: impl Fn(&str) + Send + Sync + 'static) -> Logger {
        Logger {
            min,
            sink: Some(Arc::new(sink)),
        }
    }

    pub fn enabled(&self, level: Level) -> bool {
        level >= self.min
    }

    pub fn debug(&self, msg: &str) {
        self.write(Level::Debug, msg);
    }

    /// The ready line: an INFO line written whatever the level.
    pub fn ready(&self, msg: &str) {
        self.emit(Level::Info, msg);
    }

    pub fn info(&self, msg: &str) {
        self.write(Level::Info, msg);
    }

    pub fn warn(&self, msg: &str) {
        self.write(Level::Warn, msg);
    }

    pub fn error(&self, msg: &str) {
        self.write(Level::Error, msg);
    }

    fn write(&self, level: Level, msg: &str) {
        if self.enabled(level) {
            self.emit(level, msg);
        }
    }

    fn emit(&self, level: Level, msg: &str) {
        let line = format!(
            "[{}] {} [KafkaServer id=kafkit] {msg} (kafkit.server)\n",
            timestamp(SystemTime::now()),
            level.name()
        );
        match &self.sink {
            Some(sink) => sink(line.trim_end_matches('\n')),
            // One write per line, so that lines from many threads never interleave; a closed
            // stderr is not a reason to stop serving.
            None => {
                let _ = std::io::stderr().lock().write_all(line.as_bytes());
            }
        }
    }
}

/// `2026-12-01 21:00:00,123` (UTC), Kafka's log4j date layout.
fn timestamp(t: SystemTime) -> String {
    let iso = humantime::format_rfc3339_millis(t).to_string();
    // 2026-12-01T21:00:00.123Z
    iso.trim_end_matches('Z')
        .replacen('T', " ", 1)
        .replacen('.', ",", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_date_layout() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_123);
        assert_eq!(timestamp(t), "2023-11-14 22:13:20,123");
    }
}
