//! One run of a QEMU guest with the card as its PCIe function.
//!
//! QEMU gets one end of a socket pair as the proxy device's `fd=`, the guest's RAM as a shared
//! memfd (so that the card's DMA reaches it), and a qtest socket in a temporary folder for the
//! interrupts. The guest console goes straight to stdout; the device's log goes to stderr.
//! QEMU runs in a process group of its own, so that a Ctrl-C reaches this process, which stops
//! QEMU itself and says why; it also dies with this process if this process is killed.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use nix::fcntl::{fcntl, FcntlArg, FdFlag};
use nix::sys::signal::{kill, SigSet, SigmaskHow, Signal};
use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use nix::unistd::Pid;
use thiserror::Error;

use crate::server::{self, Report, ServerConfig, ServerError};
use crate::Variant;

/// Kernel arguments every run has: the console on the serial port (our stdout), a quiet boot,
/// and a panic that ends QEMU at once (with `-no-reboot`) rather than hanging the run.
pub const BASE_APPEND: &str = "console=ttyS0 quiet loglevel=4 panic=-1";

/// What to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The guest kernel.
    pub kernel: PathBuf,
    /// The guest initramfs.
    pub initrd: PathBuf,
    /// The card.
    pub variant: Variant,
    /// Extra kernel arguments.
    pub append: Option<String>,
    /// Guest RAM, in QEMU's syntax (`512M`).
    pub memory: String,
    /// The QEMU binary.
    pub qemu: PathBuf,
    /// Stop QEMU after this long.
    pub timeout: Option<Duration>,
    /// Protocol monitors on the card's buses.
    pub monitors: bool,
    /// User interrupt lines of the IP.
    pub user_irqs: usize,
    /// The engines' address alignment in bytes (1: unaligned transfers allowed).
    pub alignment: u32,
    /// Card cycles between two looks at the socket.
    pub slice: u64,
}

/// What stopped the run, when it was not the guest powering off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A signal to this process.
    Signal(Signal),
    /// The run's timeout.
    Timeout,
    /// The device model failed.
    DeviceFailed,
}

/// How a run ended.
#[derive(Debug)]
pub struct RunResult {
    /// QEMU's exit status.
    pub qemu: ExitStatus,
    /// Why the run was stopped, if it was.
    pub stopped: Option<Stop>,
    /// The device's error, if it failed.
    pub device_error: Option<ServerError>,
    /// What the device served.
    pub report: Option<Report>,
    /// Wall time from QEMU's start to its exit.
    pub wall: Duration,
}

impl RunResult {
    /// The process exit code for this result: QEMU's own, unless the run was stopped (124
    /// for the timeout, as timeout(1); 128 + the signal) or the device failed (3).
    pub fn exit_code(&self) -> i32 {
        match self.stopped {
            Some(Stop::Timeout) => 124,
            Some(Stop::Signal(s)) => 128 + s as i32,
            Some(Stop::DeviceFailed) => 3,
            None if self.device_error.is_some() => 3,
            None => self
                .qemu
                .code()
                .or_else(|| self.qemu.signal().map(|s| 128 + s))
                .unwrap_or(1),
        }
    }
}

/// What keeps a run from starting.
#[derive(Debug, Error)]
pub enum RunError {
    /// A file the run needs is missing.
    #[error("{what} {path} does not exist")]
    Missing {
        /// What the file is.
        what: &'static str,
        /// Its path.
        path: PathBuf,
    },
    /// A system call failed.
    #[error("{what}: {why}")]
    Sys {
        /// What was being done.
        what: &'static str,
        /// The error.
        why: String,
    },
    /// QEMU could not be started.
    #[error("cannot start {qemu}: {why}")]
    Spawn {
        /// The binary.
        qemu: PathBuf,
        /// The error.
        why: std::io::Error,
    },
    /// The device could not be started.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// The card's top could not be built.
    #[error(transparent)]
    Build(#[from] card_sim::SimError),
}

fn sys(what: &'static str) -> impl Fn(nix::Error) -> RunError {
    move |e| RunError::Sys {
        what,
        why: e.to_string(),
    }
}

/// A temporary folder, removed with everything in it when dropped.
#[derive(Debug)]
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, RunError> {
        let template = std::env::temp_dir().join("xdma-vm.XXXXXX");
        nix::unistd::mkdtemp(&template)
            .map(TempDir)
            .map_err(sys("cannot create a temporary folder"))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!("cannot remove {}: {e}", self.0.display());
        }
    }
}

enum Event {
    Signal(Signal),
    Device(Box<server::Outcome>),
}

/// The QEMU command line of a run.
pub fn qemu_command(opts: &RunOptions, fd: i32, qtest: &Path) -> Command {
    let mut cmd = Command::new(&opts.qemu);
    let append = match &opts.append {
        Some(extra) if !extra.trim().is_empty() => format!("{BASE_APPEND} {}", extra.trim()),
        _ => BASE_APPEND.to_string(),
    };
    cmd.args(["-accel", "tcg", "-smp", "1", "-m", &opts.memory])
        .arg("-object")
        .arg(format!(
            "memory-backend-memfd,id=mem,size={},share=on",
            opts.memory
        ))
        .args(["-machine", "pc,memory-backend=mem"])
        .args(["-nodefaults", "-vga", "none", "-display", "none"])
        .args(["-serial", "stdio", "-no-reboot"])
        .arg("-kernel")
        .arg(&opts.kernel)
        .arg("-initrd")
        .arg(&opts.initrd)
        .arg("-append")
        .arg(append)
        .arg("-device")
        .arg(format!("x-pci-proxy-dev,id=xdma0,fd={fd}"))
        .arg("-qtest")
        .arg(format!("unix:{},server=on,wait=off", qtest.display()))
        // qtest logs every command on stderr unless told not to.
        .args(["-qtest-log", "none"]);
    cmd
}

/// Runs the guest to its end: QEMU's exit, a signal, the timeout or the device's failure.
pub fn run(opts: &RunOptions) -> Result<RunResult, RunError> {
    for (what, path) in [("kernel", &opts.kernel), ("initrd", &opts.initrd)] {
        if !path.exists() {
            return Err(RunError::Missing {
                what,
                path: path.clone(),
            });
        }
    }
    // The card's top is built (or found in the cache) before QEMU starts: the device answers
    // the guest from its first access, and a top's first build takes minutes.
    if let Some(top) = opts.variant.top() {
        card_sim::Library::of(top.def())?;
    }
    // Signals are taken by a thread of their own through sigwait, so they are blocked before
    // any other thread exists (every thread inherits the mask). A child inherits the mask too,
    // so QEMU's is cleared again before it starts.
    let mut signals = SigSet::empty();
    signals.add(Signal::SIGINT);
    signals.add(Signal::SIGTERM);
    signals.add(Signal::SIGHUP);
    signals
        .thread_block()
        .map_err(sys("cannot block SIGINT and SIGTERM"))?;
    let (events, rx) = mpsc::channel();
    let sig_events = events.clone();
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            while let Ok(sig) = signals.wait() {
                if sig_events.send(Event::Signal(sig)).is_err() {
                    return;
                }
            }
        })
        .map_err(|e| RunError::Server(ServerError::Thread("signal", e)))?;

    let tmp = TempDir::new()?;
    let qtest = tmp.0.join("qtest.sock");
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(sys("cannot create the socket pair"))?;
    let mut cmd = qemu_command(opts, theirs.as_raw_fd(), &qtest);
    let inherit = theirs.as_raw_fd();
    cmd.stdin(Stdio::null()).process_group(0);
    // SAFETY: the closure runs in the forked child before exec and calls only fcntl, prctl
    // and sigprocmask, which are async-signal-safe; it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            // QEMU stops on SIGTERM only if it can receive it.
            nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
            // QEMU must inherit its end of the socket pair; our copy stays close-on-exec.
            // SAFETY: `inherit` is open in the child, a copy of the parent's descriptor.
            let fd = std::os::fd::BorrowedFd::borrow_raw(inherit);
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::empty()))?;
            // Should this process die without stopping QEMU, the kernel stops it.
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            Ok(())
        });
    }
    tracing::debug!("{cmd:?}");
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|why| RunError::Spawn {
        qemu: opts.qemu.clone(),
        why,
    })?;
    drop(theirs);
    let sock = UnixStream::from(ours);
    let shutdown = sock.try_clone().ok();
    let device_events = events.clone();
    let (device_tx, device_rx) = mpsc::channel();
    thread::Builder::new()
        .name("device-outcome".into())
        .spawn(move || {
            if let Ok(outcome) = device_rx.recv() {
                let _ = device_events.send(Event::Device(Box::new(outcome)));
            }
        })
        .map_err(|e| RunError::Server(ServerError::Thread("outcome", e)))?;
    let started_server = server::spawn(
        sock,
        ServerConfig {
            variant: opts.variant,
            monitors: opts.monitors,
            user_irqs: opts.user_irqs,
            alignment: opts.alignment,
            slice: opts.slice,
            qtest,
            qtest_timeout: Duration::from_secs(5),
        },
        device_tx,
    );
    if let Err(e) = started_server {
        stop_qemu(&mut child, "the device could not start");
        return Err(e.into());
    }

    let deadline = opts.timeout.map(|t| started + t);
    let mut stopped = None;
    let mut device_error = None;
    let mut report = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                tracing::error!("cannot wait for QEMU: {e}");
                break stop_qemu(&mut child, "it cannot be waited for");
            }
        }
        if stopped.is_none() && deadline.is_some_and(|d| Instant::now() >= d) {
            let secs = opts.timeout.map_or(0, |t| t.as_secs());
            tracing::error!("timeout: the guest still runs after {secs} s");
            stopped = Some(Stop::Timeout);
            break stop_qemu(&mut child, "the run timed out");
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Event::Signal(sig)) => {
                tracing::warn!("{sig} received");
                stopped = Some(Stop::Signal(sig));
                break stop_qemu(&mut child, &format!("{sig} was received"));
            }
            Ok(Event::Device(outcome)) => {
                let (result, r) = *outcome;
                report = Some(r);
                if let Err(e) = result {
                    tracing::error!("{e}");
                    device_error = Some(e);
                    stopped = Some(Stop::DeviceFailed);
                    break stop_qemu(&mut child, "a card whose simulation died is gone");
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {}
        }
    };
    let wall = started.elapsed();
    // With QEMU gone the reader sees the link close; make sure, and wait for the device's
    // counts.
    if let Some(s) = shutdown {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    let wait_until = Instant::now() + Duration::from_secs(10);
    while report.is_none() && Instant::now() < wait_until {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Event::Device(outcome)) => {
                let (result, r) = *outcome;
                report = Some(r);
                if let Err(e) = result {
                    if device_error.is_none() {
                        tracing::error!("{e}");
                        device_error = Some(e);
                    }
                }
            }
            Ok(Event::Signal(sig)) => tracing::warn!("{sig} received while stopping"),
            Err(_) => {}
        }
    }
    if report.is_none() {
        tracing::warn!("the card's thread did not finish; its counts are missing");
    }
    drop(tmp);
    Ok(RunResult {
        qemu: status,
        stopped,
        device_error,
        report,
        wall,
    })
}

/// Stops QEMU: SIGTERM, then SIGKILL if it has not gone within a few seconds.
fn stop_qemu(child: &mut Child, why: &str) -> ExitStatus {
    tracing::warn!("stopping QEMU: {why}");
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if let Ok(Some(status)) = child.try_wait() {
            return status;
        }
        thread::sleep(Duration::from_millis(20));
    }
    tracing::warn!("QEMU ignored SIGTERM; killing it");
    let _ = child.kill();
    match child.wait() {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("cannot reap QEMU: {e}");
            ExitStatus::from_raw(1 << 8)
        }
    }
}
