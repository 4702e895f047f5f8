//! The counterexamples of the card's formal proofs, replayed on the Verilator build of the same
//! proof wrapper with axi-bfm's protocol monitors on every bus a property module watches: one
//! test per replay file of `hdl/formal/replays` (written by `cargo xtask formal` when a proof
//! fails). A seeded bug's replay must name what its proof failed, at the same cycle; a real
//! counterexample's fails until the RTL is fixed, then stays as a regression test. Each writes
//! its waveform to `target/tmp/formal-replay/<proof>.fst`.

use std::path::{Path, PathBuf};

sim_runtime::include_tops!();

fn replays() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../hdl/formal/replays")
}

fn replay_test(proof: &str) {
    let waves = Path::new(env!("CARGO_TARGET_TMPDIR")).join("formal-replay");
    match axi_bfm::replay::replay_file(ALL_TOPS, &replays(), proof, &waves) {
        Ok(run) => println!("{proof}: {run}"),
        Err(e) => panic!("{e}"),
    }
}

include!(concat!(env!("OUT_DIR"), "/formal_replay_tests.rs"));
