//! The cargo builds of xtask's steps, all resolved as one.
//!
//! Every test run and every program a step builds resolves features for the whole workspace,
//! dev-dependencies included, as the test step's `cargo test --workspace --all-targets` does.
//! A `-p` build resolves them anew for its one package, and on this workspace a different set
//! rebuilds the chain down to the verilated card: in a CI run on a two-core machine that cost
//! 80-90 s each for the fuse server, the randomized RTL tests and the suite's binaries, and
//! 40 s for the device process, all of it work the test step had already done.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where cargo puts the workspace's builds.
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// `cargo test --workspace --test T ...`: the named integration-test targets, wherever they
/// are. A target name names one target in the workspace (see the test below), so this runs
/// what `-p PACKAGE --test T` would, with the workspace's features.
pub fn tests(targets: &[&str]) -> Command {
    let mut cmd = crate::cargo();
    cmd.args(["test", "--workspace"]);
    for t in targets {
        cmd.args(["--test", t]);
    }
    cmd
}

/// `cargo nextest archive --workspace --test T ... --archive-file FILE`: the named test
/// targets built as `tests` builds them (workspace features) and packed with what they need
/// to run on another machine.
pub fn nextest_archive(targets: &[&str], file: &Path) -> Command {
    let mut cmd = crate::cargo();
    cmd.args(["nextest", "archive", "--workspace"]);
    for t in targets {
        cmd.args(["--test", t]);
    }
    cmd.arg("--archive-file").arg(file);
    cmd
}

/// `cargo nextest list` of the tests that `filter` selects, as JSON: from `archive` (run from
/// the workspace root it is remapped to), or built from the workspace's named test targets.
pub fn nextest_list(targets: &[&str], archive: Option<&Path>, filter: &str) -> Command {
    let mut cmd = crate::cargo();
    cmd.args(["nextest", "list", "--message-format", "json"]);
    match archive {
        Some(a) => {
            cmd.arg("--archive-file")
                .arg(a)
                .args(["--workspace-remap", "."]);
        }
        None => {
            cmd.arg("--workspace");
            for t in targets {
                cmd.args(["--test", t]);
            }
        }
    }
    cmd.args(["-E", filter]);
    cmd
}

/// `cargo nextest run` from `archive` with the workspace at `root`, the nextest configuration
/// `config` and its profile `profile`; the caller adds the partition and the filter.
pub fn nextest_run_archive(archive: &Path, root: &Path, config: &Path, profile: &str) -> Command {
    let mut cmd = crate::cargo();
    cmd.args(["nextest", "run", "--archive-file"])
        .arg(archive)
        .arg("--workspace-remap")
        .arg(root)
        .arg("--config-file")
        .arg(config)
        .args(["--profile", profile]);
    cmd
}

/// Builds every target of the workspace as the test step resolves them (after that step, a
/// matter of seconds) and returns the folder of the programs and examples (`target/debug`).
pub fn programs(root: &Path) -> Result<PathBuf, String> {
    let mut cmd = crate::cargo();
    cmd.args(["build", "-q", "--workspace", "--all-targets"]);
    crate::run(root, cmd)?;
    Ok(target_dir(root).join("debug"))
}

/// A program in `dir` (from [`programs`]), or an error that says cargo did not make it.
pub fn program(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let exe = dir.join(name);
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!("cargo built no {}", exe.display()))
    }
}

/// One test executable that `cargo test --no-run` made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestExe {
    /// The package's name.
    pub package: String,
    /// The target's name (the file name of an integration test, the crate name of a lib).
    pub target: String,
    /// The target's kinds as cargo states them (`test`, `lib`, ...).
    pub kinds: Vec<String>,
    /// The executable.
    pub exe: PathBuf,
}

/// Builds with `cargo test --workspace --no-run` and `args` (target filters), and returns the
/// test executables it made.
pub fn test_executables(root: &Path, args: &[&str]) -> Result<Vec<TestExe>, String> {
    let mut cmd = crate::cargo();
    cmd.current_dir(root)
        .args(["test", "--workspace", "--no-run", "--message-format=json"])
        .args(args);
    Ok(parse_test_executables(&String::from_utf8_lossy(
        &crate::stdout_of(cmd)?,
    )))
}

/// The test executables in cargo's JSON messages.
fn parse_test_executables(text: &str) -> Vec<TestExe> {
    let mut found = Vec::new();
    for line in text.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || msg["profile"]["test"] != true {
            continue;
        }
        let (Some(exe), Some(target)) =
            (msg["executable"].as_str(), msg["target"]["name"].as_str())
        else {
            continue;
        };
        let package = package_name(msg["package_id"].as_str().unwrap_or_default());
        let kinds = msg["target"]["kind"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        found.push(TestExe {
            package: package.to_string(),
            target: target.to_string(),
            kinds,
            exe: PathBuf::from(exe),
        });
    }
    found
}

/// The package's name in a cargo package id: `path+file:///.../dir#version` (the folder is
/// the name), `path+file:///...#name@version`, or the older `name version (source)`.
fn package_name(id: &str) -> &str {
    match id.rsplit_once('#') {
        Some((url, fragment)) => match fragment.split_once('@') {
            Some((name, _)) => name,
            None => url.rsplit('/').next().unwrap_or(url),
        },
        None => id.split(' ').next().unwrap_or(id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// `tests` names targets without their package: that is only the same run when no two
    /// packages have an integration test of the same name.
    #[test]
    fn integration_test_names_are_unique_in_the_workspace() {
        let root = crate::root();
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for group in ["crates", "sim"] {
            let Ok(entries) = std::fs::read_dir(root.join(group)) else {
                continue;
            };
            for crate_dir in entries.flatten() {
                let Ok(tests) = std::fs::read_dir(crate_dir.path().join("tests")) else {
                    continue;
                };
                for t in tests.flatten() {
                    let p = t.path();
                    let name = if p.extension().is_some_and(|e| e == "rs") {
                        p.file_stem().map(|s| s.to_string_lossy().into_owned())
                    } else if p.join("main.rs").is_file() {
                        p.file_name().map(|s| s.to_string_lossy().into_owned())
                    } else {
                        None
                    };
                    if let Some(name) = name {
                        seen.entry(name)
                            .or_default()
                            .push(crate_dir.path().display().to_string());
                    }
                }
            }
        }
        assert!(seen.len() > 20, "found only {} test targets", seen.len());
        let twice: Vec<_> = seen.iter().filter(|(_, v)| v.len() > 1).collect();
        assert!(twice.is_empty(), "test targets named twice: {twice:?}");
    }

    #[test]
    fn the_executables_are_read_from_cargo_messages() {
        let text = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/card-tests#0.1.0","target":{"kind":["lib"],"name":"card_tests"},"profile":{"test":true},"executable":"/w/target/debug/deps/card_tests-1"}
{"reason":"compiler-artifact","package_id":"path+file:///w/crates/xdma-hw#xdma-hw@0.1.0","target":{"kind":["test"],"name":"over_fuse"},"profile":{"test":true},"executable":"/w/target/debug/deps/over_fuse-2"}
{"reason":"compiler-artifact","package_id":"serde 1.0.0 (registry+https://github.com/rust-lang/crates.io-index)","target":{"kind":["lib"],"name":"serde"},"profile":{"test":false},"executable":null}
{"reason":"build-finished","success":true}
not json"#;
        let found = parse_test_executables(text);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].package, "card-tests");
        assert_eq!(found[0].kinds, vec!["lib".to_string()]);
        assert_eq!(found[1].package, "xdma-hw");
        assert_eq!(found[1].target, "over_fuse");
        assert_eq!(
            found[1].exe,
            PathBuf::from("/w/target/debug/deps/over_fuse-2")
        );
    }
}
