//! `cargo xtask vm`: the unmodified Xilinx XDMA driver and its vendor tools in a QEMU guest
//! whose PCIe function is the simulated card (`xdma-vm`), with a check list run in the guest.
//!
//! The guest is built under `target/vm/` from Debian packages and a dma_ip_drivers checkout:
//! Debian's own kernel image for the installed `linux-headers-*-amd64`, `xdma.ko` built out of
//! tree from a copy of the driver, the vendor tools linked statically, and a busybox initramfs
//! whose `/init` is `xtask/guest/init.sh`. Each part is rebuilt only when what it is made from
//! changed (a content stamp). Then `xdma-vm run` boots it once per variant and interrupt mode
//! asked for; the guest prints `PASS <name>` or `FAIL <name>: <why>` per check, which are
//! counted over all runs into a last line `N passed, M failed`. The check list ends with the
//! vendor's own test scripts (dma_ip_drivers' `XDMA/linux-kernel/tests`), run unmodified in
//! the guest (`xtask/guest/vendor.sh`).

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: cargo xtask vm [--variant mm|stream|combined|all] [--mode msix|msi|legacy|poll|all]
                      [--param NAME=VALUE]... [--vendor off|short|full] [--timeout SECONDS]
                      [--release] [--keep] [-- PROGRAM ARGS...]

  --variant  the card (default mm)
  --mode     the driver's interrupt mode (default msix): msix is its default (interrupt_mode=0),
             msi interrupt_mode=1, legacy interrupt_mode=2, poll poll_mode=1
  --param    a further xdma.ko parameter (h2c_timeout, c2h_timeout, enable_st_c2h_credit...);
             the name must be one of the built xdma.ko's parameters
  --vendor   the vendor's test scripts at the end of the check list (default full): full runs
             every one that fits the card at its own sizes, short at the few sizes `cargo xtask
             test` has time for, off none
  --timeout  seconds one run may take, the guest's boot included (default 300, 600 with
             --vendor short, 1200 with --vendor full)
  --release  build the device process with the release profile (about 15% faster DMA, worth
             it for long programs; the default dev build is the one `cargo test` already made)
  --keep     keep the staging folders under target/vm/ (driver copy, root file systems)
  -- PROGRAM ARGS  run only this host program in the guest after loading the driver (copied
             in with the shared libraries ldd lists); its exit code is the result

The driver comes from $XDMA_DRIVER_SRC (a checkout of Xilinx/dma_ip_drivers), else from
../shared/third-party/dma_ip_drivers next to the project.
";

/// Debian packages the guest is built and run with, and a file each one installs, for systems
/// without dpkg.
const PACKAGES: &[(&str, &str)] = &[
    ("qemu-system-x86", "/usr/bin/qemu-system-x86_64"),
    ("busybox-static", "/bin/busybox"),
    ("linux-headers-amd64", "/usr/src"),
    ("cpio", "/usr/bin/cpio"),
    ("make", "/usr/bin/make"),
    ("gcc", "/usr/bin/gcc"),
    // The static C library the vendor tools link against.
    ("libc6-dev", "/usr/lib/x86_64-linux-gnu/libc.a"),
    // modinfo, which lists the parameters of the built xdma.ko for checking `--param`.
    ("kmod", "/sbin/modinfo"),
    // The vendor's test scripts are bash scripts; the guest gets this one.
    ("bash", "/bin/bash"),
];

/// The vendor tools put in the guest, each linked statically from `tools/<name>.c`.
const TOOLS: &[&str] = &["reg_rw", "dma_to_device", "dma_from_device", "performance"];

/// Module parameters every run gets unless `--param` names them: the driver's own 10 s would
/// do for the transfers of the check list, but a simulated card under TCG can be slow to start
/// and a timeout should not be the first thing a slow run reports.
const DEFAULT_PARAMS: &[(&str, &str)] = &[("h2c_timeout", "30"), ("c2h_timeout", "30")];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Msix,
    Msi,
    Legacy,
    Poll,
}

impl Mode {
    pub(crate) const ALL: [Mode; 4] = [Mode::Msix, Mode::Msi, Mode::Legacy, Mode::Poll];

    fn name(self) -> &'static str {
        match self {
            Mode::Msix => "msix",
            Mode::Msi => "msi",
            Mode::Legacy => "legacy",
            Mode::Poll => "poll",
        }
    }

    /// The driver's parameter for the mode: MSI-X is what it picks by itself.
    fn param(self) -> Option<(&'static str, &'static str)> {
        match self {
            Mode::Msix => None,
            Mode::Msi => Some(("interrupt_mode", "1")),
            Mode::Legacy => Some(("interrupt_mode", "2")),
            Mode::Poll => Some(("poll_mode", "1")),
        }
    }
}

pub(crate) const VARIANTS: [&str; 3] = ["mm", "stream", "combined"];

/// How much of the vendor's test scripts a run of the check list does (`xtask/guest/vendor.sh`
/// reads it from the kernel command line as `xdma_vendor=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vendor {
    Off,
    /// The few sizes `cargo xtask test` has time for; the scripts whose sizes are fixed in
    /// them (unaligned.sh, perform_hwcount.sh) run whole where they fit (the mm card), about
    /// two minutes together.
    Short,
    /// Every script that fits the card, at its own sizes.
    Full,
}

impl Vendor {
    const ALL: [Vendor; 3] = [Vendor::Off, Vendor::Short, Vendor::Full];

    fn name(self) -> &'static str {
        match self {
            Vendor::Off => "off",
            Vendor::Short => "short",
            Vendor::Full => "full",
        }
    }

    /// The default `--timeout`: with the full scripts a run of the mm card took 400 s on a
    /// 2-core machine with other work beside it; three times that leaves room for a slower one.
    /// The short ones run unaligned.sh and perform_hwcount.sh whole on the mm card, about two
    /// minutes of the run, which went past 300 s beside a build.
    fn default_timeout(self) -> u64 {
        match self {
            Vendor::Off => 300,
            Vendor::Short => 600,
            Vendor::Full => 1200,
        }
    }
}

/// Which runs do the vendor's scripts, and how much of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VendorPlan {
    /// Every run.
    Every(Vendor),
    /// Only these runs (variant and mode); the others none.
    Only(Vec<(&'static str, Mode)>, Vendor),
}

impl VendorPlan {
    fn for_run(&self, variant: &str, mode: Mode) -> Vendor {
        match self {
            VendorPlan::Every(v) => *v,
            VendorPlan::Only(runs, v) if runs.contains(&(variant, mode)) => *v,
            VendorPlan::Only(..) => Vendor::Off,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) variants: Vec<&'static str>,
    pub(crate) modes: Vec<Mode>,
    /// Runs beyond every variant in every mode, each a variant in one mode.
    pub(crate) also: Vec<(&'static str, Mode)>,
    pub(crate) params: Vec<(String, String)>,
    /// How much of the vendor's test scripts the check list runs.
    pub(crate) vendor: VendorPlan,
    /// Seconds one run may take, from the device process's start: the guest's boot counts.
    pub(crate) timeout: u64,
    pub(crate) release: bool,
    pub(crate) keep: bool,
    pub(crate) program: Vec<String>,
    /// The card's engine alignment in bytes (1: unaligned transfers allowed).
    pub(crate) alignment: u32,
}

impl Default for Options {
    /// What `cargo xtask vm` does with no options: the check list on the mm card, MSI-X.
    fn default() -> Options {
        Options {
            variants: vec!["mm"],
            modes: vec![Mode::Msix],
            also: Vec::new(),
            params: Vec::new(),
            vendor: VendorPlan::Every(Vendor::Full),
            timeout: Vendor::Full.default_timeout(),
            release: false,
            keep: false,
            program: Vec::new(),
            alignment: 1,
        }
    }
}

impl Options {
    /// Every variant in every mode, then the extra runs, without repeating one.
    fn runs(&self) -> Vec<(&'static str, Mode)> {
        let mut runs: Vec<(&'static str, Mode)> = self
            .variants
            .iter()
            .flat_map(|v| self.modes.iter().map(move |m| (*v, *m)))
            .collect();
        for r in &self.also {
            if !runs.contains(r) {
                runs.push(*r);
            }
        }
        runs
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut timeout = None;
    let mut vendor = Vendor::Full;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--variant" => {
                let v = value("--variant")?;
                o.variants = match v.as_str() {
                    "all" => VARIANTS.to_vec(),
                    _ => vec![VARIANTS
                        .iter()
                        .copied()
                        .find(|x| *x == v)
                        .ok_or_else(|| format!("unknown variant `{v}`\n{USAGE}"))?],
                };
            }
            "--mode" => {
                let v = value("--mode")?;
                o.modes = match v.as_str() {
                    "all" => Mode::ALL.to_vec(),
                    _ => vec![Mode::ALL
                        .iter()
                        .copied()
                        .find(|m| m.name() == v)
                        .ok_or_else(|| format!("unknown mode `{v}`\n{USAGE}"))?],
                };
            }
            "--param" => {
                let v = value("--param")?;
                let (name, val) = v
                    .split_once('=')
                    .filter(|(n, _)| !n.is_empty() && !n.contains([' ', ',']))
                    .ok_or_else(|| format!("--param takes NAME=VALUE, not `{v}`"))?;
                if val.contains([' ', ',']) {
                    return Err(format!(
                        "--param {name}: a value cannot hold spaces or commas"
                    ));
                }
                o.params.push((name.to_string(), val.to_string()));
            }
            "--vendor" => {
                let v = value("--vendor")?;
                vendor = Vendor::ALL
                    .iter()
                    .copied()
                    .find(|x| x.name() == v)
                    .ok_or_else(|| format!("unknown --vendor `{v}`\n{USAGE}"))?;
            }
            "--timeout" => {
                let v = value("--timeout")?;
                timeout = Some(
                    v.parse()
                        .map_err(|_| format!("--timeout takes seconds, not `{v}`"))?,
                );
            }
            "--keep" => o.keep = true,
            "--release" => o.release = true,
            "--" => {
                o.program = it.by_ref().cloned().collect();
                if o.program.is_empty() {
                    return Err(format!("`--` must be followed by a program\n{USAGE}"));
                }
            }
            other => return Err(format!("unknown option `{other}`\n{USAGE}")),
        }
    }
    o.vendor = VendorPlan::Every(vendor);
    // A program runs instead of the check list, vendor scripts and all.
    let checks = if o.program.is_empty() {
        vendor
    } else {
        Vendor::Off
    };
    o.timeout = timeout.unwrap_or(checks.default_timeout());
    Ok(o)
}

/// Set by SIGINT or SIGTERM: the run under way ends (the device process gets the signal too,
/// or has it passed on, and stops QEMU), is waited for, and no further run starts.
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: i32) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

extern "C" {
    /// signal(2) of the C library the standard library already links.
    fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
}

/// Catches SIGINT and SIGTERM, so that xtask outlives a Ctrl-C long enough to wait for the
/// device process (which gets it as well, being in the same process group) and report. A
/// handler, unlike an ignored signal, is reset to the default in every child at exec.
pub(crate) fn catch_signals() {
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    for sig in [SIGINT, SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe, and
        // signal(2) is given a valid signal number and a function of the right type.
        unsafe {
            signal(sig, on_signal);
        }
    }
}

/// The `vm` task.
pub fn vm(root: &Path, args: &[String]) -> ExitCode {
    if args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "-h" || a == "--help")
    {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let opts = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    catch_signals();
    match prepare_and_run(root, &opts).map(|runs| summary(&runs)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("xtask vm: {e}");
            ExitCode::FAILURE
        }
    }
}

extern "C" {
    /// geteuid(2), from the same C library.
    fn geteuid() -> u32;
}

/// Why the guest cannot be built or booted on this machine at all, if it cannot: packages it
/// needs are missing and only root could install them, or no driver source was named and the
/// shared checkout beside the project is not there. A machine without /dev/kvm is no reason,
/// since QEMU emulates the guest (TCG) anyway.
pub(crate) fn unavailable(root: &Path) -> Option<String> {
    let missing = missing_packages();
    // SAFETY: geteuid(2) takes nothing, cannot fail and touches no memory of ours.
    if !missing.is_empty() && unsafe { geteuid() } != 0 {
        return Some(format!(
            "{} not installed, and only root can install them (as root, `cargo xtask vm` does)",
            missing.join(" ")
        ));
    }
    let shared = root.join("../shared/third-party/dma_ip_drivers");
    if std::env::var_os("XDMA_DRIVER_SRC").is_none() && !shared.exists() {
        return Some(format!(
            "no XDMA driver source: clone https://github.com/Xilinx/dma_ip_drivers into {} or set XDMA_DRIVER_SRC to a checkout",
            shared.display()
        ));
    }
    None
}

/// The check list in every interrupt mode (see below for which cards), for `cargo xtask test`:
/// its runs, not yet judged ([`CheckList::verdict`] prints the results and judges), so that
/// the caller can run it beside other steps and still end its output with the count. `None`
/// where the guest cannot run at all ([`unavailable`]), saying why; an error when the guest
/// cannot be built.
pub(crate) fn check_list(root: &Path) -> Result<Option<CheckList>, String> {
    if let Some(why) = unavailable(root) {
        println!("xtask: SKIPPED the check list in the guest: {why}");
        return Ok(None);
    }
    // The interrupt modes are a property of the driver and the IP, not of the card's data
    // path: every mode on the two cards a board builds, and the simulation-only combined
    // layout (both kinds of engine on one instance) in the driver's default mode. The vendor's
    // test scripts run at their short sizes on the two cards in the default mode (their full
    // sizes in every mode are `cargo xtask vm --vendor full --mode all`'s, minutes per run).
    let opts = Options {
        variants: vec!["mm", "stream"],
        modes: Mode::ALL.to_vec(),
        also: vec![("combined", Mode::Msix)],
        vendor: VendorPlan::Only(
            vec![("mm", Mode::Msix), ("stream", Mode::Msix)],
            Vendor::Short,
        ),
        timeout: Vendor::Short.default_timeout(),
        ..Options::default()
    };
    let started = Instant::now();
    let runs = prepare_and_run(root, &opts)?;
    Ok(Some(CheckList {
        runs,
        wall: started.elapsed(),
    }))
}

/// The check list's runs, to be judged once.
pub(crate) struct CheckList {
    runs: Vec<Outcome>,
    wall: Duration,
}

impl CheckList {
    /// Prints every run's result and the count of checks (the last line), and fails unless
    /// every check passed.
    pub(crate) fn verdict(self) -> Result<(), String> {
        println!(
            "xtask: the check list in the guest, every interrupt mode, ran in {:.1} s",
            self.wall.as_secs_f64()
        );
        if summary(&self.runs) {
            Ok(())
        } else {
            Err("the check list failed in the guest (target/vm/logs/)".into())
        }
    }
}

fn prepare_and_run(root: &Path, opts: &Options) -> Result<Vec<Outcome>, String> {
    let t0 = Instant::now();
    ensure_packages()?;
    let src = driver_source(root)?;
    let out = root.join("target/vm");
    mkdir(&out)?;
    let kver = kernel_version()?;
    let kernel = kernel_image(&out, &kver)?;
    let bins = driver_and_tools(&out, &src, &kver, opts.keep)?;
    check_params(&module_params(&bins.join("xdma.ko"))?, &opts.params)?;
    let mut initrd = initramfs(root, &out, &src, &bins, opts.keep)?;
    if !opts.program.is_empty() {
        initrd = with_program(&out, &initrd, &opts.program, opts.keep)?;
    }
    let device = build_device(root, opts.release)?;
    eprintln!(
        "vm: guest ready in {:.1} s: kernel {kver}, {}",
        t0.elapsed().as_secs_f64(),
        initrd.display()
    );
    let logs = out.join("logs");
    mkdir(&logs)?;
    let mut runs = Vec::new();
    for (variant, mode) in opts.runs() {
        if INTERRUPTED.load(Ordering::SeqCst) {
            break;
        }
        let run = Run { variant, mode };
        runs.push(run.execute(&device, &kernel, &initrd, opts, &logs)?);
    }
    Ok(runs)
}

// ------------------------------------------------------------------ module parameters

/// The parameters of the kernel module `ko`, by name, as `modinfo -F parmtype` lists them
/// (`NAME:TYPE` a line).
fn module_params(ko: &Path) -> Result<Vec<String>, String> {
    // /sbin is not on every user's PATH.
    let modinfo = ["/sbin/modinfo", "/usr/sbin/modinfo"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap_or("modinfo");
    let out = Command::new(modinfo)
        .args(["-F", "parmtype"])
        .arg(ko)
        .output()
        .map_err(|e| format!("cannot run {modinfo}: {e} (install kmod)"))?;
    if !out.status.success() {
        return Err(format!(
            "{modinfo} {} failed ({}): {}",
            ko.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(parse_parmtypes(&String::from_utf8_lossy(&out.stdout)))
}

/// The names in `modinfo -F parmtype`'s output.
fn parse_parmtypes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(name, _)| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect()
}

/// Fails on a `--param` that names no parameter of the module, `known` being the module's:
/// the kernel would only log "unknown parameter ... ignored" and load the driver without it.
fn check_params(known: &[String], given: &[(String, String)]) -> Result<(), String> {
    let unknown: Vec<&str> = given
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !known.iter().any(|k| k == name))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let valid = if known.is_empty() {
        "it has none".to_string()
    } else {
        format!("its parameters are {}", known.join(", "))
    };
    Err(format!(
        "--param {}: xdma.ko has no such parameter; {valid}",
        unknown.join(", ")
    ))
}

// ------------------------------------------------------------------ packages and sources

fn dpkg_installed(pkg: &str) -> Option<bool> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).contains("install ok installed"))
}

/// The packages of [`PACKAGES`] that are not installed.
fn missing_packages() -> Vec<&'static str> {
    PACKAGES
        .iter()
        .filter(|(pkg, file)| !dpkg_installed(pkg).unwrap_or_else(|| Path::new(file).exists()))
        .map(|(pkg, _)| *pkg)
        .collect()
}

/// Installs the packages that are missing, with one `apt-get update` first.
pub(crate) fn ensure_packages() -> Result<(), String> {
    let missing = missing_packages();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("vm: installing {}", missing.join(" "));
    crate::debian::install(&missing)
}

/// The dma_ip_drivers checkout: `$XDMA_DRIVER_SRC`, else the shared copy beside the project.
pub(crate) fn driver_source(root: &Path) -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = match std::env::var_os("XDMA_DRIVER_SRC") {
        Some(p) => vec![PathBuf::from(p)],
        None => vec![root.join("../shared/third-party/dma_ip_drivers")],
    };
    for c in &candidates {
        if c.join("XDMA/linux-kernel/xdma/libxdma.c").is_file() {
            return c
                .canonicalize()
                .map_err(|e| format!("{}: {e}", c.display()));
        }
    }
    Err(format!(
        "no XDMA driver source at {}: clone https://github.com/Xilinx/dma_ip_drivers and set XDMA_DRIVER_SRC to the checkout",
        candidates
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Orders version strings by their runs of digits as numbers (6.1.0-10 before 6.1.0-9 is
/// wrong as text).
fn version_key(v: &str) -> Vec<(u64, String)> {
    let mut key = Vec::new();
    let mut digits = String::new();
    let mut text = String::new();
    for c in v.chars() {
        if c.is_ascii_digit() {
            if !text.is_empty() {
                key.push((0, std::mem::take(&mut text)));
            }
            digits.push(c);
        } else {
            if !digits.is_empty() {
                key.push((digits.parse().unwrap_or(u64::MAX), String::new()));
                digits.clear();
            }
            text.push(c);
        }
    }
    if !digits.is_empty() {
        key.push((digits.parse().unwrap_or(u64::MAX), String::new()));
    }
    if !text.is_empty() {
        key.push((0, text));
    }
    key
}

/// The newest kernel whose amd64 headers are installed: the ABI the driver is built for and
/// the kernel the guest boots.
pub(crate) fn kernel_version() -> Result<String, String> {
    let mut versions: Vec<String> = fs::read_dir("/usr/src")
        .map_err(|e| format!("/usr/src: {e}"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let v = name.strip_prefix("linux-headers-")?;
            v.ends_with("-amd64").then(|| v.to_string())
        })
        .collect();
    versions.sort_by_key(|v| version_key(v));
    versions
        .pop()
        .ok_or_else(|| "no /usr/src/linux-headers-*-amd64: install linux-headers-amd64".into())
}

// ------------------------------------------------------------------ building the guest

pub(crate) fn mkdir(p: &Path) -> Result<(), String> {
    fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))
}

fn run_quiet(what: &str, cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Debian's kernel image for `kver`, from its package (extracted, not installed), cached.
pub(crate) fn kernel_image(out: &Path, kver: &str) -> Result<PathBuf, String> {
    let dir = out.join("kernel");
    let image = dir.join(format!("vmlinuz-{kver}"));
    if image.is_file() {
        return Ok(image);
    }
    eprintln!("vm: downloading Debian's kernel image {kver}");
    let packages = [
        format!("linux-image-{kver}-unsigned"),
        format!("linux-image-{kver}"),
    ];
    let x = crate::debian::unpack(&packages, &dir)?;
    let boot = x.join(format!("boot/vmlinuz-{kver}"));
    fs::copy(&boot, &image).map_err(|e| format!("{}: {e}", boot.display()))?;
    fs::remove_dir_all(&x).ok();
    Ok(image)
}

/// FNV-1a, 64 bits: a stamp that is the same from one run (and Rust release) to the next.
#[derive(Debug)]
struct Stamp(u64);

impl Stamp {
    fn new() -> Stamp {
        Stamp(0xcbf2_9ce4_8422_2325)
    }
    fn add(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }
    fn add_file(&mut self, path: &Path) -> Result<(), String> {
        self.add(path.to_string_lossy().as_bytes());
        self.add(&fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?);
        Ok(())
    }
    /// Every file under `dir`, in name order, by path relative to `dir` and content.
    fn add_tree(&mut self, dir: &Path) -> Result<(), String> {
        let mut files = Vec::new();
        walk(dir, &mut files)?;
        files.sort();
        for f in files {
            self.add(
                f.strip_prefix(dir)
                    .unwrap_or(&f)
                    .to_string_lossy()
                    .as_bytes(),
            );
            self.add(&fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?);
        }
        Ok(())
    }
    fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
    /// Whether `file` holds this stamp.
    fn matches(&self, file: &Path) -> bool {
        fs::read_to_string(file).is_ok_and(|s| s.trim() == self.hex())
    }
    fn save(&self, file: &Path) -> Result<(), String> {
        fs::write(file, self.hex()).map_err(|e| format!("{}: {e}", file.display()))
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for e in fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.is_file() {
            out.push(p);
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    mkdir(to)?;
    for e in fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let p = e.map_err(|e| e.to_string())?.path();
        let dest = to.join(p.file_name().unwrap_or_default());
        if p.is_dir() {
            copy_tree(&p, &dest)?;
        } else {
            fs::copy(&p, &dest).map_err(|e| format!("{}: {e}", p.display()))?;
        }
    }
    Ok(())
}

/// xdma.ko and the vendor tools, built from a copy of the driver (the checkout stays clean).
pub(crate) fn driver_and_tools(
    out: &Path,
    src: &Path,
    kver: &str,
    keep: bool,
) -> Result<PathBuf, String> {
    let linux = src.join("XDMA/linux-kernel");
    let bin = out.join("bin");
    let stamp_file = out.join("driver.stamp");
    let mut stamp = Stamp::new();
    stamp.add(kver.as_bytes());
    for part in ["xdma", "include", "tools"] {
        stamp.add_tree(&linux.join(part))?;
    }
    let outputs_exist = std::iter::once("xdma.ko")
        .chain(TOOLS.iter().copied())
        .all(|f| bin.join(f).is_file());
    if outputs_exist && stamp.matches(&stamp_file) {
        return Ok(bin);
    }
    eprintln!("vm: building xdma.ko for {kver} and the vendor tools");
    let drv = out.join("driver");
    fs::remove_dir_all(&drv).ok();
    for part in ["xdma", "include", "tools"] {
        copy_tree(&linux.join(part), &drv.join(part))?;
    }
    let headers = PathBuf::from(format!("/usr/src/linux-headers-{kver}"));
    run_quiet(
        "make (xdma.ko)",
        Command::new("make")
            .arg("-C")
            .arg(&headers)
            .arg(format!("M={}", drv.join("xdma").display()))
            .args(["modules", "-j2"]),
    )?;
    mkdir(&bin)?;
    fs::copy(drv.join("xdma/xdma.ko"), bin.join("xdma.ko")).map_err(|e| e.to_string())?;
    for tool in TOOLS {
        run_quiet(
            &format!("gcc ({tool})"),
            Command::new("gcc")
                .args(["-static", "-std=c99", "-O2", "-w"])
                .args([
                    "-D_FILE_OFFSET_BITS=64",
                    "-D_GNU_SOURCE",
                    "-D_LARGE_FILE_SOURCE",
                ])
                .arg("-o")
                .arg(bin.join(tool))
                .arg(drv.join(format!("tools/{tool}.c")))
                .arg("-lrt"),
        )?;
    }
    stamp.save(&stamp_file)?;
    if !keep {
        fs::remove_dir_all(&drv).ok();
    }
    Ok(bin)
}

fn busybox() -> Result<PathBuf, String> {
    ["/bin/busybox", "/usr/bin/busybox"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| "no busybox: install busybox-static".into())
}

/// Packs `dir` as a gzip-compressed newc cpio archive owned by root.
pub(crate) fn pack(dir: &Path, archive: &Path) -> Result<(), String> {
    let script = format!(
        "cd '{}' && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | gzip -1 -n > '{}'",
        dir.display(),
        archive.display()
    );
    run_quiet("cpio", Command::new("sh").args(["-c", &script]))
}

/// The workspace's frame checker (crates/frame), built for the stream checks in the guest.
fn build_frame_check(root: &Path) -> Result<PathBuf, String> {
    crate::build::program(&crate::build::programs(root)?, "frame-check")
}

/// Where the vendor's test scripts go in the guest, and their tools beside them, as the
/// scripts expect (`../tools`).
const GUEST_VENDOR: &str = "opt/xdma";

/// The busybox initramfs with the driver, the tools, /init and the check list, and the
/// vendor's test scripts of the driver checkout `src` with bash to run them.
pub(crate) fn initramfs(
    root: &Path,
    out: &Path,
    src: &Path,
    bins: &Path,
    keep: bool,
) -> Result<PathBuf, String> {
    let guest = root.join("xtask/guest");
    let busybox = busybox()?;
    let bash = PathBuf::from("/bin/bash");
    let tests = src.join("XDMA/linux-kernel/tests");
    let frame_check = build_frame_check(root)?;
    let initrd = out.join("initrd.gz");
    let stamp_file = out.join("initrd.stamp");
    let mut stamp = Stamp::new();
    stamp.add_file(&busybox)?;
    stamp.add_file(&bash)?;
    stamp.add_file(&frame_check)?;
    stamp.add_tree(bins)?;
    stamp.add_tree(&guest)?;
    stamp.add_tree(&tests)?;
    if initrd.is_file() && stamp.matches(&stamp_file) {
        return Ok(initrd);
    }
    eprintln!("vm: packing the initramfs");
    let r = out.join("rootfs");
    fs::remove_dir_all(&r).ok();
    for d in [
        "bin", "sbin", "proc", "sys", "dev", "tmp", "etc", "lib/xdma",
    ] {
        mkdir(&r.join(d))?;
    }
    fs::copy(&busybox, r.join("bin/busybox")).map_err(|e| e.to_string())?;
    let list = Command::new(&busybox)
        .arg("--list")
        .output()
        .map_err(|e| format!("cannot run busybox: {e}"))?;
    for applet in String::from_utf8_lossy(&list.stdout).lines() {
        if applet != "busybox" && !applet.is_empty() {
            std::os::unix::fs::symlink("busybox", r.join("bin").join(applet))
                .map_err(|e| format!("busybox link {applet}: {e}"))?;
        }
    }
    fs::copy(bins.join("xdma.ko"), r.join("lib/xdma/xdma.ko")).map_err(|e| e.to_string())?;
    for tool in TOOLS {
        fs::copy(bins.join(tool), r.join("bin").join(tool)).map_err(|e| e.to_string())?;
    }
    // The stream checks' frame checker, with the shared libraries it needs.
    fs::copy(&frame_check, r.join("bin/frame-check")).map_err(|e| e.to_string())?;
    copy_libraries(&frame_check, &r)?;
    // The vendor's test scripts as the checkout has them (they write their outputs beside
    // themselves), the tools where they look for them, and bash, which they are written for;
    // busybox has no bash of its own (its sh is ash).
    let vendor = r.join(GUEST_VENDOR);
    copy_tree(&tests, &vendor.join("tests"))?;
    mkdir(&vendor.join("tools"))?;
    for tool in TOOLS {
        std::os::unix::fs::symlink(format!("/bin/{tool}"), vendor.join("tools").join(tool))
            .map_err(|e| format!("tool link {tool}: {e}"))?;
    }
    fs::copy(&bash, r.join("bin/bash")).map_err(|e| format!("{}: {e}", bash.display()))?;
    copy_libraries(&bash, &r)?;
    install_script(&guest.join("init.sh"), &r.join("init"))?;
    install_script(&guest.join("checks.sh"), &r.join("checks.sh"))?;
    install_script(&guest.join("vendor.sh"), &r.join("vendor.sh"))?;
    pack(&r, &initrd)?;
    stamp.save(&stamp_file)?;
    if !keep {
        fs::remove_dir_all(&r).ok();
    }
    Ok(initrd)
}

fn install_script(from: &Path, to: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::copy(from, to).map_err(|e| format!("{}: {e}", from.display()))?;
    fs::set_permissions(to, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())
}

fn find_program(name: &str) -> Result<PathBuf, String> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return if p.is_file() {
            p.canonicalize().map_err(|e| e.to_string())
        } else {
            Err(format!("{name} is not a file"))
        };
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .ok_or_else(|| format!("{name} is not on PATH"))
}

/// The shared libraries `ldd` lists for `program`, and its dynamic loader.
fn shared_libraries(program: &Path) -> Result<Vec<PathBuf>, String> {
    let out = Command::new("ldd")
        .arg(program)
        .output()
        .map_err(|e| format!("cannot run ldd: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut libs = Vec::new();
    for line in text.lines() {
        // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or, for the loader,
        // "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO has no file.
        let path = match line.split_once("=>") {
            Some((_, rest)) => rest.split_whitespace().next(),
            None => line.split_whitespace().next(),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            libs.push(PathBuf::from(p));
        }
    }
    Ok(libs)
}

/// Copies the shared libraries and the loader that `program` needs into the guest's root
/// `root`, at the paths they have on the host; those already there are kept.
pub(crate) fn copy_libraries(program: &Path, root: &Path) -> Result<(), String> {
    for lib in shared_libraries(program)? {
        let dest = root.join(lib.strip_prefix("/").unwrap_or(&lib));
        if dest.exists() {
            continue;
        }
        if let Some(parent) = dest.parent() {
            mkdir(parent)?;
        }
        // fs::copy follows symbolic links, so the guest gets the library itself.
        fs::copy(&lib, &dest).map_err(|e| format!("{}: {e}", lib.display()))?;
    }
    Ok(())
}

/// Quotes a word for sh.
pub(crate) fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The initramfs with one program added (a second archive appended to the first, which the
/// kernel unpacks over it), and /etc/xdma-run to start it.
fn with_program(
    out: &Path,
    base: &Path,
    program: &[String],
    keep: bool,
) -> Result<PathBuf, String> {
    let exe = find_program(&program[0])?;
    let name = exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    let r = out.join("run-rootfs");
    fs::remove_dir_all(&r).ok();
    mkdir(&r.join("opt/run/bin"))?;
    mkdir(&r.join("etc"))?;
    fs::copy(&exe, r.join("opt/run/bin").join(&name))
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    copy_libraries(&exe, &r)?;
    let mut script = format!("#!/bin/sh\nexec /opt/run/bin/{}", sh_quote(&name));
    for a in &program[1..] {
        script.push(' ');
        script.push_str(&sh_quote(a));
    }
    script.push('\n');
    let run = r.join("etc/xdma-run");
    fs::write(&run, script).map_err(|e| e.to_string())?;
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&run, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    fs::write(r.join("etc/xdma-run.name"), format!("{name}\n")).map_err(|e| e.to_string())?;
    let extra = out.join("run.cpio.gz");
    pack(&r, &extra)?;
    let initrd = out.join("initrd-run.gz");
    let mut bytes = fs::read(base).map_err(|e| e.to_string())?;
    bytes.extend(fs::read(&extra).map_err(|e| e.to_string())?);
    fs::write(&initrd, bytes).map_err(|e| e.to_string())?;
    fs::remove_file(&extra).ok();
    if !keep {
        fs::remove_dir_all(&r).ok();
    }
    Ok(initrd)
}

/// The device process. The dev profile by default: measured on a short run of the check list,
/// it takes the same wall time as a release build (the guest, not the card, sets the pace) and
/// is the build `cargo test` and clippy have already made, while a release build of the whole
/// tree costs minutes; on long transfers the release build moves about 15% more per second.
pub(crate) fn build_device(root: &Path, release: bool) -> Result<PathBuf, String> {
    if !release {
        return crate::build::program(&crate::build::programs(root)?, "xdma-vm");
    }
    let mut cmd = crate::cargo();
    cmd.args(["build", "-q", "-p", "xdma-vm", "--release"]);
    crate::run(root, cmd)?;
    crate::build::program(&crate::build::target_dir(root).join("release"), "xdma-vm")
}

// ------------------------------------------------------------------ the runs

#[derive(Debug)]
pub(crate) struct Run<'a> {
    pub(crate) variant: &'a str,
    pub(crate) mode: Mode,
}

#[derive(Debug, Default)]
pub(crate) struct Outcome {
    tag: String,
    passed: usize,
    failures: Vec<String>,
    /// What went wrong with the run as a whole (each counts as one failure).
    problems: Vec<String>,
    wall: Duration,
    /// Wall time from the start until the guest's /init printed its first line, and the
    /// guest's own uptime then.
    boot: Option<Duration>,
    up_at: Option<String>,
    /// The guest printed its last line, `=== guest done`.
    done: bool,
    /// Why insmod refused the driver, if it did.
    insmod_failed: Option<String>,
    pub(crate) log: PathBuf,
}

impl Run<'_> {
    fn tag(&self) -> String {
        format!("{}/{}", self.variant, self.mode.name())
    }

    fn params(&self, opts: &Options) -> String {
        let mut params: BTreeMap<String, String> = DEFAULT_PARAMS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if let Some((k, v)) = self.mode.param() {
            params.insert(k.into(), v.into());
        }
        for (k, v) in &opts.params {
            params.insert(k.clone(), v.clone());
        }
        params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub(crate) fn execute(
        &self,
        device: &Path,
        kernel: &Path,
        initrd: &Path,
        opts: &Options,
        logs: &Path,
    ) -> Result<Outcome, String> {
        let tag = self.tag();
        let what = if opts.program.is_empty() {
            ""
        } else {
            "-program"
        };
        let log_path = logs.join(format!("{}-{}{what}.log", self.variant, self.mode.name()));
        let mut log = fs::File::create(&log_path)
            .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        // A program runs instead of the check list and its vendor scripts.
        let vendor = if opts.program.is_empty() {
            opts.vendor.for_run(self.variant, self.mode)
        } else {
            Vendor::Off
        };
        let append = format!(
            "xdma_variant={} xdma_mode={} xdma_params={} xdma_vendor={}",
            self.variant,
            self.mode.name(),
            self.params(opts),
            vendor.name()
        );
        eprintln!("vm: [{tag}] booting ({append})");
        let start = Instant::now();
        let mut child = Command::new(device)
            .arg("run")
            .arg("--kernel")
            .arg(kernel)
            .arg("--initrd")
            .arg(initrd)
            .args(["--variant", self.variant])
            .args(["--timeout", &opts.timeout.to_string()])
            .args(["--alignment", &opts.alignment.to_string()])
            .arg("--append")
            .arg(&append)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", device.display()))?;
        // Both streams go through one channel, so that the terminal and the log get whole
        // lines in the order they came.
        let (tx, rx) = mpsc::channel::<(bool, String)>();
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(forward(out, true, tx.clone()));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(forward(err, false, tx.clone()));
        }
        drop(tx);
        let mut o = Outcome {
            tag: tag.clone(),
            log: log_path,
            ..Outcome::default()
        };
        let program = !opts.program.is_empty();
        let mut forwarded = false;
        loop {
            let (console, line) = match rx.recv_timeout(Duration::from_millis(200)) {
                Ok(item) => item,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // A Ctrl-C reaches the device process by itself (same process group); a
                    // SIGTERM sent to xtask alone is passed on, so that it stops QEMU.
                    if INTERRUPTED.load(Ordering::SeqCst) && !forwarded {
                        forwarded = true;
                        let _ = Command::new("kill")
                            .arg("-TERM")
                            .arg(child.id().to_string())
                            .status();
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            let _ = writeln!(log, "{line}");
            if console {
                println!("[{tag}] {line}");
                o.console_line(&line, start.elapsed(), program);
            } else {
                eprintln!("[{tag}] {line}");
            }
        }
        for r in readers {
            let _ = r.join();
        }
        let status = child
            .wait()
            .map_err(|e| format!("cannot wait for xdma-vm: {e}"))?;
        o.wall = start.elapsed();
        o.finish(
            (!status.success()).then(|| status.to_string()),
            status.code(),
            opts.timeout,
            program,
        );
        Ok(o)
    }
}

/// The guest's line for a driver that did not load (init.sh): `FAIL driver loads: insmod: <why>`.
const INSMOD_FAILED: &str = "FAIL driver loads: insmod: ";

impl Outcome {
    /// Takes one line of the guest's console: a result, or a mark of how far the guest got.
    /// `program`: the run is of a program, not of the check list.
    fn console_line(&mut self, line: &str, since_start: Duration, program: bool) {
        let result = line.starts_with("PASS ") || line.starts_with("FAIL ");
        if let Some(why) = line.strip_prefix(INSMOD_FAILED) {
            self.insmod_failed = Some(why.to_string());
        }
        if result && program && line.get(5..).is_some_and(|r| r.starts_with("program ")) {
            if let Some(why) = &self.insmod_failed {
                // A guest that goes on without the driver: the program's result means nothing.
                self.problems.push(format!(
                    "the program ran although insmod failed ({why}) and reported `{line}`"
                ));
                return;
            }
        }
        if line.starts_with("PASS ") {
            self.passed += 1;
        } else if line.starts_with("FAIL ") {
            self.failures.push(line.to_string());
        } else if line.starts_with("=== guest done") {
            self.done = true;
        } else if let Some(rest) = line.strip_prefix("=== guest up after ") {
            self.boot = Some(since_start);
            self.up_at = rest.split_whitespace().next().map(str::to_string);
        }
    }

    /// What went wrong with the run as a whole, once the device process ended: `failed` says
    /// how, if it did not exit with 0, and `code` is its exit code.
    fn finish(&mut self, failed: Option<String>, code: Option<i32>, timeout: u64, program: bool) {
        if let Some(why) = &self.insmod_failed {
            let what = if program {
                "the program"
            } else {
                "the check list"
            };
            self.problems
                .push(format!("insmod failed ({why}), so {what} was not run"));
        }
        if !self.done {
            self.problems
                .push("the guest never reached its final `=== guest done`".into());
        }
        if let Some(status) = failed {
            self.problems.push(match code {
                Some(124) => format!(
                    "timed out after {timeout} s, counted from the start with the guest's boot (--timeout)"
                ),
                Some(3) => "the card's simulation failed".into(),
                Some(c) if c > 128 => format!("stopped by signal {}", c - 128),
                _ => format!("xdma-vm exited with {status}"),
            });
        }
        if self.passed == 0 && self.failures.is_empty() {
            self.problems.push("no check printed a result".into());
        }
    }
}

fn forward(
    stream: impl std::io::Read + Send + 'static,
    console: bool,
    tx: mpsc::Sender<(bool, String)>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    // The serial console ends lines with CR LF.
                    let line = String::from_utf8_lossy(&buf)
                        .trim_end_matches(['\r', '\n'])
                        .to_string();
                    if tx.send((console, line)).is_err() {
                        return;
                    }
                }
            }
        }
    })
}

/// Prints each run's result and the totals; true when nothing failed.
pub(crate) fn summary(runs: &[Outcome]) -> bool {
    let mut passed = 0;
    let mut failed = 0;
    println!();
    println!("vm: results");
    for o in runs {
        let f = o.failures.len() + o.problems.len();
        passed += o.passed;
        failed += f;
        let boot = match (&o.boot, &o.up_at) {
            (Some(b), Some(up)) => format!(
                "booted in {:.1} s ({up} s of guest uptime)",
                b.as_secs_f64()
            ),
            _ => "never booted".to_string(),
        };
        println!(
            "  {:<16} {:>3} passed, {:>3} failed, {:6.1} s, {boot}; log {}",
            o.tag,
            o.passed,
            f,
            o.wall.as_secs_f64(),
            o.log.display()
        );
        for line in o.failures.iter().chain(o.problems.iter()) {
            println!("      {line}");
        }
    }
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    if interrupted {
        println!("vm: interrupted; the runs not started are not counted");
    }
    println!("{passed} passed, {failed} failed");
    failed == 0 && !interrupted && !runs.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `modinfo -F parmtype` prints for the release 2025.2.0 driver.
    const PARMTYPES: &str = "desc_blen_max:uint\nenable_st_c2h_credit:uint\ninterrupt_mode:uint\n\
                             poll_mode:uint\nc2h_timeout:uint\nh2c_timeout:uint\n";

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_parameter_the_module_lacks_is_refused_with_the_valid_ones() {
        let known = parse_parmtypes(PARMTYPES);
        assert_eq!(known.len(), 6);
        let o = parse(&args(&["--param", "nosuch=1", "--param", "c2h_timeout=5"])).expect("parses");
        let e = check_params(&known, &o.params).expect_err("refused");
        assert!(e.contains("--param nosuch:"), "{e}");
        for name in &known {
            assert!(e.contains(name.as_str()), "{e} lists {name}");
        }
        assert!(!e.contains("c2h_timeout=5"), "{e}");
        let o = parse(&args(&[
            "--param",
            "interrupt_mode=1",
            "--param",
            "c2h_timeout=5",
        ]))
        .expect("parses");
        assert_eq!(check_params(&known, &o.params), Ok(()));
        // Every parameter a run passes by itself is the module's.
        let own: Vec<(String, String)> = DEFAULT_PARAMS
            .iter()
            .copied()
            .chain(Mode::ALL.iter().filter_map(|m| m.param()))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(check_params(&known, &own), Ok(()));
    }

    #[test]
    fn the_timeout_says_that_it_counts_the_boot() {
        let help = USAGE.split("--timeout ").nth(2).expect("the option's line");
        assert!(help.contains("the guest's boot included"), "{help}");
        let mut o = Outcome::default();
        o.console_line(
            "=== guest up after 3.1 s: kernel 6.1",
            Duration::from_secs(20),
            false,
        );
        o.console_line("PASS driver loads", Duration::from_secs(25), false);
        o.finish(Some("exit status: 124".into()), Some(124), 300, false);
        let why = o.problems.join("; ");
        assert!(why.contains("timed out after 300 s"), "{why}");
        assert!(why.contains("boot"), "{why}");
    }

    const INSMOD: &str =
        "FAIL driver loads: insmod: insmod: can't insert '/lib/xdma/xdma.ko': invalid parameter";

    #[test]
    fn a_program_run_whose_insmod_failed_fails_saying_why() {
        // The guest as it is: insmod fails and nothing else runs.
        let mut o = Outcome::default();
        for line in [
            INSMOD,
            "=== insmod failed: insmod: can't insert",
            "=== guest done after 4 s",
        ] {
            o.console_line(line, Duration::from_secs(5), true);
        }
        o.finish(None, Some(0), 300, true);
        assert_eq!(o.passed, 0);
        let why = o.problems.join("; ");
        assert!(why.contains("insmod failed (insmod: can't insert"), "{why}");
        assert!(why.contains("the program was not run"), "{why}");
        // A guest that ran the program anyway (as one did before): its PASS counts for
        // nothing, and the run says why.
        let mut o = Outcome::default();
        for line in [
            INSMOD,
            "=== running true",
            "PASS program true",
            "=== guest done after 4 s",
        ] {
            o.console_line(line, Duration::from_secs(5), true);
        }
        o.finish(None, Some(0), 300, true);
        assert_eq!(o.passed, 0, "the program's PASS after a failed insmod");
        let why = o.problems.join("; ");
        assert!(
            why.contains("the program ran although insmod failed"),
            "{why}"
        );
        // The check list's run: the same, for the check list.
        let mut o = Outcome::default();
        for line in [INSMOD, "=== guest done after 4 s"] {
            o.console_line(line, Duration::from_secs(5), false);
        }
        o.finish(None, Some(0), 300, false);
        assert!(o.problems.join("; ").contains("the check list was not run"));
        // A driver that loads adds nothing.
        let mut o = Outcome::default();
        for line in [
            "PASS driver loads",
            "PASS program true",
            "=== guest done after 4 s",
        ] {
            o.console_line(line, Duration::from_secs(5), true);
        }
        o.finish(None, Some(0), 300, true);
        assert_eq!((o.passed, o.problems.len()), (2, 0), "{:?}", o.problems);
    }

    #[test]
    fn the_vendor_scripts_run_as_asked() {
        let o = parse(&[]).expect("parses");
        assert_eq!(o.vendor.for_run("mm", Mode::Poll), Vendor::Full);
        assert_eq!(o.timeout, Vendor::Full.default_timeout());
        let o = parse(&args(&["--vendor", "short", "--timeout", "50"])).expect("parses");
        assert_eq!(o.vendor.for_run("stream", Mode::Msi), Vendor::Short);
        assert_eq!(o.timeout, 50);
        let o = parse(&args(&["--vendor", "full", "--", "true"])).expect("parses");
        assert_eq!(o.timeout, Vendor::Off.default_timeout(), "a program's run");
        assert!(parse(&args(&["--vendor", "most"]))
            .expect_err("refused")
            .contains("--vendor `most`"));
        let plan = VendorPlan::Only(vec![("mm", Mode::Msix)], Vendor::Short);
        assert_eq!(plan.for_run("mm", Mode::Msix), Vendor::Short);
        assert_eq!(plan.for_run("mm", Mode::Msi), Vendor::Off);
        assert_eq!(plan.for_run("combined", Mode::Msix), Vendor::Off);
    }
}
