//! The reference board's measured figures (copies of `shared/reference/`, kept beside the code
//! so that a clone elsewhere has them; a test checks the copy against the original when it is
//! there).

use serde::Serialize;
use xdma::{Direction, Error, Result};

/// The block-size sweep measured on the board: `k7-xdma-ddr3-block-sweep.csv`.
pub const BLOCK_SWEEP_CSV: &str = include_str!("../data/k7-xdma-ddr3-block-sweep.csv");

/// The serial timing mode measured on the board: `k7-xdma-serial.csv`.
pub const SERIAL_CSV: &str = include_str!("../data/k7-xdma-serial.csv");

/// One row of a reference table: a block size and the throughput in each direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Row {
    /// Block size in bytes.
    pub bytes: u64,
    /// H2C (write) throughput in MB/s (10^6 bytes per second).
    pub write_mb_s: f64,
    /// C2H (read) throughput in MB/s.
    pub read_mb_s: f64,
}

impl Row {
    /// The throughput of one direction.
    pub fn mb_s(&self, dir: Direction) -> f64 {
        match dir {
            Direction::H2C => self.write_mb_s,
            Direction::C2H => self.read_mb_s,
        }
    }
}

/// The data lines of a CSV file: comments (`#`) and the header skipped, fields split.
fn records(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .skip(1)
        .map(|(n, l)| (n + 1, l.split(',').map(str::trim).collect()))
}

fn field<T: std::str::FromStr>(f: &[&str], i: usize, line: usize, what: &str) -> Result<T> {
    f.get(i)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::Invalid {
            op: "reading a reference table",
            problem: format!(
                "line {line}: field {} ({what}) is missing or not a number",
                i + 1
            ),
        })
}

/// Parses a block-sweep table: `block_bytes,write_mb_s,read_mb_s[,...]`.
pub fn parse_sweep(text: &str) -> Result<Vec<Row>> {
    records(text)
        .map(|(line, f)| {
            Ok(Row {
                bytes: field(&f, 0, line, "block_bytes")?,
                write_mb_s: field(&f, 1, line, "write_mb_s")?,
                read_mb_s: field(&f, 2, line, "read_mb_s")?,
            })
        })
        .collect()
}

/// The board's block sweep (back-to-back mode).
pub fn block_sweep() -> Result<Vec<Row>> {
    parse_sweep(BLOCK_SWEEP_CSV)
}

/// The board's serial row: (block bytes, microseconds per transfer).
pub fn serial() -> Result<(u64, f64)> {
    let (line, f) = records(SERIAL_CSV).next().ok_or_else(|| Error::Invalid {
        op: "reading a reference table",
        problem: "the serial table has no row".into(),
    })?;
    Ok((
        field(&f, 1, line, "block_bytes")?,
        field(&f, 2, line, "us_per_transfer")?,
    ))
}

/// The `[sim]` keys that choose the simulated card itself; a configuration or a what-if that
/// sets one of them keeps its own card instead of taking the reference path.
pub const CARD_CHOICE_KEYS: [&str; 3] = ["path", "variant", "top"];

/// The configuration that comparisons with the reference table run on: on the simulated
/// card, the reference board's own memory path (`[sim] path = "reference"`: XDMA `M_AXI` ->
/// SmartConnect -> MIG), unless the `[sim]` section chooses a path, a variant or a top itself;
/// on a board, the configuration as given.
pub fn on_reference_path(cfg: &xdma::Config) -> Result<xdma::Config> {
    let chosen = CARD_CHOICE_KEYS.iter().any(|k| cfg.sim.contains_key(*k));
    if cfg.backend != xdma::BackendKind::Sim || chosen {
        return Ok(cfg.clone());
    }
    crate::setting::apply(cfg, "path", "reference")
}

#[cfg(test)]
mod tests {
    #[test]
    fn comparisons_take_the_reference_path_unless_the_section_chooses() {
        let dflt = super::on_reference_path(&xdma::Config::default()).expect("default");
        assert_eq!(
            dflt.sim.get("path").and_then(|v| v.as_str()),
            Some("reference")
        );
        let mm = xdma::Config::from_toml("[sim]\nvariant = \"mm\"\n").expect("toml");
        let kept = super::on_reference_path(&mm).expect("a variant");
        assert!(
            !kept.sim.contains_key("path"),
            "a chosen variant is kept as it is"
        );
        let card = crate::setting::apply(&dflt, "path", "card").expect("card");
        assert_eq!(card.sim.get("path").and_then(|v| v.as_str()), Some("card"));
    }

    use super::*;

    #[test]
    fn the_tables_parse() {
        let rows = block_sweep().expect("sweep");
        assert_eq!(rows.len(), 15);
        assert_eq!(rows[0].bytes, 4096);
        assert_eq!(rows[14].bytes, 8 << 20);
        assert!((rows[14].write_mb_s - 3387.0).abs() < 1e-9);
        assert_eq!(serial().expect("serial"), (4096, 33.0));
        assert!(parse_sweep("h\n1,x,2\n").is_err());
    }

    #[test]
    fn the_copies_match_the_shared_originals_when_they_are_there() {
        let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/reference/k7-xdma-ddr3-block-sweep.csv");
        if let Ok(original) = std::fs::read_to_string(&shared) {
            assert_eq!(
                parse_sweep(&original).expect("original"),
                block_sweep().expect("copy"),
                "data/k7-xdma-ddr3-block-sweep.csv differs from {}",
                shared.display()
            );
        }
    }
}
