//! The server's configuration file: its own `[server]` section (the driver's module parameters
//! and version as the mount shows them) and the simulated card's `[sim]` section.

use std::path::Path;
use std::time::Duration;

use xdma_sim::SimConfig;

/// The whole file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FuseConfig {
    /// How the mount plays the driver.
    pub server: ServerConfig,
    /// The simulated card behind it (`xdma_sim::SimConfig`). Without a `[sim]` section the
    /// card waits at most 1 ms of wall time for a caller's next call (`sim.host_grace_ms`):
    /// the server's calls come from many threads as the kernel hands requests over, so the
    /// simulated time of a mount follows the host's anyway, and waiting longer only slows it.
    pub sim: SimConfig,
}

impl Default for FuseConfig {
    fn default() -> Self {
        FuseConfig {
            server: ServerConfig::default(),
            sim: SimConfig {
                host_grace_ms: 1,
                ..SimConfig::default()
            },
        }
    }
}

/// How the mount plays the driver.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// The node names' prefix, as the driver names its first card. Default `xdma0`.
    pub prefix: String,
    /// The driver's `c2h_timeout` module parameter, in seconds of wall-clock time: how long a
    /// C2H read waits for data before it fails with ETIMEDOUT. 0 = forever. Default 10, the
    /// driver's default.
    pub c2h_timeout: u32,
    /// The driver's `h2c_timeout`, served as a parameter file. H2C transfers end when the
    /// simulated card takes their data, or fail after its own stall limit
    /// (`sim.stream_stall_limit_us`). Default 10.
    pub h2c_timeout: u32,
    /// The driver release the mount plays, as XDMA_IOCINFO reports it. Default "2025.2.0".
    pub driver_version: String,
    /// Threads reading FUSE requests. Requests that can block (DMA, stream and event reads)
    /// run on threads of their own, so a few are enough. Default 4.
    pub threads: usize,
    /// The most bytes the kernel hands over in one read or write request (max_read and
    /// max_write): larger calls arrive cut into pieces of this size. Default 1 MiB, the
    /// kernel's usual limit of 256 pages.
    pub max_io: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            prefix: "xdma0".into(),
            c2h_timeout: 10,
            h2c_timeout: 10,
            driver_version: "2025.2.0".into(),
            threads: 4,
            max_io: 1 << 20,
        }
    }
}

impl ServerConfig {
    /// The C2H timeout, or None for forever.
    pub fn c2h_timeout(&self) -> Option<Duration> {
        (self.c2h_timeout != 0).then(|| Duration::from_secs(u64::from(self.c2h_timeout)))
    }

    /// The driver version number (`major * 1000 + minor * 100 + patch`).
    pub fn version_number(&self) -> Result<u32, String> {
        let parts: Vec<&str> = self.driver_version.split('.').collect();
        let num = |s: &str| s.parse::<u32>().ok();
        match parts.as_slice() {
            [a, b, c] => match (num(a), num(b), num(c)) {
                (Some(a), Some(b), Some(c)) if (2000..3000).contains(&a) && b < 10 && c < 100 => {
                    Ok(a * 1000 + b * 100 + c)
                }
                _ => Err(self.bad_version()),
            },
            _ => Err(self.bad_version()),
        }
    }

    fn bad_version(&self) -> String {
        format!(
            "[server] driver_version = {:?}: a release such as \"2020.2.2\" or \"2025.2.0\"",
            self.driver_version
        )
    }
}

impl FuseConfig {
    /// Reads the file; missing fields take their defaults.
    pub fn from_file(path: &Path) -> Result<FuseConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        FuseConfig::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads the configuration from TOML text.
    pub fn from_toml(text: &str) -> Result<FuseConfig, String> {
        let cfg: FuseConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks what no type rules out.
    pub fn validate(&self) -> Result<(), String> {
        let s = &self.server;
        s.version_number()?;
        if s.prefix.is_empty() || s.prefix.contains('/') {
            return Err(format!(
                "[server] prefix = {:?}: a file name such as \"xdma0\"",
                s.prefix
            ));
        }
        if s.threads == 0 || s.threads > 64 {
            return Err(format!("[server] threads = {}: 1 to 64", s.threads));
        }
        if s.max_io < 4096 || !s.max_io.is_multiple_of(4096) || s.max_io > (1 << 20) {
            return Err(format!(
                "[server] max_io = {}: a multiple of 4096 up to 1 MiB (the kernel's limit)",
                s.max_io
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_drivers() {
        let c = FuseConfig::from_toml("").expect("empty file");
        assert_eq!(c.server.c2h_timeout(), Some(Duration::from_secs(10)));
        assert_eq!(c.server.version_number(), Ok(2_025_200));
        let c = FuseConfig::from_toml(
            "[server]\nc2h_timeout = 0\ndriver_version = \"2020.2.2\"\n[sim]\nevents = 1\n",
        )
        .expect("file");
        assert_eq!(c.server.c2h_timeout(), None);
        assert_eq!(c.server.version_number(), Ok(2_020_202));
        assert_eq!(c.sim.events, 1);
        for bad in [
            "[server]\ndriver_version = \"new\"\n",
            "[server]\nthreads = 0\n",
            "[server]\nmax_io = 5000\n",
            "[server]\nprefx = \"x\"\n",
        ] {
            assert!(FuseConfig::from_toml(bad).is_err(), "{bad}");
        }
    }
}
