//! The counterexamples of this crate's formal proofs (`formal/proofs.toml`, run by `cargo xtask
//! formal --crate own-rtl-example`), replayed on the Verilator build of the same proof wrapper
//! with axi-bfm's protocol monitors on every bus a property module watches: one test per replay
//! file of `formal/replays`. A seeded bug's replay must name what its proof failed, at the same
//! cycle. Each writes its waveform to `target/tmp/formal-replay/<proof>.fst`.

use std::path::Path;

fn replay_test(proof: &str) {
    let replays = Path::new(env!("CARGO_MANIFEST_DIR")).join("formal/replays");
    let waves = Path::new(env!("CARGO_TARGET_TMPDIR")).join("formal-replay");
    match axi_bfm::replay::replay_file(own_rtl_example::ALL_TOPS, &replays, proof, &waves) {
        Ok(run) => println!("{proof}: {run}"),
        Err(e) => panic!("{e}"),
    }
}

include!(concat!(env!("OUT_DIR"), "/formal_replay_tests.rs"));
