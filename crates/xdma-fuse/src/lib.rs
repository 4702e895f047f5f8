//! xdma-fuse: one simulated card served as the Linux XDMA driver's device nodes, so that
//! programs written for the driver (the `xdma-hw` backend, the vendor's `dma_to_device`,
//! `dma_from_device` and `reg_rw`, `dd`) run against the RTL unchanged.
//!
//! `xdma-fuse mount <DIR> [--config FILE]` mounts `<DIR>` with the nodes `xdma0_h2c_<k>`,
//! `xdma0_c2h_<k>`, `xdma0_user`, `xdma0_control`, `xdma0_events_<0..15>` and the driver's
//! module parameters under `parameters/`, and serves them in the foreground until Ctrl-C,
//! SIGTERM or an error, when it unmounts. The semantics are the driver's (see [`fs`]); what
//! FUSE cannot make identical is listed in `docs/xdma-fuse.md`.

pub mod config;
pub mod fs;

use std::path::Path;
use std::sync::{mpsc, Arc};
use std::time::Duration;

pub use config::{FuseConfig, ServerConfig};

/// What ends the server.
enum Stop {
    Signal(i32),
    Ended(std::io::Result<()>),
}

/// The signals that end the server: Ctrl-C, SIGTERM, a closed terminal.
fn stop_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t for every call.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
    }
    set
}

/// Lazily unmounts `dir` (umount2 with MNT_DETACH).
fn detach(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    // Without the right to unmount, the setuid helper may detach it.
    match std::process::Command::new("fusermount3")
        .arg("-u")
        .arg("-z")
        .arg(dir)
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        _ => Err(e),
    }
}

/// Mounts `dir` and serves the simulated card that `cfg` describes until a stop signal or an
/// error; unmounts before it returns.
pub fn serve(dir: &Path, cfg: &FuseConfig) -> Result<(), String> {
    cfg.validate()?;
    // Block the stop signals before any thread starts, so that every thread inherits the mask
    // and only the waiting thread below takes them.
    let set = stop_signals();
    // SAFETY: `set` is a valid signal set; this changes the calling thread's mask only.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };

    let card = xdma_sim::SimCard::open_with(&cfg.sim)
        .map_err(|e| format!("cannot start the simulated card: {e}"))?;
    let shared = Arc::new(fs::Shared::new(card, cfg.server.clone())?);
    let mut options = fuser::Config::default();
    options.mount_options = vec![
        fuser::MountOption::FSName("xdma-fuse".into()),
        fuser::MountOption::Subtype("xdma".into()),
        fuser::MountOption::CUSTOM(format!("max_read={}", cfg.server.max_io)),
    ];
    options.n_threads = Some(cfg.server.threads);
    options.clone_fd = true;
    let mut session = fuser::Session::new(fs::XdmaFs::new(shared.clone()), dir, &options)
        .map_err(|e| format!("cannot mount {}: {e}", dir.display()))?;
    shared.set_notifier(session.notifier());
    let mut unmounter = session.unmount_callable();

    let (tx, rx) = mpsc::channel::<Stop>();
    let ended = tx.clone();
    std::thread::Builder::new()
        .name("xdma-fuse-session".into())
        .spawn(move || {
            let _ = ended.send(Stop::Ended(session.run()));
        })
        .map_err(|e| format!("cannot start the session thread: {e}"))?;
    std::thread::Builder::new()
        .name("xdma-fuse-signals".into())
        .spawn(move || loop {
            let mut sig: libc::c_int = 0;
            // SAFETY: `set` is a valid signal set blocked in every thread; sigwait writes the
            // signal number into `sig`.
            if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
                let _ = tx.send(Stop::Signal(sig));
                return;
            }
        })
        .map_err(|e| format!("cannot start the signal thread: {e}"))?;
    eprintln!(
        "xdma-fuse: serving the simulated card at {} ({} H2C, {} C2H channels, c2h_timeout {} s, driver {}); Ctrl-C or SIGTERM unmounts",
        dir.display(),
        shared.info().h2c.len(),
        shared.info().c2h.len(),
        cfg.server.c2h_timeout,
        cfg.server.driver_version,
    );
    match rx.recv() {
        Ok(Stop::Signal(sig)) => {
            eprintln!("xdma-fuse: signal {sig}, unmounting {}", dir.display());
            let unmounted = match unmounter.unmount() {
                Ok(()) => Ok(()),
                // Files still open keep a plain unmount from succeeding: detach the mount from
                // the tree now; the connection goes when this process exits, and the holders'
                // next calls fail with ENOTCONN.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => detach(dir),
                Err(e) => Err(e),
            };
            // The session ends once the kernel has let go of the mount (at once, unless files
            // are still open).
            let _ = rx.recv_timeout(Duration::from_secs(2));
            unmounted.map_err(|e| format!("cannot unmount {}: {e}", dir.display()))
        }
        Ok(Stop::Ended(Ok(()))) => Ok(()),
        Ok(Stop::Ended(Err(e))) => {
            let _ = unmounter.unmount();
            Err(format!("the FUSE session ended: {e}"))
        }
        Err(_) => {
            let _ = unmounter.unmount();
            Err("the session thread stopped without a word".into())
        }
    }
}
