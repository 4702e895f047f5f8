//! `cargo xtask coverage [--check] [--write-floor] [--crate NAME]`: what the tests exercise of
//! the card's RTL, or of a crate's own RTL.
//!
//! The card's tops are built with Verilator's coverage (`SIM_COVERAGE`, see
//! `sim_build::Build::coverage`) in a target folder of their own, `target/coverage/build`, so
//! the normal build never verilates or compiles them. The RTL tests, the card-tests suite on the
//! simulated card and its model-based cases run on them, each model writing its counts to one
//! file named after its test (`target/coverage/raw`). `verilator_coverage` merges them and
//! writes an lcov tracefile, Debian's `genhtml` the HTML report, and this task a summary per
//! RTL module (line, branch and toggle points) on the terminal and in `summary.json`.
//!
//! Excluded by rule, and said so in the report: code outside `hdl/rtl` (the simulation-only
//! models and test benches of `hdl/sim`, and the randomized twins, which read a copy of the RTL
//! from the build folder), and the deliberately broken cards: `sim_top` with a fault turned on
//! at run time, whose models card-harness names `<test>.<fault name>` (the fault names hold
//! `_fault_`), and any top named `*_fault_*`.
//!
//! `--crate NAME` does the same for one crate that builds tops of its own through sim-build
//! (`own-rtl-example`, say): its tests on coverage builds, every file its tops read counted but
//! those of its deliberately broken tops (named `*_broken*`), the report under
//! `target/coverage/NAME/`. A path to a crate's folder takes a crate outside the workspace
//! (a user's own, tested through its manifest; the report under its package name). The name is
//! checked first: one that is no crate of `crates/` or `sim/` and no folder with a Cargo.toml is
//! refused, with the names there, before the task installs anything.
//!
//! `--no-run` reuses the coverage files of the last run (to redo the report or the check).
//!
//! `--check` compares the summary with the floors committed in `hdl/coverage.toml` and fails
//! when a module's figure drops below its floor; `--write-floor` writes the figures of this run
//! there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// The folder under the target folder where everything of this task goes.
const OUT: &str = "coverage";
/// The RTL whose coverage counts: the card's synthesizable modules.
const COUNTED_DIR: &str = "hdl/rtl/";
/// Marks of cards broken on purpose, for the checks that must catch them, in a top's name or
/// in the fault name after the last `.` of a model's name: the card's faults (card-harness's
/// `Fault`, turned on at run time) and a user crate's broken variants.
const BROKEN_TOP_MARKS: [&str; 2] = ["_fault_", "_broken"];
/// The committed floors.
const FLOOR_FILE: &str = "hdl/coverage.toml";

/// The RTL tests run on the coverage build: every integration test of rtl-tests.
fn rtl_test_targets(root: &Path) -> Result<Vec<String>, String> {
    let dir = root.join("crates/rtl-tests/tests");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension().is_some_and(|x| x == "rs"))
                .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .flatten()
        })
        .collect();
    names.sort();
    Ok(names)
}

/// One kind of coverage point Verilator counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A statement block (`v_line`).
    Line,
    /// An arm of an `if` or `case` (`v_branch`).
    Branch,
    /// A bit's rise or fall (`v_toggle`).
    Toggle,
    /// The RTL's own `cover` statements (`v_user`).
    User,
}

impl Kind {
    fn of_page(page: &str) -> Option<Kind> {
        match page.split('/').next()? {
            "v_line" => Some(Kind::Line),
            "v_branch" => Some(Kind::Branch),
            "v_toggle" => Some(Kind::Toggle),
            "v_user" => Some(Kind::User),
            _ => None,
        }
    }
}

/// Points hit and points in all, for one module and kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    /// Points counted at least once.
    pub hit: u64,
    /// All points.
    pub total: u64,
}

impl Count {
    /// The share hit in percent (100 for a module without points of the kind).
    pub fn percent(self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.hit as f64 / self.total as f64
        }
    }
}

/// The summary: per module, per kind.
pub type Summary = BTreeMap<String, BTreeMap<Kind, Count>>;

/// Reads Verilator's coverage data (the merged file) into a summary of the modules whose file
/// starts with `counted` (a folder, or empty for all). A point is one place in the source
/// (file, line, column, kind, comment): hit when any instance of its module counted it.
pub fn summarize(dat: &str, counted: &str) -> Summary {
    let mut points: BTreeMap<(String, Kind, String), bool> = BTreeMap::new();
    for line in dat.lines() {
        // C '<\x01key\x02value...>' count
        let Some(rest) = line.strip_prefix("C '") else {
            continue;
        };
        let Some((fields, count)) = rest.rsplit_once("' ") else {
            continue;
        };
        let count: u64 = count.trim().parse().unwrap_or(0);
        let mut file = "";
        let mut page = "";
        let mut place = String::new();
        for kv in fields.split('\u{1}').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('\u{2}').unwrap_or((kv, ""));
            match k {
                "f" => file = v,
                // The page names the kind and the parameter set; the kind is in the key.
                "page" => {
                    page = v;
                    continue;
                }
                // The instance (`h`) is left out: a point is hit in any instance.
                "h" => continue,
                _ => {}
            }
            place.push_str(kv);
            place.push('\u{1}');
        }
        let Some(kind) = Kind::of_page(page) else {
            continue;
        };
        if !file.starts_with(counted) {
            continue;
        }
        // Verilator names each parameter set of a module `<module>__<mangled parameters>`;
        // the summary is per module, over all its parameter sets.
        let module = page.split_once('/').map_or(page, |(_, m)| m);
        let module = module
            .split_once("__")
            .map_or(module, |(m, _)| m)
            .to_string();
        let hit = points.entry((module, kind, place)).or_insert(false);
        *hit |= count > 0;
    }
    let mut summary = Summary::new();
    for ((module, kind, _), hit) in points {
        let c = summary.entry(module).or_default().entry(kind).or_default();
        c.total += 1;
        c.hit += u64::from(hit);
    }
    summary
}

/// The floors of `hdl/coverage.toml`: per module, the least percentage of each kind.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Floors {
    /// Module name to kind to percent.
    pub floor: BTreeMap<String, BTreeMap<Kind, f64>>,
}

/// The modules and kinds below their floor, each with its figure and floor; a module with a
/// floor that the run did not measure at all is a failure too (the tests stopped reaching it).
pub fn below_floor(summary: &Summary, floors: &Floors) -> Vec<String> {
    let mut out = Vec::new();
    for (module, kinds) in &floors.floor {
        for (kind, floor) in kinds {
            match summary.get(module).and_then(|k| k.get(kind)) {
                None => out.push(format!(
                    "{module}: no {kind:?} coverage measured (floor {floor:.1} %)"
                )),
                // Figures are compared as printed, to a tenth of a percent.
                Some(c) if (c.percent() * 10.0).round() < (floor * 10.0).round() => {
                    out.push(format!(
                        "{module}: {kind:?} {:.1} % ({} of {}) is below its floor of {floor:.1} %",
                        c.percent(),
                        c.hit,
                        c.total
                    ))
                }
                Some(_) => {}
            }
        }
    }
    out
}

/// The summary as the terminal shows it.
pub fn table(summary: &Summary) -> String {
    let mut s = format!(
        "{:<28} {:>17} {:>17} {:>19}\n",
        "module", "line", "branch", "toggle"
    );
    let cell = |c: Option<&Count>| match c {
        Some(c) => format!("{:5.1} % {:>4}/{:<4}", c.percent(), c.hit, c.total),
        None => "-".to_string(),
    };
    let mut all: BTreeMap<Kind, Count> = BTreeMap::new();
    for (module, kinds) in summary {
        s.push_str(&format!(
            "{:<28} {:>17} {:>17} {:>19}\n",
            module,
            cell(kinds.get(&Kind::Line)),
            cell(kinds.get(&Kind::Branch)),
            cell(kinds.get(&Kind::Toggle))
        ));
        for (k, c) in kinds {
            let a = all.entry(*k).or_default();
            a.hit += c.hit;
            a.total += c.total;
        }
    }
    s.push_str(&format!(
        "{:<28} {:>17} {:>17} {:>19}\n",
        "all modules",
        cell(all.get(&Kind::Line)),
        cell(all.get(&Kind::Branch)),
        cell(all.get(&Kind::Toggle))
    ));
    s
}

/// Percentage points a written floor keeps below the figure it was written from: the tests
/// draw random cases (proptest seeds differ from run to run), so toggle counts and, more
/// rarely, a branch or two move between runs of the same tree.
const FLOOR_SLACK: f64 = 1.0;

/// The floors for a summary: each figure rounded down to a whole percent, less [`FLOOR_SLACK`].
fn floors_of(summary: &Summary) -> Floors {
    Floors {
        floor: summary
            .iter()
            .map(|(m, kinds)| {
                (
                    m.clone(),
                    kinds
                        .iter()
                        .filter(|(k, _)| **k != Kind::User)
                        .map(|(k, c)| (*k, (c.percent().floor() - FLOOR_SLACK).max(0.0)))
                        .collect(),
                )
            })
            .collect(),
    }
}

/// Verilator's coverage merger: Debian's `verilator` package, unpacked (not installed, so that
/// its Verilator never shadows the pinned one) into `.tools/verilator-coverage`. The data
/// format is the same across Verilator 5 releases.
fn verilator_coverage(root: &Path) -> Result<PathBuf, String> {
    let dir = root.join(".tools").join("verilator-coverage");
    let bin = dir.join("x/usr/bin/verilator_coverage_bin_dbg");
    if bin.is_file() {
        return Ok(bin);
    }
    eprintln!("coverage: unpacking Debian's verilator package for verilator_coverage");
    let x = crate::debian::unpack(&["verilator".to_string()], &dir)?;
    let bin = x.join("usr/bin/verilator_coverage_bin_dbg");
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "Debian's verilator package has no {}",
            bin.display()
        ))
    }
}

/// `genhtml` and `lcov`, from Debian's `lcov` package, installed when missing.
fn ensure_lcov() -> Result<(), String> {
    let found = Command::new("genhtml")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Ok(());
    }
    if !crate::debian::can_install() {
        return Err(
            "genhtml is missing and this user cannot install it: apt-get install lcov".into(),
        );
    }
    eprintln!("coverage: apt-get install lcov");
    crate::debian::install(&["lcov"])
}

/// What one run covers: which tests, which files count, where the report goes.
struct Scope {
    /// The tests, as a cargo command still without the coverage environment.
    tests: Command,
    /// The folder Verilator's file paths start from (genhtml reads the sources there).
    base: PathBuf,
    /// The files counted: a prefix of Verilator's paths (empty: every file).
    counted: String,
    /// Where the report goes.
    out: PathBuf,
    /// What is left out, for the report.
    excluded: Vec<&'static str>,
}

impl Scope {
    /// The card: the RTL tests and the card-tests suite (with its model-based cases) on the
    /// simulated card.
    fn card(root: &Path) -> Result<Scope, String> {
        let mut targets = rtl_test_targets(root)?;
        targets.extend(crate::suite::SUITE.iter().map(|s| s.to_string()));
        let names: Vec<&str> = targets.iter().map(String::as_str).collect();
        let mut tests = crate::build::tests(&names);
        tests.env("XDMA_BACKEND", "sim");
        Ok(Scope {
            tests,
            base: root.to_path_buf(),
            counted: COUNTED_DIR.to_string(),
            out: crate::build::target_dir(root).join(OUT),
            excluded: vec![
                "code outside hdl/rtl: the simulation-only models and benches of hdl/sim, and the randomized twins (built from a copy of the RTL)",
                "the deliberately broken cards (sim_top with a fault turned on: models named <test>.sim_top_fault_*)",
            ],
        })
    }

    /// One crate's own tops and tests: a crate of the workspace by name, or any crate by the
    /// path of its folder (a user's own crate outside the workspace, which is its own
    /// workspace and is tested through its manifest).
    fn krate(root: &Path, name: &str) -> Result<Scope, String> {
        let outside = Path::new(name);
        let (dir, package, tests) = if outside.join("Cargo.toml").is_file() {
            let dir = std::fs::canonicalize(outside)
                .map_err(|e| format!("cannot resolve {}: {e}", outside.display()))?;
            let package = package_name(&dir.join("Cargo.toml"))?;
            let mut tests = crate::cargo();
            tests
                .args(["test", "--manifest-path"])
                .arg(dir.join("Cargo.toml"));
            (dir, package, tests)
        } else {
            let dir = find_crate(root, name).ok_or_else(|| {
                format!(
                    "no crate `{name}` in crates/ or sim/, and no folder `{name}` with a Cargo.toml; name one of the crates there ({}) or give the path of your crate's folder",
                    crates_in(root).join(", ")
                )
            })?;
            let mut tests = crate::cargo();
            tests.args(["test", "-p", name]);
            (dir, name.to_string(), tests)
        };
        Ok(Scope {
            tests,
            base: dir,
            counted: String::new(),
            out: crate::build::target_dir(root).join(OUT).join(package),
            excluded: vec!["the deliberately broken builds (tops named *_broken*)"],
        })
    }
}

/// The `[package]` name of a crate's manifest.
fn package_name(manifest: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let doc: toml::Table =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", manifest.display()))?;
    doc.get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "{} has no [package] name; give the folder of a crate, not of a workspace",
                manifest.display()
            )
        })
}

/// The folder of the workspace crate `name`, in `crates/` or `sim/`.
fn find_crate(root: &Path, name: &str) -> Option<PathBuf> {
    ["crates", "sim"]
        .iter()
        .map(|g| root.join(g).join(name))
        .find(|d| d.join("Cargo.toml").is_file())
}

/// The folder of the workspace crate `name` (what `cargo xtask formal --crate NAME` names), or
/// an error naming the crates there.
pub(crate) fn workspace_crate_dir(root: &Path, name: &str) -> Result<PathBuf, String> {
    find_crate(root, name).ok_or_else(|| {
        format!(
            "no crate `{name}` in crates/ or sim/; name one of the crates there: {}",
            crates_in(root).join(", ")
        )
    })
}

/// The crates of `crates/` and `sim/`, by folder name, sorted.
fn crates_in(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = ["crates", "sim"]
        .iter()
        .filter_map(|g| std::fs::read_dir(root.join(g)).ok())
        .flatten()
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Whether a coverage file (`<model name>-<pid>-<model>-<top>.dat`) is of a card broken on
/// purpose: a top so named, or a model whose name ends in `.<fault name>`, which is how
/// card-harness names a model with a fault turned on (a test's own name has no `.`).
fn of_broken_top(file_name: &str) -> bool {
    let Some(stem) = file_name.strip_suffix(".dat") else {
        return false;
    };
    let mut parts = stem.rsplitn(4, '-');
    let top = parts.next().unwrap_or("");
    let name = parts.nth(2).unwrap_or("");
    let fault = name.rsplit_once('.').map_or("", |(_, f)| f);
    BROKEN_TOP_MARKS
        .iter()
        .any(|m| top.contains(m) || fault.contains(m))
}

/// The task.
pub fn coverage(root: &Path, args: &[String]) -> Result<(), String> {
    coverage_with(root, args, |root| {
        crate::setup::setup(root)?;
        let vcov = verilator_coverage(root)?;
        ensure_lcov()?;
        Ok(vcov)
    })
}

/// The task, with `tools` the step that installs what it needs and gives the path of
/// verilator_coverage.
fn coverage_with(
    root: &Path,
    args: &[String],
    tools: impl FnOnce(&Path) -> Result<PathBuf, String>,
) -> Result<(), String> {
    let mut check = false;
    let mut write_floor = false;
    let mut krate = None;
    let mut no_run = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--write-floor" => write_floor = true,
            "--no-run" => no_run = true,
            "--crate" => {
                krate = Some(
                    it.next()
                        .ok_or("--crate needs a crate's name or the path of its folder")?,
                )
            }
            other => {
                return Err(format!(
                "unknown coverage option `{other}`: --check, --write-floor, --no-run, --crate NAME|PATH"
            ))
            }
        }
    }
    if krate.is_some() && (check || write_floor) {
        return Err(
            "the floors (--check, --write-floor) are the card's; leave them out with --crate"
                .into(),
        );
    }
    let started = Instant::now();
    // The scope first: a crate's name that is wrong is refused before the tools are
    // installed, which takes minutes on a fresh machine.
    let mut scope = match krate {
        Some(name) => Scope::krate(root, name)?,
        None => Scope::card(root)?,
    };
    let vcov = tools(root)?;
    let out = scope.out.clone();
    let raw = out.join("raw");
    if !no_run {
        std::fs::remove_dir_all(&raw).ok();
        std::fs::create_dir_all(&raw).map_err(|e| format!("cannot make {}: {e}", raw.display()))?;
        // The tests, on coverage builds in a target folder of their own (one for every scope).
        scope
            .tests
            .env(
                "CARGO_TARGET_DIR",
                crate::build::target_dir(root).join(OUT).join("build"),
            )
            // sim_build::COVERAGE_ENV and sim_runtime::COVERAGE_DIR_ENV (xtask links neither).
            .env("SIM_COVERAGE", "1")
            .env("SIM_COVERAGE_DIR", &raw);
        // From the crate's folder (the workspace root for the card), so that a crate outside
        // the workspace runs with its own `.cargo/config.toml`, as its own `cargo test` does.
        crate::run(&scope.base, scope.tests)?;
    }
    let tests_s = started.elapsed().as_secs_f64();

    // The files of broken builds go; the rest is merged.
    let mut files = Vec::new();
    let mut broken = 0usize;
    for e in std::fs::read_dir(&raw)
        .map_err(|e| format!("cannot read {}: {e}", raw.display()))?
        .flatten()
    {
        let p = e.path();
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.ends_with(".dat") {
            continue;
        }
        if of_broken_top(&name) {
            broken += 1;
        } else {
            files.push(p);
        }
    }
    if files.is_empty() {
        return Err(format!(
            "the tests wrote no coverage into {}: were the tops built with coverage?",
            raw.display()
        ));
    }
    files.sort();
    let merged = out.join("merged.dat");
    let all_info = out.join("all.info");
    let mut m = Command::new(&vcov);
    m.arg("--write")
        .arg(&merged)
        .arg("--write-info")
        .arg(&all_info)
        .args(&files);
    crate::run(&scope.base, m)?;

    // lcov keeps only the counted files; genhtml draws them with the sources beside.
    let info = out.join("coverage.info");
    if scope.counted.is_empty() {
        std::fs::copy(&all_info, &info)
            .map_err(|e| format!("cannot copy {}: {e}", all_info.display()))?;
    } else {
        let mut x = Command::new("lcov");
        x.args(["--quiet", "--extract"])
            .arg(&all_info)
            .arg(format!("*{}*", scope.counted))
            .arg("--output-file")
            .arg(&info);
        crate::run(&scope.base, x)?;
    }
    let html = out.join("html");
    let mut g = Command::new("genhtml");
    g.args(["--quiet", "--branch-coverage", "--output-directory"])
        .arg(&html)
        .arg("--title")
        .arg("RTL coverage")
        .arg(&info);
    crate::run(&scope.base, g)?;

    let text = std::fs::read_to_string(&merged)
        .map_err(|e| format!("cannot read {}: {e}", merged.display()))?;
    let summary = summarize(&text, &scope.counted);
    let json = out.join("summary.json");
    #[derive(Serialize)]
    struct Report<'a> {
        counted: &'a str,
        excluded: &'a [&'a str],
        coverage_files: usize,
        broken_build_files_dropped: usize,
        /// None when `--no-run` reused the files of an earlier run.
        tests_seconds: Option<f64>,
        modules: &'a Summary,
    }
    let report = Report {
        counted: if scope.counted.is_empty() {
            "every file the tops read"
        } else {
            &scope.counted
        },
        excluded: &scope.excluded,
        coverage_files: files.len(),
        broken_build_files_dropped: broken,
        tests_seconds: (!no_run).then_some(tests_s),
        modules: &summary,
    };
    let body = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(&json, body).map_err(|e| format!("cannot write {}: {e}", json.display()))?;
    print!("{}", table(&summary));
    println!(
        "coverage: {} files from the tests ({} of broken builds left out); left out by rule: {}",
        files.len(),
        broken,
        scope.excluded.join("; ")
    );
    println!(
        "coverage: lcov {}, HTML {}/index.html, summary {}; {:.0} s in all ({tests_s:.0} s of build and tests)",
        info.display(),
        html.display(),
        json.display(),
        started.elapsed().as_secs_f64()
    );

    let floor_path = root.join(FLOOR_FILE);
    if write_floor {
        let text = toml::to_string(&floors_of(&summary)).map_err(|e| e.to_string())?;
        let head = concat!(
            "# The least coverage of each RTL module that `cargo xtask coverage --check` accepts,\n",
            "# written by `cargo xtask coverage --write-floor` from a run's figures, rounded down to\n",
            "# a whole percent less one point (the tests draw random cases, so a figure moves a little\n",
            "# between runs of one tree). Raise a floor when the tests reach more; lower one only with\n",
            "# a reason in the commit.\n\n",
        );
        std::fs::write(&floor_path, format!("{head}{text}"))
            .map_err(|e| format!("cannot write {}: {e}", floor_path.display()))?;
        println!("coverage: floors written to {FLOOR_FILE}");
    }
    if check {
        let text = std::fs::read_to_string(&floor_path)
            .map_err(|e| format!("cannot read {}: {e}", floor_path.display()))?;
        let floors: Floors = toml::from_str(&text).map_err(|e| format!("{FLOOR_FILE}: {e}"))?;
        let low = below_floor(&summary, &floors);
        if !low.is_empty() {
            return Err(format!(
                "coverage below the committed floors ({FLOOR_FILE}):\n  {}",
                low.join("\n  ")
            ));
        }
        println!("coverage: every module at or above its floor in {FLOOR_FILE}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point of Verilator's coverage data, in its own format.
    fn point(file: &str, line: u32, page: &str, comment: &str, hier: &str, count: u64) -> String {
        format!(
            "C '\u{1}f\u{2}{file}\u{1}l\u{2}{line}\u{1}n\u{2}0\u{1}page\u{2}{page}\u{1}o\u{2}{comment}\u{1}h\u{2}{hier}' {count}\n"
        )
    }

    #[test]
    fn a_crate_that_is_not_there_is_named_before_anything_is_installed() {
        let args: Vec<String> = ["--crate", "nosuch"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        let e = coverage_with(&crate::root(), &args, |_| {
            Err("the tools were installed before the crate's name was checked".into())
        })
        .expect_err("no such crate");
        assert!(e.contains("no crate `nosuch`"), "{e}");
        assert!(
            e.contains("own-rtl-example"),
            "names the crates there are: {e}"
        );
    }

    #[test]
    fn a_crate_outside_the_workspace_is_taken_by_its_path() {
        let dir = std::env::temp_dir().join(format!("xtask-coverage-user-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp folder");
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"userdaq\"\nversion = \"0.1.0\"\n",
        )
        .expect("manifest");
        let path = dir.to_string_lossy().into_owned();
        let root = crate::root();
        let scope = Scope::krate(&root, &path).expect("a crate by its path");
        let args: Vec<String> = scope
            .tests
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let manifest = std::fs::canonicalize(&dir)
            .expect("canonical")
            .join("Cargo.toml");
        assert_eq!(
            args,
            ["test", "--manifest-path", &manifest.to_string_lossy()],
            "tested through its own manifest"
        );
        assert!(scope.out.ends_with("coverage/userdaq"), "{:?}", scope.out);
        // The task gets past the crate's check to the tools.
        let e = coverage_with(&root, &["--crate".to_string(), path], |_| {
            Err("tools reached".into())
        })
        .expect_err("stopped at the tools");
        assert_eq!(e, "tools reached");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn only_the_top_part_of_a_file_name_marks_a_broken_build() {
        assert!(of_broken_top("broken_rd-12-3-sim_top_fault_rd_beat.dat"));
        assert!(of_broken_top("it_catches-9-1-vendor_axi4_ram_broken.dat"));
        // A fault turned on at run time, in a model named after it.
        assert!(of_broken_top(
            "a_dropped_read_beat_is_caught.sim_top_fault_rd_beat-12-3-sim_top.dat"
        ));
        // A test whose name says broken or fault, on a sound top, counts.
        assert!(!of_broken_top("a_broken_frame_is_counted-9-1-sim_top.dat"));
        assert!(!of_broken_top("the_fault_selection_is_off-9-1-sim_top.dat"));
        assert!(!of_broken_top("t-1-1-card_core.dat"));
    }

    #[test]
    fn points_are_counted_per_module_and_kind_across_instances() {
        let mut dat = String::from("# SystemC::Coverage-3\n");
        // Two instances of one block: hit in one of them is hit.
        dat += &point("hdl/rtl/a.v", 10, "v_line/a", "block", "TOP.x.a0", 0);
        dat += &point("hdl/rtl/a.v", 10, "v_line/a", "block", "TOP.x.a1", 3);
        // A block never reached.
        dat += &point("hdl/rtl/a.v", 12, "v_line/a", "block", "TOP.x.a0", 0);
        // Both arms of an if, one taken.
        dat += &point("hdl/rtl/a.v", 14, "v_branch/a", "if", "TOP.x.a0", 5);
        dat += &point("hdl/rtl/a.v", 14, "v_branch/a", "else", "TOP.x.a0", 0);
        dat += &point("hdl/rtl/a.v", 3, "v_toggle/a", "q:0->1", "TOP.x.a0", 1);
        // Another parameter set of the same module: its points are the module's.
        dat += &point("hdl/rtl/a.v", 12, "v_line/a__W8", "block", "TOP.y.a", 1);
        // A simulation model is not counted.
        dat += &point("hdl/sim/m.v", 5, "v_line/m", "block", "TOP.m", 0);
        let s = summarize(&dat, COUNTED_DIR);
        assert_eq!(s.len(), 1, "{s:?}");
        let a = &s["a"];
        assert_eq!(a[&Kind::Line], Count { hit: 2, total: 2 });
        assert_eq!(a[&Kind::Branch], Count { hit: 1, total: 2 });
        assert_eq!(a[&Kind::Toggle], Count { hit: 1, total: 1 });
        assert_eq!(a[&Kind::Branch].percent(), 50.0);
    }

    #[test]
    fn a_figure_below_its_floor_fails_the_check_and_one_at_it_passes() {
        let mut s = Summary::new();
        s.entry("a".into()).or_default().insert(
            Kind::Line,
            Count {
                hit: 95,
                total: 100,
            },
        );
        let floors = |f: f64| Floors {
            floor: [("a".to_string(), [(Kind::Line, f)].into_iter().collect())]
                .into_iter()
                .collect(),
        };
        assert!(below_floor(&s, &floors(95.0)).is_empty());
        assert!(below_floor(&s, &floors(94.9)).is_empty());
        let low = below_floor(&s, &floors(95.1));
        assert_eq!(low.len(), 1, "{low:?}");
        assert!(
            low[0].contains("95.0 %") && low[0].contains("95.1 %"),
            "{low:?}"
        );
        // A module that is no longer measured fails too.
        let gone = Floors {
            floor: [("b".to_string(), [(Kind::Line, 10.0)].into_iter().collect())]
                .into_iter()
                .collect(),
        };
        assert_eq!(below_floor(&s, &gone).len(), 1);
    }

    /// The committed floors read, a run exactly at them passes, and one module a point lower in
    /// one kind fails the check, naming the module.
    #[test]
    fn the_committed_floors_hold_a_run_at_them_and_fail_one_below() {
        let text = std::fs::read_to_string(crate::root().join(FLOOR_FILE)).expect("floors");
        let floors: Floors = toml::from_str(&text).expect("the floor file parses");
        assert!(floors.floor.len() > 10, "{} modules", floors.floor.len());
        let at = |lower: Option<(&str, Kind)>| -> Summary {
            floors
                .floor
                .iter()
                .map(|(m, kinds)| {
                    let counts = kinds
                        .iter()
                        .map(|(k, f)| {
                            let drop = if lower == Some((m.as_str(), *k)) {
                                10
                            } else {
                                0
                            };
                            let hit = (f * 10.0).round() as u64;
                            (
                                *k,
                                Count {
                                    hit: hit.saturating_sub(drop),
                                    total: 1000,
                                },
                            )
                        })
                        .collect();
                    (m.clone(), counts)
                })
                .collect()
        };
        assert!(below_floor(&at(None), &floors).is_empty());
        let low = below_floor(&at(Some(("card_core", Kind::Toggle))), &floors);
        assert_eq!(low.len(), 1, "{low:?}");
        assert!(low[0].starts_with("card_core: Toggle"), "{low:?}");
    }

    #[test]
    fn written_floors_read_back_and_pass_their_own_run() {
        let mut s = Summary::new();
        let m = s.entry("card_core".into()).or_default();
        m.insert(Kind::Line, Count { hit: 2, total: 3 });
        m.insert(Kind::Toggle, Count { hit: 7, total: 9 });
        let text = toml::to_string(&floors_of(&s)).expect("toml");
        let back: Floors = toml::from_str(&text).expect("reads back");
        assert_eq!(back.floor["card_core"][&Kind::Line], 65.0);
        assert!(below_floor(&s, &back).is_empty(), "{text}");
    }
}
