//! The device process's log: every `tracing` event (ours and the IP model's) as one line on
//! stderr, prefixed `[xdma-vm]`, so that it stands apart from the guest console on stdout.
//!
//! A subscriber of a few lines rather than a logging framework: the process needs levels and
//! a time stamp, nothing more. `XDMA_VM_LOG` sets the level (error, warn, info, debug, trace;
//! info by default).

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// The environment variable that sets the level.
pub const LEVEL_VAR: &str = "XDMA_VM_LOG";

/// Writes events at `max` and more severe to stderr.
#[derive(Debug)]
pub struct StderrLog {
    max: Level,
    start: Instant,
    next_span: AtomicU64,
}

impl StderrLog {
    /// A log at `max`.
    pub fn new(max: Level) -> StderrLog {
        StderrLog {
            max,
            start: Instant::now(),
            next_span: AtomicU64::new(1),
        }
    }
}

/// The level `XDMA_VM_LOG` names, or `default`.
pub fn level_from_env(default: Level) -> Level {
    std::env::var(LEVEL_VAR)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// Installs the log for the whole process; a second call keeps the first.
pub fn init(max: Level) {
    // A subscriber already set (by a test harness, say) is kept: both print somewhere.
    let _ = tracing::subscriber::set_global_default(StderrLog::new(max));
}

struct Line(String);

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for StderrLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // Levels order from the most severe (ERROR) up to the most verbose (TRACE).
        *metadata.level() <= self.max
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::from_level(self.max))
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        let mut line = Line(String::new());
        event.record(&mut line);
        let t = self.start.elapsed().as_secs_f64();
        let level = match *meta.level() {
            Level::ERROR => "error",
            Level::WARN => "warn",
            Level::INFO => "info",
            Level::DEBUG => "debug",
            Level::TRACE => "trace",
        };
        // Our own modules are named by their last path segment; the IP's by its crate.
        let target = meta.target();
        let target = target.strip_prefix("xdma_vm::").unwrap_or(target);
        let text = format!("[xdma-vm] {t:8.3} {level:5} {target}: {}\n", line.0);
        // One write per line, so that lines of different threads do not mix.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
