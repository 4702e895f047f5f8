//! The runtime's environment variables: what each one asks of every model (waveforms and
//! their folder, the RTL's text echoed, the randomized build and its seed, the coverage
//! folder), read in this one place, the deprecated names they had when the runtime was the
//! card's among them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::top::TopDef;

/// Environment variable that turns waveforms on for every model: any value but `0` or empty.
pub const WAVES_ENV: &str = "SIM_WAVES";
/// Environment variable that overrides the waveform folder (default `target/waves`).
pub const WAVES_DIR_ENV: &str = "SIM_WAVES_DIR";
/// Environment variable that copies what the RTL prints to stdout as it prints it (any value
/// but `0` or empty). Without it the text is only captured: [`crate::Model::take_output`] and
/// [`crate::SimError::Rtl`] carry it.
pub const ECHO_ENV: &str = "SIM_RTL_ECHO";
/// Environment variable that selects the randomized build: any value but `0` or empty builds
/// each top that has a randomized twin ([`TopDef::with_randomized`]) as that twin, with random
/// values where Verilator leaves them open.
pub const X_ENV: &str = "SIM_X";
/// Environment variable that selects the netlist build: any value but `0` or empty builds
/// each top that has a netlist twin ([`TopDef::with_netlist`]) as that twin, the design as
/// synthesis built it. It wins over [`X_ENV`]: a netlist has no declaration initialisers to
/// randomize.
pub const NETLIST_ENV: &str = "SIM_NETLIST";
/// Environment variable that makes every model write an output trace into this folder
/// (`<model name>.trace`, see [`crate::trace`]), for comparing two runs of one test cycle by
/// cycle: `cargo xtask netlist` runs a test that fails on the netlist once on each build with it.
pub const TRACE_DIR_ENV: &str = "SIM_TRACE_DIR";
/// Environment variable with the seed of the randomized build's values (default 1).
pub const SEED_ENV: &str = "SIM_X_SEED";
/// Environment variable that overrides the folder where a model of a top built with coverage
/// (`sim_build::Build::coverage`) writes what it counted when it is dropped (default
/// `target/coverage/raw`): one file per model, named after its test.
pub const COVERAGE_DIR_ENV: &str = "SIM_COVERAGE_DIR";

/// The names the runtime's variables had while it was part of the card's crate, each with the
/// name that replaced it. A deprecated name is still read where its new name is unset, and
/// said to be deprecated on stderr once per process the first time it is found set, so that
/// scripts and shells written for the old names keep working while they move.
pub const DEPRECATED_ENV: [(&str, &str); 5] = [
    ("CARD_WAVES", WAVES_ENV),
    ("CARD_WAVES_DIR", WAVES_DIR_ENV),
    ("CARD_RTL_ECHO", ECHO_ENV),
    ("CARD_SIM_X", X_ENV),
    ("CARD_SIM_SEED", SEED_ENV),
];

/// What the environment gives for one of the runtime's variables.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    /// The value: the variable's own, else its deprecated name's.
    value: Option<String>,
    /// The deprecated name, when it is set (whether or not its value was taken).
    deprecated: Option<&'static str>,
}

/// Looks `name` up through `get` (the process's environment, or a test's): its own value if
/// set, even empty, else its deprecated name's ([`DEPRECATED_ENV`]).
fn lookup(name: &str, get: impl Fn(&str) -> Option<String>) -> Found {
    let old = DEPRECATED_ENV
        .iter()
        .find(|(_, new)| *new == name)
        .map(|(old, _)| *old);
    let old_value = old.and_then(&get);
    let deprecated = old.filter(|_| old_value.is_some());
    Found {
        value: get(name).or(old_value),
        deprecated,
    }
}

/// The deprecated names said so far in this process.
static WARNED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// True the first time `old` is given for `warned`, false after: a warning is said once.
fn first_time(warned: &Mutex<Vec<&'static str>>, old: &'static str) -> bool {
    let mut said = warned
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if said.contains(&old) {
        return false;
    }
    said.push(old);
    true
}

/// The warning for deprecated name `old`, replaced by `new`.
fn deprecation(old: &str, new: &str) -> String {
    format!(
        "sim-runtime: warning: the environment variable {old} is deprecated and will be removed; set {new} instead (its value is read only while {new} is unset)"
    )
}

/// The value of the runtime's variable `name` in the process's environment, or of its
/// deprecated name while `name` is unset; a deprecated name found set is said once, on
/// stderr, as the runtime says what it cannot raise elsewhere.
pub(crate) fn var(name: &str) -> Option<String> {
    let found = lookup(name, |k| std::env::var(k).ok());
    if let Some(old) = found.deprecated {
        if first_time(&WARNED, old) {
            eprintln!("{}", deprecation(old, name));
        }
    }
    found.value
}

/// Whether the variable `name` is on: set to anything but `0` or empty.
pub(crate) fn env_flag(name: &str) -> bool {
    var(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether the randomized build is asked for ([`X_ENV`], or its deprecated name).
pub fn randomized_build_requested() -> bool {
    env_flag(X_ENV)
}

/// Whether the netlist build is asked for ([`NETLIST_ENV`]).
pub fn netlist_build_requested() -> bool {
    env_flag(NETLIST_ENV)
}

/// The folder [`TRACE_DIR_ENV`] names, when it is set and not empty.
pub(crate) fn trace_dir() -> Option<PathBuf> {
    std::env::var_os(TRACE_DIR_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

pub(crate) fn waves_requested() -> bool {
    env_flag(WAVES_ENV)
}

/// The top to build and the seed of its random values. When [`NETLIST_ENV`] asks for the
/// netlist build and the top has a netlist twin, the twin. Else a seed given with
/// [`crate::ModelBuilder::random_init`] randomizes the top itself. Otherwise, when [`X_ENV`]
/// asks for the randomized build and the top has a twin ([`TopDef::with_randomized`];
/// card-sim's are the `<name>_x` lines of its `tops.txt`), the twin is built with the seed of
/// [`SEED_ENV`] (default 1); else the top itself with no randomization.
pub(crate) fn randomized(top: TopDef, seed: Option<u64>) -> (TopDef, Option<u64>) {
    if let Some(twin) = top.netlist().filter(|_| netlist_build_requested()) {
        return (twin, seed);
    }
    if seed.is_some() || !randomized_build_requested() {
        return (top, seed);
    }
    match top.randomized() {
        Some(twin) => {
            let seed = var(SEED_ENV)
                .and_then(|s| s.parse::<u64>().ok())
                .filter(|&s| s != 0)
                .unwrap_or(1);
            (twin, Some(seed))
        }
        None => (top, None),
    }
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

/// The folder waveforms go to: [`WAVES_DIR_ENV`] (or its deprecated name), else `waves/` in
/// the build's target folder.
pub fn waves_dir() -> PathBuf {
    if let Some(dir) = var(WAVES_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    target_dir().join("waves")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment of the pairs given.
    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn the_new_name_is_read() {
        let found = lookup(WAVES_ENV, env_of(&[("SIM_WAVES", "1")]));
        assert_eq!(found.value.as_deref(), Some("1"));
        assert_eq!(found.deprecated, None);
    }

    #[test]
    fn the_deprecated_name_is_read_while_the_new_one_is_unset() {
        for (old, new) in DEPRECATED_ENV {
            let get = |k: &str| (k == old).then(|| "7".to_string());
            let found = lookup(new, get);
            assert_eq!(
                found.value.as_deref(),
                Some("7"),
                "{old} stands in for {new}"
            );
            assert_eq!(
                found.deprecated,
                Some(old),
                "{old} is said to be deprecated"
            );
        }
    }

    #[test]
    fn the_new_name_wins_and_the_old_one_is_still_said() {
        let found = lookup(X_ENV, env_of(&[("SIM_X", "0"), ("CARD_SIM_X", "1")]));
        assert_eq!(found.value.as_deref(), Some("0"), "SIM_X=0 turns it off");
        assert_eq!(found.deprecated, Some("CARD_SIM_X"));
        let found = lookup(
            SEED_ENV,
            env_of(&[("SIM_X_SEED", ""), ("CARD_SIM_SEED", "5")]),
        );
        assert_eq!(found.value.as_deref(), Some(""), "set though empty is set");
    }

    #[test]
    fn nothing_set_is_nothing_and_a_name_without_an_old_one_has_no_alias() {
        assert_eq!(
            lookup(WAVES_ENV, env_of(&[])),
            Found {
                value: None,
                deprecated: None
            }
        );
        let found = lookup(COVERAGE_DIR_ENV, env_of(&[("CARD_COVERAGE_DIR", "/x")]));
        assert_eq!(found.value, None);
    }

    #[test]
    fn every_deprecated_name_is_the_cards_and_its_new_one_the_runtimes() {
        for (old, new) in DEPRECATED_ENV {
            assert!(old.starts_with("CARD_"), "{old}");
            assert!(new.starts_with("SIM_"), "{new}");
        }
    }

    #[test]
    fn a_deprecated_name_is_warned_about_once() {
        let warned = Mutex::new(Vec::new());
        assert!(first_time(&warned, "CARD_WAVES"));
        assert!(!first_time(&warned, "CARD_WAVES"), "said once");
        assert!(first_time(&warned, "CARD_SIM_X"), "each name once");
        let text = deprecation("CARD_WAVES", WAVES_ENV);
        assert!(
            text.contains("CARD_WAVES is deprecated") && text.contains("set SIM_WAVES instead"),
            "{text}"
        );
    }
}
