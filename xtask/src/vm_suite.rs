//! The card-tests suite in the guest of `cargo xtask vm`: the suite's test binaries, built on
//! this machine, run inside the guest through the driver backend against the unmodified
//! driver and the simulated card. The caller (the card-tests step) compares what they report
//! with the suite's run on the simulated card.
//!
//! The binaries are dynamically linked; each goes into the guest stripped, with the shared
//! libraries `ldd` lists, as a second initramfs archive that the kernel unpacks over the first.
//! The guest's `/etc/xdma-run` runs them one after another and prints, per target, a line
//! `=== card-tests <target>`, libtest's own output, and one `SKIP <target>\t<test>` line per
//! skip the suite's harness logged.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::vm::{self, Mode, Options, Run};

/// Module parameters of the suite's runs. A stream receive through the driver backend may not
/// wait less than the driver's `c2h_timeout`, and the suite's longest wait ([`WAIT_S`]) must
/// cover a slow guest: 5 s under 10 s does both.
const PARAMS: &[(&str, &str)] = &[("c2h_timeout", "5"), ("h2c_timeout", "30")];
/// The suite's wait for data or an interrupt that should come (`CARD_TESTS_WAIT_S`).
const WAIT_S: &str = "10";
/// Cases of each model-based property test in the guest. Through the driver the card moves a
/// few MB per wall second, so the default 24 cases take minutes; the guest's run is there for
/// the driver's semantics, which a few cases exercise, while the simulated card runs them all.
const PROPTEST_CASES: &str = "2";
/// Seconds the whole suite may take in one guest.
const TIMEOUT_S: u64 = 1500;

/// One marker line per target in the guest's output.
pub(crate) const TARGET_MARK: &str = "=== card-tests ";
/// The prefix of a skip line.
pub(crate) const SKIP_MARK: &str = "SKIP ";

/// The suite's test binaries, built by cargo: `(target, executable)`.
fn build_targets(root: &Path, targets: &[&str]) -> Result<Vec<(String, PathBuf)>, String> {
    let mut args = Vec::new();
    for t in targets {
        args.extend(["--test", t]);
    }
    let built = crate::build::test_executables(root, &args)?;
    targets
        .iter()
        .map(|t| {
            built
                .iter()
                .find(|b| b.package == "card-tests" && b.target == *t)
                .map(|b| (t.to_string(), b.exe.clone()))
                .ok_or_else(|| format!("cargo built no card-tests binary for target `{t}`"))
        })
        .collect()
}

/// The guest script that runs every target.
fn script(targets: &[(String, PathBuf)]) -> String {
    let mut s = String::from(
        "#!/bin/sh\n\
         # The card-tests suite through the driver backend, one target after another.\n\
         export XDMA_BACKEND=hw XDMA_DEVICE=/dev/xdma0 XDMA_CONFIG=/opt/suite/suite.toml\n",
    );
    s.push_str(&format!(
        "export CARD_TESTS_WAIT_S={WAIT_S} PROPTEST_CASES={PROPTEST_CASES}\nrc=0\n"
    ));
    for (t, _) in targets {
        s.push_str(&format!(
            "echo '{TARGET_MARK}{t}'\n\
             CARD_TESTS_SKIP_LOG=/tmp/{t}.skips /opt/suite/{t} --test-threads=1 || rc=1\n\
             [ -f /tmp/{t}.skips ] && while IFS= read -r l; do printf '{SKIP_MARK}{t}\\t%s\\n' \"$l\"; done < /tmp/{t}.skips\n"
        ));
    }
    s.push_str("exit $rc\n");
    s
}

/// The initramfs with programs added under /opt/suite (stripped, with their shared
/// libraries), the suite's configuration, and `script` as /etc/xdma-run.
fn with_programs(
    root: &Path,
    out: &Path,
    base: &Path,
    targets: &[(String, PathBuf)],
    script: &str,
    name: &str,
) -> Result<PathBuf, String> {
    let r = out.join("suite-rootfs");
    fs::remove_dir_all(&r).ok();
    vm::mkdir(&r.join("opt/suite"))?;
    vm::mkdir(&r.join("etc"))?;
    for (t, exe) in targets {
        let dest = r.join("opt/suite").join(t);
        fs::copy(exe, &dest).map_err(|e| format!("{}: {e}", exe.display()))?;
        // Debug information is most of a test binary; the guest's RAM holds the archive.
        let st = Command::new("strip")
            .arg(&dest)
            .status()
            .map_err(|e| format!("cannot run strip: {e}"))?;
        if !st.success() {
            return Err(format!("strip {} failed", dest.display()));
        }
        vm::copy_libraries(exe, &r)?;
    }
    let config = root.join("crates/card-tests/suite.toml");
    fs::copy(&config, r.join("opt/suite/suite.toml"))
        .map_err(|e| format!("{}: {e}", config.display()))?;
    let run = r.join("etc/xdma-run");
    fs::write(&run, script).map_err(|e| e.to_string())?;
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&run, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    fs::write(r.join("etc/xdma-run.name"), format!("{name}\n")).map_err(|e| e.to_string())?;
    let extra = out.join(format!("{name}.cpio.gz"));
    vm::pack(&r, &extra)?;
    let initrd = out.join(format!("initrd-{name}.gz"));
    let mut bytes = fs::read(base).map_err(|e| e.to_string())?;
    bytes.extend(fs::read(&extra).map_err(|e| e.to_string())?);
    fs::write(&initrd, bytes).map_err(|e| e.to_string())?;
    fs::remove_file(&extra).ok();
    fs::remove_dir_all(&r).ok();
    Ok(initrd)
}

/// Why the guest cannot run on this machine, when it cannot: no QEMU and no way to install it.
pub(crate) fn unavailable() -> Option<String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let qemu = Path::new("/usr/bin/qemu-system-x86_64").is_file();
    if !root && !qemu {
        return Some(
            "no qemu-system-x86_64 and not root to install it: apt-get install qemu-system-x86 busybox-static linux-headers-amd64 cpio"
                .into(),
        );
    }
    None
}

/// Runs `targets` of the suite in a guest whose card is `variant`, in the driver's default
/// interrupt mode, with the card's engines aligned as the suite's simulated card is
/// (`alignment`); returns the guest console's log, to be read by the caller.
pub(crate) fn run(
    root: &Path,
    variant: &'static str,
    targets: &[&str],
    alignment: u32,
) -> Result<PathBuf, String> {
    let built = build_targets(root, targets)?;
    in_guest(
        root,
        variant,
        alignment,
        &built,
        &script(&built),
        "card-tests",
    )
}

/// Boots a guest of `variant` with `programs` and `script` added, in the driver's default
/// interrupt mode; returns the console log once every check passed.
fn in_guest(
    root: &Path,
    variant: &'static str,
    alignment: u32,
    programs: &[(String, PathBuf)],
    script: &str,
    name: &str,
) -> Result<PathBuf, String> {
    vm::ensure_packages()?;
    let src = vm::driver_source(root)?;
    let out = root.join("target/vm");
    vm::mkdir(&out)?;
    let kver = vm::kernel_version()?;
    let kernel = vm::kernel_image(&out, &kver)?;
    let bins = vm::driver_and_tools(&out, &src, &kver, false)?;
    let base = vm::initramfs(root, &out, &src, &bins, false)?;
    let initrd = with_programs(root, &out, &base, programs, script, name)?;
    let device = vm::build_device(root, false)?;
    let logs = out.join("logs");
    vm::mkdir(&logs)?;
    let opts = Options {
        variants: vec![variant],
        modes: vec![Mode::Msix],
        params: PARAMS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        timeout: TIMEOUT_S,
        program: vec![name.into()],
        alignment,
        ..Options::default()
    };
    let outcome = Run {
        variant,
        mode: Mode::Msix,
    }
    .execute(&device, &kernel, &initrd, &opts, &logs)?;
    if !vm::summary(std::slice::from_ref(&outcome)) {
        return Err(format!(
            "{name} failed in the guest ({variant} card); log {}",
            outcome.log.display()
        ));
    }
    Ok(outcome.log)
}

/// The measurement tool's subcommands and the acquire example, each a `PASS`/`FAIL` line, as
/// the guest runs them: short runs, for function only (their times are the emulator's).
const TOOL_RUNS: &[(&str, &str)] = &[
    ("xdma-bench sweep", "xdma-bench sweep --sizes 4K,64K --runs 1 --backend hw --device /dev/xdma0"),
    (
        "xdma-bench sweep serial",
        "xdma-bench sweep --sizes 4K,64K --runs 1 --mode serial --backend hw --device /dev/xdma0",
    ),
    ("xdma-bench concurrent", "xdma-bench concurrent --seconds 0.3 --backend hw --device /dev/xdma0"),
    (
        "xdma-bench stream",
        "xdma-bench stream --frames 8 --channels 1 --mode one-at-a-time --backend hw --device /dev/xdma0",
    ),
    (
        "xdma-bench stream queued",
        "xdma-bench stream --frames 8 --channels 2 --mode queued --backend hw --device /dev/xdma0",
    ),
    (
        "xdma-bench rtt",
        "xdma-bench rtt --minutes 0.002 --segment-min 0.001 --backend hw --device /dev/xdma0",
    ),
    ("acquire example", "acquire"),
];

/// Builds xdma-bench and the acquire example and runs them in a guest of the combined card
/// (the one with memory-mapped and stream channels), through the real driver.
pub(crate) fn tools(root: &Path) -> Result<(), String> {
    let dir = crate::build::programs(root)?;
    let programs = vec![
        (
            "xdma-bench".to_string(),
            crate::build::program(&dir, "xdma-bench")?,
        ),
        (
            "acquire".to_string(),
            crate::build::program(&dir, "examples/acquire")?,
        ),
    ];
    let mut s = String::from(
        "#!/bin/sh\n\
         # The measurement tool and the main job through the driver backend.\n\
         export XDMA_BACKEND=hw XDMA_DEVICE=/dev/xdma0 PATH=/opt/suite:$PATH\n\
         rc=0\n\
         echo 'NOTE: times below are taken inside an emulated guest and say nothing about the card'\n",
    );
    for (name, line) in TOOL_RUNS {
        s.push_str(&format!(
            "echo '=== {line}'\n\
             if {line}; then echo 'PASS {name}'; else echo 'FAIL {name}: exit code '$?; rc=1; fi\n"
        ));
    }
    s.push_str("exit $rc\n");
    let started = std::time::Instant::now();
    in_guest(root, "combined", 1, &programs, &s, "tools")?;
    println!(
        "xtask: xdma-bench and the acquire example in the guest: passed ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
