//! How far a long memory-mapped transfer has got. A 1 GiB write takes the simulated card
//! minutes of wall-clock time (and a board behind a slow path seconds), so a program that
//! shows nothing meanwhile looks hung. Each backend reports a transfer's progress as it goes
//! (the simulated card after each of the driver's engine runs, the driver backend after each
//! chunk of `[hw] chunk_bytes`) to whatever [`ProgressReport`] the card has:
//!
//! - [`ProgressReport::Auto`], the default: nothing for a transfer that ends within
//!   [`LINE_AFTER`]; for a longer one a line every [`LINE_EVERY`] and one at its end, as an
//!   `INFO` event of target [`TRACING_TARGET`] when the program has installed a `tracing`
//!   subscriber (which then decides what is shown), else on stderr. The test is made on the
//!   thread that reports: the simulated card reports on its simulation thread, which sees the
//!   program's global subscriber (`tracing::subscriber::set_global_default`, what
//!   `tracing_subscriber::fmt::init` sets) but not one set for a scope of the caller's thread;
//! - [`ProgressReport::Callback`]: every report, of every memory-mapped transfer, to the
//!   program's function and nowhere else;
//! - [`ProgressReport::Off`], which reports nothing.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::addr::CardAddr;

/// How long a transfer runs before the built-in report first shows it.
pub const LINE_AFTER: Duration = Duration::from_secs(5);
/// How often the built-in report shows a transfer after that.
pub const LINE_EVERY: Duration = Duration::from_secs(10);
/// The `tracing` target of the built-in report's events.
pub const TRACING_TARGET: &str = "xdma::progress";

/// One report of a transfer's progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The operation, for example "memory-mapped H2C write".
    pub op: &'static str,
    /// The channel within its direction.
    pub channel: usize,
    /// The card address the transfer starts at.
    pub addr: CardAddr,
    /// Bytes moved so far.
    pub done: u64,
    /// Bytes the transfer moves in all.
    pub total: u64,
    /// Wall-clock time since the call was made.
    pub elapsed: Duration,
    /// The transfer has ended (completed or failed): the last report of it.
    pub finished: bool,
}

impl Progress {
    /// The report as one line of text.
    pub fn line(&self) -> String {
        let head = format!(
            "xdma: {} of {} at card address {} (channel {})",
            self.op,
            bytes(self.total),
            self.addr,
            self.channel
        );
        let secs = self.elapsed.as_secs_f64();
        if self.finished {
            return format!(
                "{head}: {} moved in {secs:.0} s",
                if self.done == self.total {
                    "all".to_string()
                } else {
                    format!("{} of it", bytes(self.done))
                }
            );
        }
        let percent = self.done as f64 * 100.0 / self.total.max(1) as f64;
        let left = if self.done > 0 {
            let rest = secs * (self.total - self.done.min(self.total)) as f64 / self.done as f64;
            format!(", about {rest:.0} s left")
        } else {
            String::new()
        };
        format!(
            "{head}: {} done ({percent:.0} %) after {secs:.0} s{left}",
            bytes(self.done)
        )
    }
}

/// A byte count in the largest binary unit that keeps it at 1 or more.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.2} {unit}")
}

/// A program's function for progress reports; called on the backend's thread (the simulated
/// card's simulation thread, the driver backend's calling thread), so it should return soon.
pub type ProgressHook = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where a card's progress reports go (see the module's documentation).
#[derive(Clone, Default)]
pub enum ProgressReport {
    /// A line for transfers that run longer than [`LINE_AFTER`]: a `tracing` event when a
    /// subscriber is installed, else stderr.
    #[default]
    Auto,
    /// Every report to this function, and nowhere else.
    Callback(ProgressHook),
    /// No reports.
    Off,
}

impl ProgressReport {
    /// Every report to `f`.
    pub fn callback(f: impl Fn(&Progress) + Send + Sync + 'static) -> ProgressReport {
        ProgressReport::Callback(Arc::new(f))
    }
}

impl fmt::Debug for ProgressReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProgressReport::Auto => "Auto",
            ProgressReport::Callback(_) => "Callback(..)",
            ProgressReport::Off => "Off",
        })
    }
}

/// Whether the program has installed a `tracing` subscriber for this thread (its own or the
/// global one).
fn subscriber_installed() -> bool {
    tracing::dispatcher::get_default(|d| !d.is::<tracing::subscriber::NoSubscriber>())
}

/// One transfer's reports, kept by the backend that moves it.
#[derive(Debug)]
pub struct ProgressTracker {
    report: ProgressReport,
    now: Progress,
    /// When the built-in report last showed the transfer.
    last_line: Option<Duration>,
}

impl ProgressTracker {
    /// The reports of a transfer of `total` bytes at `addr` on `channel`.
    pub fn new(
        report: &ProgressReport,
        op: &'static str,
        channel: usize,
        addr: CardAddr,
        total: u64,
    ) -> ProgressTracker {
        ProgressTracker {
            report: report.clone(),
            now: Progress {
                op,
                channel,
                addr,
                done: 0,
                total,
                elapsed: Duration::ZERO,
                finished: false,
            },
            last_line: None,
        }
    }

    /// Bytes done so far.
    pub fn done(&self) -> u64 {
        self.now.done
    }

    /// `done` bytes moved after `elapsed`: a callback hears of every change, the built-in
    /// report when a line is due.
    pub fn update(&mut self, done: u64, elapsed: Duration) {
        let changed = done != self.now.done;
        self.now.done = done;
        self.now.elapsed = elapsed;
        match &self.report {
            ProgressReport::Callback(f) if changed => f(&self.now),
            ProgressReport::Auto => {
                if let Some(line) = self.line_due() {
                    emit(&self.now, &line);
                }
            }
            _ => {}
        }
    }

    /// The transfer ended with `done` bytes moved after `elapsed`: a callback hears of it, and
    /// the built-in report closes the transfer it showed.
    pub fn finish(&mut self, done: u64, elapsed: Duration) {
        self.now.done = done;
        self.now.elapsed = elapsed;
        self.now.finished = true;
        match &self.report {
            ProgressReport::Callback(f) => f(&self.now),
            ProgressReport::Auto if self.last_line.is_some() => emit(&self.now, &self.now.line()),
            _ => {}
        }
    }

    /// The built-in report's line when one is due: first after [`LINE_AFTER`], then every
    /// [`LINE_EVERY`].
    fn line_due(&mut self) -> Option<String> {
        let t = self.now.elapsed;
        let due = match self.last_line {
            None => t >= LINE_AFTER,
            Some(last) => t >= last + LINE_EVERY,
        };
        if !due {
            return None;
        }
        self.last_line = Some(t);
        Some(self.now.line())
    }
}

/// A line of the built-in report: a `tracing` event when a subscriber is installed, else
/// stderr.
fn emit(p: &Progress, line: &str) {
    emit_to(p, line, &mut std::io::stderr().lock());
}

/// A line of the built-in report: a `tracing` event when a subscriber is installed, else a
/// line on `plain` (stderr, or a test's buffer). A line that cannot be written is dropped:
/// progress is no reason to fail the transfer it reports.
fn emit_to(p: &Progress, line: &str, plain: &mut dyn std::io::Write) {
    if subscriber_installed() {
        tracing::info!(
            target: TRACING_TARGET,
            op = p.op,
            channel = p.channel,
            addr = p.addr.raw(),
            done = p.done,
            total = p.total,
            elapsed_s = p.elapsed.as_secs_f64(),
            finished = p.finished,
            "{line}"
        );
    } else {
        let _ = writeln!(plain, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    fn tracker(report: &ProgressReport) -> ProgressTracker {
        ProgressTracker::new(
            report,
            "memory-mapped H2C write",
            0,
            CardAddr(0x1000),
            1 << 30,
        )
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn the_built_in_line_comes_after_five_seconds_then_every_ten_and_at_the_end() {
        let mut t = tracker(&ProgressReport::Auto);
        let mut shown = Vec::new();
        for (done, at) in [
            (1u64 << 20, 1),
            (8 << 20, 4),
            (16 << 20, 6),
            (24 << 20, 12),
            (40 << 20, 16),
        ] {
            t.now.done = done;
            t.now.elapsed = S(at);
            if t.line_due().is_some() {
                shown.push(at);
            }
        }
        assert_eq!(shown, vec![6, 16]);
        // A transfer that never ran long enough shows nothing, not even its end.
        let mut quick = tracker(&ProgressReport::Auto);
        quick.now.elapsed = S(4);
        assert!(quick.line_due().is_none());
        assert!(quick.last_line.is_none());
    }

    #[test]
    fn a_line_says_what_how_far_and_how_long() {
        let p = Progress {
            op: "memory-mapped H2C write",
            channel: 1,
            addr: CardAddr(0x4000_0000),
            done: 256 << 20,
            total: 1 << 30,
            elapsed: S(60),
            finished: false,
        };
        let line = p.line();
        for part in [
            "memory-mapped H2C write",
            "1.00 GiB",
            "0x40000000",
            "channel 1",
            "256.00 MiB done (25 %)",
            "after 60 s",
            "about 180 s left",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }
        let end = Progress {
            done: 1 << 30,
            elapsed: S(240),
            finished: true,
            ..p
        };
        assert!(end.line().contains("all moved in 240 s"), "{}", end.line());
    }

    #[test]
    fn a_callback_hears_every_change_and_the_end() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let report = ProgressReport::callback(move |p| {
            s.lock().expect("seen").push((p.done, p.finished));
        });
        let mut t = tracker(&report);
        t.update(8 << 20, Duration::from_millis(10));
        t.update(8 << 20, Duration::from_millis(20));
        t.update(16 << 20, Duration::from_millis(30));
        t.finish(16 << 20, Duration::from_millis(40));
        assert_eq!(
            *seen.lock().expect("seen"),
            vec![(8 << 20, false), (16 << 20, false), (16 << 20, true)]
        );
    }

    /// A subscriber that counts the events it is given.
    struct Count(Arc<AtomicUsize>);

    impl tracing::Subscriber for Count {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, e: &tracing::Event<'_>) {
            if e.metadata().target() == TRACING_TARGET {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    #[test]
    fn without_a_subscriber_the_line_goes_to_the_plain_writer_and_with_one_it_does_not() {
        let p = tracker(&ProgressReport::Auto).now;
        let mut plain = Vec::new();
        emit_to(&p, &p.line(), &mut plain);
        let text = String::from_utf8(plain).expect("text");
        assert_eq!(text, format!("{}\n", p.line()));
        let n = Arc::new(AtomicUsize::new(0));
        let mut plain = Vec::new();
        tracing::subscriber::with_default(Count(n.clone()), || {
            emit_to(&p, &p.line(), &mut plain);
        });
        assert!(plain.is_empty(), "the subscriber has it");
        assert_eq!(n.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn with_a_subscriber_the_line_is_an_event_and_without_one_it_is_not() {
        assert!(!subscriber_installed());
        let n = Arc::new(AtomicUsize::new(0));
        tracing::subscriber::with_default(Count(n.clone()), || {
            assert!(subscriber_installed());
            let mut t = tracker(&ProgressReport::Auto);
            t.update(8 << 20, S(6));
            t.finish(1 << 30, S(20));
        });
        assert_eq!(n.load(Ordering::Relaxed), 2, "a line, then the end");
        // Off: nothing, with or without a subscriber.
        tracing::subscriber::with_default(Count(n.clone()), || {
            let mut t = tracker(&ProgressReport::Off);
            t.update(8 << 20, S(6));
            t.finish(1 << 30, S(20));
        });
        assert_eq!(n.load(Ordering::Relaxed), 2);
    }
}
