//! Configuration: which backend, which device, and every backend's parameters, from a TOML file
//! and the environment (`XDMA_BACKEND=sim|hw`, `XDMA_DEVICE=/dev/xdma0`, `XDMA_CONFIG=file`).

use std::path::PathBuf;
use std::time::Duration;

use crate::api::ChannelKind;
use crate::engine::EngineConfig;
use crate::error::{Error, Result};
use crate::timing::TimingConfig;

/// Environment variable naming the backend: `sim` or `hw`.
pub const BACKEND_ENV: &str = "XDMA_BACKEND";
/// Environment variable naming the device node prefix, for example `/dev/xdma0`.
pub const DEVICE_ENV: &str = "XDMA_DEVICE";
/// Environment variable naming a TOML file with a whole [`Config`]; the two variables above
/// override its fields.
pub const CONFIG_ENV: &str = "XDMA_CONFIG";

/// Which backend to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The simulated card (cargo feature `sim`).
    #[default]
    Sim,
    /// A real board through the Linux XDMA driver (cargo feature `hw`).
    Hw,
}

impl std::str::FromStr for BackendKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<BackendKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sim" => Ok(BackendKind::Sim),
            "hw" => Ok(BackendKind::Hw),
            other => Err(Error::Config(format!(
                "{BACKEND_ENV}={other:?}: use `sim` for the simulated card or `hw` for a board on the XDMA driver"
            ))),
        }
    }
}

/// Settings of the Linux driver backend.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HwConfig {
    /// Map the user BAR into memory (mmap of the `_user` node) for register access instead of
    /// one pread/pwrite per word. Default false: the system-call path works on every setup.
    pub mmap_user: bool,
    /// The engines' alignment in bytes when the driver cannot be asked (ALIGN_GET fails).
    /// Default 1, the IP's unaligned mode.
    pub fallback_alignment: u64,
    /// User interrupt event nodes the driver creates (`_events_0` to `_events_15`). Default 16.
    pub events: usize,
}

impl Default for HwConfig {
    fn default() -> Self {
        HwConfig {
            mmap_user: false,
            fallback_alignment: 1,
            events: 16,
        }
    }
}

/// Settings of the simulated card.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// The RTL top that is the card, by module name. Default `sim_top` (card_core with the
    /// DDR3 model). A name this build does not have is a missing device.
    pub top: String,
    /// The H2C channels of the simulated card, by index. Default: 0 memory-mapped (the card's
    /// `s_axi` write side), 1 stream (`s_axis_h2c0`).
    pub h2c: Vec<ChannelKind>,
    /// The C2H channels. Default: 0 memory-mapped (`s_axi` read side), 1 and 2 streams
    /// (`m_axis_c2h0`, `m_axis_c2h1`).
    pub c2h: Vec<ChannelKind>,
    /// User interrupt lines (`usr_irq_req` bits). Default 1.
    pub events: usize,
    /// The XDMA engine model's shape and limits.
    pub engine: EngineConfig,
    /// The link and driver timing model.
    pub timing: TimingConfig,
    /// How long, in microseconds of simulated time, the card may hold an H2C stream beat
    /// waiting (TREADY low) before the send fails with a timeout. Default 1000: far longer than
    /// any healthy stall, yet short enough to simulate in seconds.
    pub stream_stall_limit_us: u64,
    /// Wall-clock bound on any one request to the simulation thread, in seconds; a request
    /// that takes longer fails with a timeout rather than hang. Default 600.
    pub reply_timeout_s: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            top: "sim_top".into(),
            h2c: vec![ChannelKind::MemoryMapped, ChannelKind::Stream],
            c2h: vec![
                ChannelKind::MemoryMapped,
                ChannelKind::Stream,
                ChannelKind::Stream,
            ],
            events: 1,
            engine: EngineConfig::default(),
            timing: TimingConfig::default(),
            stream_stall_limit_us: 1000,
            reply_timeout_s: 600,
        }
    }
}

impl SimConfig {
    /// The wall-clock bound on one request.
    pub fn reply_timeout(&self) -> Duration {
        Duration::from_secs(self.reply_timeout_s)
    }
}

/// Everything needed to open a card.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Which backend. Default `sim`.
    pub backend: BackendKind,
    /// The driver's node prefix: nodes are `<device>_h2c_0`, `<device>_user`, and so on. Any
    /// folder works, which is how the tests point the backend at ordinary files. Default
    /// `/dev/xdma0`.
    pub device: PathBuf,
    /// Bytes of card memory behind the memory-mapped channels. Default 2 GiB: the reference
    /// board's DDR3 (README).
    pub memory_size: u64,
    /// Bytes of the user BAR. Default 64 KiB: card_core's AXI-Lite port has 16 address bits.
    pub user_bar_size: u64,
    /// The Linux driver backend.
    pub hw: HwConfig,
    /// The simulated card.
    pub sim: SimConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            backend: BackendKind::Sim,
            device: PathBuf::from("/dev/xdma0"),
            memory_size: 2 << 30,
            user_bar_size: 64 << 10,
            hw: HwConfig::default(),
            sim: SimConfig::default(),
        }
    }
}

impl Config {
    /// Reads a whole configuration from TOML text; missing fields take their defaults.
    pub fn from_toml(text: &str) -> Result<Config> {
        toml::from_str(text).map_err(|e| Error::Config(format!("TOML: {e}")))
    }

    /// The configuration from the process environment: `XDMA_CONFIG` (a TOML file) if set,
    /// else the defaults; then `XDMA_BACKEND` and `XDMA_DEVICE` override.
    pub fn from_env() -> Result<Config> {
        Config::from_vars(|k| std::env::var(k).ok())
    }

    /// As [`Config::from_env`], with the variables looked up through `var`, so that callers and
    /// tests can supply their own source.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let mut cfg = match var(CONFIG_ENV).filter(|p| !p.is_empty()) {
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    Error::Config(format!("{CONFIG_ENV}={path}: cannot read it: {e}"))
                })?;
                Config::from_toml(&text)
                    .map_err(|e| Error::Config(format!("{CONFIG_ENV}={path}: {e}")))?
            }
            None => Config::default(),
        };
        if let Some(b) = var(BACKEND_ENV).filter(|v| !v.is_empty()) {
            cfg.backend = b.parse()?;
        }
        if let Some(d) = var(DEVICE_ENV).filter(|v| !v.is_empty()) {
            cfg.device = PathBuf::from(d);
        }
        Ok(cfg)
    }

    /// Checks the values that no type rules out.
    pub fn validate(&self) -> Result<()> {
        if self.memory_size == 0 {
            return Err(Error::Config(
                "memory_size = 0: the card needs memory".into(),
            ));
        }
        if self.user_bar_size < 4 || self.user_bar_size & 3 != 0 {
            return Err(Error::Config(format!(
                "user_bar_size = {}: at least one 32-bit word, a multiple of 4",
                self.user_bar_size
            )));
        }
        if !self.hw.fallback_alignment.is_power_of_two() {
            return Err(Error::Config(format!(
                "hw.fallback_alignment = {}: a power of two",
                self.hw.fallback_alignment
            )));
        }
        self.sim.engine.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn environment_overrides_the_defaults() {
        let vars: HashMap<&str, &str> = [(BACKEND_ENV, "hw"), (DEVICE_ENV, "/tmp/x/xdma3")].into();
        let cfg = Config::from_vars(|k| vars.get(k).map(|v| v.to_string())).expect("config");
        assert_eq!(cfg.backend, BackendKind::Hw);
        assert_eq!(cfg.device, PathBuf::from("/tmp/x/xdma3"));
        assert_eq!(cfg.memory_size, 2 << 30);
        let cfg = Config::from_vars(|_| None).expect("defaults");
        assert_eq!(cfg, Config::default());
    }

    #[test]
    fn bad_backend_name_is_a_config_error() {
        let err = Config::from_vars(|k| (k == BACKEND_ENV).then(|| "fpga".to_string()))
            .expect_err("unknown backend");
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        assert!(err.to_string().contains("sim"), "{err}");
    }

    #[test]
    fn toml_file_then_environment() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("xdma.toml");
        std::fs::write(
            &path,
            "backend = \"hw\"\nmemory_size = 1048576\n[sim.engine.c2h]\nmax_outstanding_reads = 32\n[sim.timing.link]\nlanes = 4\n",
        )
        .expect("write");
        let p = path.to_string_lossy().into_owned();
        let cfg = Config::from_vars(|k| match k {
            CONFIG_ENV => Some(p.clone()),
            BACKEND_ENV => Some("sim".into()),
            _ => None,
        })
        .expect("config");
        assert_eq!(
            cfg.backend,
            BackendKind::Sim,
            "the environment wins over the file"
        );
        assert_eq!(cfg.memory_size, 1 << 20);
        assert_eq!(cfg.sim.engine.c2h.max_outstanding_reads, 32);
        assert_eq!(cfg.sim.timing.link.lanes, 4);
        assert_eq!(
            cfg.sim.timing.link.generation, 2,
            "unset fields keep defaults"
        );
        // A round trip through serde keeps every field.
        let json = serde_json::to_string(&cfg).expect("json");
        let back: Config = serde_json::from_str(&json).expect("json back");
        assert_eq!(back, cfg);
        // Unknown keys are refused rather than ignored.
        assert!(Config::from_toml("memroy_size = 1").is_err());
    }

    #[test]
    fn validation() {
        let mut c = Config::default();
        assert!(c.validate().is_ok());
        c.user_bar_size = 6;
        assert_eq!(
            c.validate().expect_err("bad bar").kind(),
            crate::ErrorKind::Config
        );
    }
}
