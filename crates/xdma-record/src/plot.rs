//! A recording's bandwidth against time, as `fio --write_bw_log` gives it: the bytes written
//! in each wall-clock second of the recording, from its manifest.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::record::Manifest;
use crate::RecordError;

/// The plot's path for a recording at `file`: `FILE.svg` beside it.
pub fn plot_path(file: &Path) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(".svg");
    PathBuf::from(s)
}

/// Draws the manifest's MB/s per second into `out`.
pub fn plot(m: &Manifest, out: &Path) -> Result<(), RecordError> {
    let err = |e: &dyn std::fmt::Display| RecordError::Format {
        path: out.to_path_buf(),
        problem: format!("drawing the plot: {e}"),
    };
    let points: Vec<(f64, f64)> = m
        .per_second_mb_s
        .iter()
        .enumerate()
        .map(|(s, &v)| (s as f64 + 0.5, v))
        .collect();
    let x1 = (points.len() as f64).max(1.0);
    let y1 = points.iter().fold(0.0f64, |a, p| a.max(p.1)) * 1.15;
    let y1 = if y1 > 0.0 { y1 } else { 1.0 };
    let root = SVGBackend::new(out, (800, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{}: MB/s written per second", m.file),
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
    Ok(())
}
