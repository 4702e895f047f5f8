//! The card on its post-synthesis netlist: `cargo xtask synth` writes each variant's flattened
//! netlist as Verilog (`target/synth/card_core_<variant>.v`, its module `card_core_nl_<variant>`)
//! and a wrapper that presents it as `card_core` with the RTL's parameters
//! (`target/synth/card_core_netlist_<variant>.v`), so that `sim_top` built with the wrapper in
//! place of the RTL's card_core is the card as synthesis built it. card-sim's netlist tops
//! (`sim_top_mm_nl`, `sim_top_stream_nl`) are those builds, with Yosys's own simulation models
//! of the 7-series primitives; `SIM_NETLIST=1` makes every model of `sim_top_mm` or
//! `sim_top_stream` one of them. What synthesis writes is `crate::synth_netlist`'s; this is the
//! task that runs the tests on it.

use std::path::Path;

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
/// builds the netlist tops, and runs the card-tests suite on each variant twice, on the RTL
/// and on the netlist (`SIM_NETLIST=1`), with the counts side by side. A failure on the
/// netlist, or counts that differ, fails the task.
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
    let rtl_tests = (card_rtl_tests(root, false)?, card_rtl_tests(root, true));
    let skip_dir = std::env::temp_dir().join(format!("card-tests-netlist-{}", std::process::id()));
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for v in &variants {
        let on_rtl = crate::suite::on_variant(root, v, &[], &skip_dir.join("rtl"))?;
        let on_netlist = crate::suite::on_variant(
            root,
            v,
            &[(sim_runtime_netlist_env(), "1".to_string())],
            &skip_dir.join("netlist"),
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
const FAST_SUBSET: &[&str] = &["variants", "netlist_seeded"];

/// The fast subset on the netlists: the card's RTL tests of [`FAST_SUBSET`] with
/// `SIM_NETLIST=1`, so that their card-level tops are the netlist twins.
pub fn fast_subset(root: &Path) -> Result<(), String> {
    let started = std::time::Instant::now();
    let mut cmd = crate::cargo();
    cmd.args(["test", "-p", "rtl-tests"]);
    for t in FAST_SUBSET {
        cmd.args(["--test", t]);
    }
    cmd.env(sim_runtime_netlist_env(), "1");
    crate::run(root, cmd)?;
    println!(
        "xtask: netlist: rtl-tests {} passed on both variants' netlists ({:.0} s, builds included)",
        FAST_SUBSET.join(", "),
        started.elapsed().as_secs_f64()
    );
    Ok(())
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
/// the netlists: how many passed, or the failure.
fn card_rtl_tests(root: &Path, netlist: bool) -> Result<u32, String> {
    let mut cmd = crate::cargo();
    cmd.current_dir(root)
        .args(["test", "-p", "rtl-tests", "--test", "variants"])
        .env(sim_runtime_netlist_env(), if netlist { "1" } else { "0" });
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
        "netlist_seeded",
        "--",
        "--nocapture",
    ])
    .env(sim_runtime_netlist_env(), "1");
    crate::run(root, cmd)
}

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
