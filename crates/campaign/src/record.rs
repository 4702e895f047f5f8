//! The records: what each slice, soak phase and what-if point writes into `CAMPAIGN_OUT`, as
//! serde types, so that the tests that write them and `cargo xtask campaign`, which reads them,
//! share one definition instead of string keys.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One test's record, tagged by `kind` in its JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Record {
    /// A model-based fuzz slice (`campaign_fuzz_slice_NN`).
    Fuzz(ModelSlice),
    /// A protocol fuzz slice (`campaign_fuzz_protocol_NN`).
    Protocol(ProtocolSlice),
    /// A soak phase (`campaign_soak_*`).
    Soak(SoakPhase),
    /// A what-if grid point (`campaign_whatif_*`).
    Whatif(WhatIfPoint),
}

impl Record {
    /// The test that wrote the record.
    pub fn test(&self) -> &str {
        match self {
            Record::Fuzz(r) => &r.test,
            Record::Protocol(r) => &r.test,
            Record::Soak(r) => &r.test,
            Record::Whatif(r) => &r.test,
        }
    }
}

/// What a model-based slice ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSlice {
    /// The slice test's name.
    pub test: String,
    /// Its slice, below [`crate::SLICES`].
    pub slice: u64,
    /// The campaign's seed, `0x` hexadecimal.
    pub seed: String,
    /// Model-based cases over all slices.
    pub campaign_cases: u64,
    /// The simulated top, when not the suite's.
    pub top: Option<String>,
    /// Model-based cases this slice ran.
    pub cases: u64,
    /// Their indices in the campaign.
    pub case_indices: Vec<u64>,
    /// What failed (a slice stops at its first failing case).
    pub failures: Vec<Failure>,
    /// Wall seconds the slice took.
    pub secs: f64,
}

/// What a protocol slice ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolSlice {
    /// The slice test's name.
    pub test: String,
    /// Its slice, below [`crate::SLICES`].
    pub slice: u64,
    /// The campaign's seed, `0x` hexadecimal.
    pub seed: String,
    /// Each protocol's run that finished.
    pub protocol: Vec<ProtocolCoverage>,
    /// The protocols' runs that failed.
    pub failures: Vec<Failure>,
    /// Wall seconds the slice took.
    pub secs: f64,
}

/// One protocol's fuzz run in a slice: its cases and the functional coverage its monitors
/// counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolCoverage {
    /// `axi4`, `axi4-lite` or `axi-stream`.
    pub protocol: String,
    /// The run's own seed, `0x` hexadecimal.
    pub seed: String,
    /// Cases run.
    pub cases: u64,
    /// Every situation the protocol's monitor counts, with its count.
    pub situations: Vec<SituationCount>,
    /// The situations no case reached.
    pub missing: Vec<String>,
}

/// One situation of a protocol's functional coverage, and how often it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SituationCount {
    /// The situation's name.
    pub situation: String,
    /// How many times it happened.
    pub count: u64,
}

/// A soak phase's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakPhase {
    /// The phase test's name.
    pub test: String,
    /// The phase, as the soak names it.
    pub phase: String,
    /// The backend it ran on.
    pub backend: String,
    /// Frames taken.
    pub frames: u64,
    /// Memory-mapped bytes moved.
    pub mm_bytes: u64,
    /// The modes the card lacks, which the phase left out.
    pub lacking: Vec<String>,
    /// Wall seconds.
    pub secs: f64,
}

/// A what-if grid point's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIfPoint {
    /// The point test's name.
    pub test: String,
    /// Its settings, each `key=value`.
    pub settings: Vec<String>,
    /// Whether it ran the reference scenarios (`CAMPAIGN_WHATIF=1`) rather than one transfer.
    pub reference_plan: bool,
    /// One figure per scenario.
    pub figures: Vec<WhatIfFigure>,
    /// The scenarios the card could not run, and why.
    pub skipped: Vec<String>,
    /// Simulated seconds.
    pub simulated_s: f64,
    /// Wall seconds.
    pub secs: f64,
}

/// One scenario's throughput at a what-if point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIfFigure {
    /// The scenario's row, e.g. `C2H 256 KiB`.
    pub scenario: String,
    /// MB/s, or none when the card could not run it.
    pub mb_s: Option<f64>,
}

/// One failure, tagged by `kind` in its JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Failure {
    /// A model-based case, shrunk.
    Model(ModelFailure),
    /// A protocol's fuzz run.
    Protocol(ProtocolFailure),
    /// A test that failed without a record of the failure (a soak phase, a what-if point, a
    /// slice that panicked early); the merge writes these from the JUnit file.
    Test(TestFailure),
}

impl Failure {
    /// What went wrong.
    pub fn error(&self) -> &str {
        match self {
            Failure::Model(f) => &f.error,
            Failure::Protocol(f) => &f.error,
            Failure::Test(f) => &f.error,
        }
    }

    /// The model-based case's index, for a model failure.
    pub fn case(&self) -> Option<u64> {
        match self {
            Failure::Model(f) => Some(f.case),
            _ => None,
        }
    }

    /// The shrunk sequence, for a model failure.
    pub fn sequence(&self) -> Option<&str> {
        match self {
            Failure::Model(f) => Some(&f.sequence),
            _ => None,
        }
    }

    /// The command that replays the failure from its seed.
    pub fn replay_seed(&self) -> &str {
        match self {
            Failure::Model(f) => &f.replay_seed,
            Failure::Protocol(f) => &f.replay_seed,
            Failure::Test(f) => &f.replay_seed,
        }
    }

    /// The command that replays the shrunk sequence, when it was saved.
    pub fn replay_sequence(&self) -> Option<&str> {
        match self {
            Failure::Model(f) => f.replay_sequence.as_deref(),
            _ => None,
        }
    }
}

/// A failing model-based case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelFailure {
    /// Its index in the campaign.
    pub case: u64,
    /// Its generator's 32-byte seed, hexadecimal.
    pub case_seed: String,
    /// Operations in the shrunk sequence.
    pub operations: u64,
    /// Why it failed.
    pub error: String,
    /// The shrunk sequence, as Rust's debug text.
    pub sequence: String,
    /// Where the sequence was saved, when the shard has a record folder.
    pub sequence_file: Option<String>,
    /// The command that runs the case again from its seed.
    pub replay_seed: String,
    /// The command that replays the saved sequence.
    pub replay_sequence: Option<String>,
}

/// A failing protocol fuzz run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtocolFailure {
    /// What failed, with proptest's shrunk sequence.
    pub error: String,
    /// The command that runs the slice again.
    pub replay_seed: String,
}

/// A failing test, from its JUnit entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFailure {
    /// The test binary.
    pub binary: String,
    /// The failure's message.
    pub error: String,
    /// The command that runs the test again.
    pub replay_seed: String,
}

/// Writes `record` as `<out>/<its test>.json`, creating the folder, and returns the file.
pub fn write_record(out: &Path, record: &Record) -> Result<PathBuf, String> {
    let name = record.test();
    let text = serde_json::to_string_pretty(record)
        .map_err(|e| format!("cannot write the record {name}: {e}"))?;
    write_text(out, &format!("{name}.json"), &text)
}

/// Reads a record that [`write_record`] wrote; the error names the file and what was wrong.
pub fn read_record(path: &Path) -> Result<Record, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a campaign record: {e}", path.display()))
}

/// Writes `text` as `<out>/<name>`, creating the folder, and returns the file.
pub fn write_text(out: &Path, name: &str, text: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let path = out.join(name);
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Ends a slice test: writes its record into the shard's folder when there is one, then fails
/// the test with every failure the slice found (each with its replay command). It panics on
/// purpose: it is a test's end, and a panic is how a test fails.
pub fn finish_slice(out: Option<&Path>, record: &Record, failures: &[String]) {
    if let Some(out) = out {
        write_record(out, record).unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(
        failures.is_empty(),
        "{} found {} failure(s):\n{}",
        record.test(),
        failures.len(),
        failures.join("\n")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON keeps the shape the merge has always read: `kind` beside the fields, and a
    /// failure's `kind` inside it.
    #[test]
    fn a_record_round_trips_with_its_kind_tags() {
        let record = Record::Fuzz(ModelSlice {
            test: "campaign_fuzz_slice_03".into(),
            slice: 3,
            seed: "0x25".into(),
            campaign_cases: 64,
            top: None,
            cases: 1,
            case_indices: vec![3],
            failures: vec![Failure::Model(ModelFailure {
                case: 3,
                case_seed: "00".into(),
                operations: 2,
                error: "a mismatch".into(),
                sequence: "[]".into(),
                sequence_file: None,
                replay_seed: "cargo nextest run".into(),
                replay_sequence: None,
            })],
            secs: 1.5,
        });
        let value = serde_json::to_value(&record).expect("a record serializes");
        assert_eq!(value["kind"], "fuzz");
        assert_eq!(value["failures"][0]["kind"], "model");
        assert_eq!(value["failures"][0]["case"], 3);
        let back: Record = serde_json::from_value(value).expect("and reads back");
        assert_eq!(back, record);
    }

    #[test]
    fn a_record_of_no_known_kind_is_an_error_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("campaign-record-{}", std::process::id()));
        let path = write_text(&dir, "odd.json", r#"{"kind":"odd","test":"t"}"#).expect("written");
        let e = read_record(&path).expect_err("no such kind");
        assert!(
            e.contains("odd.json") && e.contains("unknown variant"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
