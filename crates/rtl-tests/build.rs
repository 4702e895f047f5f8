//! Describes a top per replay file of the card's formal proofs (`hdl/formal/replays`, written
//! by `cargo xtask formal` when a proof fails): the proof's wrapper, built with `FORMAL`, in
//! the shell that replays the counterexample, and one test per replay file for
//! `tests/formal_replay.rs` to include. The card's own tops are card-sim's. Like every top of
//! sim-build, each is verilated and compiled the first time its test makes a model of it.

use std::path::{Path, PathBuf};

use sim_build::{cargo_error_lines, Build};

fn main() {
    if let Err(e) = run() {
        for line in cargo_error_lines(&e) {
            println!("{line}");
        }
    }
}

fn run() -> Result<(), String> {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
    // The workspace: this crate lives in crates/rtl-tests.
    let root = manifest
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{} is not two folders deep", manifest.display()))?;
    let out = PathBuf::from(env("OUT_DIR")?);
    let tops = formal_replay::build::top_specs(&root.join("hdl/formal/replays"), &root, &out)?;
    Build::new()
        .tops(tops)
        .compile()
        .map(drop)
        .map_err(|e| e.to_string())
}

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|e| format!("{name}: {e} (cargo sets it for a build script)"))
}
