//! Opening the card for a test, skipping with a reason, and leaving the card as reset left it.

use std::future::Future;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use xdma::{Config, Xdma, CONFIG_ENV};

use crate::caps::Capabilities;
use crate::stream::Waits;

/// Environment variable naming a file to which every skipped test appends one line (its name
/// and the reason), so that a runner can count skips: `cargo xtask test` compares the counts of
/// its two runs.
pub const SKIP_LOG_ENV: &str = "CARD_TESTS_SKIP_LOG";

/// Environment variable with the longest a test waits for data or an interrupt that should
/// come, in seconds (default 2). On a board it must be at least the driver's `c2h_timeout`.
pub const WAIT_ENV: &str = "CARD_TESTS_WAIT_S";

/// The suite's own configuration file, used when `XDMA_CONFIG` names none.
pub fn suite_toml() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("suite.toml")
}

/// The configuration the suite opens cards with: the file `XDMA_CONFIG` names, or the suite's
/// `suite.toml`; then `XDMA_BACKEND` and `XDMA_DEVICE` as usual.
pub fn config() -> Config {
    let file = std::env::var(CONFIG_ENV)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| suite_toml().to_string_lossy().into_owned());
    Config::from_vars(|k| {
        if k == CONFIG_ENV {
            Some(file.clone())
        } else {
            std::env::var(k).ok()
        }
    })
    .unwrap_or_else(|e| panic!("the suite's configuration: {e}"))
}

/// The longest a test waits for what should come ([`WAIT_ENV`]).
pub fn data_wait() -> Duration {
    static WAIT: OnceLock<Duration> = OnceLock::new();
    *WAIT.get_or_init(|| {
        std::env::var(WAIT_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| *s > 0.0 && s.is_finite())
            .map_or(Duration::from_secs(2), Duration::from_secs_f64)
    })
}

/// The name of the running test, as the test harness names its thread.
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("a card test")
        .to_string()
}

/// Prints and records a skip. The line goes to the process's standard error directly, past
/// the test harness's capture, so that a skip is visible in every run.
pub fn record_skip(test: &str, why: &str) {
    let line = format!("card-tests: SKIPPED {test}: {why}");
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Some(path) = std::env::var_os(SKIP_LOG_ENV).filter(|p| !p.is_empty()) {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            // One write of the whole line: tests run side by side append to the same log, and
            // a line written in pieces interleaves with another test's.
            let _ = f.write_all(format!("{test}\t{why}\n").as_bytes());
        }
    }
}

/// One test's card: opened from the environment, with what it has and how long its waits
/// are. When the test ends (passed or not), every register the table lets the host set goes
/// back to its reset value, write-1-to-clear bits are cleared and the counters zeroed, so that
/// the next test on the same board finds the card as reset left it.
#[derive(Debug)]
pub struct Fixture {
    /// The card.
    pub card: Xdma,
    /// What it has.
    pub caps: Capabilities,
    /// How long stream receives wait.
    pub waits: Waits,
    runtime: OnceLock<tokio::runtime::Runtime>,
    test: String,
}

impl Fixture {
    /// Opens the card the environment names with the suite's configuration. A card that cannot
    /// be opened fails the test, saying why.
    pub fn open() -> Fixture {
        Fixture::open_with(|_| {})
    }

    /// As [`Fixture::open`], with the configuration adjusted first (for example a `[sim]`
    /// setting, which the driver backend ignores).
    pub fn open_with(adjust: impl FnOnce(&mut Config)) -> Fixture {
        let mut cfg = config();
        adjust(&mut cfg);
        Fixture::open_config(&cfg)
    }

    /// Opens the card as [`Fixture::open`] does, with its memory-mapped channel pair (H2C,
    /// C2H). A card without one skips the test (recorded with the reason) and gives None.
    pub fn open_mm() -> Option<(Fixture, usize, usize)> {
        let b = Fixture::open();
        match b.caps.mm() {
            Ok((h, c)) => Some((b, h, c)),
            Err(why) => {
                b.skip(&why);
                None
            }
        }
    }

    /// Opens the card that `cfg` describes.
    pub fn open_config(cfg: &Config) -> Fixture {
        let card = Xdma::open(cfg).unwrap_or_else(|e| {
            panic!(
                "cannot open the {} card ({e}); XDMA_BACKEND=hw needs XDMA_DEVICE=<node prefix>",
                cfg.backend.name()
            )
        });
        let caps = Capabilities::discover(&card);
        let waits = Waits::new(data_wait(), xdma::Card::info(&card).min_stream_timeout);
        Fixture {
            card,
            caps,
            waits,
            runtime: OnceLock::new(),
            test: test_name(),
        }
    }

    /// Records that this test is skipped and why; the caller returns next.
    pub fn skip(&self, why: &str) {
        record_skip(&self.test, why);
    }

    /// Runs a future to completion on the fixture's tokio runtime (two worker threads, so that
    /// tasks of the test run at once).
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.runtime
            .get_or_init(|| {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap_or_else(|e| panic!("cannot start a tokio runtime: {e}"))
            })
            .block_on(f)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // A card whose registers are not this map's is left alone.
        if self.caps.lacks_registers().is_some() {
            return;
        }
        if let Err(e) = crate::regs::restore(&self.card) {
            let _ = writeln!(
                std::io::stderr(),
                "card-tests: {}: could not put the registers back to their reset values: {e}",
                self.test
            );
        }
    }
}

/// Unwraps a card call's result inside a test, with the call named in the failure.
#[track_caller]
pub fn ok<T>(what: &str, r: xdma::Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo xtask test` runs the suite over an xdma-fuse mount whose server simulates the card
    /// with fuse-server.toml's [sim] section: it must be the suite's own, so that both runs test
    /// the same card (only how long the server waits for a caller differs).
    #[test]
    fn the_mount_simulates_the_suites_card() {
        let read = |name: &str| -> toml::Table {
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        };
        let sim = |mut t: toml::Table| {
            let mut s = match t.remove("sim") {
                Some(toml::Value::Table(s)) => s,
                other => panic!("no [sim] table: {other:?}"),
            };
            s.remove("host_grace_ms");
            s
        };
        assert_eq!(sim(read("suite.toml")), sim(read("fuse-server.toml")));
    }
}
