//! What the backend learns about the driver itself: its version (XDMA_IOCINFO) and the module
//! parameters that change what a call does (`/sys/module/xdma/parameters/`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The driver's version as XDMA_IOCINFO reports it (`major * 1000 + minor * 100 + patch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DriverVersion {
    /// Release year, for example 2020.
    pub major: u32,
    /// Release within the year, for example 2.
    pub minor: u32,
    /// Patch level.
    pub patch: u32,
}

impl DriverVersion {
    /// Decodes the driver's version number; None for a number no release uses.
    pub fn from_number(n: u32) -> Option<DriverVersion> {
        let major = n / 1000;
        let minor = (n % 1000) / 100;
        let patch = n % 100;
        (2000..3000).contains(&major).then_some(DriverVersion {
            major,
            minor,
            patch,
        })
    }

    /// The number XDMA_IOCINFO carries.
    pub fn number(self) -> u32 {
        self.major * 1000 + self.minor * 100 + self.patch
    }

    /// True for releases that report a DMA timeout as errno 512 (ERESTARTSYS) rather than
    /// ETIMEDOUT: every release before 2025.2.
    pub fn timeout_is_errno_512(self) -> bool {
        (self.major, self.minor) < (2025, 2)
    }
}

impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The driver's module parameters that matter to the backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleParams {
    /// Where they were read from, or None when the folder was not there (the driver's
    /// defaults are assumed then).
    pub source: Option<PathBuf>,
    /// `c2h_timeout` in seconds, 0 = wait forever. Driver default 10.
    pub c2h_timeout_s: u32,
    /// `h2c_timeout` in seconds, 0 = wait forever. Driver default 10.
    pub h2c_timeout_s: u32,
    /// `desc_blen_max`: the longest buffer one descriptor covers. Driver default 2^28 - 1.
    pub desc_blen_max: u64,
    /// `enable_st_c2h_credit`: stream C2H credit mode (a ring of 1023 descriptors instead of
    /// 2048). Driver default 0.
    pub enable_st_c2h_credit: u32,
    /// `poll_mode`: 1 = the driver polls write-backs instead of taking interrupts. Default 0.
    pub poll_mode: u32,
}

impl Default for ModuleParams {
    fn default() -> Self {
        ModuleParams {
            source: None,
            c2h_timeout_s: 10,
            h2c_timeout_s: 10,
            desc_blen_max: u64::from(xdma_regmap::DESC_MAX_LEN),
            enable_st_c2h_credit: 0,
            poll_mode: 0,
        }
    }
}

impl ModuleParams {
    /// Reads the parameters from `dir` (one file per parameter, as sysfs has them). A folder
    /// that is not there gives the driver's defaults; a file that is there but does not hold a
    /// number is an error naming it.
    pub fn read(dir: &Path) -> Result<ModuleParams, String> {
        let mut p = ModuleParams::default();
        if !dir.is_dir() {
            return Ok(p);
        }
        p.source = Some(dir.to_path_buf());
        let num = |name: &str| -> Result<Option<u64>, String> {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(s) => s.trim().parse::<u64>().map(Some).map_err(|_| {
                    format!(
                        "{}: {:?} is not a number (the driver's parameter files hold one decimal number)",
                        path.display(),
                        s.trim()
                    )
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("{}: {e}", path.display())),
            }
        };
        let small = |v: u64, name: &str| {
            u32::try_from(v).map_err(|_| format!("module parameter {name} = {v} is out of range"))
        };
        if let Some(v) = num("c2h_timeout")? {
            p.c2h_timeout_s = small(v, "c2h_timeout")?;
        }
        if let Some(v) = num("h2c_timeout")? {
            p.h2c_timeout_s = small(v, "h2c_timeout")?;
        }
        if let Some(v) = num("desc_blen_max")? {
            p.desc_blen_max = v.max(1);
        }
        if let Some(v) = num("enable_st_c2h_credit")? {
            p.enable_st_c2h_credit = small(v, "enable_st_c2h_credit")?;
        }
        if let Some(v) = num("poll_mode")? {
            p.poll_mode = small(v, "poll_mode")?;
        }
        Ok(p)
    }

    /// How long one stream read may block before the driver gives up; None = forever.
    pub fn c2h_timeout(&self) -> Option<Duration> {
        (self.c2h_timeout_s != 0).then(|| Duration::from_secs(u64::from(self.c2h_timeout_s)))
    }

    /// Where the parameters came from, for messages.
    pub fn origin(&self) -> String {
        match &self.source {
            Some(p) => format!("read from {}", p.display()),
            None => "the driver's default; no module parameters were found".to_string(),
        }
    }
}

/// What the backend found out about the driver at open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverInfo {
    /// The version XDMA_IOCINFO reported, or None when the node did not answer it.
    pub version: Option<DriverVersion>,
    /// The PCI vendor and device ids XDMA_IOCINFO reported.
    pub pci_id: Option<(u16, u16)>,
    /// The module parameters.
    pub params: ModuleParams,
    /// Memory-mapped engines that an earlier process had left in fixed-address mode
    /// (ADDRMODE is the engine's and outlives the process) and that open put back into
    /// incrementing mode, as (direction, channel).
    pub addrmode_reset: Vec<(xdma_core::Direction, usize)>,
    /// User interrupts that were latched before open and were drained (event numbers).
    pub stale_events: Vec<usize>,
}

impl DriverInfo {
    /// One line for logs and messages: the version and how it reports timeouts.
    pub fn describe(&self) -> String {
        match self.version {
            Some(v) if v.timeout_is_errno_512() => {
                format!("XDMA driver {v} (reports DMA timeouts as errno 512)")
            }
            Some(v) => format!("XDMA driver {v} (reports DMA timeouts as ETIMEDOUT)"),
            None => "XDMA driver of unknown version (XDMA_IOCINFO not answered)".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_decode_as_the_driver_encodes_them() {
        // DRV_MOD_VERSION_NUMBER = major * 1000 + minor * 100 + patch (version.h).
        let v = DriverVersion::from_number(2_020_202).expect("2020.2.2");
        assert_eq!((v.major, v.minor, v.patch), (2020, 2, 2));
        assert!(v.timeout_is_errno_512());
        let v = DriverVersion::from_number(2_025_200).expect("2025.2.0");
        assert_eq!(v.to_string(), "2025.2.0");
        assert!(!v.timeout_is_errno_512());
        assert_eq!(v.number(), 2_025_200);
        assert_eq!(DriverVersion::from_number(7), None);
    }

    #[test]
    fn parameters_are_read_from_their_files() {
        let dir = tempfile::tempdir().expect("tmp");
        assert_eq!(
            ModuleParams::read(&dir.path().join("none")).expect("absent"),
            ModuleParams::default()
        );
        std::fs::write(dir.path().join("c2h_timeout"), "3\n").expect("write");
        std::fs::write(dir.path().join("desc_blen_max"), "1024\n").expect("write");
        let p = ModuleParams::read(dir.path()).expect("read");
        assert_eq!(p.c2h_timeout(), Some(Duration::from_secs(3)));
        assert_eq!(p.h2c_timeout_s, 10, "a missing file keeps the default");
        assert_eq!(p.desc_blen_max, 1024);
        std::fs::write(dir.path().join("c2h_timeout"), "0\n").expect("write");
        assert_eq!(
            ModuleParams::read(dir.path()).expect("read").c2h_timeout(),
            None
        );
        std::fs::write(dir.path().join("c2h_timeout"), "soon\n").expect("write");
        let e = ModuleParams::read(dir.path()).expect_err("not a number");
        assert!(e.contains("c2h_timeout"), "{e}");
    }
}
