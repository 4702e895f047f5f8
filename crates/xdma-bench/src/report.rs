//! What every result carries (the backend, the configuration, the host, both clocks), the
//! results the tool prints, and their rendering: the text and Markdown tables on stdout
//! ([`text`]), the CSV files and SVG plots that `--out` writes ([`files`]), and JSON.

pub mod files;
pub mod text;

use std::path::{Path, PathBuf};
use std::time::Instant;

use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use xdma::{Card, Config, Direction, Error, Result};

use crate::host;
use crate::measure::Mode;
use crate::scenario;
use crate::sweep::Row;
pub use crate::units::bytes_label;

/// What a result was measured on and how long it took.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    /// The tool and its version.
    pub tool: String,
    /// The backend: "sim" or "hw".
    pub backend: String,
    /// Which clock the durations count in.
    pub timing: String,
    /// The configuration the card was opened with.
    pub config: Config,
    /// The host CPU's model, where the host tells.
    pub host_cpu: Option<String>,
    /// CPUs this process may use.
    pub host_cpus: usize,
    /// The host's kernel.
    pub kernel: String,
    /// The XDMA driver module's version, where known (hw backend).
    pub driver_version: Option<String>,
    /// The XDMA IP version from the engines' identifier registers, where known.
    pub xdma_ip_version: Option<u8>,
    /// The card's identifier and register-map version.
    pub card_id: u32,
    /// The card's register-map version.
    pub card_version: u32,
    /// Simulated time the run took, in seconds (simulated card only).
    pub simulated_s: Option<f64>,
    /// Wall-clock time the run took, in seconds.
    pub wall_s: f64,
}

/// A sweep and what it was measured on, as `sweep --out` saves it.
#[derive(Debug, Serialize, Deserialize)]
pub struct SweepDoc {
    /// What it was measured on.
    #[serde(flatten)]
    pub meta: Meta,
    /// The timing mode.
    pub mode: Mode,
    /// How the runs of a size were counted ([`text::runs`]).
    pub runs: String,
    /// The rows, both directions of each size.
    pub rows: Vec<Row>,
}

/// The sweep's rows as the JSON result of `sweep`.
#[derive(Debug, Serialize)]
pub struct Rows<'a> {
    /// The timing mode.
    pub mode: Mode,
    /// The rows.
    pub rows: &'a [Row],
}

/// One row of `paths`: a direction and size on both memory paths.
#[derive(Debug, Serialize)]
pub struct PathRow {
    /// The direction.
    pub dir: Direction,
    /// The block size.
    pub bytes: u64,
    /// Throughput on the reference board's memory path.
    pub reference_path_mb_s: f64,
    /// Throughput on the card's own memory path.
    pub card_path_mb_s: f64,
    /// The card path's change against the reference path, in percent.
    pub cost_pct: f64,
}

/// The predictions of scenarios the timing model was not calibrated on, to be judged against
/// a board (`docs/timing-model.md` lists them).
#[derive(Debug, Serialize)]
pub struct Predictions {
    /// A 1 MiB write thread and a 1 MiB read thread at once.
    pub concurrent: scenario::Concurrent,
    /// 4096 B GEN frames on one C2H stream.
    pub one_stream: scenario::Streams,
    /// 4096 B GEN frames on both C2H streams.
    pub two_streams: scenario::Streams,
    /// The card's own LOOP rate with 4132 B frames, where the backend knows it.
    pub loop_4132: Option<LoopPrediction>,
}

/// The card's own LOOP rate as `predict` reports it.
#[derive(Debug, Serialize)]
pub struct LoopPrediction {
    /// Frame length in bytes.
    pub frame_len: usize,
    /// Frames measured.
    pub frames: u32,
    /// `axi_aclk` cycles from the first frame's first beat to the last frame's last beat.
    pub cycles: u64,
    /// Bytes per cycle as a fraction of the 16 the 128-bit stream carries.
    pub fraction_of_16_bytes_per_cycle: f64,
    /// The same as MB/s at the board's 250 MHz `axi_aclk`.
    pub mb_s_at_250_mhz: f64,
}

impl From<xdma::LoopRate> for LoopPrediction {
    fn from(l: xdma::LoopRate) -> LoopPrediction {
        LoopPrediction {
            frame_len: l.frame_len,
            frames: l.frames,
            cycles: l.cycles,
            fraction_of_16_bytes_per_cycle: l.fraction,
            mb_s_at_250_mhz: l.fraction * 16.0 * 250.0,
        }
    }
}

/// The clocks at the start of a run.
#[derive(Debug, Clone, Copy)]
pub struct Start {
    wall: Instant,
    card_ps: u64,
}

impl Start {
    /// Now, on the host and on the card's clock.
    pub fn now(card: &impl Card) -> Result<Start> {
        Ok(Start {
            wall: Instant::now(),
            card_ps: card.now_ps()?,
        })
    }
}

/// True when the backend's clock is simulated time.
pub fn simulated(card: &impl Card) -> bool {
    card.info().backend == "sim"
}

/// The virtual machine the program runs in, if any (the driver backend's check).
fn vm_host() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        xdma::hw::virtual_machine()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The sentence saying which clock a backend's durations count in.
pub fn timing(card: &impl Card, cfg: &Config) -> String {
    if simulated(card) {
        "simulated time of the simulated card (deterministic; independent of the host)".into()
    } else {
        let mut s = format!(
            "host time: monotonic time around each call on the driver's device files under {} (through the FUSE mount when the device is one), so it includes the host's system-call and file-system path",
            cfg.device.display()
        );
        if let Some(vm) = vm_host() {
            s.push_str(&format!(
                "; this host is a virtual machine ({vm}), so the times measure its hypervisor or emulator as much as the card and say nothing about the card"
            ));
        }
        s
    }
}

/// The metadata of a run that started at `start`; `sim_span_ps` is the longest span of
/// simulated time that the run's own handles saw (each handle of the simulated card has a
/// clock of its own), taken when it is longer than the opening handle's.
pub fn meta(card: &impl Card, cfg: &Config, start: Start, sim_span_ps: u64) -> Meta {
    let info = card.info();
    let sim = simulated(card);
    let own = card
        .now_ps()
        .map(|t| t.saturating_sub(start.card_ps))
        .unwrap_or(0);
    Meta {
        tool: format!("xdma-bench {}", env!("CARGO_PKG_VERSION")),
        backend: info.backend.clone(),
        timing: timing(card, cfg),
        config: cfg.clone(),
        host_cpu: host::cpu_model(),
        host_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: host::kernel(),
        driver_version: if sim { None } else { host::driver_version() },
        xdma_ip_version: info.xdma_version,
        card_id: info.card_id,
        card_version: info.card_version,
        simulated_s: sim.then(|| own.max(sim_span_ps) as f64 / 1e12),
        wall_s: start.wall.elapsed().as_secs_f64(),
    }
}

/// A result with its metadata, as one JSON document.
#[derive(Debug, Serialize)]
pub struct Document<'a, T: Serialize> {
    /// The metadata.
    #[serde(flatten)]
    pub meta: &'a Meta,
    /// The result.
    #[serde(flatten)]
    pub result: &'a T,
}

/// The result and its metadata as pretty JSON.
pub fn json<T: Serialize>(meta: &Meta, result: &T) -> Result<String> {
    serde_json::to_string_pretty(&Document { meta, result })
        .map_err(|e| Error::Backend(format!("cannot write the result as JSON: {e}")))
}

/// Writes `text` to `dir/name`, creating the folder; returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    let io = |what: &str, p: &Path, e: std::io::Error| Error::Invalid {
        op: "writing the output files",
        problem: format!(
            "cannot {what} {}: {e}; give --out a folder this user may write",
            p.display()
        ),
    };
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| io("write", &path, e))?;
    Ok(path)
}

/// One line of a plot.
#[derive(Debug, Clone)]
pub struct Series {
    /// The legend's name.
    pub name: String,
    /// The points, x ascending.
    pub points: Vec<(f64, f64)>,
    /// Drawn as open circles with a thin line (a reference), else a solid line with dots.
    pub reference: bool,
    /// The colour's index in the palette.
    pub colour: usize,
}

/// The x axis of a plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum XAxis {
    /// Bytes on a base-2 logarithmic axis, labelled in KiB and MiB.
    Bytes,
    /// A plain linear axis.
    Linear,
}

/// Ten colours, so that a plot of every what-if scenario tells its lines apart; the first
/// four are the ones the two-direction plots use.
fn colour(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    PALETTE[i % PALETTE.len()]
}

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Backend(format!("cannot draw the plot: {e}"))
}

/// Draws `series` into an SVG file.
pub fn line_plot(
    path: &Path,
    title: &str,
    x: XAxis,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.clone()).collect();
    if all.is_empty() {
        return Err(plot_err("no points"));
    }
    let (x0, x1) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let y1 = all.iter().fold(0.0f64, |a, p| a.max(p.1)) * 1.1;
    let y1 = if y1 > 0.0 { y1 } else { 1.0 };
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let mut b = ChartBuilder::on(&root);
    b.caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72);
    macro_rules! draw {
        ($chart:expr, $fmt:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(x_label)
                .y_desc(y_label)
                .x_label_formatter($fmt)
                .draw()
                .map_err(plot_err)?;
            for s in series {
                let c = colour(s.colour);
                if s.reference {
                    chart
                        .draw_series(LineSeries::new(
                            s.points.clone(),
                            c.mix(0.5).stroke_width(1),
                        ))
                        .map_err(plot_err)?
                        .label(s.name.clone())
                        .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.stroke_width(1)));
                    chart
                        .draw_series(
                            s.points
                                .iter()
                                .map(|&p| Circle::new(p, 4, c.stroke_width(1))),
                        )
                        .map_err(plot_err)?;
                } else {
                    chart
                        .draw_series(LineSeries::new(s.points.clone(), c.stroke_width(2)))
                        .map_err(plot_err)?
                        .label(s.name.clone())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                        });
                    chart
                        .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                        .map_err(plot_err)?;
                }
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(plot_err)?;
        }};
    }
    match x {
        XAxis::Bytes => draw!(
            b.build_cartesian_2d((x0..x1).log_scale().base(2.0), 0.0..y1)
                .map_err(plot_err)?,
            &|v: &f64| bytes_label(*v)
        ),
        XAxis::Linear => draw!(
            b.build_cartesian_2d(x0..x1.max(x0 + 1.0), 0.0..y1)
                .map_err(plot_err)?,
            &|v: &f64| format!("{v}")
        ),
    }
    root.present().map_err(plot_err)?;
    Ok(())
}

/// Draws one bar per `(name, value)` into an SVG file.
pub fn bar_plot(path: &Path, title: &str, y_label: &str, bars: &[(String, f64)]) -> Result<()> {
    let y1 = bars.iter().fold(0.0f64, |a, b| a.max(b.1)) * 1.15;
    let y1 = if y1 > 0.0 { y1 } else { 1.0 };
    let root = SVGBackend::new(path, (700, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let n = bars.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(72)
        .build_cartesian_2d((0..n).into_segmented(), 0.0..y1)
        .map_err(plot_err)?;
    let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_label)
        .x_label_formatter(&|v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .draw()
        .map_err(plot_err)?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, b)| {
            let c = colour(i);
            let mut r = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), b.1),
                ],
                c.filled(),
            );
            r.set_margin(0, 0, 20, 20);
            r
        }))
        .map_err(plot_err)?;
    root.present().map_err(plot_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_svg_with_their_labels() {
        let dir = std::env::temp_dir().join(format!("xdma-bench-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("l.svg");
        let s = Series {
            name: "measured H2C".into(),
            points: vec![(4096.0, 200.0), (1048576.0, 3000.0)],
            reference: false,
            colour: 0,
        };
        line_plot(&p, "sweep", XAxis::Bytes, "block", "MB/s", &[s]).expect("plot");
        let svg = std::fs::read_to_string(&p).expect("read");
        assert!(svg.starts_with("<svg") && svg.contains("measured H2C") && svg.contains("MiB"));
        let q = dir.join("b.svg");
        bar_plot(
            &q,
            "bars",
            "MB/s",
            &[("H2C".into(), 1.0), ("C2H".into(), 2.0)],
        )
        .expect("bars");
        assert!(std::fs::read_to_string(&q).expect("read").contains("C2H"));
        assert!(line_plot(&p, "none", XAxis::Linear, "x", "y", &[]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
