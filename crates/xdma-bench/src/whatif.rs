//! What-if predictions: the simulated card with one setting of its `[sim]` section changed,
//! against the same card with the configuration as given, on the reference scenarios.
//!
//! The settings themselves, and how a configuration takes them, are [`crate::setting`]'s.
//!
//! [`measure`] runs the reference scenarios on one card (a short block sweep, a write thread
//! and a read thread at once, GEN frames on one and on two C2H streams), and [`table`] sets the
//! columns of several cards side by side, each figure with its change against the first column.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use xdma::{AsyncCard, Card, Direction, Error, ErrorKind, Result};

use crate::csv_rows::{fixed_or_empty, to_csv};
use crate::measure::Mode;
use crate::scenario::{self, StreamMode};
#[cfg(test)]
use crate::setting::apply;
pub use crate::setting::{apply_all, Setting, Sweep};
use crate::sweep::{self, Plan as SweepPlan};
use crate::units::bytes_label;

/// What [`measure`] runs on each card.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The block sizes of the sweep (both directions, back to back, one warm-up and one
    /// counted run: the simulated card is deterministic); empty runs no sweep.
    pub sizes: Vec<u64>,
    /// How long the concurrent scenario (a 1 MiB write thread and a 1 MiB read thread) runs
    /// in the card's clock; `None` runs none.
    pub concurrent: Option<Duration>,
    /// Frames of 4096 bytes per C2H stream, received one at a time, on one stream and then on
    /// two; `None` runs no streams.
    pub frames: Option<usize>,
}

/// The block size of the concurrent scenario.
pub const CONCURRENT_BLOCK: usize = 1 << 20;

/// The frame length of the stream scenarios.
pub const STREAM_FRAME: usize = 4096;

impl Plan {
    /// The reference scenarios as `predict --set` runs them by default: a sweep of 4 KiB,
    /// 64 KiB and 1 MiB, 2 ms of the concurrent scenario, 64 frames per stream.
    pub fn reference() -> Plan {
        Plan {
            sizes: vec![4 << 10, 64 << 10, 1 << 20],
            concurrent: Some(Duration::from_millis(2)),
            frames: Some(64),
        }
    }

    /// How many stages [`measure`] reports to its progress callback.
    pub fn stages(&self) -> usize {
        usize::from(!self.sizes.is_empty())
            + usize::from(self.concurrent.is_some())
            + 2 * usize::from(self.frames.is_some())
    }

    /// Checks what the card cannot judge: a plan that runs something, and streams of at least
    /// one frame.
    pub fn check(&self) -> Result<()> {
        if self.stages() == 0 {
            return Err(Error::Invalid {
                op: "planning a what-if",
                problem: "no scenario to run: give at least one of sweep, concurrent, streams"
                    .into(),
            });
        }
        if self.frames == Some(0) {
            return Err(Error::Invalid {
                op: "planning a what-if",
                problem: "0 frames per stream measure nothing: give 1 or more".into(),
            });
        }
        Ok(())
    }
}

/// One figure of one card: a scenario's throughput.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The scenario's row, e.g. `C2H 256 KiB`, `concurrent H2C`, `stream 2ch total`.
    pub scenario: String,
    /// Throughput in MB/s (10^6 bytes per second); `None` when the card could not run the
    /// scenario (see [`Measured::skipped`]).
    pub mb_s: Option<f64>,
}

/// What [`measure`] found on one card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Every row of the plan, in a fixed order.
    pub figures: Vec<Figure>,
    /// The scenarios this card cannot run (it lacks the channels they need), and why.
    pub skipped: Vec<String>,
    /// Simulated time the runs took, in seconds: the longest span any of the card's handles
    /// saw in each scenario, summed over the scenarios.
    pub simulated_s: f64,
}

/// The row name of a sweep figure.
pub fn sweep_row(dir: Direction, bytes: u64) -> String {
    format!("{dir} {}", bytes_label(bytes as f64))
}

/// Rows of the concurrent scenario.
pub const CONCURRENT_ROWS: [&str; 3] = ["concurrent H2C", "concurrent C2H", "concurrent total"];
/// The row of one stream.
pub const STREAM_1CH: &str = "stream 1ch";
/// The row of two streams together.
pub const STREAM_2CH: &str = "stream 2ch total";

/// A scenario's outcome: its figures, or none where the card cannot run it (an unsupported
/// operation: a channel it lacks), with the reason; every other error ends the run.
fn or_skipped<T>(r: Result<T>, what: &str, skipped: &mut Vec<String>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == ErrorKind::Unsupported => {
            skipped.push(format!("{what}: {e}"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Runs `plan` on `card`; `stage` hears the name of each scenario as it starts.
pub fn measure<C: Card + AsyncCard + Clone + Send>(
    card: &C,
    plan: &Plan,
    stage: &mut dyn FnMut(&str),
) -> Result<Measured> {
    plan.check()?;
    let mut figures = Vec::new();
    let mut skipped = Vec::new();
    let mut span_ps = 0u64;
    // The opening handle's clock covers the sweep, which runs on it; the concurrent and
    // stream scenarios run on clones with clocks of their own and report their spans.
    let clock = |c: &C| c.now_ps();
    if !plan.sizes.is_empty() {
        stage("sweep");
        let t0 = clock(card)?;
        let p = SweepPlan {
            sizes: plan.sizes.clone(),
            mode: Mode::BackToBack,
            runs: Some(1),
        };
        let rows = or_skipped(sweep::sweep(card, &p, |_| {}), "sweep", &mut skipped)?;
        span_ps += clock(card)?.saturating_sub(t0);
        for dir in [Direction::H2C, Direction::C2H] {
            for &b in &plan.sizes {
                let mb_s = rows.as_ref().and_then(|rows| {
                    rows.iter()
                        .find(|r| r.dir == dir && r.bytes == b)
                        .map(|r| r.mb_s)
                });
                figures.push(Figure {
                    scenario: sweep_row(dir, b),
                    mb_s,
                });
            }
        }
    }
    if let Some(span) = plan.concurrent {
        stage("concurrent");
        let r = or_skipped(
            scenario::concurrent(card, CONCURRENT_BLOCK, span, &|_| {}),
            "concurrent",
            &mut skipped,
        )?;
        span_ps += r.map_or(0, |r| (r.span_us * 1e6) as u64);
        let vals = r.map(|r| [r.h2c_mb_s, r.c2h_mb_s, r.total_mb_s]);
        for (i, name) in CONCURRENT_ROWS.iter().enumerate() {
            figures.push(Figure {
                scenario: (*name).into(),
                mb_s: vals.map(|v| v[i]),
            });
        }
    }
    if let Some(n) = plan.frames {
        for (channels, name) in [(1, STREAM_1CH), (2, STREAM_2CH)] {
            stage(name);
            let r = or_skipped(
                scenario::streams(
                    card,
                    STREAM_FRAME,
                    channels,
                    StreamMode::OneAtATime,
                    n,
                    &|| {},
                ),
                name,
                &mut skipped,
            )?;
            span_ps += r.as_ref().map_or(0, |r| (r.span_us * 1e6) as u64);
            figures.push(Figure {
                scenario: name.into(),
                mb_s: r.map(|r| r.total_mb_s),
            });
        }
    }
    Ok(Measured {
        figures,
        skipped,
        simulated_s: span_ps as f64 / 1e12,
    })
}

/// One card of a what-if: its settings and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The column's name: `default`, or its settings as `KEY=VALUE`, comma-separated.
    pub name: String,
    /// The settings applied to the configuration as given (none for the default).
    pub settings: Vec<Setting>,
    /// What the card measured.
    pub measured: Measured,
}

impl Column {
    /// A column of these settings; named `default` when there are none.
    pub fn new(settings: Vec<Setting>, measured: Measured) -> Column {
        let name = if settings.is_empty() {
            "default".to_string()
        } else {
            settings
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        Column {
            name,
            settings,
            measured,
        }
    }
}

/// One figure in the table: the throughput and its change against the first column.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Throughput in MB/s; `None` where the card could not run the scenario.
    pub mb_s: Option<f64>,
    /// `(mb_s - first) / first * 100`, where both figures exist.
    pub change_pct: Option<f64>,
}

/// One scenario's row across the columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    /// The scenario.
    pub scenario: String,
    /// One cell per column, in the columns' order.
    pub cells: Vec<Cell>,
}

/// A what-if's result: the cards side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The key a sweep varied, if the what-if was a sweep.
    pub swept: Option<String>,
    /// The columns, the default first.
    pub columns: Vec<Column>,
    /// One row per scenario, in the order the first column has them.
    pub rows: Vec<TableRow>,
}

/// The columns side by side, each figure with its change against the first column's.
pub fn table(swept: Option<String>, columns: Vec<Column>) -> Table {
    let mut names: Vec<String> = Vec::new();
    for c in &columns {
        for f in &c.measured.figures {
            if !names.contains(&f.scenario) {
                names.push(f.scenario.clone());
            }
        }
    }
    let get = |c: &Column, name: &str| {
        c.measured
            .figures
            .iter()
            .find(|f| f.scenario == name)
            .and_then(|f| f.mb_s)
    };
    let rows = names
        .into_iter()
        .map(|name| {
            let base = columns.first().and_then(|c| get(c, &name));
            let cells = columns
                .iter()
                .map(|c| {
                    let mb_s = get(c, &name);
                    Cell {
                        mb_s,
                        change_pct: match (mb_s, base) {
                            (Some(v), Some(b)) if b > 0.0 => Some((v - b) / b * 100.0),
                            _ => None,
                        },
                    }
                })
                .collect();
            TableRow {
                scenario: name,
                cells,
            }
        })
        .collect();
    Table {
        swept,
        columns,
        rows,
    }
}

impl Table {
    /// The table in markdown: MB/s per column, and each column after the first with its change
    /// in percent; then the scenarios a card could not run.
    pub fn markdown(&self) -> String {
        let mut s = String::from("| scenario |");
        let mut rule = String::from("| --- |");
        for c in &self.columns {
            s.push_str(&format!(" {} (MB/s) |", c.name));
            rule.push_str(" ---: |");
        }
        s.push('\n');
        s.push_str(&rule);
        s.push('\n');
        for r in &self.rows {
            s.push_str(&format!("| {} |", r.scenario));
            for (i, cell) in r.cells.iter().enumerate() {
                let text = match (cell.mb_s, cell.change_pct) {
                    (None, _) => "-".to_string(),
                    (Some(v), Some(p)) if i > 0 => format!("{v:.1} ({p:+.1} %)"),
                    (Some(v), _) => format!("{v:.1}"),
                };
                s.push_str(&format!(" {text} |"));
            }
            s.push('\n');
        }
        for c in &self.columns {
            for why in &c.measured.skipped {
                s.push_str(&format!("\nnot run on {}: {why}\n", c.name));
            }
        }
        s
    }

    /// The table as CSV, one line per scenario and column.
    pub fn csv(&self) -> Result<String> {
        let mut lines = Vec::new();
        for r in &self.rows {
            for (c, cell) in self.columns.iter().zip(&r.cells) {
                let value = match (&self.swept, c.settings.first()) {
                    (Some(_), Some(s)) => s.value.clone(),
                    _ => String::new(),
                };
                lines.push(CsvLine {
                    scenario: r.scenario.clone(),
                    column: c.name.clone(),
                    value,
                    mb_s: fixed_or_empty(cell.mb_s, 3),
                    change_pct: fixed_or_empty(cell.change_pct, 3),
                });
            }
        }
        to_csv(&lines)
    }

    /// The simulated time of every column together, in seconds.
    pub fn simulated_s(&self) -> f64 {
        self.columns.iter().map(|c| c.measured.simulated_s).sum()
    }
}

/// One line of whatif.csv: a scenario's figure on one column.
#[derive(Debug, Default, Serialize)]
struct CsvLine {
    scenario: String,
    column: String,
    value: String,
    mb_s: String,
    change_pct: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use xdma::sim::DriverConfig;
    use xdma::sim::SimConfig;
    use xdma::Config;

    fn sim(cfg: &Config) -> SimConfig {
        SimConfig::from_config(cfg).expect("a valid [sim] section")
    }

    fn config_error(r: Result<Config>) -> String {
        let e = r.expect_err("the setting must be refused");
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
        e.to_string()
    }

    #[test]
    fn a_renamed_key_is_still_set_under_its_old_name() {
        let base = Config::default();
        let old = apply(&base, "engine.c2h_request_ids", "16").expect("the old name");
        let new = apply(&base, "ip.c2h_request_ids", "16").expect("the new name");
        assert_eq!(sim(&old), sim(&new));
        assert_eq!(sim(&old).ip.c2h_request_ids, 16);
    }

    #[test]
    fn a_nested_key_is_set_and_reads_back_through_the_section() {
        let base = Config::default();
        let cfg = apply(&base, "ip.c2h_request_ids", "16").expect("in range");
        let want = SimConfig::default().ip.c2h_request_ids * 2;
        assert_eq!(sim(&cfg).ip.c2h_request_ids, want);
        let cfg = apply(&cfg, "timing.link.generation", "1").expect("Gen1");
        let s = sim(&cfg);
        assert_eq!(s.timing.link.generation, 1);
        // The earlier setting is kept, and nothing else moved.
        assert_eq!(s.ip.c2h_request_ids, want);
        let mut expect = SimConfig::default();
        expect.ip.c2h_request_ids = want;
        expect.timing.link.generation = 1;
        assert_eq!(s, expect);
        // The configuration round-trips through TOML, as a file would carry it.
        let back = Config::from_toml(&cfg.to_toml().expect("toml")).expect("read back");
        assert_eq!(sim(&back), expect);
    }

    #[test]
    fn values_are_read_as_toml_else_as_strings() {
        let base = Config::default();
        let s = sim(&apply(&base, "driver.poll_mode", "true").expect("a boolean"));
        assert_eq!(s.driver, DriverConfig { poll_mode: true });
        let s = sim(&apply(&base, "timing.root.read_latency_ns", "300.5").expect("a float"));
        assert_eq!(s.timing.root.read_latency_ns, 300.5);
        // An integer where the section has a float is the same number.
        let s = sim(&apply(&base, "timing.link.flight_ns", "100").expect("an integer"));
        assert_eq!(s.timing.link.flight_ns, 100.0);
        // A bare word is a string: an enum's name, as a file spells it.
        let s = sim(&apply(&base, "timing.host.descriptors", "ring").expect("a name"));
        assert_eq!(
            s.timing.host.descriptors,
            xdma::sim::config::timing::Descriptors::Ring
        );
        // An optional field that is not set can be set.
        let s = sim(&apply(&base, "variant", "mm").expect("a variant"));
        assert_eq!(s.variant, Some(xdma::sim::Variant::Mm));
        assert_eq!(s.top, xdma::sim::Variant::Mm.top_name());
    }

    #[test]
    fn an_unknown_key_is_named_with_the_keys_valid_there() {
        let base = Config::default();
        let m = config_error(apply(&base, "ip.c2h_request_idz", "16"));
        assert!(m.contains("ip.c2h_request_idz"), "{m}");
        assert!(m.contains("[sim.ip]"), "{m}");
        for k in ["c2h_request_ids", "h2c_request_ids", "descriptor_block"] {
            assert!(m.contains(k), "{m} should list {k}");
        }
        let m = config_error(apply(&base, "nothing", "1"));
        assert!(
            m.contains("`nothing`") && m.contains(", ip,") && m.contains("timing"),
            "{m}"
        );
        let m = config_error(apply(&base, "timing.lnk.generation", "1"));
        assert!(
            m.contains("`lnk`") && m.contains("[sim.timing]") && m.contains("link"),
            "{m}"
        );
        // A value is not a table to walk into.
        let m = config_error(apply(&base, "events.count", "1"));
        assert!(
            m.contains("events.count") && m.contains("`events` is a value"),
            "{m}"
        );
        let m = config_error(apply(&base, "ip..pcie_tags", "1"));
        assert!(m.contains("empty part"), "{m}");
        // Under an optional table that is not set, the section's own check names the key.
        let m = config_error(apply(&base, "bus_pauses.sead", "1"));
        assert!(m.contains("bus_pauses.sead"), "{m}");
    }

    #[test]
    fn a_bad_or_out_of_range_value_is_the_sections_error_naming_the_key() {
        let base = Config::default();
        // Out of range: the engine's own check (2 to 32 request IDs).
        let hi = xdma::sim::config::ip::C2H_IDS.end() + 1;
        let m = config_error(apply(&base, "ip.c2h_request_ids", &hi.to_string()));
        assert!(m.contains("ip.c2h_request_ids"), "{m}");
        assert!(m.contains(&hi.to_string()), "{m}");
        let m = config_error(apply(&base, "timing.link.generation", "9"));
        assert!(m.contains("timing.link.generation"), "{m}");
        // The wrong type: a word where a number goes, a float where an integer goes.
        for bad in ["sixteen", "16.5", "true"] {
            let m = config_error(apply(&base, "ip.c2h_request_ids", bad));
            assert!(m.contains("ip.c2h_request_ids"), "{bad}: {m}");
        }
        let m = config_error(apply(&base, "timing.host.descriptors", "windows"));
        assert!(m.contains("timing.host.descriptors"), "{m}");
        let m = config_error(apply(&base, "timing.link.flight_ns", "inf"));
        assert!(
            m.contains("timing.link.flight_ns") && m.contains("finite"),
            "{m}"
        );
        let m = config_error(apply_all(
            &base,
            &[Setting::new("events", "2"), Setting::new("events", "3")],
        ));
        assert!(m.contains("events") && m.contains("twice"), "{m}");
    }

    #[test]
    fn the_inbound_path_is_a_setting_with_two_values() {
        use xdma::sim::config::timing::Inbound;
        let base = Config::default();
        assert_eq!(sim(&base).timing.root.inbound, Inbound::Ordered);
        let cfg = apply(&base, "timing.root.inbound", "independent").expect("a value");
        assert_eq!(sim(&cfg).timing.root.inbound, Inbound::Independent);
        let cfg = apply(&cfg, "timing.root.inbound", "ordered").expect("a value");
        assert_eq!(sim(&cfg).timing.root.inbound, Inbound::Ordered);
        let m = config_error(apply(&base, "timing.root.inbound", "fifo"));
        assert!(m.contains("timing.root.inbound"), "{m}");
        let m = config_error(apply(&base, "timing.root.posted_data_credits", "8"));
        assert!(m.contains("timing.root.posted_data_credits"), "{m}");
    }

    #[test]
    fn a_bad_section_in_the_configuration_is_refused_before_any_setting() {
        let cfg = Config::from_toml("[sim]\nevents = 0\n").expect("toml");
        let m = config_error(apply(&cfg, "ip.pcie_tags", "16"));
        assert!(m.contains("events"), "{m}");
    }

    #[test]
    fn settings_and_sweeps_are_parsed_from_the_command_line() {
        let s: Setting = "timing.link.lanes = 4".parse().expect("a setting");
        assert_eq!(s, Setting::new("timing.link.lanes", "4"));
        assert_eq!(s.to_string(), "timing.link.lanes=4");
        for bad in ["lanes", "=4", "timing.link.lanes="] {
            let e = bad.parse::<Setting>().expect_err(bad);
            assert_eq!(e.kind(), ErrorKind::Config);
            assert!(e.to_string().contains("KEY=VALUE"), "{e}");
        }
        let w: Sweep = "h2c=[\"mm\", \"stream\"],[\"mm\"], \"a,b\""
            .parse()
            .expect("a sweep");
        assert_eq!(w.key, "h2c");
        assert_eq!(w.values, ["[\"mm\", \"stream\"]", "[\"mm\"]", "\"a,b\""]);
        assert_eq!(w.settings()[1], Setting::new("h2c", "[\"mm\"]"));
        let e = "timing.link.lanes=1,,4"
            .parse::<Sweep>()
            .expect_err("an empty value");
        assert!(e.to_string().contains("empty value"), "{e}");
    }

    #[test]
    fn the_table_sets_each_figure_against_the_first_column() {
        let col = |settings: Vec<Setting>, figs: &[(&str, Option<f64>)]| {
            Column::new(
                settings,
                Measured {
                    figures: figs
                        .iter()
                        .map(|(n, v)| Figure {
                            scenario: (*n).into(),
                            mb_s: *v,
                        })
                        .collect(),
                    skipped: vec![],
                    simulated_s: 0.5,
                },
            )
        };
        let t = table(
            Some("k".into()),
            vec![
                col(vec![], &[("a", Some(200.0)), ("b", Some(50.0))]),
                col(
                    vec![Setting::new("k", "1")],
                    &[("a", Some(250.0)), ("b", None)],
                ),
            ],
        );
        assert_eq!(t.columns[0].name, "default");
        assert_eq!(t.columns[1].name, "k=1");
        assert_eq!(t.rows.len(), 2);
        let a = &t.rows[0];
        assert_eq!(a.cells[0].change_pct, Some(0.0));
        assert_eq!(a.cells[1].change_pct, Some((250.0 - 200.0) / 200.0 * 100.0));
        assert_eq!(
            t.rows[1].cells[1],
            Cell {
                mb_s: None,
                change_pct: None
            }
        );
        let md = t.markdown();
        assert!(md.contains("| a | 200.0 | 250.0 (+25.0 %) |"), "{md}");
        assert!(md.contains("| b | 50.0 | - |"), "{md}");
        let csv = t.csv().expect("csv");
        assert!(csv.contains("a,k=1,1,250.000,25.000\n"), "{csv}");
        assert_eq!(t.simulated_s(), 1.0);
    }
}
