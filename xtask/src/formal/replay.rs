//! A failed proof's counterexample written as a replay file (the `formal-replay` crate's
//! format) in its list's replay folder (`hdl/formal/replays/` for the card's), so that a
//! cargo test (rtl-tests', or the crate's own) drives it into the Verilator build of the same
//! wrapper with the protocol monitors on.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use std::collections::BTreeMap;

use formal_replay::{Replay, Source};

/// How long Yosys may take to write the netlist a replay's shape is read from.
const NETLIST_LIMIT: Duration = Duration::from_secs(300);

/// The netlist's file name, in the proof task's `src` folder (where sby copied the proof's
/// files, and the only folder the WebAssembly Yosys is sure to reach).
const NETLIST: &str = "replay_design.json";

/// The proof whose counterexample is written: what the replay file records of it.
pub(super) struct Proven<'a> {
    /// The proof's name, which the replay file is named after.
    pub name: &'a str,
    /// The module under proof.
    pub module: &'a str,
    /// The wrapper's parameters the proof set.
    pub params: &'a BTreeMap<String, String>,
    /// The Verilog files the proof read.
    pub files: &'a [PathBuf],
    /// The Yosys script that read them and elaborated the wrapper, as the proof did.
    pub script: &'a [String],
    /// Whether it is a seeded bug's proof.
    pub seeded: bool,
    /// The Yosys launcher.
    pub yosys: &'a Path,
    /// The folder of its list's replay files.
    pub replays: &'a Path,
    /// The command that runs the proof again, writing its replay file.
    pub rerun: String,
}

/// What a failed proof left: its counterexample trace, the assertions that failed and the
/// step at which they did.
pub(super) struct Found<'a> {
    pub vcd: &'a Path,
    pub failed: &'a [String],
    pub step: usize,
}

/// Writes the replay of proof `p`'s counterexample (its task folder is `task`) to
/// `<replays>/<proof>.json` and returns that path. With `ci` the source tree is left
/// alone, since the tests that read it may be building beside the proofs: a seeded bug's
/// committed replay must already be this counterexample (a different one is refused, so that
/// its test is known to replay what the proof found), and any other proof's replay goes into
/// its task folder.
pub(super) fn write(
    root: &Path,
    p: &Proven<'_>,
    task: &Path,
    found: &Found<'_>,
    ci: bool,
) -> Result<PathBuf, String> {
    let src = task.join("src");
    let mut cmd = Command::new(p.yosys);
    cmd.current_dir(&src)
        .arg("-q")
        .arg("-p")
        .arg(format!("{}; write_json {NETLIST}", p.script.join("; ")))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", p.yosys.display()))?;
    match crate::wait_or_kill(&mut child, NETLIST_LIMIT) {
        Some(status) if status.success() => {}
        Some(status) => {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return Err(format!(
                "Yosys could not write the netlist in {} ({status}): {}",
                src.display(),
                err.trim()
            ));
        }
        None => {
            return Err(format!(
                "Yosys did not write the netlist within {} s",
                NETLIST_LIMIT.as_secs()
            ))
        }
    }
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let design = read(&src.join(NETLIST))?;
    let trace = read(found.vcd)?;
    let files = p
        .files
        .iter()
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect();
    let source = Source {
        proof: p.name.to_string(),
        module: p.module.to_string(),
        params: p.params.clone(),
        files,
        seeded: p.seeded,
        failed: found.failed.to_vec(),
        step: found.step,
    };
    let replay = formal_replay::from_trace(source, &design, &trace).map_err(|e| e.to_string())?;
    let file = format!("{}.json", p.name);
    let path = p.replays.join(&file);
    if ci && !p.seeded {
        let path = task.join(&file);
        replay.save(&path).map_err(|e| e.to_string())?;
        return Ok(path);
    }
    // A committed file that no longer reads (an older format) is one to write again.
    if Replay::load(&path).is_ok_and(|committed| committed == replay) {
        return Ok(path);
    }
    if ci {
        return Err(format!(
            "{} is not this proof's counterexample: run `{}` and commit the file it writes",
            path.strip_prefix(root).unwrap_or(&path).display(),
            p.rerun
        ));
    }
    replay.save(&path).map_err(|e| e.to_string())?;
    Ok(path)
}
