//! `cargo xtask campaign --shards N [--which soak,fuzz,what-if] [--cases K] [--top SIM_TOP]`:
//! long campaigns (soak phases, fuzz seeds, what-if grid points) split over shards by
//! cargo-nextest, merged into one report.
//!
//! The campaign's tests are ordinary tests that nextest can partition: `campaign_fuzz_slice_NN`
//! (crates/card-tests/tests/campaign.rs, the model-based property) and
//! `campaign_fuzz_protocol_NN` (crates/card-harness/tests/campaign_protocol.rs, the protocol
//! fuzzers with their functional coverage), each slice a disjoint share of the campaign's
//! seeds, `campaign_soak_*`
//! (crates/card-tests/tests/soak.rs, a soak phase each) and `campaign_whatif_*`
//! (crates/xdma-bench/tests/whatif.rs, a grid point each). Environment variables size them
//! (`CAMPAIGN_CASES`, `CAMPAIGN_SEED`, `CAMPAIGN_TOP`, `CAMPAIGN_PROTOCOL_CASES`,
//! `CARD_SOAK=1` with `CARD_SOAK_FRAMES` and `CARD_SOAK_MM_BYTES`, `CAMPAIGN_WHATIF=1`), and
//! each writes a JSON record into `CAMPAIGN_OUT`.
//!
//! The task builds one nextest archive of those test targets, checks that the N partitions
//! (`--partition count:i/N` with the campaign's filter) list every test exactly once, runs the
//! N partitions as parallel processes (each test process has its own simulated card, so they
//! are independent), and merges each shard's JUnit (nextest's own, profile `campaign` of
//! `.config/nextest.toml`) and records into `target/campaign/campaign.{md,json}`: shards,
//! cases, protocol coverage, soak and what-if figures, and every failure with its replay
//! command. The CI workflow `.github/workflows/campaign.yml` runs the same steps on several
//! machines: `--archive-only` in one job, `--shard I` in a matrix, `--merge-only` at the end.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::build;

/// The folder under the target folder where everything of a campaign goes.
const OUT: &str = "campaign";
/// The archive's file name in that folder.
const ARCHIVE: &str = "campaign-archive.tar.zst";
/// The nextest profile of `.config/nextest.toml` that the shards run with.
const PROFILE: &str = "campaign";
/// The test targets the campaign's tests live in (one per crate, unique in the workspace).
const TARGETS: &[&str] = &["campaign", "campaign_protocol", "soak", "whatif"];
/// How long a shard may run before it is stopped: the longest soak (a million frames per
/// phase) takes hours on the simulated card; nextest's own slow-timeout bounds each test.
const SHARD_DEADLINE: Duration = Duration::from_secs(12 * 3600);
/// How long a listing of the archive's tests may take (it extracts the archive first).
const LIST_DEADLINE: Duration = Duration::from_secs(600);
/// The campaign's default count of model-based cases.
const DEFAULT_CASES: u64 = 64;
/// Protocol fuzz cases per protocol for each model-based case, unless `--protocol-cases`
/// says: a model-based case takes seconds of simulated card, a protocol case on a
/// pass-through a few milliseconds.
const PROTOCOL_PER_CASE: u64 = 16;

/// What a campaign runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Which {
    /// The soak's phases.
    Soak,
    /// The fuzz slices.
    Fuzz,
    /// The what-if grid.
    WhatIf,
}

impl Which {
    const ALL: [Which; 3] = [Which::Soak, Which::Fuzz, Which::WhatIf];

    fn name(self) -> &'static str {
        match self {
            Which::Soak => "soak",
            Which::Fuzz => "fuzz",
            Which::WhatIf => "what-if",
        }
    }

    /// The nextest filter of this part's tests.
    fn filter(self) -> &'static str {
        match self {
            Which::Soak => "test(/^campaign_soak_/)",
            Which::Fuzz => "test(/^campaign_fuzz_/)",
            Which::WhatIf => "test(/^campaign_whatif_/)",
        }
    }
}

/// What was wrong with a campaign's options or its run, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CampaignError {
    /// An option the task does not know, or one without its value.
    Usage(String),
    /// `--shards 0`, or a shard outside 1..=N.
    Shards(String),
    /// A part of `--which` that is none of soak, fuzz, what-if.
    Which(String),
    /// cargo-nextest cannot be run.
    NoNextest(String),
    /// A step's command failed or could not be started.
    Step(String),
    /// The partitions do not list every test exactly once.
    Partition(String),
    /// The merged campaign has failures.
    Failed(String),
}

impl fmt::Display for CampaignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CampaignError::Usage(m) => write!(f, "{m}\n{USAGE}"),
            CampaignError::Shards(m) => write!(f, "{m}: give --shards N with N at least 1 (and --shard I with 1 <= I <= N)"),
            CampaignError::Which(w) => write!(
                f,
                "--which `{w}`: the parts are soak, fuzz and what-if, comma-separated (e.g. --which fuzz,what-if)"
            ),
            CampaignError::NoNextest(m) => write!(
                f,
                "cargo-nextest is needed to split a campaign ({m}); install it with `cargo install cargo-nextest --locked` or a pre-built binary from https://nexte.st"
            ),
            CampaignError::Step(m) | CampaignError::Partition(m) | CampaignError::Failed(m) => {
                write!(f, "{m}")
            }
        }
    }
}

impl From<CampaignError> for String {
    fn from(e: CampaignError) -> String {
        e.to_string()
    }
}

const USAGE: &str = "\
usage: cargo xtask campaign --shards N [--which soak,fuzz,what-if] [--cases K] [--top SIM_TOP]
                            [--seed S] [--protocol-cases P] [--archive-only | --shard I | --merge-only]
  --shards N          partitions of the campaign's tests (count:i/N), run as parallel processes
  --which LIST        the parts to run (default all): soak (needs CARD_SOAK_FRAMES and
                      CARD_SOAK_MM_BYTES to be shorter than a million frames and 1 GiB per phase),
                      fuzz (model-based cases and protocol fuzzing), what-if (the grid's points)
  --cases K           model-based cases in the whole campaign (default 64), over 16 fuzz slices
  --protocol-cases P  protocol fuzz cases per protocol in the whole campaign (default: 16 K)
  --top SIM_TOP       the simulated top of the model-based cases, or a fault of sim_top turned
                      on at run time: sim_top_fault_rd_beat, sim_top_fault_seq
  --seed S            the campaign's seed (default: the slices' fixed seed)
  --archive-only      only build the nextest archive and check its N partitions (the CI's build job)
  --shard I           only run partition I of N from the archive (a CI matrix job)
  --merge-only        only merge the shards found under target/campaign/ (the CI's last job)";

/// Which steps of a campaign this invocation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Steps {
    /// Archive, check the partitions, run every shard, merge.
    All,
    /// The archive only.
    Archive,
    /// One shard from an existing archive.
    Shard(u32),
    /// The merge only.
    Merge,
}

/// A campaign's options.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Options {
    shards: u32,
    which: Vec<Which>,
    cases: u64,
    protocol_cases: Option<u64>,
    top: Option<String>,
    seed: Option<u64>,
    steps: Steps,
}

fn parse_number(opt: &str, v: &str) -> Result<u64, CampaignError> {
    let t = v.trim().replace('_', "");
    let parsed = match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| CampaignError::Usage(format!("{opt} `{v}` is not a number")))
}

fn parse_which(v: &str) -> Result<Vec<Which>, CampaignError> {
    let mut out = BTreeSet::new();
    for part in v.split(',').map(str::trim) {
        let w = match part {
            "soak" => Which::Soak,
            "fuzz" => Which::Fuzz,
            "what-if" | "whatif" => Which::WhatIf,
            other => return Err(CampaignError::Which(other.to_string())),
        };
        out.insert(w);
    }
    Ok(out.into_iter().collect())
}

fn parse_options(args: &[String]) -> Result<Options, CampaignError> {
    let mut o = Options {
        shards: 0,
        which: Which::ALL.to_vec(),
        cases: DEFAULT_CASES,
        protocol_cases: None,
        top: None,
        seed: None,
        steps: Steps::All,
    };
    let mut shards = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |opt: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| CampaignError::Usage(format!("{opt} needs a value")))
        };
        match a.as_str() {
            "--shards" => shards = Some(parse_number("--shards", &value("--shards")?)?),
            "--which" => o.which = parse_which(&value("--which")?)?,
            "--cases" => o.cases = parse_number("--cases", &value("--cases")?)?,
            "--protocol-cases" => {
                o.protocol_cases = Some(parse_number(
                    "--protocol-cases",
                    &value("--protocol-cases")?,
                )?);
            }
            "--top" => o.top = Some(value("--top")?),
            "--seed" => o.seed = Some(parse_number("--seed", &value("--seed")?)?),
            "--archive-only" => o.steps = Steps::Archive,
            "--merge-only" => o.steps = Steps::Merge,
            "--shard" => {
                let i = parse_number("--shard", &value("--shard")?)?;
                o.steps = Steps::Shard(u32::try_from(i).unwrap_or(u32::MAX));
            }
            other => {
                return Err(CampaignError::Usage(format!(
                    "unknown campaign option `{other}`"
                )))
            }
        }
    }
    let shards = match (shards, o.steps) {
        (Some(n), _) => n,
        // The archive does not depend on the count of shards; without one, the partition
        // check is of one partition.
        (None, Steps::Archive) => 1,
        (None, _) => return Err(CampaignError::Shards("no --shards given".into())),
    };
    o.shards = u32::try_from(shards)
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| CampaignError::Shards(format!("--shards {shards}")))?;
    if let Steps::Shard(i) = o.steps {
        if i == 0 || i > o.shards {
            return Err(CampaignError::Shards(format!(
                "--shard {i} of --shards {}",
                o.shards
            )));
        }
    }
    Ok(o)
}

/// The nextest filter of the chosen parts.
fn filter(which: &[Which]) -> String {
    which
        .iter()
        .map(|w| w.filter())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The campaign's folder.
pub fn out_dir(root: &Path) -> PathBuf {
    build::target_dir(root).join(OUT)
}

fn shard_dir(root: &Path, i: u32) -> PathBuf {
    out_dir(root).join(format!("shard-{i}"))
}

/// Fails with what to do when `cargo nextest` cannot be run.
fn check_nextest(root: &Path) -> Result<String, CampaignError> {
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
fn wait_with_deadline(mut child: Child, deadline: Duration, what: &str) -> Result<bool, String> {
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
fn archive(root: &Path) -> Result<PathBuf, CampaignError> {
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
fn shard_config(root: &Path, i: u32) -> Result<PathBuf, CampaignError> {
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
fn parse_list(text: &str) -> Result<Vec<String>, String> {
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
fn list(
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
fn check_partitions(
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
fn partitions(
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
fn shard_env(o: &Options, records: &Path) -> Vec<(String, String)> {
    let mut env = vec![
        ("CAMPAIGN_OUT".to_string(), records.display().to_string()),
        ("CAMPAIGN_CASES".to_string(), o.cases.to_string()),
        (
            "CAMPAIGN_PROTOCOL_CASES".to_string(),
            o.protocol_cases
                .unwrap_or(o.cases.saturating_mul(PROTOCOL_PER_CASE))
                .to_string(),
        ),
    ];
    if let Some(seed) = o.seed {
        env.push(("CAMPAIGN_SEED".into(), format!("{seed:#x}")));
    }
    if let Some(top) = &o.top {
        env.push(("CAMPAIGN_TOP".into(), top.clone()));
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
fn start_shard(
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
fn write_shard_meta(root: &Path, o: &Options, i: u32, ok: bool, secs: f64, command: &str) {
    let meta = json!({
        "shard": i,
        "shards": o.shards,
        "exit_ok": ok,
        "secs": secs,
        "command": command,
        "which": o.which.iter().map(|w| w.name()).collect::<Vec<_>>(),
        "cases": o.cases,
        "seed": o.seed.map(|s| format!("{s:#x}")),
        "top": o.top,
    });
    let path = shard_dir(root, i).join("shard.json");
    if let Err(e) = std::fs::write(&path, meta.to_string()) {
        eprintln!("campaign: cannot write {}: {e}", path.display());
    }
}

/// Runs the shards `which` of `o` side by side and waits for them all.
fn run_shards(
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

// ----------------------------------------------------------------------------- merging

/// One test case of a JUnit file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct JunitCase {
    /// The test binary (nextest's classname).
    binary: String,
    name: String,
    /// The failure's message, when the test failed.
    failure: Option<String>,
    skipped: bool,
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The value of attribute `name` in the tag text `tag`.
fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let end = tag[at..].find('"')?;
    Some(unescape(&tag[at..at + end]))
}

/// The test cases of a JUnit file as nextest writes it (one `<testcase>` per test, with a
/// `<failure>` or `<error>` inside when it failed).
fn parse_junit(text: &str) -> Vec<JunitCase> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("<testcase ") {
        rest = &rest[at..];
        let tag_end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..tag_end];
        let self_closing = tag.ends_with('/');
        let body_end = if self_closing {
            tag_end
        } else {
            rest.find("</testcase>").unwrap_or(rest.len())
        };
        let body = &rest[tag_end.min(body_end)..body_end];
        let failure = ["<failure", "<error"].iter().find_map(|t| {
            body.find(t)
                .map(|f| attr(&body[f..], "message").unwrap_or_else(|| "failed".into()))
        });
        out.push(JunitCase {
            binary: attr(tag, "classname").unwrap_or_default(),
            name: attr(tag, "name").unwrap_or_default(),
            failure,
            skipped: body.contains("<skipped"),
        });
        rest = &rest[body_end.max(1).min(rest.len())..];
    }
    out
}

/// What one shard left: its metadata, JUnit cases and records.
#[derive(Debug, Default)]
struct ShardOutput {
    index: u32,
    meta: Value,
    junit: Option<Vec<JunitCase>>,
    records: Vec<Value>,
}

fn read_shard(dir: &Path, index: u32) -> ShardOutput {
    let read_json = |p: PathBuf| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    };
    let meta = read_json(dir.join("shard.json")).unwrap_or(Value::Null);
    let junit = std::fs::read_to_string(dir.join("nextest").join(PROFILE).join("junit.xml"))
        .ok()
        .map(|t| parse_junit(&t));
    let mut records: Vec<(String, Value)> = std::fs::read_dir(dir.join("records"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .filter_map(|p| Some((p.display().to_string(), read_json(p)?)))
                .collect()
        })
        .unwrap_or_default();
    records.sort_by(|a, b| a.0.cmp(&b.0));
    ShardOutput {
        index,
        meta,
        junit,
        records: records.into_iter().map(|(_, v)| v).collect(),
    }
}

/// The shards' folders under `dir`, by index.
fn find_shards(dir: &Path) -> Vec<(u32, PathBuf)> {
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

/// The merged campaign: JSON, Markdown, and whether it passed.
#[derive(Debug)]
struct Merged {
    json: Value,
    markdown: String,
    passed: bool,
}

/// Merges the shards' outputs; `expected` is the count of shards the campaign had.
fn merge(shards: &[ShardOutput], expected: u32) -> Merged {
    let mut failures: Vec<Value> = Vec::new();
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
        for r in &s.records {
            let test = r["test"].as_str().unwrap_or("?").to_string();
            match r["kind"].as_str() {
                Some(kind @ ("fuzz" | "protocol")) => {
                    if kind == "fuzz" {
                        let n = r["cases"].as_u64().unwrap_or(0);
                        cases += n;
                        model_cases += n;
                    }
                    for p in r["protocol"].as_array().into_iter().flatten() {
                        let proto = p["protocol"].as_str().unwrap_or("?").to_string();
                        let n = p["cases"].as_u64().unwrap_or(0);
                        shard_protocol_cases += n;
                        *protocol_cases.entry(proto.clone()).or_default() += n;
                        let counts = coverage.entry(proto).or_default();
                        for sit in p["situations"].as_array().into_iter().flatten() {
                            let name = sit["situation"].as_str().unwrap_or("?").to_string();
                            *counts.entry(name).or_default() += sit["count"].as_u64().unwrap_or(0);
                        }
                    }
                    for f in r["failures"].as_array().into_iter().flatten() {
                        recorded_failures.insert(test.clone());
                        let mut f = f.clone();
                        f["test"] = json!(test);
                        f["shard"] = json!(s.index);
                        failures.push(f);
                    }
                }
                Some("soak") => soak.push(r.clone()),
                Some("whatif") => whatif.push(r.clone()),
                _ => problems.push(format!("shard {}: a record of no known kind: {r}", s.index)),
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
                            failures.push(json!({
                                "kind": "test",
                                "test": c.name,
                                "binary": c.binary,
                                "shard": s.index,
                                "error": message,
                                "replay_seed": format!(
                                    "{}cargo nextest run --workspace -E 'test(={})'",
                                    replay_env(&s.meta),
                                    c.name
                                ),
                            }));
                        }
                    }
                }
            }
            None => problems.push(format!("shard {} left no JUnit file", s.index)),
        }
        if s.meta["exit_ok"] == false && failed == 0 {
            problems.push(format!(
                "shard {} failed with no failing test in its JUnit (see its nextest.log)",
                s.index
            ));
        }
        shard_rows.push(json!({
            "shard": s.index,
            "tests": run,
            "failed": failed,
            "skipped": skipped,
            "model_cases": cases,
            "protocol_cases": shard_protocol_cases,
            "secs": s.meta["secs"],
            "exit_ok": s.meta["exit_ok"],
        }));
    }
    let passed = failures.is_empty() && problems.is_empty();
    let coverage_json: Vec<Value> = coverage
        .iter()
        .map(|(proto, counts)| {
            json!({
                "protocol": proto,
                "cases": protocol_cases.get(proto).copied().unwrap_or(0),
                "reached": counts.values().filter(|c| **c > 0).count(),
                "situations": counts.len(),
                "missing": counts.iter().filter(|(_, c)| **c == 0).map(|(s, _)| s.clone()).collect::<Vec<_>>(),
                "counts": counts,
            })
        })
        .collect();
    let json = json!({
        "passed": passed,
        "shards": expected,
        "per_shard": shard_rows,
        "model_cases": model_cases,
        "protocol": coverage_json,
        "soak": soak,
        "whatif": whatif,
        "failures": failures,
        "problems": problems,
    });
    let markdown = markdown(&json);
    Merged {
        json,
        markdown,
        passed,
    }
}

/// The campaign variables a shard ran with, as a command's prefix.
fn replay_env(meta: &Value) -> String {
    let mut s = String::new();
    if let Some(seed) = meta["seed"].as_str() {
        s += &format!("CAMPAIGN_SEED={seed} ");
    }
    if let Some(top) = meta["top"].as_str() {
        s += &format!("CAMPAIGN_TOP={top} ");
    }
    if let Some(which) = meta["which"].as_array() {
        if which.iter().any(|w| w == "soak") {
            s += "CARD_SOAK=1 ";
        }
        if which.iter().any(|w| w == "what-if") {
            s += "CAMPAIGN_WHATIF=1 ";
        }
    }
    s
}

fn markdown(j: &Value) -> String {
    let mut m = String::new();
    let passed = j["passed"] == true;
    m += &format!(
        "# Campaign: {}\n\n{} shards, {} model-based cases in all.\n\n",
        if passed { "passed" } else { "FAILED" },
        j["shards"],
        j["model_cases"]
    );
    m += "| shard | tests | failed | skipped | model-based cases | protocol fuzz cases | time (s) |\n|---|---|---|---|---|---|---|\n";
    for s in j["per_shard"].as_array().into_iter().flatten() {
        m += &format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            s["shard"],
            s["tests"],
            s["failed"],
            s["skipped"],
            s["model_cases"],
            s["protocol_cases"],
            s["secs"].as_f64().map_or("-".into(), |t| format!("{t:.1}"))
        );
    }
    let protocols = j["protocol"].as_array().cloned().unwrap_or_default();
    if !protocols.is_empty() {
        m += "\n## Protocol fuzzing: functional coverage\n\n| protocol | cases | situations reached | not reached |\n|---|---|---|---|\n";
        for p in &protocols {
            let missing: Vec<&str> = p["missing"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            m += &format!(
                "| {} | {} | {} of {} | {} |\n",
                p["protocol"].as_str().unwrap_or("?"),
                p["cases"],
                p["reached"],
                p["situations"],
                if missing.is_empty() {
                    "-".to_string()
                } else {
                    missing.join(", ")
                }
            );
        }
    }
    let soak = j["soak"].as_array().cloned().unwrap_or_default();
    if !soak.is_empty() {
        m += "\n## Soak\n\n| phase | frames | MM bytes | time (s) |\n|---|---|---|---|\n";
        for s in &soak {
            m += &format!(
                "| {} | {} | {} | {:.1} |\n",
                s["phase"].as_str().unwrap_or("?"),
                s["frames"],
                s["mm_bytes"],
                s["secs"].as_f64().unwrap_or(0.0)
            );
        }
    }
    let whatif = j["whatif"].as_array().cloned().unwrap_or_default();
    if !whatif.is_empty() {
        m += "\n## What-if grid\n\n| point | settings | figures (MB/s) |\n|---|---|---|\n";
        for w in &whatif {
            let settings: Vec<&str> = w["settings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let figures: Vec<String> = w["figures"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    format!(
                        "{} {}",
                        f["scenario"].as_str().unwrap_or("?"),
                        f["mb_s"].as_f64().map_or("-".into(), |v| format!("{v:.1}"))
                    )
                })
                .collect();
            m += &format!(
                "| {} | {} | {} |\n",
                w["test"].as_str().unwrap_or("?"),
                if settings.is_empty() {
                    "default".to_string()
                } else {
                    settings.join(", ")
                },
                figures.join("; ")
            );
        }
    }
    let failures = j["failures"].as_array().cloned().unwrap_or_default();
    if !failures.is_empty() {
        m += &format!("\n## Failures ({})\n", failures.len());
        for f in &failures {
            m += &format!(
                "\n### {} (shard {}){}\n\n{}\n",
                f["test"].as_str().unwrap_or("?"),
                f["shard"],
                f["case"]
                    .as_u64()
                    .map(|c| format!(", case {c}"))
                    .unwrap_or_default(),
                f["error"].as_str().unwrap_or("?")
            );
            if let Some(seq) = f["sequence"].as_str() {
                m += &format!("\nShrunk to:\n\n```\n{}\n```\n", seq.trim());
            }
            if let Some(c) = f["replay_seed"].as_str() {
                m += &format!("\nReplay from its seed: `{c}`\n");
            }
            if let Some(c) = f["replay_sequence"].as_str() {
                m += &format!("\nReplay the sequence: `{c}`\n");
            }
        }
    }
    let problems = j["problems"].as_array().cloned().unwrap_or_default();
    if !problems.is_empty() {
        m += "\n## Problems\n\n";
        for p in &problems {
            m += &format!("- {}\n", p.as_str().unwrap_or("?"));
        }
    }
    m
}

/// Merges the shards under `target/campaign/` into `campaign.md` and `campaign.json`, prints
/// the Markdown, and fails when the campaign did.
fn merge_and_report(root: &Path, expected: u32) -> Result<(), CampaignError> {
    let dir = out_dir(root);
    let shards: Vec<ShardOutput> = find_shards(&dir)
        .into_iter()
        .map(|(i, p)| read_shard(&p, i))
        .collect();
    let merged = merge(&shards, expected);
    let text = serde_json::to_string_pretty(&merged.json)
        .map_err(|e| CampaignError::Step(format!("the merged report: {e}")))?;
    for (name, body) in [("campaign.json", &text), ("campaign.md", &merged.markdown)] {
        let p = dir.join(name);
        std::fs::write(&p, body)
            .map_err(|e| CampaignError::Step(format!("cannot write {}: {e}", p.display())))?;
    }
    print!("{}", merged.markdown);
    println!(
        "campaign: report in {} and {}",
        dir.join("campaign.md").display(),
        dir.join("campaign.json").display()
    );
    if merged.passed {
        Ok(())
    } else {
        Err(CampaignError::Failed(format!(
            "the campaign failed: {} failure(s), {} problem(s); see {}",
            merged.json["failures"].as_array().map_or(0, Vec::len),
            merged.json["problems"].as_array().map_or(0, Vec::len),
            dir.join("campaign.md").display()
        )))
    }
}

/// `cargo xtask campaign ...`.
pub fn campaign(root: &Path, args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return Ok(());
    }
    let o = parse_options(args)?;
    let started = Instant::now();
    let archive_file = out_dir(root).join(ARCHIVE);
    match o.steps {
        Steps::Merge => return Ok(merge_and_report(root, o.shards)?),
        Steps::Archive => {
            let version = check_nextest(root)?;
            eprintln!("campaign: {version}");
            let file = archive(root)?;
            // The shard jobs that take the archive run one partition each; they are checked
            // here, once, to list every test exactly once.
            let (whole, parts) = partitions(root, Some(&file), &filter(&o.which), o.shards)?;
            println!(
                "campaign: archive {}: {} tests in {} partitions, each once: {:?}",
                file.display(),
                whole.len(),
                o.shards,
                parts.iter().map(Vec::len).collect::<Vec<_>>()
            );
            return Ok(());
        }
        Steps::Shard(i) => {
            check_nextest(root)?;
            if !archive_file.is_file() {
                return Err(CampaignError::Step(format!(
                    "no archive at {}: build it first with `cargo xtask campaign --archive-only`",
                    archive_file.display()
                ))
                .into());
            }
            // A shard's own failures are in its outputs; the merge judges the campaign.
            let r = run_shards(root, &o, &archive_file, &[i]);
            eprintln!(
                "campaign: shard {i}/{} done in {:.1} s",
                o.shards,
                started.elapsed().as_secs_f64()
            );
            return Ok(r?);
        }
        Steps::All => {}
    }
    let version = check_nextest(root)?;
    eprintln!("campaign: {version}");
    // Outputs of an earlier campaign would be merged with this one's.
    for (_, p) in find_shards(&out_dir(root)) {
        let _ = std::fs::remove_dir_all(p);
    }
    let file = archive(root)?;
    let listed = Instant::now();
    let (whole, parts) = partitions(root, Some(&file), &filter(&o.which), o.shards)?;
    eprintln!(
        "campaign: {} tests in {} partitions, each once ({:.1} s to list): {:?}",
        whole.len(),
        o.shards,
        listed.elapsed().as_secs_f64(),
        parts.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let shards: Vec<u32> = (1..=o.shards).collect();
    let ran = run_shards(root, &o, &file, &shards);
    let merged = merge_and_report(root, o.shards);
    eprintln!(
        "campaign: {} shards, {:.1} s in all",
        o.shards,
        started.elapsed().as_secs_f64()
    );
    // The report says what failed; a shard that could not run at all is said after it.
    merged?;
    Ok(ran?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn bad_options_say_what_to_do() {
        let e = parse_options(&args("--shards 0")).expect_err("no shards");
        assert!(matches!(e, CampaignError::Shards(_)), "{e}");
        assert!(e.to_string().contains("at least 1"), "{e}");
        let e = parse_options(&args("--shards 2 --which fuzz,chaos")).expect_err("bad part");
        assert_eq!(e, CampaignError::Which("chaos".into()));
        assert!(e.to_string().contains("soak, fuzz and what-if"));
        let e = parse_options(&args("--shards 2 --shard 3")).expect_err("no such shard");
        assert!(matches!(e, CampaignError::Shards(_)), "{e}");
        let e = parse_options(&args("--which fuzz")).expect_err("no count");
        assert!(matches!(e, CampaignError::Shards(_)), "{e}");
        let e = parse_options(&args("--shards 2 --cases")).expect_err("no value");
        assert!(matches!(e, CampaignError::Usage(_)), "{e}");
        let e = parse_options(&args("--shards two")).expect_err("not a number");
        assert!(e.to_string().contains("`two` is not a number"), "{e}");
        let o = parse_options(&args(
            "--shards 3 --which what-if,fuzz --cases 10 --top sim_top_fault_seq",
        ))
        .expect("good options");
        assert_eq!(o.which, vec![Which::Fuzz, Which::WhatIf]);
        assert_eq!((o.shards, o.cases), (3, 10));
        assert_eq!(
            filter(&o.which),
            "test(/^campaign_fuzz_/) | test(/^campaign_whatif_/)"
        );
        assert_eq!(
            parse_options(&args("--archive-only"))
                .expect("no count needed")
                .steps,
            Steps::Archive
        );
    }

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

    /// nextest's JUnit for a shard with one passing and one failing slice.
    fn junit(failing: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="2" failures="1">
    <testsuite name="card-tests::campaign" tests="2" failures="1">
        <testcase name="campaign_fuzz_slice_00" classname="card-tests::campaign" time="1.0"/>
        <testcase name="{failing}" classname="card-tests::campaign" time="3.0">
            <failure message="thread &apos;{failing}&apos; panicked at tests/campaign.rs:9:5" type="test failure">found 1 failure(s)</failure>
        </testcase>
    </testsuite>
</testsuites>"#
        )
    }

    fn fuzz_record(test: &str, cases: u64, failure: Option<Value>) -> Value {
        json!({
            "kind": "fuzz", "test": test, "cases": cases,
            "failures": failure.into_iter().collect::<Vec<_>>(),
        })
    }

    fn protocol_record(test: &str) -> Value {
        json!({
            "kind": "protocol", "test": test,
            "protocol": [{"protocol": "axi4", "cases": 2, "situations": [
                {"situation": "AW after a stall", "count": 0},
                {"situation": "INCR burst", "count": 5}]}],
            "failures": [],
        })
    }

    fn passing_shard(index: u32) -> ShardOutput {
        ShardOutput {
            index,
            meta: json!({"exit_ok": true, "secs": 2.5}),
            junit: Some(parse_junit(
                r#"<testsuites><testsuite><testcase name="campaign_fuzz_slice_01" classname="card-tests::campaign"/><testcase name="campaign_fuzz_slice_03" classname="card-tests::campaign"/></testsuite></testsuites>"#,
            )),
            records: vec![
                fuzz_record("campaign_fuzz_slice_01", 4, None),
                fuzz_record("campaign_fuzz_slice_03", 4, None),
                protocol_record("campaign_fuzz_protocol_01"),
                protocol_record("campaign_fuzz_protocol_03"),
            ],
        }
    }

    #[test]
    fn junit_cases_and_their_failures_are_read() {
        let cases = parse_junit(&junit("campaign_fuzz_slice_02"));
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].failure, None);
        assert_eq!(cases[1].name, "campaign_fuzz_slice_02");
        assert_eq!(cases[1].binary, "card-tests::campaign");
        assert_eq!(
            cases[1].failure.as_deref(),
            Some("thread 'campaign_fuzz_slice_02' panicked at tests/campaign.rs:9:5")
        );
    }

    #[test]
    fn shards_that_pass_merge_into_a_passing_campaign() {
        let m = merge(&[passing_shard(1), passing_shard(2)], 2);
        assert!(m.passed, "{}", m.markdown);
        assert_eq!(m.json["model_cases"], 16);
        assert_eq!(m.json["per_shard"][1]["model_cases"], 8);
        assert_eq!(m.json["protocol"][0]["cases"], 8);
        assert_eq!(m.json["protocol"][0]["reached"], 1);
        assert_eq!(m.json["protocol"][0]["missing"][0], "AW after a stall");
        assert!(m.markdown.contains("# Campaign: passed"), "{}", m.markdown);
        // A shard that left nothing fails the campaign.
        let m = merge(&[passing_shard(1)], 2);
        assert!(!m.passed);
        assert!(
            m.markdown.contains("shard 2 left no output"),
            "{}",
            m.markdown
        );
    }

    #[test]
    fn a_failing_case_in_one_shard_fails_the_campaign_with_its_replay_command() {
        let replay = "CAMPAIGN_SEED=0x25 CAMPAIGN_CASES=35 CAMPAIGN_CASE=34 cargo nextest run --workspace -E 'test(=campaign_fuzz_slice_02)'";
        let failure = json!({
            "kind": "model", "case": 34, "operations": 2,
            "error": "operation 2 failed: the model holds 0x01 at low+0x30",
            "sequence": "\npauses none\nhost zero\nwrite low+0x30 len=32\nread low+0x30 len=32\n",
            "replay_seed": replay,
            "replay_sequence": "cargo run --example replay -- --top sim_top_fault_rd_beat target/campaign/shard-2/records/campaign_fuzz_slice_02-case-34.txt",
        });
        let failing = ShardOutput {
            index: 2,
            meta: json!({"exit_ok": false, "secs": 9.0}),
            junit: Some(parse_junit(&junit("campaign_fuzz_slice_02"))),
            records: vec![
                fuzz_record("campaign_fuzz_slice_00", 3, None),
                fuzz_record("campaign_fuzz_slice_02", 3, Some(failure)),
            ],
        };
        let m = merge(&[passing_shard(1), failing], 2);
        assert!(!m.passed);
        let failures = m.json["failures"].as_array().expect("failures");
        // The slice's own record says it, so its JUnit failure is not counted twice.
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0]["shard"], 2);
        assert_eq!(failures[0]["test"], "campaign_fuzz_slice_02");
        assert!(m.markdown.contains(replay), "{}", m.markdown);
        assert!(m.markdown.contains("--top sim_top_fault_rd_beat"));
        assert!(m.markdown.contains("write low+0x30 len=32"));
        assert_eq!(m.json["per_shard"][1]["failed"], 1);

        // A failing test with no record of its own gets a replay command from its name.
        let soak = ShardOutput {
            index: 1,
            meta: json!({"exit_ok": false, "which": ["soak"]}),
            junit: Some(parse_junit(&junit("campaign_soak_gen"))),
            records: vec![],
        };
        let m = merge(&[soak], 1);
        assert!(!m.passed);
        assert!(
            m.markdown.contains(
                "CARD_SOAK=1 cargo nextest run --workspace -E 'test(=campaign_soak_gen)'"
            ),
            "{}",
            m.markdown
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
