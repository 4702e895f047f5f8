//! The card on its post-synthesis netlist: `cargo xtask synth` writes each variant's flattened
//! netlist as Verilog (`target/synth/card_core_<variant>.v`, its module `card_core_nl_<variant>`)
//! and a wrapper that presents it as `card_core` with the RTL's parameters
//! (`target/synth/card_core_netlist_<variant>.v`), so that `sim_top` built with the wrapper in
//! place of the RTL's card_core is the card as synthesis built it. card-sim's netlist tops
//! (`sim_top_mm_nl`, `sim_top_stream_nl`) are those builds, with Yosys's own simulation models
//! of the 7-series primitives; `SIM_NETLIST=1` makes every model of `sim_top_mm` or
//! `sim_top_stream` one of them. What synthesis writes is `crate::synth_netlist`'s; this is the
//! task that runs the tests on it.

use std::path::{Path, PathBuf};

use crate::synth_netlist::{netlist_file, wrapper_file};

/// The variants `cargo xtask netlist` takes: the names given, or every one.
fn variants_of(args: &[String]) -> Result<Vec<&'static str>, String> {
    let all: Vec<&'static str> = crate::synth::VARIANTS.iter().map(|v| v.0).collect();
    if args.is_empty() || args.iter().any(|a| a == "all") {
        return Ok(all);
    }
    args.iter()
        .map(|a| {
            all.iter().copied().find(|v| v == a).ok_or_else(|| {
                format!("unknown variant `{a}`: netlist takes mm, stream, all or nothing (all)")
            })
        })
        .collect()
}

/// The newest modification time of the files synthesis reads.
fn newest_rtl(root: &Path) -> Result<std::time::SystemTime, String> {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    for f in crate::synth::file_list(root)? {
        let t = std::fs::metadata(root.join(&f))
            .and_then(|m| m.modified())
            .map_err(|e| format!("cannot read {f}: {e}"))?;
        newest = newest.max(t);
    }
    Ok(newest)
}

/// Whether a variant's netlist, its wrapper and the primitives' models are there and newer
/// than the RTL they were synthesized from.
fn current(root: &Path, variant: &str, rtl: std::time::SystemTime) -> bool {
    [
        netlist_file(root, variant),
        wrapper_file(root, variant),
        root.join("target/synth/cells_sim.v"),
    ]
    .into_iter()
    .chain(crate::synth_netlist::SEEDED.map(|k| crate::synth_netlist::seeded_file(root, k)))
    .all(|f| {
        std::fs::metadata(f)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= rtl)
    })
}

/// `cargo xtask netlist [mm|stream|all]`: synthesizes when the netlists are not current,
/// builds the netlist tops, and runs the card-tests suite on each variant on the RTL and on the
/// netlist (`SIM_NETLIST=1`), with the counts side by side, and the card-level RTL tests that
/// have netlist tops likewise. Every model writes its output trace in both runs, and every
/// test's traces are compared instant by instant ([`Traces`]): a test whose outputs part on
/// the netlist is named with its first differing cycle, and fails the task as a failure on
/// the netlist or counts that differ do.
pub fn netlist(root: &Path, args: &[String]) -> Result<(), String> {
    let variants = variants_of(args)?;
    crate::setup::setup(root)?;
    let rtl = newest_rtl(root)?;
    if !variants.iter().all(|v| current(root, v, rtl)) {
        println!("xtask: netlist: synthesizing (the netlists are older than the RTL or missing)");
        crate::synth::synth(root, &[])?;
    }
    let tops: Vec<String> = variants.iter().map(|v| format!("sim_top_{v}_nl")).collect();
    let names: Vec<&str> = tops.iter().map(String::as_str).collect();
    for v in &variants {
        resources(root, v)?;
    }
    let started = std::time::Instant::now();
    crate::build_tops(root, &names)?;
    println!(
        "xtask: netlist: built {} in {:.0} s",
        names.join(", "),
        started.elapsed().as_secs_f64()
    );
    // The seeded mismatches first: each must differ from its RTL, named, and the card's FIFO
    // must not.
    seeded(root)?;
    // The card-level RTL tests that have netlist tops to run on (FAST_SUBSET's card tests),
    // on the RTL and on the netlists, their counts side by side.
    let mut problems = Vec::new();
    let rtl_tests = card_level(root, &mut problems)?;
    let skip_dir = std::env::temp_dir().join(format!("card-tests-netlist-{}", std::process::id()));
    let mut rows = Vec::new();
    for v in &variants {
        let traces = Traces::new(root, v)?;
        let seed = (PROPTEST_SEED_ENV, PROPTEST_SEED.to_string());
        let on_rtl = crate::suite::on_variant(
            root,
            v,
            std::slice::from_ref(&seed),
            &skip_dir.join("rtl"),
            Some(&traces.rtl()),
        )?;
        // Again, to tell the tests whose runs depend on the threads' scheduling (two host
        // threads at one card) from those the netlist must follow instant by instant.
        crate::suite::on_variant(
            root,
            v,
            std::slice::from_ref(&seed),
            &skip_dir.join("rtl-again"),
            Some(&traces.rtl_again()),
        )?;
        let on_netlist = crate::suite::on_variant(
            root,
            v,
            &[seed, (sim_runtime_netlist_env(), "1".to_string())],
            &skip_dir.join("netlist"),
            Some(&traces.netlist()),
        );
        let (rtl_run, rtl_skipped) = on_rtl.summary();
        let netlist_cell = match &on_netlist {
            Ok(c) => {
                let (run, skipped) = c.summary();
                if c != &on_rtl {
                    problems.push(format!(
                        "{v}: the netlist ran {run} and skipped {skipped}, the RTL ran {rtl_run} and skipped {rtl_skipped}"
                    ));
                }
                format!("{run} run, {skipped} skipped")
            }
            Err(e) => {
                problems.push(format!(
                    "{v}: on the netlist: {e} (the failing tests are named above)"
                ));
                "FAILED".to_string()
            }
        };
        rows.push(format!(
            "  {v:<8} {:<24} {netlist_cell}",
            format!("{rtl_run} run, {rtl_skipped} skipped")
        ));
        traces.judge(root, &format!("card-tests on {v}"), &mut problems)?;
    }
    let _ = std::fs::remove_dir_all(&skip_dir);
    println!(
        "xtask: netlist: card-tests suite per variant\n  {:<8} {:<24} netlist",
        "variant", "RTL"
    );
    for r in &rows {
        println!("{r}");
    }
    let netlist_cell = match &rtl_tests.1 {
        Ok(n) => {
            if *n != rtl_tests.0 {
                problems.push(format!(
                    "rtl-tests variants: {n} passed on the netlists, {} on the RTL",
                    rtl_tests.0
                ));
            }
            format!("{n} passed")
        }
        Err(e) => {
            problems.push(format!("rtl-tests variants on the netlists: {e}"));
            "FAILED".to_string()
        }
    };
    println!(
        "xtask: netlist: card-level RTL tests (rtl-tests variants, both variants' tops)\n  RTL {} passed, netlist {netlist_cell}",
        rtl_tests.0
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the netlist differs from the RTL: {}",
            problems.join("; ")
        ))
    }
}

/// The RTL tests that `cargo xtask test` also runs on both netlists, once `synth` has written
/// them: every variant's registers, refused modes, tied-off ports and own paths (frames looped
/// through the stream variant, captured into the mm variant's DDR), which between them reach
/// every block of card_core, in about two minutes of building and a few seconds of running;
/// and the seeded synthesis/simulation mismatches, which that run must name. The same tests
/// run on the RTL among the workspace's tests.
const FAST_SUBSET: [&str; 2] = [CARD_LEVEL, SEEDED_TESTS];

/// rtl-tests' target of card-level tests with netlist tops (every variant's).
const CARD_LEVEL: &str = "variants";

/// rtl-tests' target of the seeded synthesis/simulation mismatches.
const SEEDED_TESTS: &str = "netlist_seeded";

/// The fast subset on the netlists: the card's RTL tests of [`FAST_SUBSET`] with
/// `SIM_NETLIST=1`, so that their card-level tops are the netlist twins; the card-level ones
/// also on the RTL, their outputs compared at every instant ([`card_level`]).
pub fn fast_subset(root: &Path) -> Result<(), String> {
    let started = std::time::Instant::now();
    let mut problems = Vec::new();
    let (rtl, netlist) = card_level(root, &mut problems)?;
    let netlist = netlist?;
    if rtl != netlist {
        problems.push(format!(
            "rtl-tests variants: {netlist} passed on the netlists, {rtl} on the RTL"
        ));
    }
    if !problems.is_empty() {
        return Err(format!(
            "the netlist differs from the RTL: {}",
            problems.join("; ")
        ));
    }
    seeded(root)?;
    println!(
        "xtask: netlist: rtl-tests {} passed on both variants' netlists ({:.0} s, builds included)",
        FAST_SUBSET.join(", "),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The card-level RTL tests that have netlist tops (rtl-tests `variants`) on the RTL twice and
/// on the netlists, traced, their traces judged into `problems` ([`Traces`]): how many passed
/// on the RTL, and on the netlists or the failure there.
fn card_level(
    root: &Path,
    problems: &mut Vec<String>,
) -> Result<(u32, Result<u32, String>), String> {
    let traces = Traces::new(root, CARD_LEVEL)?;
    let rtl = card_rtl_tests(root, false, &traces.rtl())?;
    // Again, to tell the tests whose runs depend on the threads' scheduling from those the
    // netlist must follow instant by instant.
    card_rtl_tests(root, false, &traces.rtl_again())?;
    let netlist = card_rtl_tests(root, true, &traces.netlist());
    traces.judge(root, "rtl-tests variants", problems)?;
    Ok((rtl, netlist))
}

/// The primitives of a variant's netlist as the netlist tops simulate them (its Verilog file,
/// each instance line counted by its primitive), against the synthesis report's counts of the
/// same design; a difference fails, as the simulation would not be of what synthesis reported.
fn resources(root: &Path, variant: &str) -> Result<(), String> {
    let file = netlist_file(root, variant);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    // Yosys writes an instance as `  KIND #(` or `  KIND name (` at two spaces.
    let kinds = text.lines().filter_map(|l| {
        let rest = l.strip_prefix("  ")?;
        let kind = rest.split_whitespace().next()?;
        (!rest.starts_with(' ') && kind.chars().all(|c| c.is_ascii_alphanumeric())).then_some(kind)
    });
    let simulated = crate::synth::resources_of(kinds);
    let reported = crate::synth::reported_resources(root, variant)?;
    let mut line = format!("xtask: netlist: {variant}: simulated (synth report)");
    let mut differ = Vec::new();
    for key in ["LUT", "FF", "BRAM36", "LUTRAM", "DSP48E1"] {
        let (s, r) = (
            simulated.get(key).copied().unwrap_or(0),
            reported.get(key).copied().unwrap_or(0),
        );
        line.push_str(&format!(" {key} {s} ({r})"));
        if s != r {
            differ.push(format!("{key}: {s} simulated, {r} reported"));
        }
    }
    println!("{line}");
    if differ.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{variant}'s netlist file does not hold what synthesis reported: {}",
            differ.join(", ")
        ))
    }
}

/// rtl-tests' `variants` (every variant's card-level top) on the RTL or, with `netlist`, on
/// the netlists, its models' traces under `trace`: how many passed, or the failure.
fn card_rtl_tests(root: &Path, netlist: bool, trace: &Path) -> Result<u32, String> {
    let mut cmd = crate::cargo();
    cmd.current_dir(root)
        .args(["test", "-p", "rtl-tests", "--test", CARD_LEVEL])
        .env(sim_runtime_netlist_env(), if netlist { "1" } else { "0" })
        .env(crate::suite::TRACE_DIR_ENV, trace.join(CARD_LEVEL))
        .env(PROPTEST_SEED_ENV, PROPTEST_SEED);
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    if !out.status.success() {
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        return Err("rtl-tests variants failed (its output is above)".to_string());
    }
    passed_count(&text).ok_or_else(|| "rtl-tests variants printed no test result".to_string())
}

/// The passed count of libtest's `test result: ok. N passed; ...` line.
fn passed_count(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.strip_prefix("test result: ok. "))
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
}

/// rtl-tests' `netlist_seeded` on the seeded FIFOs' netlists, its names of the mismatches
/// shown.
fn seeded(root: &Path) -> Result<(), String> {
    let mut cmd = crate::cargo();
    cmd.args([
        "test",
        "-p",
        "rtl-tests",
        "--test",
        SEEDED_TESTS,
        "--",
        "--nocapture",
    ])
    .env(sim_runtime_netlist_env(), "1");
    crate::run(root, cmd)
}

/// The output traces of one set of runs (`target/netlist-traces/<set>`): on the RTL, on the
/// RTL again, and on the netlist, one folder per test target below each, one trace per model
/// (sim-runtime's `trace`). A test whose two RTL runs part depends on the threads' scheduling
/// and is judged by its result alone; every other test's netlist run must give the outputs of
/// its RTL run at every instant.
struct Traces {
    dir: PathBuf,
}

impl Traces {
    /// The folders of set `set`, emptied.
    fn new(root: &Path, set: &str) -> Result<Traces, String> {
        let dir = root.join("target/netlist-traces").join(set);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(|e| format!("cannot empty {}: {e}", dir.display()))?;
        }
        Ok(Traces { dir })
    }

    fn rtl(&self) -> PathBuf {
        self.dir.join("rtl")
    }

    fn rtl_again(&self) -> PathBuf {
        self.dir.join("rtl-again")
    }

    fn netlist(&self) -> PathBuf {
        self.dir.join("netlist")
    }

    /// Compares the runs' traces, prints what they show and adds a problem per test whose
    /// netlist run parts from its RTL run, named with its first differing cycle. The traces
    /// are removed when nothing differs and kept, said where, when something does.
    fn judge(&self, root: &Path, what: &str, problems: &mut Vec<String>) -> Result<(), String> {
        let again = compare_runs(root, &self.rtl(), &self.rtl_again())?;
        let racy: Vec<&str> = again
            .iter()
            .filter(|(_, first)| first.is_some())
            .map(|(name, _)| name.as_str())
            .collect();
        let on_netlist = compare_runs(root, &self.rtl(), &self.netlist())?;
        let mut same = 0;
        let mut parted = Vec::new();
        for (name, first) in &on_netlist {
            match first {
                _ if racy.contains(&name.as_str()) => {}
                None => same += 1,
                Some(first) => parted.push(format!("{name}: {first}")),
            }
        }
        let missing = again.len().saturating_sub(on_netlist.len());
        println!(
            "xtask: netlist: {what}: {same} models' outputs (one per card a test opens) the same on the netlist as on the RTL at every instant{}{}",
            if racy.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} judged by their results alone, as two RTL runs of them part (host threads racing at one card): {}",
                    racy.len(),
                    racy.join(", ")
                )
            },
            if missing > 0 {
                format!("; {missing} not run on the netlist")
            } else {
                String::new()
            }
        );
        for p in &parted {
            println!("xtask: netlist: {what}: {p}");
        }
        if parted.is_empty() && missing == 0 {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            println!(
                "xtask: netlist: {what}: the traces are kept in {} (sim-trace-diff compares them: cargo run -p sim-runtime --bin sim-trace-diff -- A B)",
                self.dir.display()
            );
        }
        problems.extend(
            parted
                .into_iter()
                .map(|p| format!("{what}: {p} (the first differing cycle)")),
        );
        if missing > 0 {
            problems.push(format!(
                "{what}: {missing} models traced on the RTL have no trace of a netlist run"
            ));
        }
        Ok(())
    }
}

/// The traces of two runs compared by sim-runtime's `sim-trace-diff`, target folder by target
/// folder (those of `a`; a target `b` lacks is left out, and shows as fewer results): per
/// test, `target::file` and its first difference, if any.
fn compare_runs(root: &Path, a: &Path, b: &Path) -> Result<Vec<(String, Option<String>)>, String> {
    let mut targets: Vec<String> = std::fs::read_dir(a)
        .map_err(|e| format!("cannot read the traces in {}: {e}", a.display()))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    targets.sort();
    let mut found = Vec::new();
    for t in targets {
        if !b.join(&t).is_dir() {
            continue;
        }
        let mut cmd = crate::cargo();
        cmd.current_dir(root)
            .args([
                "run",
                "-q",
                "-p",
                "sim-runtime",
                "--bin",
                "sim-trace-diff",
                "--",
            ])
            .arg(a.join(&t))
            .arg(b.join(&t));
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run sim-trace-diff: {e}"))?;
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(format!(
                "sim-trace-diff could not compare {} and {}: {}",
                a.join(&t).display(),
                b.join(&t).display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        found.extend(
            first_differences(&String::from_utf8_lossy(&out.stdout))
                .into_iter()
                .map(|(name, first)| (format!("{t}::{name}"), first)),
        );
    }
    Ok(found)
}

/// sim-trace-diff's verdict lines (`NAME.trace: first differing cycle: ...` or `NAME.trace:
/// no output differs ...`; indented lines are details): per trace, its first difference.
fn first_differences(text: &str) -> Vec<(String, Option<String>)> {
    text.lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_once(".trace: "))
        .map(|(name, rest)| {
            (
                name.to_string(),
                rest.strip_prefix("first differing cycle: ")
                    .map(str::to_string),
            )
        })
        .collect()
}

/// proptest's variable that fixes the seed of its cases, and the seed every traced run takes:
/// a property test draws new cases at every run otherwise, which no two runs could be compared
/// on instant by instant.
const PROPTEST_SEED_ENV: &str = "PROPTEST_RNG_SEED";
const PROPTEST_SEED: &str = "1";

/// The runtime's variable that selects the netlist twins (sim-runtime's `NETLIST_ENV`; xtask
/// does not depend on the runtime).
fn sim_runtime_netlist_env() -> &'static str {
    "SIM_NETLIST"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The task takes the synthesized variants by name, all of them by default, and refuses
    /// another name with the ones it takes.
    #[test]
    fn a_test_result_line_gives_its_passed_count() {
        let text = "running 4 tests\n\ntest result: ok. 4 passed; 0 failed; 0 ignored\n";
        assert_eq!(passed_count(text), Some(4));
        assert_eq!(
            passed_count("test result: FAILED. 3 passed; 1 failed"),
            None
        );
    }

    /// The comparison's verdict lines give each trace's first difference; details are not
    /// verdicts.
    #[test]
    fn the_trace_verdicts_are_read_per_test() {
        let text = "xdma-sim-a.trace: no output differs up to 10 ps (the runs end at 10 ps and 10 ps)\n\
                    xdma-sim-b.trace: first differing cycle: cycle 4 of clk (16000 ps): x is 0x1 in one, 0x0 in the other\n  \
                    then 1 more outputs part:\n    cycle 5 of clk (20000 ps): y is 0x1 in one, 0x0 in the other\n";
        assert_eq!(
            first_differences(text),
            vec![
                ("xdma-sim-a".to_string(), None),
                (
                    "xdma-sim-b".to_string(),
                    Some(
                        "cycle 4 of clk (16000 ps): x is 0x1 in one, 0x0 in the other".to_string()
                    )
                ),
            ]
        );
    }

    #[test]
    fn the_variants_are_synthesis_own() {
        let all = variants_of(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(all, ["mm", "stream"]);
        assert_eq!(variants_of(&["all".into()]), Ok(all));
        assert_eq!(variants_of(&["stream".into()]), Ok(vec!["stream"]));
        let err = variants_of(&["combined".into()]).expect_err("not synthesized");
        assert!(err.contains("takes mm, stream, all"), "{err}");
    }
}
