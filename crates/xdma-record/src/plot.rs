//! A recording's bandwidth against time, as `fio --write_bw_log` gives it: the bytes written
//! in each wall-clock second of the recording, from its manifest.

use std::path::Path;

use plotters::prelude::*;

use crate::account::Manifest;
use crate::RecordError;

/// The most points a plot draws: a longer recording's seconds are taken in spans of several
/// seconds, each drawn as its mean, so that the plot's size and time stay bounded.
pub const MAX_POINTS: usize = 800;

/// Draws the manifest's MB/s per second into `out` (written whole, or not at all).
pub fn plot(m: &Manifest, out: &Path) -> Result<(), RecordError> {
    let svg = render(m).map_err(|problem| RecordError::Format {
        path: out.to_path_buf(),
        problem,
    })?;
    crate::manifest::replace(out, svg.as_bytes()).map_err(|e| RecordError::Disk {
        what: "write the plot".into(),
        path: out.to_path_buf(),
        source: e,
    })
}

/// The plot of the manifest's MB/s per second, as SVG text.
pub fn render(m: &Manifest) -> Result<String, String> {
    let err = |e: &dyn std::fmt::Display| format!("drawing the plot: {e}");
    // A rate that is not a finite number, or so large that the axis's scale overflows, would
    // leave the axis without ticks to find.
    m.check()
        .map_err(|e| format!("the manifest cannot be drawn: {e}"))?;
    let rates = &m.per_second_mb_s;
    let span = rates.len().div_ceil(MAX_POINTS).max(1);
    let points: Vec<(f64, f64)> = rates
        .chunks(span)
        .enumerate()
        .map(|(k, c)| {
            let mean = c.iter().sum::<f64>() / c.len() as f64;
            ((k * span) as f64 + c.len() as f64 / 2.0, mean)
        })
        .collect();
    let x1 = (rates.len() as f64).max(1.0);
    let y1 = points.iter().fold(0.0f64, |a, p| a.max(p.1)) * 1.15;
    let y1 = if y1 > 0.0 { y1 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                if span == 1 {
                    format!("{}: MB/s written per second", m.file)
                } else {
                    format!("{}: MB/s written, mean of each {span} s", m.file)
                },
                ("sans-serif", 20),
            )
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(72)
            .build_cartesian_2d(0.0..x1, 0.0..y1)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("seconds of the recording (wall clock)")
            .y_desc("MB/s")
            .draw()
            .map_err(|e| err(&e))?;
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                BLUE.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(format!(
                "{} frames, {} bytes, {}",
                m.frames,
                m.bytes,
                if m.sink_report.direct {
                    "O_DIRECT"
                } else {
                    "buffered"
                }
            ))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, BLUE.filled())))
            .map_err(|e| err(&e))?;
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}
