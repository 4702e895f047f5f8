//! Project tasks run as `cargo xtask <task>`: setup, lint, test, demo, codegen.
//!
//! Kept to the standard library, `verilator-find`, and `toml`/`serde` for the register table, so
//! that it builds in seconds on a fresh clone, before anything else is compiled.

mod codegen;
#[cfg(test)]
mod fpga_checks;
mod setup;
mod synth;
#[cfg(test)]
mod tidy;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  setup   install the pinned Verilator into .tools/ unless a usable one is already found
  lint    verilator --lint-only -Wall over every RTL file in hdl/
  test    setup, lint, codegen check, synth (both variants), every test of the workspace,
          then the card's RTL tests on the randomized build under several seeds
  demo    setup, then the main job on the simulated card
  codegen write the register files from hdl/regs.toml (--check: fail if any is stale)
  xcheck  the card's RTL tests on the randomized build (CARD_SIM_X) under several seeds
  synth   [mm|stream] Yosys synth_xilinx of card_core per variant: resources and logic depth
          against the budgets for 250/200 MHz on Kintex-7 -2 (fails when a path is too deep)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup::setup(&root()).map(|_| ()),
        Some("lint") => lint(&root()),
        Some("test") => test(&root(), &args[1..]),
        Some("demo") => demo(&root(), &args[1..]),
        Some("codegen") => match args.get(1).map(String::as_str) {
            None => codegen::codegen(&root(), false),
            Some("--check") => codegen::codegen(&root(), true),
            Some(other) => Err(format!("unknown codegen option `{other}`\n{USAGE}")),
        },
        Some("synth") => synth::synth(&root(), &args[1..]),
        Some("xcheck") => xcheck(&root()),
        Some("help" | "--help" | "-h") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: xtask's own manifest folder is one level below it.
pub fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

/// Runs a command in the workspace root, with the found Verilator exported, and fails on a
/// non-zero exit.
fn run(root: &Path, mut cmd: Command) -> Result<(), String> {
    cmd.current_dir(root);
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

/// Every RTL source: one module per file, under `hdl/rtl` (synthesizable) and `hdl/sim`.
pub fn rtl_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for dir in ["hdl/rtl", "hdl/sim"] {
        let entries =
            std::fs::read_dir(root.join(dir)).map_err(|e| format!("cannot read {dir}: {e}"))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "v" || e == "sv") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn lint(root: &Path) -> Result<(), String> {
    let verilator = setup::setup(root)?;
    let files = rtl_files(root)?;
    let mut failed = Vec::new();
    for file in &files {
        let top = file
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("bad file name {}", file.display()))?;
        let mut cmd = verilator.command();
        cmd.current_dir(root)
            .args(["--lint-only", "-Wall", "--no-timing", "--quiet"])
            .args(["-Ihdl/rtl", "-Ihdl/sim", "-Ihdl/include", "hdl/lint.vlt"])
            .args(["--top-module", top])
            .arg(file);
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run verilator: {e}"))?;
        if !out.status.success() || !out.stderr.is_empty() {
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            failed.push(top.to_string());
        }
    }
    if failed.is_empty() {
        println!("lint: {} RTL files clean under -Wall", files.len());
        Ok(())
    } else {
        Err(format!("lint found problems in: {}", failed.join(", ")))
    }
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()))
}

/// Seeds of the randomized build's runs in `cargo xtask test`.
const X_SEEDS: &[u64] = &[1, 2, 3];

/// The RTL tests that run on the randomized build: those of the tops that have a `_x` twin
/// (card_core, sim_top, async_fifo_tb).
const X_TESTS: &[&str] = &[
    "card_top",
    "variants",
    "errors",
    "reset_crossing",
    "async_fifo",
];

fn test(root: &Path, extra: &[String]) -> Result<(), String> {
    setup::setup(root)?;
    lint(root)?;
    codegen::codegen(root, true)?;
    synth::synth(root, &[])?;
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--all-targets"])
        .args(extra);
    run(root, cmd)?;
    // Doc tests are not part of --all-targets; run them on their own.
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--doc"]);
    run(root, cmd)?;
    xcheck(root)
}

/// The card's RTL tests on the randomized build (declaration initialisers removed, every
/// value Verilator leaves open drawn from the seed), once per seed: a register that needs a
/// reset and lacks one makes them fail for some seed.
fn xcheck(root: &Path) -> Result<(), String> {
    for seed in X_SEEDS {
        eprintln!("xcheck: randomized build, seed {seed}");
        let mut cmd = cargo();
        cmd.env("CARD_SIM_X", "1")
            .env("CARD_SIM_SEED", seed.to_string())
            .args(["test", "-p", "rtl-tests"]);
        for t in X_TESTS {
            cmd.args(["--test", t]);
        }
        run(root, cmd)?;
    }
    Ok(())
}

fn demo(root: &Path, extra: &[String]) -> Result<(), String> {
    setup::setup(root)?;
    let mut cmd = cargo();
    cmd.args(["run", "-p", "xdma", "--example", "acquire", "--"])
        .args(extra);
    run(root, cmd)
}
