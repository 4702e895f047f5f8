//! The replay files of a folder as tops of a crate's build script: every crate that replays
//! counterexamples (the card's `rtl-tests`, a user's own crate) calls this one function.

use std::path::Path;

use sim_build::TopSpec;

/// Reads the replay files of `replays` (named relative to `root`, as `cargo xtask formal`
/// writes them), writes each one's shell and the tests that replay them
/// (`formal_replay_tests.rs`, for the crate's test target to `include!`) into `out`, tells
/// cargo to rerun when the folder changes, and returns the tops: each shell around its proof's
/// wrapper, built with `FORMAL` so that the wrapper's promises and the property modules'
/// assertions are compiled in.
pub fn top_specs(replays: &Path, root: &Path, out: &Path) -> Result<Vec<TopSpec>, String> {
    // A replay file added, removed or rewritten changes the tops; the RTL the shells read is
    // not watched, as with every sim-build top (a test rebuilds its top when it changed).
    println!("cargo::rerun-if-changed={}", replays.display());
    let tops = crate::replay_tops(replays, root)
        .map_err(|e| format!("the replays of the formal proofs: {e}"))?;
    let mut specs = Vec::new();
    for t in &tops {
        let shell = out.join(format!("{}.v", t.name));
        sim_build::write_if_changed(&shell, &t.verilog).map_err(|e| e.to_string())?;
        specs.push(
            TopSpec::new(&t.name)
                .file(shell)
                .files(t.files.iter().cloned())
                .define("FORMAL", None),
        );
    }
    sim_build::write_if_changed(
        &out.join("formal_replay_tests.rs"),
        &crate::replay_tests(&tops),
    )
    .map_err(|e| e.to_string())?;
    Ok(specs)
}
