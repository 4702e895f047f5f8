//! The campaign's nextest orchestration: the archive, the partitions' check, and the shards
//! run side by side with their environment and metadata.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use ::campaign::{CASES_ENV, OUT_ENV, PROTOCOL_ENV, SEED_ENV, TOP_ENV};
use serde_json::Value;

use super::cli::{filter, Options, Which};
use super::error::CampaignError;
use super::layout::{out_dir, shard_dir, ARCHIVE, PROFILE, TARGETS};
use super::merge::ShardMeta;
use crate::build;

/// How long a shard may run before it is stopped: the longest soak (a million frames per
/// phase) takes hours on the simulated card; nextest's own slow-timeout bounds each test.
const SHARD_DEADLINE: Duration = Duration::from_secs(12 * 3600);
/// How long a listing of the archive's tests may take (it extracts the archive first).
const LIST_DEADLINE: Duration = Duration::from_secs(600);
/// Protocol fuzz cases per protocol for each model-based case, unless `--protocol-cases`
/// says: a model-based case takes seconds of simulated card, a protocol case on a
/// pass-through a few milliseconds.
const PROTOCOL_PER_CASE: u64 = 16;

/// Fails with what to do when `cargo nextest` cannot be run.
pub(super) fn check_nextest(root: &Path) -> Result<String, CampaignError> {
    let mut cmd = crate::cargo();
    cmd.current_dir(root).args(["nextest", "--version"]);
    let out = cmd
        .output()
        .map_err(|e| CampaignError::NoNextest(format!("cannot start cargo: {e}")))?;
    if !out.status.success() {
        return Err(CampaignError::NoNextest(format!(
            "`cargo nextest --version` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("cargo-nextest")
        .to_string())
}

/// Waits for a shard's process until `deadline`, when it is killed; Ok(success), or why it
/// did not end.
pub(super) fn wait_with_deadline(
    mut child: Child,
    deadline: Duration,
    what: &str,
) -> Result<bool, String> {
    crate::wait_or_kill(&mut child, deadline)
        .map(|status| status.success())
        .ok_or_else(|| {
            format!(
                "{what} did not end within {} s and was stopped",
                deadline.as_secs()
            )
        })
}

/// `cargo nextest archive` of the campaign's test targets, resolved as the workspace's tests
/// are (`--workspace`, see build.rs), into `target/campaign/`.
pub(super) fn archive(root: &Path) -> Result<PathBuf, CampaignError> {
    let dir = out_dir(root);
    std::fs::create_dir_all(&dir)
        .map_err(|e| CampaignError::Step(format!("cannot create {}: {e}", dir.display())))?;
    let file = dir.join(ARCHIVE);
    crate::run(root, build::nextest_archive(TARGETS, &file)).map_err(CampaignError::Step)?;
    Ok(file)
}

/// A shard's nextest configuration: the project's `.config/nextest.toml` with the store (where
/// the JUnit file goes) in the shard's folder, so that shards run side by side on one machine
/// do not write the same file.
pub(super) fn shard_config(root: &Path, i: u32) -> Result<PathBuf, CampaignError> {
    let base = root.join(".config/nextest.toml");
    let text = std::fs::read_to_string(&base)
        .map_err(|e| CampaignError::Step(format!("cannot read {}: {e}", base.display())))?;
    let mut table: toml::Table = toml::from_str(&text)
        .map_err(|e| CampaignError::Step(format!("{}: {e}", base.display())))?;
    if !table
        .get("profile")
        .and_then(|p| p.get(PROFILE))
        .is_some_and(toml::Value::is_table)
    {
        return Err(CampaignError::Step(format!(
            "{} has no [profile.{PROFILE}]",
            base.display()
        )));
    }
    let store = shard_dir(root, i).join("nextest");
    let mut s = toml::Table::new();
    s.insert(
        "dir".into(),
        toml::Value::String(store.to_string_lossy().into_owned()),
    );
    table.insert("store".into(), toml::Value::Table(s));
    let dir = shard_dir(root, i);
    std::fs::create_dir_all(&dir)
        .map_err(|e| CampaignError::Step(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join("nextest.toml");
    let out = toml::to_string(&table)
        .map_err(|e| CampaignError::Step(format!("cannot write {}: {e}", path.display())))?;
    std::fs::write(&path, out)
        .map_err(|e| CampaignError::Step(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}

/// The tests that `cargo nextest list` selects, `binary-id test-name` each, from its JSON.
pub(super) fn parse_list(text: &str) -> Result<Vec<String>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("nextest's list: {e}"))?;
    let suites = v["rust-suites"]
        .as_object()
        .ok_or("nextest's list has no rust-suites")?;
    let mut out = Vec::new();
    for (binary, suite) in suites {
        let Some(cases) = suite["testcases"].as_object() else {
            continue;
        };
        for (name, case) in cases {
            if case["filter-match"]["status"] == "matches" {
                out.push(format!("{binary} {name}"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Lists the tests that `filter` selects from `source` (the archive, or the workspace when
/// None), in partition `i` of `n` or unpartitioned.
pub(super) fn list(
    root: &Path,
    source: Option<&Path>,
    filter: &str,
    part: Option<(u32, u32)>,
) -> Result<Vec<String>, CampaignError> {
    let mut cmd = build::nextest_list(TARGETS, source, filter);
    if let Some((i, n)) = part {
        cmd.args(["--partition", &format!("count:{i}/{n}")]);
    }
    cmd.current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let shown = format!("{cmd:?}");
    let child = cmd
        .spawn()
        .map_err(|e| CampaignError::Step(format!("cannot start {shown}: {e}")))?;
    // A listing is short; its output is read after it ends, within the deadline.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = rx
        .recv_timeout(LIST_DEADLINE)
        .map_err(|_| {
            CampaignError::Step(format!(
                "{shown} did not end within {} s",
                LIST_DEADLINE.as_secs()
            ))
        })?
        .map_err(|e| CampaignError::Step(format!("{shown}: {e}")))?;
    if !out.status.success() {
        return Err(CampaignError::Step(format!(
            "{shown} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    parse_list(&String::from_utf8_lossy(&out.stdout)).map_err(CampaignError::Step)
}

/// Checks that the `n` partitions' lists are disjoint and together the whole list; returns
/// each partition's tests.
pub(super) fn check_partitions(
    whole: &[String],
    parts: &[Vec<String>],
) -> Result<Vec<Vec<String>>, CampaignError> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, p) in parts.iter().enumerate() {
        for t in p {
            if let Some(first) = seen.insert(t, i + 1) {
                return Err(CampaignError::Partition(format!(
                    "`{t}` is in partition {first} and in partition {}",
                    i + 1
                )));
            }
        }
    }
    let union: BTreeSet<&str> = seen.keys().copied().collect();
    let all: BTreeSet<&str> = whole.iter().map(String::as_str).collect();
    let lost: Vec<&&str> = all.difference(&union).collect();
    let extra: Vec<&&str> = union.difference(&all).collect();
    if !lost.is_empty() || !extra.is_empty() {
        return Err(CampaignError::Partition(format!(
            "the partitions' union is not the whole list: in no partition {lost:?}, not in the list {extra:?}"
        )));
    }
    Ok(parts.to_vec())
}

/// The whole list and each of the `n` partitions' lists, checked.
pub(super) fn partitions(
    root: &Path,
    source: Option<&Path>,
    filter: &str,
    n: u32,
) -> Result<(Vec<String>, Vec<Vec<String>>), CampaignError> {
    let whole = list(root, source, filter, None)?;
    let parts = (1..=n)
        .map(|i| list(root, source, filter, Some((i, n))))
        .collect::<Result<Vec<_>, _>>()?;
    let parts = check_partitions(&whole, &parts)?;
    Ok((whole, parts))
}

/// The environment of the campaign's test processes.
pub(super) fn shard_env(o: &Options, records: &Path) -> Vec<(String, String)> {
    let mut env = vec![
        (OUT_ENV.to_string(), records.display().to_string()),
        (CASES_ENV.to_string(), o.cases.to_string()),
        (
            PROTOCOL_ENV.to_string(),
            o.protocol_cases
                .unwrap_or(o.cases.saturating_mul(PROTOCOL_PER_CASE))
                .to_string(),
        ),
    ];
    if let Some(seed) = o.seed {
        env.push((SEED_ENV.into(), format!("{seed:#x}")));
    }
    if let Some(top) = &o.top {
        env.push((TOP_ENV.into(), top.clone()));
    }
    if o.which.contains(&Which::Soak) {
        env.push(("CARD_SOAK".into(), "1".into()));
    }
    if o.which.contains(&Which::WhatIf) {
        env.push(("CAMPAIGN_WHATIF".into(), "1".into()));
    }
    env
}

/// Starts partition `i` of `n` from `archive` with `threads` test threads (None: nextest's
/// default, a thread per core); its output goes to the shard's log.
pub(super) fn start_shard(
    root: &Path,
    o: &Options,
    archive: &Path,
    i: u32,
    threads: Option<usize>,
) -> Result<(Child, String), CampaignError> {
    let dir = shard_dir(root, i);
    let _ = std::fs::remove_dir_all(&dir);
    let config = shard_config(root, i)?;
    let records = dir.join("records");
    std::fs::create_dir_all(&records)
        .map_err(|e| CampaignError::Step(format!("cannot create {}: {e}", records.display())))?;
    let mut cmd = build::nextest_run_archive(archive, root, &config, PROFILE);
    cmd.args(["--partition", &format!("count:{i}/{}", o.shards)])
        .args(["-E", &filter(&o.which)])
        .arg("--no-fail-fast");
    if let Some(t) = threads {
        cmd.args(["--test-threads", &t.to_string()]);
    }
    cmd.envs(shard_env(o, &records));
    let log_path = dir.join("nextest.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| CampaignError::Step(format!("cannot create {}: {e}", log_path.display())))?;
    let log_err = log
        .try_clone()
        .map_err(|e| CampaignError::Step(format!("{}: {e}", log_path.display())))?;
    cmd.current_dir(root).stdout(log).stderr(log_err);
    let shown = format!("{cmd:?}");
    eprintln!("campaign: shard {i}/{}: {shown}", o.shards);
    let child = cmd
        .spawn()
        .map_err(|e| CampaignError::Step(format!("cannot start {shown}: {e}")))?;
    Ok((child, shown))
}

/// Writes what the task knows of shard `i` beside its outputs, for the merge.
pub(super) fn write_shard_meta(
    root: &Path,
    o: &Options,
    i: u32,
    ok: bool,
    secs: f64,
    command: &str,
) {
    let meta = ShardMeta {
        shard: i,
        shards: o.shards,
        exit_ok: ok,
        secs,
        command: command.to_string(),
        which: o.which.iter().map(|w| w.name().to_string()).collect(),
        cases: o.cases,
        seed: o.seed.map(|s| format!("{s:#x}")),
        top: o.top.clone(),
    };
    let path = shard_dir(root, i).join("shard.json");
    let written = serde_json::to_string(&meta)
        .map_err(|e| e.to_string())
        .and_then(|t| std::fs::write(&path, t).map_err(|e| e.to_string()));
    if let Err(e) = written {
        eprintln!("campaign: cannot write {}: {e}", path.display());
    }
}

/// Runs the shards `which` of `o` side by side and waits for them all.
pub(super) fn run_shards(
    root: &Path,
    o: &Options,
    archive: &Path,
    which: &[u32],
) -> Result<(), CampaignError> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // Shards on one machine share its cores; one alone takes nextest's default.
    let threads = (which.len() > 1).then(|| (cores / which.len()).max(1));
    let mut running = Vec::new();
    for &i in which {
        let started = Instant::now();
        let (child, shown) = start_shard(root, o, archive, i, threads)?;
        running.push((i, started, shown, child));
    }
    // Each shard is waited for in a thread of its own, so that all are bounded by the one
    // deadline.
    let handles: Vec<_> = running
        .into_iter()
        .map(|(i, started, shown, child)| {
            std::thread::spawn(move || {
                let r = wait_with_deadline(child, SHARD_DEADLINE, &format!("shard {i}"));
                (i, started.elapsed().as_secs_f64(), shown, r)
            })
        })
        .collect();
    let mut problems = Vec::new();
    for h in handles {
        let Ok((i, secs, shown, r)) = h.join() else {
            problems.push("a shard's waiting thread panicked".to_string());
            continue;
        };
        let ok = match r {
            Ok(ok) => ok,
            Err(e) => {
                problems.push(e);
                false
            }
        };
        eprintln!(
            "campaign: shard {i}/{} {} in {secs:.1} s (log {})",
            o.shards,
            if ok { "passed" } else { "failed" },
            shard_dir(root, i).join("nextest.log").display()
        );
        write_shard_meta(root, o, i, ok, secs, &shown);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(CampaignError::Step(problems.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partition_check_finds_a_test_twice_or_lost() {
        let all: Vec<String> = ["b a", "b b", "b c"].map(String::from).to_vec();
        let good = vec![vec!["b a".to_string(), "b c".into()], vec!["b b".into()]];
        assert!(check_partitions(&all, &good).is_ok());
        let twice = vec![
            vec!["b a".to_string(), "b b".into()],
            vec!["b b".into(), "b c".into()],
        ];
        let e = check_partitions(&all, &twice).expect_err("twice");
        assert!(
            e.to_string()
                .contains("`b b` is in partition 1 and in partition 2"),
            "{e}"
        );
        let lost = vec![vec!["b a".to_string()], vec!["b b".into()]];
        let e = check_partitions(&all, &lost).expect_err("lost");
        assert!(e.to_string().contains("b c"), "{e}");
    }

    const LIST: &str = r#"{"rust-build-meta":{},"test-count":3,"rust-suites":{"card-tests::campaign":{"binary-id":"card-tests::campaign","testcases":{"campaign_fuzz_slice_00":{"filter-match":{"status":"matches"}},"campaign_fuzz_slice_01":{"filter-match":{"status":"mismatch","reason":"partition"}},"every_slice_has_its_test":{"filter-match":{"status":"mismatch","reason":"expression"}}}}}}"#;

    #[test]
    fn nextest_lists_are_read() {
        assert_eq!(
            parse_list(LIST).expect("a list"),
            vec!["card-tests::campaign campaign_fuzz_slice_00".to_string()]
        );
    }

    /// The partitions that nextest makes of the campaign's tests are disjoint and together the
    /// whole list: listed from the workspace (the campaign itself checks its archive's lists
    /// the same way before it runs them).
    #[test]
    fn nextests_partitions_of_the_campaign_are_disjoint_and_complete() {
        let root = crate::root();
        if check_nextest(&root).is_err() {
            // `cargo xtask test` installs cargo-nextest where it is missing; only a machine
            // where that failed gets here, and the campaign workflow checks the partitions of
            // its archive before any shard runs anyway.
            eprintln!("xtask: SKIPPED the partition check: cargo-nextest is not installed");
            return;
        }
        let which = Which::ALL.to_vec();
        let (whole, parts) =
            partitions(&root, None, &filter(&which), 3).unwrap_or_else(|e| panic!("{e}"));
        let count = |p: &str| whole.iter().filter(|t| t.contains(p)).count();
        assert_eq!(count("campaign_fuzz_slice_"), 16, "{whole:?}");
        assert_eq!(count("campaign_fuzz_protocol_"), 16, "{whole:?}");
        assert!(whole.iter().any(|t| t.contains("campaign_soak_gen")));
        assert!(whole.iter().any(|t| t.contains("campaign_whatif_default")));
        assert!(parts.iter().all(|p| !p.is_empty()), "{parts:?}");
    }

    /// The campaign workflow: started by hand with the task's options or on a schedule, one
    /// job builds and uploads the archive, a matrix of shard jobs runs the partitions from it,
    /// and a last job merges them and keeps the report.
    #[test]
    fn the_campaign_workflow_builds_once_runs_shards_and_merges() {
        let path = crate::root().join(".github/workflows/campaign.yml");
        let wf =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for needed in [
            "schedule:",
            "workflow_dispatch:",
            "shards:",
            "which:",
            "cases:",
            "cargo xtask campaign --archive-only",
            "upload-artifact",
            "download-artifact",
            "matrix:",
            "--shard ${{ matrix.shard }}",
            "--merge-only",
            "target/campaign/campaign.md",
            "target/campaign/campaign.json",
            "cargo-nextest",
        ] {
            assert!(wf.contains(needed), "campaign.yml lacks `{needed}`");
        }
        // Three jobs in order: the shard jobs need the archive, the merge needs the shards and
        // runs even when a shard failed.
        let jobs = wf.split("\njobs:\n").nth(1).expect("a jobs: section");
        let names: Vec<&str> = jobs
            .lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.trim_end().ends_with(':'))
            .map(|l| l.trim().trim_end_matches(':'))
            .collect();
        assert_eq!(names, ["archive", "shard", "merge"], "{jobs}");
        // Each job's lines, from its name (indented by two spaces) to the next job's.
        let mut blocks: Vec<(String, String)> = Vec::new();
        for line in jobs.lines() {
            if line.starts_with("  ") && !line.starts_with("   ") && line.trim_end().ends_with(':')
            {
                blocks.push((line.trim().trim_end_matches(':').to_string(), String::new()));
            } else if let Some((_, body)) = blocks.last_mut() {
                body.push_str(line);
                body.push('\n');
            }
        }
        let job = |name: &str| {
            blocks
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, b)| b.clone())
                .unwrap_or_default()
        };
        assert!(job("shard").contains("needs: archive"), "{}", job("shard"));
        let merge = job("merge");
        assert!(
            merge.contains("needs: [archive, shard]") || merge.contains("needs: shard"),
            "{merge}"
        );
        assert!(merge.contains("if: always()"), "{merge}");
        // The per-push workflow stays as it is: no campaign in it.
        let ci = std::fs::read_to_string(crate::root().join(".github/workflows/ci.yml"))
            .unwrap_or_default();
        assert!(!ci.contains("campaign"), "ci.yml runs no campaign");
    }
}
