//! `cargo xtask loop-bench --before REV`: the edit-to-result loop measured side by side on this
//! checkout and on an older revision, on the same machine in one run.
//!
//! Four scenarios, each a one-line edit (or none) followed by the test a developer would run:
//! (a) `hdl/rtl/frame_source.v` -> `cargo test -p rtl-tests --test frame_source`;
//! (b) `hdl/rtl/axi_wr_upsizer.v` -> `cargo test -p rtl-tests --test axi_width_converter`;
//! (c) `hdl/sim/sim_top.v` -> one card-tests test on the simulated card;
//! (d) nothing changed -> the test of (a).
//! The edit adds a register Verilator must keep (`/* verilator public */`) holding a value new
//! to every run, so the generated code changes and no cache can answer from an earlier run;
//! the edit is undone after its scenario. The revision `REV` is checked out as a worktree under
//! `target/loop-bench/before` with a target folder of its own; both trees are warmed (every
//! command run once) before anything is timed, and the scenarios alternate between the trees.
//! Wall time and the CPU time of every process started are reported, in a table on the
//! terminal and in `target/loop-bench/report.md`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::cargo;

struct Scenario {
    name: &'static str,
    edit: Option<&'static str>,
    args: &'static [&'static str],
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "(a) frame_source.v edited -> rtl-tests frame_source",
        edit: Some("hdl/rtl/frame_source.v"),
        args: &["test", "-p", "rtl-tests", "--test", "frame_source"],
    },
    Scenario {
        name: "(b) axi_wr_upsizer.v edited -> rtl-tests axi_width_converter",
        edit: Some("hdl/rtl/axi_wr_upsizer.v"),
        args: &["test", "-p", "rtl-tests", "--test", "axi_width_converter"],
    },
    Scenario {
        name: "(c) sim_top.v edited -> card-tests registers (one test)",
        edit: Some("hdl/sim/sim_top.v"),
        args: &[
            "test",
            "-p",
            "card-tests",
            "--test",
            "registers",
            "--",
            "identifier_and_version_are_the_tables",
        ],
    },
    Scenario {
        name: "(d) nothing changed -> rtl-tests frame_source",
        edit: None,
        args: &["test", "-p", "rtl-tests", "--test", "frame_source"],
    },
];

/// Wall and CPU seconds of one timed command.
#[derive(Debug, Clone, Copy)]
struct Timing {
    wall: f64,
    cpu: f64,
}

pub fn loop_bench(root: &Path, args: &[String]) -> Result<(), String> {
    let mut before_rev = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--before" => before_rev = it.next().cloned(),
            other => {
                return Err(format!(
                "loop-bench: unknown option `{other}`; usage: cargo xtask loop-bench --before REV"
            ))
            }
        }
    }
    let rev = before_rev.ok_or(
        "loop-bench: say which revision to compare with: --before REV (a commit before the change)",
    )?;
    let verilator = verilator_find::find(root).map_err(|e| e.to_string())?;
    let dir = root.join("target/loop-bench");
    let before = dir.join("before");
    prepare_worktree(root, &before, &rev)?;
    let trees = [("before", before.as_path()), ("after", root)];
    eprintln!("loop-bench: warming both trees (every command once, not timed)");
    for (_, tree) in trees {
        for s in SCENARIOS {
            run(tree, s.args, &verilator.root)?;
        }
    }
    let mut rows = Vec::new();
    for s in SCENARIOS {
        let mut pair = Vec::new();
        for (label, tree) in trees {
            eprintln!("loop-bench: {} on {label}", s.name);
            let t = match s.edit {
                Some(file) => with_edit(&tree.join(file), || run(tree, s.args, &verilator.root))?,
                None => run(tree, s.args, &verilator.root)?,
            };
            // The undone edit is built again here, untimed, so that the next scenario starts
            // from a tree whose every test ran once.
            if s.edit.is_some() {
                run(tree, s.args, &verilator.root)?;
            }
            pair.push(t);
        }
        rows.push((s.name, pair[0], pair[1]));
    }
    let mut md = format!(
        "# The edit-to-result loop, before ({rev}) and after (this checkout)\n\n| scenario | before wall (s) | before CPU (s) | after wall (s) | after CPU (s) | wall ratio |\n| --- | ---: | ---: | ---: | ---: | ---: |\n"
    );
    for (name, b, a) in &rows {
        md.push_str(&format!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} |\n",
            b.wall,
            b.cpu,
            a.wall,
            a.cpu,
            a.wall / b.wall
        ));
    }
    print!("{md}");
    let report = dir.join("report.md");
    std::fs::write(&report, &md).map_err(|e| format!("cannot write {}: {e}", report.display()))?;
    println!("loop-bench: written to {}", report.display());
    Ok(())
}

/// A worktree of `rev` at `dir`, made once and moved to `rev` if it is elsewhere.
fn prepare_worktree(root: &Path, dir: &Path, rev: &str) -> Result<(), String> {
    let git = |args: &[&str], cwd: &Path| -> Result<(), String> {
        let status = Command::new("git")
            .args(args)
            .current_dir(cwd)
            .status()
            .map_err(|e| format!("cannot run git: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or_else(|| format!("git {} failed ({status})", args.join(" ")))
    };
    if dir.join(".git").exists() {
        git(&["checkout", "--quiet", "--detach", rev], dir)
    } else {
        let d = dir.to_string_lossy();
        git(&["worktree", "add", "--detach", &d, rev], root)
    }
}

/// Adds a kept register with a value new to this run before the last `endmodule` of `file`,
/// runs `f`, and puts the file back as it was whatever `f` returned.
fn with_edit<T>(file: &Path, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let original = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let at = original
        .rfind("endmodule")
        .ok_or_else(|| format!("{} has no endmodule", file.display()))?;
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or(1);
    let edited = format!(
        "{}reg [31:0] loop_bench_edit /* verilator public */ = 32'h{nonce:08x};\n{}",
        &original[..at],
        &original[at..]
    );
    std::fs::write(file, edited).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let result = f();
    std::fs::write(file, &original)
        .map_err(|e| format!("cannot restore {}: {e}", file.display()))?;
    result
}

/// Runs `cargo ARGS` in `tree` with its own target folder; fails on a failing command.
fn run(tree: &Path, args: &[&str], verilator_root: &PathBuf) -> Result<Timing, String> {
    let cpu0 = children_cpu();
    let start = Instant::now();
    let out = cargo()
        .args(args)
        .current_dir(tree)
        .env_remove("CARGO_TARGET_DIR")
        .env("VERILATOR_ROOT", verilator_root)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let wall = start.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "`cargo {}` failed in {}:\n{}",
            args.join(" "),
            tree.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(Timing {
        wall,
        cpu: children_cpu() - cpu0,
    })
}

/// CPU seconds (user and system) of every child process this one has waited for, from
/// `/proc/self/stat` (in clock ticks of 1/100 s, Linux's USER_HZ).
fn children_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name may hold spaces; the fields after its closing parenthesis are fixed.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // cutime and cstime are fields 16 and 17 of the line, 14 and 15 after the name and state.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(13) + ticks(14)) / 100.0
}
