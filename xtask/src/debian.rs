//! Debian's packages, for the tools the tasks need beside cargo: installed with apt-get where
//! they are missing, or downloaded and unpacked into a folder without installing them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

static APT_UPDATED: AtomicBool = AtomicBool::new(false);

/// `apt-get update`, once per run.
pub fn apt_update() -> Result<(), String> {
    if APT_UPDATED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    let status = Command::new("apt-get")
        .args(["update", "-q"])
        .status()
        .map_err(|e| format!("cannot run apt-get: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("apt-get update failed ({status})"))
    }
}

/// Whether this process may install packages: root, with apt-get.
pub fn can_install() -> bool {
    // /proc/self belongs to the effective user.
    let root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    root && Command::new("apt-get")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Installs `packages`; on a failure, refreshes the package lists once (they may be missing
/// or stale on a fresh machine) and tries again.
pub fn install(packages: &[&str]) -> Result<(), String> {
    if packages.is_empty() {
        return Ok(());
    }
    let attempt = || {
        Command::new("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "-q", "--no-install-recommends"])
            .args(packages)
            .status()
            .map(|s| s.success())
            .map_err(|e| format!("cannot run apt-get: {e}"))
    };
    if attempt()? {
        return Ok(());
    }
    apt_update()?;
    if attempt()? {
        Ok(())
    } else {
        Err(format!(
            "apt-get install {} failed; as root, run it by hand",
            packages.join(" ")
        ))
    }
}

/// Downloads the first of `packages` that apt-get finds and unpacks it into `dir/x` (which is
/// emptied first), without installing it; returns that folder.
pub fn unpack(packages: &[String], dir: &Path) -> Result<PathBuf, String> {
    let dl = dir.join("download");
    std::fs::remove_dir_all(&dl).ok();
    std::fs::create_dir_all(&dl).map_err(|e| format!("cannot make {}: {e}", dl.display()))?;
    let download = |pkg: &str| {
        Command::new("apt-get")
            .args(["download", "-q", pkg])
            .current_dir(&dl)
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    let mut got = packages.iter().any(|p| download(p));
    if !got {
        apt_update()?;
        got = packages.iter().any(|p| download(p));
    }
    if !got {
        return Err(format!(
            "apt-get download {} failed: the package is not in the package lists",
            packages.join(" / ")
        ));
    }
    let deb = std::fs::read_dir(&dl)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or("apt-get download left no .deb")?;
    let x = dir.join("x");
    std::fs::remove_dir_all(&x).ok();
    let status = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&x)
        .status()
        .map_err(|e| format!("cannot run dpkg-deb: {e}"))?;
    if !status.success() {
        return Err(format!("dpkg-deb -x {} failed ({status})", deb.display()));
    }
    std::fs::remove_dir_all(&dl).ok();
    Ok(x)
}
