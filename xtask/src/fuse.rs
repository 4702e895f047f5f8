//! The mount step: `xdma-fuse` serving the simulated card as the XDMA driver's nodes while a
//! cargo command runs against it with `XDMA_BACKEND=hw XDMA_DEVICE=<mount>/xdma0`. The server
//! is a program of its own (spawned, never linked), so xtask keeps its few dependencies.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the server may take to build its model and mount.
const MOUNT_WAIT: Duration = Duration::from_secs(300);
/// How long the server may take to unmount and exit after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_secs(30);

/// Why a FUSE mount cannot be made on this machine, or None when it can.
pub fn unavailable() -> Option<String> {
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
    {
        return Some(format!(
            "/dev/fuse cannot be opened ({e}): the fuse kernel module is not loaded, or this container has no FUSE device"
        ));
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let helper = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("fusermount3").is_file()))
        .unwrap_or(false);
    if !root && !helper {
        return Some(
            "not root and no fusermount3 on PATH: install the Debian package fuse3 (apt-get install fuse3) or run as root"
                .into(),
        );
    }
    None
}

/// A mounted server; unmounts (and stops the server) when dropped.
struct Mounted {
    dir: PathBuf,
    child: Option<Child>,
}

impl Mounted {
    fn is_mounted(&self) -> bool {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let dir = self.dir.to_string_lossy().into_owned();
        mounts
            .lines()
            .any(|l| l.split(' ').nth(1) == Some(dir.as_str()))
    }

    /// SIGTERM to the server by its process id, then a wait for it to unmount and exit; a
    /// server that does not is killed and its mount detached.
    fn stop(&mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        let status = crate::wait_or_kill(&mut child, EXIT_WAIT);
        if self.is_mounted() {
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
            let _ = Command::new("fusermount3")
                .arg("-u")
                .arg("-z")
                .arg(&self.dir)
                .status();
        }
        let _ = std::fs::remove_dir(&self.dir);
        match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => Err(format!("xdma-fuse exited with {s} at unmount")),
            None => Err(format!(
                "xdma-fuse did not exit within {EXIT_WAIT:?} of SIGTERM; killed it and detached {}",
                self.dir.display()
            )),
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Builds `xdma-fuse`, mounts the simulated card with `config` (a TOML file of the server, or
/// its defaults), runs `cmd` with `XDMA_BACKEND=hw XDMA_DEVICE=<mount>/xdma0`, and unmounts,
/// whether the command passed or failed. The command's failure comes first in the result.
pub fn with_mount(root: &Path, config: Option<&Path>, mut cmd: Command) -> Result<(), String> {
    with_mount_using(root, config, |root, device| {
        cmd.env("XDMA_BACKEND", "hw").env("XDMA_DEVICE", device);
        crate::run(root, cmd)
    })
}

/// As [`with_mount`], with whatever `run` does while the card is mounted; it is given the
/// workspace root and the node prefix (`<mount>/xdma0`) to pass as `XDMA_DEVICE` with
/// `XDMA_BACKEND=hw`.
pub fn with_mount_using<T>(
    root: &Path,
    config: Option<&Path>,
    run: impl FnOnce(&Path, &Path) -> Result<T, String>,
) -> Result<T, String> {
    let bin = crate::build::program(&crate::build::programs(root)?, "xdma-fuse")?;
    let dir = std::env::temp_dir().join(format!("xdma-fuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let mut server = Command::new(&bin);
    server.arg("mount").arg(&dir).stdin(Stdio::null());
    if let Some(c) = config {
        server.arg("--config").arg(c);
    }
    let child = server
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let mut mounted = Mounted {
        dir: dir.clone(),
        child: Some(child),
    };
    let control = dir.join("xdma0_control");
    let deadline = Instant::now() + MOUNT_WAIT;
    while !control.exists() {
        if let Some(c) = mounted.child.as_mut() {
            if let Ok(Some(status)) = c.try_wait() {
                mounted.child = None;
                return Err(format!(
                    "xdma-fuse exited before it mounted {}: {status}",
                    dir.display()
                ));
            }
        }
        if Instant::now() > deadline {
            return Err(format!(
                "xdma-fuse did not mount {} within {MOUNT_WAIT:?}",
                dir.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let started = Instant::now();
    let ran = run(root, &dir.join("xdma0"));
    println!(
        "xtask: {:.1} s over the xdma-fuse mount at {}",
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    let stopped = mounted.stop();
    let ran = ran?;
    stopped.map(|()| ran)
}
