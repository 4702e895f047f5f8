//! What the host tells about itself: its CPU model, kernel, the CPU a thread runs on and that
//! CPU's clock, pinning a thread to a CPU, and the XDMA driver's version. Everything but
//! pinning is best effort: a host that does not tell gives `None`.

use xdma::{Error, Result};

/// The first line of a file, trimmed, if it can be read.
fn first_line(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.lines().next().map(|l| l.trim().to_string()))
        .filter(|s| !s.is_empty())
}

/// The CPU's model name (Linux `/proc/cpuinfo`).
pub fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name") || l.starts_with("Processor"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// The kernel's name and release (Linux `/proc/sys/kernel/ostype` and `osrelease`), else the
/// operating system's name.
pub fn kernel() -> String {
    match (
        first_line("/proc/sys/kernel/ostype"),
        first_line("/proc/sys/kernel/osrelease"),
    ) {
        (Some(t), Some(r)) => format!("{t} {r}"),
        _ => std::env::consts::OS.to_string(),
    }
}

/// The loaded XDMA driver module's version (`/sys/module/xdma/version`), where it has one.
pub fn driver_version() -> Option<String> {
    first_line("/sys/module/xdma/version")
}

/// The CPU the calling thread is on now (`sched_getcpu`).
pub fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and only reads the calling thread's state.
        let c = unsafe { libc::sched_getcpu() };
        usize::try_from(c).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// CPU `cpu`'s current clock in MHz (Linux cpufreq `scaling_cur_freq`, in kHz).
pub fn cpu_mhz(cpu: usize) -> Option<f64> {
    first_line(&format!(
        "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq"
    ))
    .and_then(|s| s.parse::<f64>().ok())
    .map(|khz| khz / 1e3)
}

/// Pins the calling thread to CPU `cpu`, so that the scheduler cannot move it between CPUs
/// (each move costs a cold cache and may land on a CPU at another clock).
pub fn pin_to(cpu: usize) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        if cpu >= max {
            return Err(Error::Invalid {
                op: "pinning the loop thread",
                problem: format!("CPU {cpu} is beyond the {max} CPUs a CPU set holds"),
            });
        }
        // SAFETY: an all-zero cpu_set_t is a valid empty set; CPU_SET writes one bit inside
        // it (cpu is below the set's size, checked above); sched_setaffinity reads the set
        // for the calling thread (pid 0) and is given its exact size.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(Error::Invalid {
                op: "pinning the loop thread",
                problem: format!(
                    "CPU {cpu}: {e}; give a CPU this process may run on (see `nproc` and `taskset -p $$`)"
                ),
            });
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(Error::Unsupported {
            backend: "any",
            what: format!("pinning the loop thread to CPU {cpu}"),
            why: "thread affinity is implemented for Linux only".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pinned_thread_runs_on_its_cpu() {
        std::thread::spawn(|| {
            pin_to(0).expect("CPU 0 is always there");
            for _ in 0..1000 {
                assert_eq!(current_cpu(), Some(0));
                std::hint::black_box(0u64);
            }
            // A CPU beyond the set is refused by name.
            let err = pin_to(1 << 20).expect_err("out of range");
            assert!(err.to_string().contains("1048576"), "{err}");
        })
        .join()
        .expect("thread");
        assert!(!kernel().is_empty());
    }
}
