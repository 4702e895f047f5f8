//! The card-tests step of `cargo xtask test`: the suite (crates/card-tests) on the simulated
//! card, then the very same tests through the driver backend over an xdma-fuse mount of the
//! simulated card. Both runs must pass with the same numbers of tests run and skipped; the
//! counts are printed and a difference fails the step. The suite also runs in guests through
//! the unmodified driver ([`guests`]), beside the runs on this machine, and is compared with
//! them at the end ([`compare`]).
//!
//! A test counts as skipped when it wrote a line to the skip log (`CARD_TESTS_SKIP_LOG`, which
//! the suite's harness appends to with the test's name and reason); every other passed test
//! ran. The broken-card tests, which need simulated tops the driver backend cannot choose, run
//! once on the simulated card, after the two runs.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::{fuse, vm, vm_suite};

/// The suite's test targets, run on both backends.
pub(crate) const SUITE: &[&str] = &[
    "bad_input",
    "registers",
    "memory",
    "streams",
    "concurrency",
    "interrupts",
    "model",
    "soak",
    "campaign",
];

/// The variants of the simulated card (`sim.variant`) the suite also runs on.
const VARIANTS: &[&str] = &["mm", "stream"];

/// The engine alignment of the suite's simulated card (`[sim.ip] alignment` in
/// crates/card-tests/suite.toml), which the guest's card is given too.
const SUITE_ALIGNMENT: u32 = 64;

/// The suite's configuration with `variant` set in its `[sim]` section.
fn with_variant(suite_toml: &str, variant: &str) -> Result<String, String> {
    let at = suite_toml
        .find("[sim]\n")
        .ok_or("crates/card-tests/suite.toml has no [sim] section")?;
    let end = at + "[sim]\n".len();
    Ok(format!(
        "{}variant = \"{variant}\"\n{}",
        &suite_toml[..end],
        &suite_toml[end..]
    ))
}

/// sim-runtime's variable that makes every model write its output trace into a folder
/// (`TRACE_DIR_ENV` there; xtask does not depend on the runtime).
pub(crate) const TRACE_DIR_ENV: &str = "SIM_TRACE_DIR";

/// The environment variable the suite's harness appends skips to.
const SKIP_LOG_ENV: &str = "CARD_TESTS_SKIP_LOG";

/// What one run found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Tests that passed, skipped ones included, per target.
    passed: BTreeMap<String, u64>,
    /// Tests skipped, per target, with their names.
    skipped: BTreeMap<String, Vec<String>>,
    /// Tests that failed.
    failed: u64,
}

impl Counts {
    fn total_passed(&self) -> u64 {
        self.passed.values().sum()
    }

    fn total_skipped(&self) -> u64 {
        self.skipped.values().map(|v| v.len() as u64).sum()
    }

    /// Tests run and skipped, as printed and compared.
    pub(crate) fn summary(&self) -> (u64, u64) {
        let skipped = self.total_skipped();
        (self.total_passed().saturating_sub(skipped), skipped)
    }
}

/// Reads libtest's lines: `Running tests/x.rs (...)` names the target of the next
/// `test result:` line.
fn parse_results(out: &str, counts: &mut Counts) {
    let mut target = String::new();
    for line in out.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("Running ") {
            target = rest
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_start_matches("tests/")
                .trim_end_matches(".rs")
                .to_string();
        } else if let Some(rest) = l.strip_prefix("test result: ") {
            let num = |word: &str| {
                rest.split(';')
                    .filter_map(|part| {
                        let mut w = part.split_whitespace().rev();
                        let name = w.next()?;
                        let n = w.next()?;
                        (name == word).then(|| n.parse::<u64>().ok()).flatten()
                    })
                    .next()
                    .unwrap_or(0)
            };
            *counts.passed.entry(target.clone()).or_default() += num("passed");
            counts.failed += num("failed");
        }
    }
}

/// Reads the skip log: one `test<TAB>reason` line per skipped test. The target comes from the
/// process that wrote it, which the runs keep apart by giving each target its own file.
/// Reads the console log of the suite's run in the guest (`vm_suite`): a marker line per
/// target, libtest's lines, and a skip line per logged skip.
fn parse_guest(log: &str) -> Counts {
    let mut counts = Counts::default();
    let mut target = String::new();
    for line in log.lines() {
        if let Some(t) = line.strip_prefix(vm_suite::TARGET_MARK) {
            target = t.trim().to_string();
        } else if let Some(rest) = line.strip_prefix(vm_suite::SKIP_MARK) {
            let mut f = rest.split('\t');
            if let (Some(t), Some(name)) = (f.next(), f.next()) {
                counts
                    .skipped
                    .entry(t.to_string())
                    .or_default()
                    .push(name.to_string());
            }
        } else if line.trim_start().starts_with("test result: ") {
            parse_results(&format!("Running tests/{target}.rs\n{line}\n"), &mut counts);
        }
    }
    for names in counts.skipped.values_mut() {
        names.sort();
    }
    counts
}

/// The suite's run in a guest against the unmodified driver: its counts, or why there are
/// none, with the log and the run's wall time.
struct GuestRun {
    variant: &'static str,
    counts: Result<(Counts, PathBuf), String>,
    secs: f64,
}

fn in_guest(root: &Path, variant: &'static str, targets: &[&str]) -> GuestRun {
    let started = Instant::now();
    // The guest's card has the engine alignment of the suite's simulated card (suite.toml),
    // so that the same misaligned-buffer cases run.
    let counts = vm_suite::run(root, variant, targets, SUITE_ALIGNMENT).and_then(|log| {
        let text = std::fs::read_to_string(&log)
            .map_err(|e| format!("cannot read {}: {e}", log.display()))?;
        Ok((parse_guest(&text), log))
    });
    GuestRun {
        variant,
        counts,
        secs: started.elapsed().as_secs_f64(),
    }
}

/// Compares a guest's run with the suite's run on the simulated card: the same tests must
/// run and the same ones skip.
fn judge_guest(run: &GuestRun, sim: &Counts) -> Result<(), String> {
    let variant = run.variant;
    let (guest, log) = run.counts.as_ref().map_err(Clone::clone)?;
    let (ran, skipped) = guest.summary();
    println!(
        "xtask: card-tests in the guest, real driver, {variant} card: {ran} run, {skipped} skipped ({:.1} s)",
        run.secs
    );
    if guest.failed > 0 {
        return Err(format!(
            "{} card-tests failed in the guest ({variant} card); log {}",
            guest.failed,
            log.display()
        ));
    }
    if guest.summary() != sim.summary() || guest.skipped != sim.skipped {
        return Err(format!(
            "card-tests ran differently through the real driver ({variant} card): simulated card {:?} (skipped {:?}), in the guest {:?} (skipped {:?}); log {}",
            sim.summary(),
            sim.skipped,
            guest.summary(),
            guest.skipped,
            log.display()
        ));
    }
    Ok(())
}

/// `cargo xtask vm-suite VARIANT [TARGET...]`: the suite (or some of its targets) in a guest
/// only, with the counts printed, for working on what the real driver does differently.
pub fn guest_only(root: &Path, args: &[String]) -> Result<(), String> {
    let variant = match args.first().map(String::as_str) {
        Some("combined") | None => "combined",
        Some("mm") => "mm",
        Some("stream") => "stream",
        Some(v) => return Err(format!("unknown variant `{v}`: mm, stream or combined")),
    };
    let picked: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    let targets: Vec<&str> = if picked.is_empty() {
        SUITE.to_vec()
    } else {
        SUITE
            .iter()
            .copied()
            .filter(|t| picked.contains(t))
            .collect()
    };
    let log = vm_suite::run(root, variant, &targets, SUITE_ALIGNMENT)?;
    let text =
        std::fs::read_to_string(&log).map_err(|e| format!("cannot read {}: {e}", log.display()))?;
    let c = parse_guest(&text);
    let (run, skipped) = c.summary();
    println!("xtask: card-tests in the guest, {variant} card: {run} run, {skipped} skipped, {} failed; skipped {:?}", c.failed, c.skipped);
    if c.failed > 0 {
        return Err(format!("{} failed", c.failed));
    }
    Ok(())
}

/// The skipped tests' names, sorted: tests that run side by side log their skips in any order.
fn read_skips(path: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split('\t').next().map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Runs `cargo test -p card-tests --test <target>` for each target with `env`, printing the
/// output as it comes, and counts. A failing target ends the run with its error. With
/// `trace`, every model writes its output trace under `trace/<target>` (sim-runtime's
/// `SIM_TRACE_DIR`: one folder per target, as two targets may hold tests of one name).
fn run_targets(
    root: &Path,
    targets: &[&str],
    env: &[(&str, String)],
    threads: Option<usize>,
    skip_dir: &Path,
    trace: Option<&Path>,
) -> Result<Counts, String> {
    std::fs::create_dir_all(skip_dir)
        .map_err(|e| format!("cannot make {}: {e}", skip_dir.display()))?;
    let mut counts = Counts::default();
    for target in targets {
        let log = skip_dir.join(format!("{target}.skips"));
        let _ = std::fs::remove_file(&log);
        let mut cmd = crate::build::tests(&[target]);
        if let Some(n) = threads {
            cmd.arg("--").arg(format!("--test-threads={n}"));
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.env(SKIP_LOG_ENV, &log);
        if let Some(dir) = trace {
            cmd.env(TRACE_DIR_ENV, dir.join(target));
        }
        let out = run_teed(root, cmd)?;
        parse_results(&out, &mut counts);
        let skips = read_skips(&log);
        if !skips.is_empty() {
            counts.skipped.insert(target.to_string(), skips);
        }
    }
    if counts.failed > 0 {
        return Err(format!("{} card-tests failed", counts.failed));
    }
    Ok(counts)
}

/// Runs `cmd`, copying its standard output to ours line by line, and returns that output; a
/// non-zero exit is an error (after the output is shown).
fn run_teed(root: &Path, mut cmd: Command) -> Result<String, String> {
    cmd.current_dir(root).stdout(Stdio::piped());
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let mut out = String::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            println!("{line}");
            out.push_str(&line);
            out.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {shown}: {e}"))?;
    if status.success() {
        Ok(out)
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

/// The targets of the suite's runs on the variants. The soak test is left out (it skips
/// without CARD_SOAK either way), and so are the campaign's model-based slices (their few
/// default cases draw the same operations as the model test, which runs on each variant).
fn variant_targets() -> Vec<&'static str> {
    SUITE
        .iter()
        .copied()
        .filter(|t| !["soak", "campaign"].contains(t))
        .collect()
}

/// The suite on one variant of the simulated card (`sim.variant`), skipping what the variant
/// lacks, with `env` besides (`SIM_NETLIST`, say), its skip logs under `skip_dir`, and with
/// `trace` its models' output traces (see [`run_targets`]).
pub(crate) fn on_variant(
    root: &Path,
    variant: &str,
    env: &[(&str, String)],
    skip_dir: &Path,
    trace: Option<&Path>,
) -> Result<Counts, String> {
    let suite_toml = std::fs::read_to_string(root.join("crates/card-tests/suite.toml"))
        .map_err(|e| format!("cannot read crates/card-tests/suite.toml: {e}"))?;
    let started = Instant::now();
    let config = skip_dir.join(format!("suite-{variant}.toml"));
    std::fs::create_dir_all(skip_dir)
        .map_err(|e| format!("cannot make {}: {e}", skip_dir.display()))?;
    std::fs::write(&config, with_variant(&suite_toml, variant)?)
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    let mut all = vec![
        ("XDMA_BACKEND", "sim".to_string()),
        ("XDMA_CONFIG", config.to_string_lossy().into_owned()),
    ];
    all.extend(env.iter().cloned());
    let counts = run_targets(
        root,
        &variant_targets(),
        &all,
        None,
        &skip_dir.join(variant),
        trace,
    )?;
    let (run, skipped) = counts.summary();
    println!(
        "xtask: card-tests on the simulated card's {variant} variant{}: {run} run, {skipped} skipped ({:.1} s)",
        if env.is_empty() { String::new() } else { format!(" ({})", env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")) },
        started.elapsed().as_secs_f64()
    );
    Ok(counts)
}

/// What the suite's runs on this machine found, for the guests' runs to be compared with: on
/// the combined card, and on each variant.
pub(crate) struct HostCounts {
    combined: Counts,
    variants: Vec<(&'static str, Counts)>,
}

/// The suite on the simulated card and over xdma-fuse, counts compared; the suite on each
/// variant of the simulated card; then the broken-card tests on the simulated card.
pub(crate) fn host(root: &Path) -> Result<HostCounts, String> {
    let skip_dir = std::env::temp_dir().join(format!("card-tests-skips-{}", std::process::id()));
    std::fs::create_dir_all(&skip_dir)
        .map_err(|e| format!("cannot make {}: {e}", skip_dir.display()))?;
    let started = Instant::now();
    let sim = run_targets(
        root,
        SUITE,
        &[("XDMA_BACKEND", "sim".into())],
        None,
        &skip_dir.join("sim"),
        None,
    );
    let sim_s = started.elapsed().as_secs_f64();
    let sim = sim?;
    let (run, skipped) = sim.summary();
    println!(
        "xtask: card-tests on the simulated card: {run} run, {skipped} skipped ({sim_s:.1} s)"
    );
    let fuse_counts = if let Some(why) = fuse::unavailable() {
        println!("xtask: SKIPPED card-tests over xdma-fuse: {why}");
        None
    } else {
        let started = Instant::now();
        let config = root.join("crates/card-tests/fuse-server.toml");
        let dir = skip_dir.join("fuse");
        // The mount's server answers with the driver's c2h_timeout of 1 s (its config), so a
        // stream wait of 1 s is the shortest the driver backend takes. One card behind the
        // mount: one test at a time.
        let counts = fuse::with_mount_using(root, Some(&config), |root, device| {
            let env = [
                ("XDMA_BACKEND", "hw".to_string()),
                ("XDMA_DEVICE", device.to_string_lossy().into_owned()),
                ("CARD_TESTS_WAIT_S", "1".to_string()),
            ];
            run_targets(root, SUITE, &env, Some(1), &dir, None)
        });
        let s = started.elapsed().as_secs_f64();
        let counts = counts?;
        let (run, skipped) = counts.summary();
        println!("xtask: card-tests over xdma-fuse: {run} run, {skipped} skipped ({s:.1} s)");
        Some(counts)
    };
    if let Some(f) = &fuse_counts {
        if f.summary() != sim.summary() || f.skipped != sim.skipped {
            return Err(format!(
                "card-tests ran differently on the two backends: simulated card {:?} (skipped {:?}), over xdma-fuse {:?} (skipped {:?})",
                sim.summary(),
                sim.skipped,
                f.summary(),
                f.skipped
            ));
        }
    }
    // The XDMA variants as a board builds them (the runs above are on the combined layout):
    // the suite on each, skipping what the variant lacks.
    let mut variants = Vec::new();
    for variant in VARIANTS {
        variants.push((*variant, on_variant(root, variant, &[], &skip_dir, None)?));
    }
    // The broken cards, and the harness's own unit tests, once.
    let started = Instant::now();
    let broken = run_targets(
        root,
        &["broken"],
        &[("XDMA_BACKEND", "sim".into())],
        None,
        &skip_dir.join("broken"),
        None,
    )?;
    // Built with the workspace's features (the examples only need to build), then run.
    let built = crate::build::test_executables(root, &["--lib", "--examples"])?;
    let lib = built
        .iter()
        .find(|t| t.package == "card-tests" && t.kinds.iter().any(|k| k == "lib"))
        .ok_or("cargo built no test executable of card-tests' library")?;
    crate::run(root, Command::new(&lib.exe))?;
    println!(
        "xtask: card-tests broken cards: {} run, {} skipped ({:.1} s)",
        broken.summary().0,
        broken.summary().1,
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&skip_dir);
    Ok(HostCounts {
        combined: sim,
        variants,
    })
}

/// The suite's runs in guests, through the unmodified driver: on the combined card and on
/// each variant, then the measurement tool and the main job. They need nothing from the runs
/// on this machine but the comparison at the end ([`compare`]), so they run beside them.
pub(crate) struct Guests {
    runs: Vec<GuestRun>,
    tools: Result<(), String>,
}

/// The suite in guests; `None` (saying why) where the guest cannot run at all. A run that
/// fails does not stop the next: each is judged in [`compare`]. A run of this machine's that
/// failed ([`vm::INTERRUPTED`]) stops them.
pub(crate) fn guests(root: &Path) -> Option<Guests> {
    if let Some(why) = vm_suite::unavailable() {
        println!("xtask: SKIPPED card-tests in the guest: {why}");
        return None;
    }
    let variant_targets = variant_targets();
    let mut runs = Vec::new();
    for (variant, targets) in [
        ("combined", SUITE),
        ("mm", &variant_targets[..]),
        ("stream", &variant_targets[..]),
    ] {
        if vm::INTERRUPTED.load(Ordering::SeqCst) {
            break;
        }
        runs.push(in_guest(root, variant, targets));
    }
    // The measurement tool and the main job through the real driver, for function only.
    let tools = if vm::INTERRUPTED.load(Ordering::SeqCst) {
        Err("not run: an earlier step failed".into())
    } else {
        vm_suite::tools(root)
    };
    Some(Guests { runs, tools })
}

/// Judges the guests' runs against the runs on this machine; every failure is reported.
pub(crate) fn compare(host: &HostCounts, guests: Option<&Guests>) -> Result<(), String> {
    let Some(guests) = guests else {
        return Ok(());
    };
    let mut errors = Vec::new();
    for run in &guests.runs {
        let sim = if run.variant == "combined" {
            Some(&host.combined)
        } else {
            host.variants
                .iter()
                .find(|(v, _)| *v == run.variant)
                .map(|(_, c)| c)
        };
        let judged = sim
            .ok_or_else(|| format!("no run on the simulated card's {} variant", run.variant))
            .and_then(|sim| judge_guest(run, sim));
        if let Err(e) = judged {
            errors.push(e);
        }
    }
    if let Err(e) = &guests.tools {
        errors.push(format!(
            "xdma-bench and the acquire example in the guest: {e}"
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// `cargo xtask suite`: the runs on this machine and the guests' runs side by side (the guest
/// runs' card simulates on one core, so the two together keep both cores busy), then the
/// comparison.
pub fn suite(root: &Path) -> Result<(), String> {
    vm::catch_signals();
    let (host, guests) = crate::beside_the_guests(|| guests(root), || host(root));
    let guests = guests?;
    compare(&host?, guests.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_goes_into_the_sim_section() {
        let t = with_variant("# x\n[sim]\nevents = 1\n[hw]\n", "mm").expect("has [sim]");
        assert_eq!(t, "# x\n[sim]\nvariant = \"mm\"\nevents = 1\n[hw]\n");
        assert!(with_variant("[hw]\n", "mm").is_err());
    }

    #[test]
    fn libtest_lines_are_counted_per_target() {
        let out = "\
     Running tests/memory.rs (target/debug/deps/memory-53abb43d973cb69c)
test result: ok. 17 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 18.58s
     Running tests/model.rs (target/debug/deps/model-53e47489b87da26b)
test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.69s
";
        let mut c = Counts::default();
        parse_results(out, &mut c);
        assert_eq!(c.passed.get("memory"), Some(&17));
        assert_eq!(c.passed.get("model"), Some(&1));
        assert_eq!(c.failed, 1);
        c.skipped
            .insert("memory".into(), vec!["a".into(), "b".into()]);
        assert_eq!(c.summary(), (16, 2));
    }

    #[test]
    fn the_guest_log_is_counted_per_target() {
        let log = "\
[xdma-vm]    0.003 info  server: card combined
=== card-tests registers
running 3 tests
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s
SKIP registers\tcaps_of_a_variant\tthe card has no DDR
SKIP registers\tb_case\tthe card has no streams
=== card-tests memory
test result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 9.00s
PASS program card-tests
";
        let c = parse_guest(log);
        assert_eq!(c.passed.get("registers"), Some(&3));
        assert_eq!(c.passed.get("memory"), Some(&4));
        assert_eq!(c.failed, 1);
        assert_eq!(
            c.skipped.get("registers"),
            Some(&vec!["b_case".to_string(), "caps_of_a_variant".to_string()]),
            "sorted, whatever order the tests logged them in"
        );
        assert_eq!(c.summary(), (5, 2));
    }
}
