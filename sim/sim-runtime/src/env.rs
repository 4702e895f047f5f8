//! The runtime's environment variables: what each one asks of every model (waveforms and
//! their folder, the RTL's text echoed, the randomized build and its seed, the coverage
//! folder), read in this one place.

use std::path::{Path, PathBuf};

use crate::top::TopDef;

/// Environment variable that turns waveforms on for every model: any value but `0` or empty.
pub const WAVES_ENV: &str = "CARD_WAVES";
/// Environment variable that overrides the waveform folder (default `target/waves`).
pub const WAVES_DIR_ENV: &str = "CARD_WAVES_DIR";
/// Environment variable that copies what the RTL prints to stdout as it prints it (any value
/// but `0` or empty). Without it the text is only captured: [`crate::Model::take_output`]
/// and [`crate::SimError::Rtl`] carry it.
pub const ECHO_ENV: &str = "CARD_RTL_ECHO";
/// Environment variable that selects the randomized build: any value but `0` or empty builds
/// each top that has a randomized twin ([`TopDef::with_randomized`]) as that twin, with random
/// values where Verilator leaves them open. The names keep the `CARD_` prefix that the
/// project's scripts and docs use.
pub const X_ENV: &str = "CARD_SIM_X";
/// Environment variable with the seed of the randomized build's values (default 1).
pub const SEED_ENV: &str = "CARD_SIM_SEED";
/// Environment variable that overrides the folder where a model of a top built with coverage
/// (`sim_build::Build::coverage`) writes what it counted when it is dropped (default
/// `target/coverage/raw`): one file per model, named after its test.
pub const COVERAGE_DIR_ENV: &str = "SIM_COVERAGE_DIR";

/// The top to build and the seed of its random values. A seed given with
/// [`crate::ModelBuilder::random_init`] randomizes the top itself. Otherwise, when `CARD_SIM_X` asks
/// for the randomized build and the top has a twin ([`TopDef::with_randomized`]; card-sim's
/// are the `<name>_x` lines of its `tops.txt`),
/// the twin is built with the seed of `CARD_SIM_SEED` (default 1); else the top itself with no
/// randomization.
pub(crate) fn randomized(top: TopDef, seed: Option<u64>) -> (TopDef, Option<u64>) {
    if seed.is_some() || !env_flag(X_ENV) {
        return (top, seed);
    }
    match top.randomized() {
        Some(twin) => {
            let seed = std::env::var(SEED_ENV)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .filter(|&s| s != 0)
                .unwrap_or(1);
            (twin, Some(seed))
        }
        None => (top, None),
    }
}

pub(crate) fn env_flag(key: &str) -> bool {
    std::env::var(key).is_ok_and(|v| !v.is_empty() && v != "0")
}

pub(crate) fn waves_requested() -> bool {
    env_flag(WAVES_ENV)
}

/// The folder coverage builds write their counts to: [`COVERAGE_DIR_ENV`], else
/// `coverage/raw` in the build's target folder.
pub fn coverage_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(COVERAGE_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    target_dir().join("coverage").join("raw")
}

/// The workspace's target folder, found from where sim-runtime's build put its output.
fn target_dir() -> PathBuf {
    // OUT_DIR is <target>/<profile>/build/sim-runtime-<hash>/out.
    Path::new(env!("SIM_RUNTIME_OUT_DIR"))
        .ancestors()
        .nth(4)
        .map_or_else(|| PathBuf::from("target"), Path::to_path_buf)
}

/// The folder waveforms go to: `CARD_WAVES_DIR`, else `waves/` in the build's target folder.
pub fn waves_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(WAVES_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    target_dir().join("waves")
}
