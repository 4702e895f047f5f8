//! Project tasks run as `cargo xtask <task>`: setup, lint, test, demo, codegen, vm.
//!
//! Kept to the standard library, `verilator-find`, and `toml`/`serde` for the register table,
//! so that it builds before anything else is compiled. Like every member it also depends on
//! `workspace-hack`, which makes a fresh clone's first build of it longer (it compiles the
//! third-party crates whose features the workspace unifies) but lets `cargo xtask` and
//! `cargo test -p xtask` reuse what the workspace's build compiled, and the reverse.

mod build;
mod campaign;
mod codegen;
mod coverage;
mod debian;
mod demo;
mod formal;
#[cfg(test)]
mod fpga_checks;
mod fuse;
mod loop_bench;
mod netlist;
mod output;
mod rtl_dirs;
mod rule_table;
mod setup;
mod suite;
mod synth;
mod synth_netlist;
#[cfg(test)]
mod tidy;
mod vm;
mod vm_suite;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::Ordering;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  setup   install the pinned Verilator into .tools/ unless a usable one is already found
  lint    verilator --lint-only -Wall over every RTL file in hdl/
  test    setup, lint, codegen check, the CI proofs of `formal --ci` (beside the next steps),
          cargo fmt --check, clippy -D warnings, synth (both variants), every test of the workspace, the card's RTL tests on the randomized build
          under several seeds, the driver backend's tests over an xdma-fuse mount of the
          simulated card, then the card-tests suite on the simulated card and over the mount
          (the same counts of tests run and skipped in both), then `vm --variant all --mode
          all` (skipped, saying why, where QEMU cannot run at all)
  suite   the card-tests step of `test` alone: the suite on the simulated card and over an
          xdma-fuse mount, counts compared, then the broken-card tests
  demo    setup, the main job on the simulated card, then xdma-bench sweep, fit and compare
          with the reference board (tables and plots under target/demo/)
  codegen write the register files from hdl/regs.toml (--check: fail if any is stale)
  xcheck  the card's RTL tests on the randomized build (SIM_X) under several seeds
  vm      the unmodified XDMA driver and vendor tools in a QEMU guest whose PCIe function is
          the simulated card: builds the guest, boots it per variant and interrupt mode, runs the
          check list (`cargo xtask vm --help` for the options)
  coverage  [--check] [--write-floor] [--no-run] [--crate NAME|PATH] the RTL tests and the card-tests suite on coverage
          builds of the card's tops: lcov, HTML and a summary per RTL module under
          target/coverage/ (--check: fail below the floors in hdl/coverage.toml)
  campaign --shards N [--which soak,fuzz,what-if] [--cases K] [--top SIM_TOP] soak phases,
          fuzz seeds and what-if grid points split by cargo-nextest into N partitions from one
          archive, run side by side, merged into target/campaign/campaign.{md,json} with each
          failure's replay command (`cargo xtask campaign --help` for the CI steps)
  formal  [--module M] [--depth N] [--json] [--ci] formal proofs of the AXI-facing RTL modules
          (hdl/formal/proofs.toml) with SymbiYosys and Yices, installed into .tools/ on first
          use: a table of module, properties, mode, depth, result, covers and time
  synth   [mm|stream] Yosys synth_xilinx of card_core per variant: resources and logic depth
          against the budgets for 250/200 MHz on Kintex-7 -2 (fails when a path is too deep);
          also writes each variant's netlist as Verilog under target/synth/
  netlist [mm|stream|all] the card-tests suite on each variant's post-synthesis netlist
          (sim_top_<variant>_nl, SIM_NETLIST=1) and on its RTL, counts side by side;
          synthesizes first when the netlists are older than the RTL
  tops    build every top of card-sim and own-rtl-example ahead into the cache (for CI or
          offline use; tests otherwise build the tops they open on first use)
  loop-bench --before REV  the edit-to-result loop (an RTL line edited, then one test) timed
          side by side on this checkout and on REV, wall and CPU seconds, in
          target/loop-bench/report.md
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup::setup(&root()).map(|_| ()),
        Some("lint") => lint(&root()),
        Some("test") => test(&root(), &args[1..]),
        Some("suite") => suite::suite(&root()),
        Some("demo") => demo::demo(&root(), &args[1..]),
        Some("codegen") => match args.get(1).map(String::as_str) {
            None => codegen::codegen(&root(), false),
            Some("--check") => codegen::codegen(&root(), true),
            Some(other) => Err(format!("unknown codegen option `{other}`\n{USAGE}")),
        },
        Some("synth") => synth::synth(&root(), &args[1..]),
        Some("formal") => formal::formal(&root(), &args[1..]),
        Some("netlist") => netlist::netlist(&root(), &args[1..]),
        Some("coverage") => coverage::coverage(&root(), &args[1..]),
        Some("campaign") => campaign::campaign(&root(), &args[1..]),
        Some("xcheck") => xcheck(&root()),
        Some("tops") => tops(&root()),
        Some("loop-bench") => loop_bench::loop_bench(&root(), &args[1..]),
        // It prints its own results and errors, the count of checks last.
        Some("vm") => return vm::vm(&root(), &args[1..]),
        Some("vm-suite") => suite::guest_only(&root(), &args[1..]),
        Some("vm-tools") => vm_suite::tools(&root()),
        Some("help" | "--help" | "-h") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root, found at run time from the current folder (`cargo xtask` runs from
/// anywhere inside the workspace); the folder xtask was compiled in is only the fallback.
pub fn root() -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|d| rtl_dirs::workspace_root_from(&d))
        .unwrap_or_else(|| {
            let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
            manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
        })
}

/// Runs a command in the workspace root, with the found Verilator exported, and fails on a
/// non-zero exit.
pub fn run(root: &Path, mut cmd: Command) -> Result<(), String> {
    cmd.current_dir(root);
    let shown = format!("{cmd:?}");
    let started = std::time::Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    // Each step's wall time, so that a run's time can be accounted for from its log.
    eprintln!(
        "xtask: {:.1} s for {shown}",
        started.elapsed().as_secs_f64()
    );
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

/// Runs `cmd` to its end and returns what it printed on standard output, or an error that
/// shows the command and what it printed on standard error.
pub fn stdout_of(mut cmd: Command) -> Result<Vec<u8>, String> {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{shown} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out.stdout)
}

/// The project's own RTL sources (the `own` folders of `rtl.toml`): one module per file.
pub fn rtl_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let dirs = rtl_dirs::RtlDirs::load(root)?;
    let mut files = Vec::new();
    for dir in &dirs.own {
        let d = root.join(dir);
        if !d.is_dir() {
            return Err(format!(
                "rtl.toml names {}, which is not a folder",
                dir.display()
            ));
        }
        files.extend(rtl_dirs::rtl_files_under(&d));
    }
    files.sort();
    Ok(files)
}

/// Verilator's flags for a lint, the project's own RTL and third-party code alike: every
/// warning on, no timing constructs.
const LINT_FLAGS: [&str; 4] = ["--lint-only", "-Wall", "--no-timing", "--quiet"];

fn lint(root: &Path) -> Result<(), String> {
    let verilator = setup::setup(root)?;
    let dirs = rtl_dirs::RtlDirs::load(root)?;
    let files = rtl_files(root)?;
    let mut failed = Vec::new();
    for file in &files {
        let top = file
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("bad file name {}", file.display()))?;
        let mut cmd = verilator.command();
        cmd.current_dir(root)
            .args(LINT_FLAGS)
            .args(["-Ihdl/rtl", "-Ihdl/sim", "-Ihdl/include", "hdl/lint.vlt"])
            .args(["--top-module", top])
            .arg(file);
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run verilator: {e}"))?;
        if !out.status.success() || !out.stderr.is_empty() {
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            failed.push(top.to_string());
        }
    }
    // Third-party files: every module of every file, warnings shown and counted, never fatal.
    let (vendor_files, vendor_warnings) = lint_third_party(root, &verilator, &dirs, true)?;
    if vendor_files > 0 {
        println!(
            "lint: {vendor_files} third-party RTL files: {vendor_warnings} messages reported (third-party code does not fail the lint)"
        );
    }
    if failed.is_empty() {
        println!("lint: {} own RTL files clean under -Wall", files.len());
        Ok(())
    } else {
        Err(format!("lint found problems in: {}", failed.join(", ")))
    }
}

/// Lints every module of every third-party file; returns the files and the messages seen.
/// Messages are printed when `show`; none of them is an error.
fn lint_third_party(
    root: &Path,
    verilator: &verilator_find::Verilator,
    dirs: &rtl_dirs::RtlDirs,
    show: bool,
) -> Result<(usize, usize), String> {
    let mut messages = 0;
    let mut files = 0;
    for tp in &dirs.third_party {
        for file in rtl_dirs::rtl_files_under(&root.join(&tp.dir)) {
            files += 1;
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            for module in rtl_dirs::modules_in(&text) {
                let mut cmd = verilator.command();
                // Third-party code is reported, never fatal.
                cmd.current_dir(root)
                    .args(LINT_FLAGS)
                    .arg("-Wno-fatal")
                    .args(tp.defines.iter().map(|d| format!("-D{d}")))
                    .args(["--top-module", &module])
                    .arg(&file);
                let out = cmd
                    .output()
                    .map_err(|e| format!("cannot run verilator: {e}"))?;
                let text = String::from_utf8_lossy(&out.stderr);
                messages += text.lines().filter(|l| l.starts_with('%')).count();
                if show && !text.is_empty() {
                    eprint!("{text}");
                }
            }
        }
    }
    Ok((files, messages))
}

/// Waits for `child` until `limit` has passed, polling; a child still running then (or one
/// that cannot be waited for) is killed and reaped, and the answer is None. The one bounded
/// wait of the tasks that start long-running processes.
pub fn wait_or_kill(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()))
}

/// A task run as a child process (this program again) beside the steps in front, its output
/// kept in `target/xtask-<name>.log` and printed when it is joined, so that its lines do not
/// interleave with theirs. Dropped without a join (a step in front failed), it is killed.
struct Background {
    name: &'static str,
    child: Option<std::process::Child>,
    log: PathBuf,
    started: std::time::Instant,
}

impl Background {
    fn start(root: &Path, name: &'static str, args: &[&str]) -> Result<Background, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find xtask itself: {e}"))?;
        let log = root.join("target").join(format!("xtask-{name}.log"));
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let file = std::fs::File::create(&log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = file
            .try_clone()
            .map_err(|e| format!("cannot share {}: {e}", log.display()))?;
        // At a lower priority than the steps in front, like everything that runs beside
        // them (see [`yield_to_the_guests`]).
        let child = Command::new("nice")
            .args(["-n", "10"])
            .arg(exe)
            .args(args)
            .current_dir(root)
            .stdin(std::process::Stdio::null())
            .stdout(file)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start `cargo xtask {}`: {e}", args.join(" ")))?;
        eprintln!(
            "xtask: {name} runs beside the next steps (output in {})",
            log.display()
        );
        Ok(Background {
            name,
            child: Some(child),
            log,
            started: std::time::Instant::now(),
        })
    }

    /// Waits for the task (an hour at most), prints its output, and fails as it did.
    fn join(mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let status = wait_or_kill(&mut child, std::time::Duration::from_secs(3600));
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        print!("{text}");
        eprintln!(
            "xtask: {:.1} s for {} (beside the other steps)",
            self.started.elapsed().as_secs_f64(),
            self.name
        );
        match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => Err(format!(
                "{} failed ({s}); its output is above and in {}",
                self.name,
                self.log.display()
            )),
            None => Err(format!(
                "{} did not finish within an hour and was stopped",
                self.name
            )),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Builds every top of the crates that describe tops into the cache, ahead of the tests that
/// would otherwise build each on first use: each crate's `build-tops` example.
fn tops(root: &Path) -> Result<(), String> {
    setup::setup(root)?;
    build_tops(root, &[])?;
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "-p",
        "own-rtl-example",
        "--example",
        "build-tops",
    ]);
    run(root, cmd)
}

/// Builds the card's tops named (every one when none is) into the cache.
pub fn build_tops(root: &Path, names: &[&str]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "-p",
        "card-sim",
        "--example",
        "build-tops",
        "--",
    ])
    .args(names);
    run(root, cmd)
}

/// Seeds of the randomized build's runs in `cargo xtask test`.
const X_SEEDS: &[u64] = &[1, 2, 3];

/// The RTL tests that run on the randomized build: those of the tops that have a `_x` twin
/// (card_core, sim_top, async_fifo_tb).
const X_TESTS: &[&str] = &[
    "card_top",
    "variants",
    "errors",
    "reset_crossing",
    "async_fifo",
];

fn test(root: &Path, extra: &[String]) -> Result<(), String> {
    setup::setup(root)?;
    // Yosys runs one process per variant, each on one core, for minutes: started first, beside
    // every step after it, so that it is done long before the lanes below end and never
    // becomes the run's last step. Those steps leave a core idle part of the time (linking,
    // single-threaded tests, the mount's one-at-a-time tests), which it fills.
    // Both use the pinned Yosys wheel: installed here, once, so that the two never install it
    // into one folder at the same time.
    synth::setup(root)?;
    let synth = Background::start(root, "synth", &["synth"])?;
    // The proofs the list marks for CI (hdl/formal/proofs.toml says which and why the others
    // are left to `cargo xtask formal`): seconds each, but a fresh clone first compiles the
    // wheel's WebAssembly for about two minutes, so they too run beside the steps after them.
    let formal = Background::start(root, "formal", &["formal", "--ci"])?;
    lint(root)?;
    codegen::codegen(root, true)?;
    // Formatting and clippy are part of the test, as CI runs it.
    let mut cmd = cargo();
    cmd.args(["fmt", "--all", "--check"]);
    run(root, cmd)?;
    // Clippy lints the workspace's crates while cargo builds them for the tests (clippy's
    // driver as cargo's workspace wrapper, as `cargo clippy` runs it), instead of in a
    // `cargo clippy` of its own: that checked every dependency once more only to lint the
    // same crates, 166 s of a fresh clone's run. Every cargo call below inherits it, so all
    // share one build. Set while this is the only thread.
    match clippy_env() {
        Some(env) => {
            eprintln!("xtask: clippy -D warnings lints the workspace as it is built");
            for (k, v) in env {
                std::env::set_var(k, v);
            }
        }
        None => {
            let mut cmd = cargo();
            cmd.args([
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]);
            run(root, cmd)?;
        }
    }
    setup::ensure_fio();
    let nextest = setup::ensure_nextest();
    // Every test target built (and linted) first, the suite's included, so that the guests'
    // lane below starts with what it runs and the two lanes' cargo calls find nothing left to
    // build.
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--all-targets", "--no-run"])
        .args(extra);
    run(root, cmd)?;
    // Two lanes side by side. The guests' (the suite through the real driver, then the
    // vendor tools' check list) spends its time simulating the card on one core while the
    // guest mostly waits for it; this machine's (the workspace's tests, the suite on the
    // simulated card and over the mount) fills the other. Each run is judged at the end, the
    // check list last, so that its closing `N passed, M failed` line ends the run.
    vm::catch_signals();
    // The netlists' quick check (`netlist::fast_subset`) needs synthesis's output and, for
    // its two netlist tops, minutes of compiling: it ends the guests' lane, whose guests are
    // done minutes before this machine's tests, rather than the host's, at the host's
    // priority.
    let (host, guests) = beside_the_guests(
        || {
            let guests = (suite::guests(root), vm::check_list(root));
            yield_to_the_guests();
            let synth = synth.join();
            let netlist = synth.clone().and_then(|()| {
                if vm::INTERRUPTED.load(Ordering::SeqCst) {
                    Err("the netlists' check was not run: the run was stopped".to_string())
                } else {
                    netlist::fast_subset(root)
                }
            });
            (guests, synth.and(netlist))
        },
        || {
            let host = host_lane(root, extra, nextest);
            let formal = formal.join();
            host.and_then(|h| formal.map(|()| h))
        },
    );
    let ((suite_guests, check_list), synth_and_netlist) = guests?;
    let host = host?;
    synth_and_netlist?;
    suite::compare(&host, suite_guests.as_ref())?;
    match check_list? {
        Some(list) => list.verdict(),
        None => Ok(()),
    }
}

extern "C" {
    /// setpriority(2) of the C library the standard library already links.
    fn setpriority(which: i32, who: u32, prio: i32) -> i32;
}

/// This process's nice value, from `/proc/self/stat`, 0 where it cannot be read.
fn own_nice() -> i32 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| nice_in_stat(&s))
        .unwrap_or(0)
}

/// The nice value in a `/proc/PID/stat` line (field 19). The command name (field 2) is in
/// parentheses and may hold spaces, so the fields are counted after its closing one.
fn nice_in_stat(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(16)?.parse().ok()
}

/// Runs `guests` in a thread of its own at the normal priority and `host` here at a lower one
/// ([`yield_to_the_guests`]); a failed `host` stops the guests' runs at once, since the run has
/// failed already. Returns both results, the guests' an error if their thread panicked.
pub(crate) fn beside_the_guests<G: Send, H>(
    guests: impl FnOnce() -> G + Send,
    host: impl FnOnce() -> Result<H, String>,
) -> (Result<H, String>, Result<G, String>) {
    std::thread::scope(|s| {
        let guests = s.spawn(guests);
        yield_to_the_guests();
        let host = host();
        if host.is_err() {
            vm::INTERRUPTED.store(true, Ordering::SeqCst);
        }
        let guests = guests
            .join()
            .map_err(|_| "the guests' lane panicked".to_string());
        (host, guests)
    })
}

/// Lowers the calling thread, and every process it starts from now on, by 10 nice steps
/// below the run's own priority (nice 10 for a run at the default). The
/// guests' lane stays at the normal priority: a guest's driver gives each transfer a wall-clock
/// timeout (5 s in the suite's runs), and the card behind it simulates only as fast as the core
/// it gets, so with this machine's tests competing as equals an 8 MiB read through a guest
/// timed out on a loaded machine. The tests here have no such clock; they only finish later.
fn yield_to_the_guests() {
    const PRIO_PROCESS: i32 = 0;
    // SAFETY: setpriority(2) takes plain integers and touches no memory of ours. On Linux
    // `who` 0 with PRIO_PROCESS names the calling thread, whose nice value the processes it
    // forks inherit. A failure leaves the priority as it was, which only costs the margin.
    let rc = unsafe { setpriority(PRIO_PROCESS, 0, own_nice() + 10) };
    if rc != 0 {
        eprintln!(
            "xtask: could not lower this lane's priority; the guests share the cores equally"
        );
    }
}

/// The environment under which cargo runs clippy's driver, with `-D warnings`, on the
/// workspace's crates as it builds them (`cargo clippy` passes its arguments to the driver
/// the same way); `None` where the toolchain has no clippy.
fn clippy_env() -> Option<[(&'static str, String); 2]> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = String::from_utf8(out.stdout).ok()?;
    let driver = Path::new(sysroot.trim()).join("bin/clippy-driver");
    driver.is_file().then(|| {
        [
            (
                "RUSTC_WORKSPACE_WRAPPER",
                driver.to_string_lossy().into_owned(),
            ),
            (
                "CLIPPY_ARGS",
                "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__".into(),
            ),
        ]
    })
}

/// The steps of `cargo xtask test` that run on this machine after the build: every test of
/// the workspace but the suite, the randomized build, the driver backend over the mount, and
/// the suite on the simulated card (whose counts the guests' runs are compared with).
///
/// The order is chosen for the two cores. While the guests run, their card takes one core, so
/// this lane goes first through what runs one test at a time (the mount's card serves one
/// call at a time, and the suite over it runs one test after another); what fills both cores
/// (the suite's parallel runs, the randomized build, the workspace's tests) comes after, and
/// the workspace's tests last, when the guests are done and this lane has the machine.
fn host_lane(root: &Path, extra: &[String], nextest: bool) -> Result<suite::HostCounts, String> {
    hw_over_fuse(root)?;
    // The host API alone: it must build and pass its tests with no simulator and no driver
    // in the build (no card-sim, so no Verilator), as programs that use one backend see it.
    // Its own build of the two crates compiles here, on the core the guests leave.
    let mut cmd = cargo();
    cmd.args([
        "test",
        "-p",
        "xdma-core",
        "-p",
        "xdma",
        "--no-default-features",
    ]);
    run(root, cmd)?;
    let counts = suite::host(root)?;
    xcheck(root)?;
    // Doc tests are not part of --all-targets; run them on their own.
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--doc"]);
    run(root, cmd)?;
    // The card-tests suite ran above, on both backends. cargo-nextest runs each test in a
    // process of its own, the test binaries side by side, where `cargo test` runs one binary
    // after another: a binary whose few tests are long (a sweep, a mount) no longer leaves the
    // other core idle. Where nextest is missing, `cargo test` runs the same tests.
    let mut cmd = cargo();
    if nextest {
        // Twice as many tests as cores: a dozen of the longest wait on the wall clock more
        // than they compute (a sink slowed on purpose, a mount's round trips, a recording
        // stopped by a signal), and with one test per core the cores sat idle a quarter of
        // the time. Measured here on two cores: 186 s against 321 s, every test passing.
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) * 2;
        cmd.args(["nextest", "run", "--no-fail-fast", "--test-threads"])
            .arg(threads.to_string());
    } else {
        cmd.arg("test");
    }
    cmd.args(["--workspace", "--all-targets", "--exclude", "card-tests"])
        .args(extra);
    run(root, cmd)?;
    Ok(counts)
}

/// The card's RTL tests on the randomized build (declaration initialisers removed, every
/// value Verilator leaves open drawn from the seed), once per seed: a register that needs a
/// reset and lacks one makes them fail for some seed.
fn xcheck(root: &Path) -> Result<(), String> {
    for seed in X_SEEDS {
        eprintln!("xcheck: randomized build, seed {seed}");
        let mut cmd = build::tests(X_TESTS);
        cmd.env("SIM_X", "1").env("SIM_X_SEED", seed.to_string());
        run(root, cmd)?;
    }
    Ok(())
}

/// The driver backend's tests, and the shared tests' hw cases, against the simulated card
/// served as the driver's nodes by xdma-fuse. They share one card, so they run one at a time.
fn hw_over_fuse(root: &Path) -> Result<(), String> {
    if let Some(why) = fuse::unavailable() {
        println!("xtask: SKIPPED the driver backend's tests over xdma-fuse: {why}");
        return Ok(());
    }
    let config = root.join("crates/xdma-fuse/tests/hw-tests.toml");
    // The shared bodies' sim cases already ran above; only their hw cases need the mount.
    // xdma-hw's own tests, the shared tests of xdma and xdma-bench's tests over a driver.
    for (test, filter) in [("over_fuse", ""), ("backends", "hw"), ("over_driver", "")] {
        let mut cmd = build::tests(&[test]);
        cmd.args(["--", "--test-threads=1"]);
        if !filter.is_empty() {
            cmd.arg(filter);
        }
        fuse::with_mount(root, Some(&config), cmd)?;
    }
    Ok(())
}

#[cfg(test)]
mod lint_tests {
    use super::*;

    /// The lane's priority is counted from the run's own, so the nice value read must be the
    /// one the system reports for this process (a run under `nice -n 5` reads 5).
    #[test]
    fn the_own_nice_value_is_the_systems() {
        let out = Command::new("ps")
            .args(["-o", "ni=", "-p"])
            .arg(std::process::id().to_string())
            .output()
            .expect("ps runs");
        let reported: i32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("ps prints a number");
        assert_eq!(own_nice(), reported);
        // A child under `nice -n 5` must read five more: the parse counts the right field.
        let child = Command::new("nice")
            .args(["-n", "5", "cat", "/proc/self/stat"])
            .output()
            .expect("nice runs");
        let text = String::from_utf8_lossy(&child.stdout).into_owned();
        assert_eq!(nice_in_stat(&text), Some((reported + 5).min(19)));
    }

    /// The lints that `cargo xtask test` runs while building must fail a build as `cargo
    /// clippy -- -D warnings` does: a crate with one clippy lint (and no rustc warning) fails.
    #[test]
    fn clippy_while_building_denies_a_lint() {
        let env = clippy_env().expect("the toolchain has clippy");
        let dir = std::env::temp_dir().join(format!("xtask-clippy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).expect("temporary crate");
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"linted\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
        )
        .expect("manifest");
        std::fs::write(
            dir.join("src/main.rs"),
            "fn main() {\n    let v = [1u8];\n    println!(\"{}\", v.len() >= 1);\n}\n",
        )
        .expect("source");
        let build = |with_clippy: bool| {
            let mut cmd = cargo();
            cmd.args(["build", "--quiet", "--offline"])
                .current_dir(&dir)
                .env("CARGO_TARGET_DIR", dir.join("target"))
                .env_remove("RUSTC_WORKSPACE_WRAPPER")
                .env_remove("CLIPPY_ARGS");
            if with_clippy {
                cmd.envs(env.clone());
            }
            cmd.output().expect("cargo runs")
        };
        let plain = build(false);
        assert!(plain.status.success(), "without clippy the crate builds");
        let linted = build(true);
        let _ = std::fs::remove_dir_all(&dir);
        let stderr = String::from_utf8_lossy(&linted.stderr);
        assert!(!linted.status.success(), "the lint fails the build");
        assert!(
            stderr.contains("clippy::len_zero") || stderr.contains("clippy::len-zero"),
            "{stderr}"
        );
    }

    #[test]
    fn third_party_warnings_are_counted_not_fatal() {
        let root = root();
        let verilator = verilator_find::find(&root).expect("run `cargo xtask setup` first");
        let dirs = rtl_dirs::RtlDirs::load(&root).expect("rtl.toml");
        let (files, messages) =
            lint_third_party(&root, &verilator, &dirs, false).expect("lint runs and passes");
        assert!(files >= 2, "the example's vendor files are linted");
        // The vendor RAM leaves AxLOCK, AxCACHE and AxPROT unused, as generated IP does.
        assert!(messages > 0, "-Wall finds the vendor code's warnings");
    }
}
