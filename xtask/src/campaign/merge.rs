//! The merge: every shard's metadata, JUnit cases and records folded into one report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ::campaign::{read_record, Failure, Record, TestFailure};
use serde::{Deserialize, Serialize};

use super::junit::{parse_junit, JunitCase};
use super::layout::PROFILE;

/// What the task knows of a shard, written beside its outputs (`shard.json`) for the merge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct ShardMeta {
    /// The shard's index, from 1.
    pub shard: u32,
    /// The campaign's count of shards.
    pub shards: u32,
    /// Whether its nextest run exited with success.
    pub exit_ok: bool,
    /// Wall seconds it took.
    pub secs: f64,
    /// The command it ran.
    pub command: String,
    /// The parts of the campaign it ran, by name.
    pub which: Vec<String>,
    /// The campaign's model-based cases.
    pub cases: u64,
    /// The campaign's seed, when one was given.
    pub seed: Option<String>,
    /// The simulated top, when one was given.
    pub top: Option<String>,
}

/// What one shard left: its metadata, JUnit cases and records.
#[derive(Debug, Default)]
pub(super) struct ShardOutput {
    pub index: u32,
    pub meta: Option<ShardMeta>,
    pub junit: Option<Vec<JunitCase>>,
    pub records: Vec<Record>,
    /// The record files that could not be read, each with why.
    pub unreadable: Vec<String>,
}

pub(super) fn read_shard(dir: &Path, index: u32) -> ShardOutput {
    let meta = std::fs::read_to_string(dir.join("shard.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<ShardMeta>(&t).ok());
    let junit = std::fs::read_to_string(dir.join("nextest").join(PROFILE).join("junit.xml"))
        .ok()
        .map(|t| parse_junit(&t));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("records"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let (mut records, mut unreadable) = (Vec::new(), Vec::new());
    for f in files {
        match read_record(&f) {
            Ok(r) => records.push(r),
            Err(e) => unreadable.push(e),
        }
    }
    ShardOutput {
        index,
        meta,
        junit,
        records,
        unreadable,
    }
}

/// The shards' folders under `dir`, by index.
pub(super) fn find_shards(dir: &Path) -> Vec<(u32, PathBuf)> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let i = name.strip_prefix("shard-")?.parse().ok()?;
                    e.path().is_dir().then(|| (i, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// One shard's row of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct ShardRow {
    pub shard: u32,
    pub tests: usize,
    pub failed: usize,
    pub skipped: usize,
    pub model_cases: u64,
    pub protocol_cases: u64,
    /// Wall seconds, when the shard's metadata says.
    pub secs: Option<f64>,
    /// Whether nextest exited with success, when the shard's metadata says.
    pub exit_ok: Option<bool>,
}

/// One protocol's functional coverage over the whole campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(super) struct ProtocolTotal {
    pub protocol: String,
    pub cases: u64,
    /// Situations that happened at least once.
    pub reached: usize,
    /// Situations the protocol's monitor counts.
    pub situations: usize,
    pub missing: Vec<String>,
    pub counts: BTreeMap<String, u64>,
}

/// A failure, with the test and the shard it happened in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct ReportedFailure {
    pub test: String,
    pub shard: u32,
    #[serde(flatten)]
    pub failure: Failure,
}

/// The merged campaign, as `campaign.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Report {
    pub passed: bool,
    pub shards: u32,
    pub per_shard: Vec<ShardRow>,
    pub model_cases: u64,
    pub protocol: Vec<ProtocolTotal>,
    /// The soak phases' records, as they wrote them.
    pub soak: Vec<Record>,
    /// The what-if points' records, as they wrote them.
    pub whatif: Vec<Record>,
    pub failures: Vec<ReportedFailure>,
    pub problems: Vec<String>,
}

/// Merges the shards' outputs; `expected` is the count of shards the campaign had.
pub(super) fn merge(shards: &[ShardOutput], expected: u32) -> Report {
    let mut failures = Vec::new();
    let mut shard_rows = Vec::new();
    let mut coverage: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut protocol_cases: BTreeMap<String, u64> = BTreeMap::new();
    let (mut model_cases, mut soak, mut whatif) = (0u64, Vec::new(), Vec::new());
    let mut problems = Vec::new();
    let present: BTreeSet<u32> = shards.iter().map(|s| s.index).collect();
    for i in 1..=expected {
        if !present.contains(&i) {
            problems.push(format!("shard {i} left no output"));
        }
    }
    for s in shards {
        let (mut cases, mut shard_protocol_cases) = (0u64, 0u64);
        let mut recorded_failures = BTreeSet::new();
        problems.extend(
            s.unreadable
                .iter()
                .map(|e| format!("shard {}: {e}", s.index)),
        );
        for r in &s.records {
            let slice_failures = match r {
                Record::Fuzz(f) => {
                    cases += f.cases;
                    model_cases += f.cases;
                    &f.failures
                }
                Record::Protocol(p) => {
                    for run in &p.protocol {
                        shard_protocol_cases += run.cases;
                        *protocol_cases.entry(run.protocol.clone()).or_default() += run.cases;
                        let counts = coverage.entry(run.protocol.clone()).or_default();
                        for sit in &run.situations {
                            *counts.entry(sit.situation.clone()).or_default() += sit.count;
                        }
                    }
                    &p.failures
                }
                Record::Soak(_) => {
                    soak.push(r.clone());
                    continue;
                }
                Record::Whatif(_) => {
                    whatif.push(r.clone());
                    continue;
                }
            };
            for f in slice_failures {
                recorded_failures.insert(r.test().to_string());
                failures.push(ReportedFailure {
                    test: r.test().to_string(),
                    shard: s.index,
                    failure: f.clone(),
                });
            }
        }
        let (mut run, mut failed, mut skipped) = (0usize, 0usize, 0usize);
        match &s.junit {
            Some(junit) => {
                for c in junit {
                    run += 1;
                    skipped += usize::from(c.skipped);
                    if let Some(message) = &c.failure {
                        failed += 1;
                        if !recorded_failures.contains(&c.name) {
                            // A failure without a record of its own (a soak phase, a what-if
                            // point, a slice that panicked early): it replays as a test.
                            failures.push(ReportedFailure {
                                test: c.name.clone(),
                                shard: s.index,
                                failure: Failure::Test(TestFailure {
                                    binary: c.binary.clone(),
                                    error: message.clone(),
                                    replay_seed: format!(
                                        "{}cargo nextest run --workspace -E 'test(={})'",
                                        replay_env(s.meta.as_ref()),
                                        c.name
                                    ),
                                }),
                            });
                        }
                    }
                }
            }
            None => problems.push(format!("shard {} left no JUnit file", s.index)),
        }
        if s.meta.as_ref().is_some_and(|m| !m.exit_ok) && failed == 0 {
            problems.push(format!(
                "shard {} failed with no failing test in its JUnit (see its nextest.log)",
                s.index
            ));
        }
        shard_rows.push(ShardRow {
            shard: s.index,
            tests: run,
            failed,
            skipped,
            model_cases: cases,
            protocol_cases: shard_protocol_cases,
            secs: s.meta.as_ref().map(|m| m.secs),
            exit_ok: s.meta.as_ref().map(|m| m.exit_ok),
        });
    }
    let protocol = coverage
        .into_iter()
        .map(|(proto, counts)| ProtocolTotal {
            cases: protocol_cases.get(&proto).copied().unwrap_or(0),
            reached: counts.values().filter(|c| **c > 0).count(),
            situations: counts.len(),
            missing: counts
                .iter()
                .filter(|(_, c)| **c == 0)
                .map(|(s, _)| s.clone())
                .collect(),
            counts,
            protocol: proto,
        })
        .collect();
    Report {
        passed: failures.is_empty() && problems.is_empty(),
        shards: expected,
        per_shard: shard_rows,
        model_cases,
        protocol,
        soak,
        whatif,
        failures,
        problems,
    }
}

/// The campaign variables a shard ran with, as a command's prefix.
fn replay_env(meta: Option<&ShardMeta>) -> String {
    let Some(meta) = meta else {
        return String::new();
    };
    let mut s = String::new();
    if let Some(seed) = &meta.seed {
        s += &format!("{}={seed} ", ::campaign::SEED_ENV);
    }
    if let Some(top) = &meta.top {
        s += &format!("{}={top} ", ::campaign::TOP_ENV);
    }
    if meta.which.iter().any(|w| w == "soak") {
        s += "CARD_SOAK=1 ";
    }
    if meta.which.iter().any(|w| w == "what-if") {
        s += "CAMPAIGN_WHATIF=1 ";
    }
    s
}

#[cfg(test)]
mod tests {
    use ::campaign::{
        ModelFailure, ModelSlice, ProtocolCoverage, ProtocolSlice, SituationCount, SoakPhase,
    };

    use super::*;
    use crate::campaign::junit::tests::junit;
    use crate::campaign::report::markdown;

    fn fuzz_record(test: &str, cases: u64, failure: Option<Failure>) -> Record {
        Record::Fuzz(ModelSlice {
            test: test.into(),
            slice: 0,
            seed: "0x25".into(),
            campaign_cases: 64,
            top: None,
            cases,
            case_indices: (0..cases).collect(),
            failures: failure.into_iter().collect(),
            secs: 1.0,
        })
    }

    fn protocol_record(test: &str) -> Record {
        let situation = |name: &str, count| SituationCount {
            situation: name.into(),
            count,
        };
        Record::Protocol(ProtocolSlice {
            test: test.into(),
            slice: 1,
            seed: "0x25".into(),
            protocol: vec![ProtocolCoverage {
                protocol: "axi4".into(),
                seed: "0x1".into(),
                cases: 2,
                situations: vec![situation("AW after a stall", 0), situation("INCR burst", 5)],
                missing: vec!["AW after a stall".into()],
            }],
            failures: vec![],
            secs: 0.5,
        })
    }

    fn meta(exit_ok: bool, which: &[&str]) -> Option<ShardMeta> {
        Some(ShardMeta {
            shard: 1,
            shards: 2,
            exit_ok,
            secs: 2.5,
            command: "cargo nextest run".into(),
            which: which.iter().map(|w| w.to_string()).collect(),
            cases: 64,
            seed: None,
            top: None,
        })
    }

    fn passing_shard(index: u32) -> ShardOutput {
        ShardOutput {
            index,
            meta: meta(true, &["fuzz"]),
            junit: Some(parse_junit(
                r#"<testsuites><testsuite><testcase name="campaign_fuzz_slice_01" classname="card-tests::campaign"/><testcase name="campaign_fuzz_slice_03" classname="card-tests::campaign"/></testsuite></testsuites>"#,
            )),
            records: vec![
                fuzz_record("campaign_fuzz_slice_01", 4, None),
                fuzz_record("campaign_fuzz_slice_03", 4, None),
                protocol_record("campaign_fuzz_protocol_01"),
                protocol_record("campaign_fuzz_protocol_03"),
            ],
            unreadable: vec![],
        }
    }

    #[test]
    fn shards_that_pass_merge_into_a_passing_campaign() {
        let r = merge(&[passing_shard(1), passing_shard(2)], 2);
        let md = markdown(&r);
        assert!(r.passed, "{md}");
        assert_eq!(r.model_cases, 16);
        assert_eq!(r.per_shard[1].model_cases, 8);
        assert_eq!(r.protocol[0].cases, 8);
        assert_eq!(r.protocol[0].reached, 1);
        assert_eq!(r.protocol[0].missing, ["AW after a stall"]);
        assert!(md.contains("# Campaign: passed"), "{md}");
        // The JSON keeps the keys it always had.
        let json = serde_json::to_value(&r).expect("the report serializes");
        assert_eq!(json["per_shard"][0]["secs"], 2.5);
        assert_eq!(json["protocol"][0]["counts"]["INCR burst"], 20);
        // A shard that left nothing fails the campaign.
        let r = merge(&[passing_shard(1)], 2);
        assert!(!r.passed);
        assert!(markdown(&r).contains("shard 2 left no output"));
    }

    /// A record file that is not a campaign record is a problem of the merge, named, rather
    /// than a record silently left out.
    #[test]
    fn an_unreadable_record_fails_the_campaign_with_its_file() {
        let dir = std::env::temp_dir().join(format!("xtask-merge-{}", std::process::id()));
        let records = dir.join("records");
        std::fs::create_dir_all(&records).expect("a folder");
        std::fs::write(records.join("odd.json"), r#"{"kind":"odd","test":"t"}"#).expect("written");
        std::fs::write(records.join("cut.json"), r#"{"kind":"fuzz","te"#).expect("written");
        let written =
            ::campaign::write_record(&records, &fuzz_record("campaign_fuzz_slice_00", 1, None));
        written.expect("a record written");
        let shard = read_shard(&dir, 1);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(shard.records.len(), 1);
        let r = merge(&[shard], 1);
        assert!(!r.passed);
        // A cut file (a shard stopped while writing) is named too, not silently left out.
        for file in ["odd.json", "cut.json"] {
            assert!(
                r.problems.iter().any(|p| p.contains(file)),
                "{file}: {:?}",
                r.problems
            );
        }
    }

    #[test]
    fn a_failing_case_in_one_shard_fails_the_campaign_with_its_replay_command() {
        let replay = "CAMPAIGN_SEED=0x25 CAMPAIGN_CASES=35 CAMPAIGN_CASE=34 cargo nextest run --workspace -E 'test(=campaign_fuzz_slice_02)'";
        let failure = Failure::Model(ModelFailure {
            case: 34,
            case_seed: "00".into(),
            operations: 2,
            error: "operation 2 failed: the model holds 0x01 at low+0x30".into(),
            sequence: "\npauses none\nhost zero\nwrite low+0x30 len=32\nread low+0x30 len=32\n".into(),
            sequence_file: None,
            replay_seed: replay.into(),
            replay_sequence: Some("cargo run --example replay -- --top sim_top_fault_rd_beat target/campaign/shard-2/records/campaign_fuzz_slice_02-case-34.txt".into()),
        });
        let failing = ShardOutput {
            index: 2,
            meta: meta(false, &["fuzz"]),
            junit: Some(parse_junit(&junit("campaign_fuzz_slice_02"))),
            records: vec![
                fuzz_record("campaign_fuzz_slice_00", 3, None),
                fuzz_record("campaign_fuzz_slice_02", 3, Some(failure)),
            ],
            unreadable: vec![],
        };
        let r = merge(&[passing_shard(1), failing], 2);
        let md = markdown(&r);
        assert!(!r.passed);
        // The slice's own record says it, so its JUnit failure is not counted twice.
        assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
        assert_eq!(r.failures[0].shard, 2);
        assert_eq!(r.failures[0].test, "campaign_fuzz_slice_02");
        let json = serde_json::to_value(&r.failures[0]).expect("a failure serializes");
        assert_eq!(json["kind"], "model");
        assert_eq!(json["case"], 34);
        assert!(md.contains(replay), "{md}");
        assert!(md.contains("--top sim_top_fault_rd_beat"));
        assert!(md.contains("write low+0x30 len=32"));
        assert_eq!(r.per_shard[1].failed, 1);

        // A failing test with no record of its own gets a replay command from its name.
        let soak = ShardOutput {
            index: 1,
            meta: meta(false, &["soak"]),
            junit: Some(parse_junit(&junit("campaign_soak_gen"))),
            records: vec![Record::Soak(SoakPhase {
                test: "campaign_soak_loop".into(),
                phase: "LOOP".into(),
                backend: "sim".into(),
                frames: 10,
                mm_bytes: 4096,
                lacking: vec![],
                secs: 1.0,
            })],
            unreadable: vec![],
        };
        let r = merge(&[soak], 1);
        let md = markdown(&r);
        assert!(!r.passed);
        assert!(
            md.contains("CARD_SOAK=1 cargo nextest run --workspace -E 'test(=campaign_soak_gen)'"),
            "{md}"
        );
        assert!(md.contains("| LOOP | 10 | 4096 | 1.0 |"), "{md}");
        assert_eq!(
            serde_json::to_value(&r.soak).expect("soak")[0]["kind"],
            "soak"
        );
    }
}
