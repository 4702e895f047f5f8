//! Configuration: which backend, which device, and each backend's own section, from a TOML file
//! and the environment (`XDMA_BACKEND=sim|hw`, `XDMA_DEVICE=/dev/xdma0`, `XDMA_CONFIG=file`).
//!
//! This crate knows no backend, so a backend's section (`[sim]`, `[hw]`) is carried as a TOML
//! table that the backend reads into its own typed settings when it opens the card
//! ([`Config::section`]); the backend rejects an unknown field or a value out of range with an
//! error that names the field.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, Result};

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
    /// The simulated card (crate `xdma-sim`).
    #[default]
    Sim,
    /// A real board through the Linux XDMA driver (crate `xdma-hw`).
    Hw,
}

impl BackendKind {
    /// The backend's name as configuration and [`crate::CardInfo::backend`] spell it, which is
    /// also the name of its section in the configuration file.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Sim => "sim",
            BackendKind::Hw => "hw",
        }
    }
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

/// Everything needed to open a card.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Which backend. Default `sim`.
    pub backend: BackendKind,
    /// The driver's node prefix: nodes are `<device>_h2c_0`, `<device>_user`, and so on. Any
    /// folder works, which is how a FUSE mount or a test folder stands in for `/dev`. Default
    /// `/dev/xdma0`.
    pub device: PathBuf,
    /// The driver backend's section `[hw]`, read by `xdma-hw`.
    pub hw: toml::Table,
    /// The simulated card's section `[sim]`, read by `xdma-sim`.
    pub sim: toml::Table,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            backend: BackendKind::Sim,
            device: PathBuf::from("/dev/xdma0"),
            hw: toml::Table::new(),
            sim: toml::Table::new(),
        }
    }
}

impl Config {
    /// Reads a whole configuration from TOML text; missing fields take their defaults.
    pub fn from_toml(text: &str) -> Result<Config> {
        toml::from_str(text).map_err(|e| Error::Config(format!("TOML: {e}")))
    }

    /// The configuration as TOML text, which [`Config::from_toml`] reads back.
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::Config(format!("cannot write TOML: {e}")))
    }

    /// Reads a whole configuration from a TOML file (a tool's `--config FILE`). Only a regular
    /// file is read: a FIFO nobody writes, or a device, would block or never end. Every error
    /// names the file once, after the one "invalid xdma configuration" of [`Error::Config`].
    pub fn from_file(path: &std::path::Path) -> Result<Config> {
        Config::read_file(path, &path.display().to_string())
    }

    /// [`Config::from_file`], its errors naming the file as `label`.
    fn read_file(path: &std::path::Path, label: &str) -> Result<Config> {
        let meta = std::fs::metadata(path)
            .map_err(|e| Error::Config(format!("{label}: cannot read it: {e}")))?;
        if !meta.is_file() {
            return Err(Error::Config(format!(
                "{label}: not a regular file ({}); name a TOML file",
                file_type_name(&meta.file_type())
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("{label}: cannot read it: {e}")))?;
        Config::from_toml(&text).map_err(|e| match e {
            // One prefix: the inner error's message, not its display with its own.
            Error::Config(m) => Error::Config(format!("{label}: {m}")),
            other => other,
        })
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
                Config::read_file(std::path::Path::new(&path), &format!("{CONFIG_ENV}={path}"))?
            }
            None => Config::default(),
        };
        if let Some(b) = var(BACKEND_ENV).filter(|v| !v.is_empty()) {
            cfg.backend = b.parse()?;
        }
        match var(DEVICE_ENV) {
            Some(d) if d.is_empty() => {
                return Err(Error::Config(format!(
                    "{DEVICE_ENV} is set but empty; name the driver's node prefix (for example /dev/xdma0) or unset it"
                )))
            }
            Some(d) => cfg.device = PathBuf::from(d),
            None => {}
        }
        Ok(cfg)
    }

    /// A backend's section read into its typed settings: fields that are missing take their
    /// defaults, and an unknown field or a value of the wrong type is a [`Error::Config`] that
    /// names the section and the field (the settings type should deny unknown fields).
    pub fn section<T: DeserializeOwned>(&self, backend: BackendKind) -> Result<T> {
        let table = match backend {
            BackendKind::Sim => &self.sim,
            BackendKind::Hw => &self.hw,
        };
        let name = backend.name();
        table
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| Error::Config(format!("[{name}] {}", e.message())))
    }

    /// Replaces a backend's section with typed settings.
    pub fn set_section<T: Serialize>(&mut self, backend: BackendKind, settings: &T) -> Result<()> {
        let table = toml::Table::try_from(settings).map_err(|e| {
            Error::Config(format!(
                "[{}] cannot be written as TOML: {e}",
                backend.name()
            ))
        })?;
        match backend {
            BackendKind::Sim => self.sim = table,
            BackendKind::Hw => self.hw = table,
        }
        Ok(())
    }
}

/// What kind of file a non-regular file is, for messages.
fn file_type_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Settings {
        lanes: u8,
        name: String,
    }

    #[test]
    fn environment_overrides_the_defaults() {
        let vars: HashMap<&str, &str> = [(BACKEND_ENV, "hw"), (DEVICE_ENV, "/tmp/x/xdma3")].into();
        let cfg = Config::from_vars(|k| vars.get(k).map(|v| v.to_string())).expect("config");
        assert_eq!(cfg.backend, BackendKind::Hw);
        assert_eq!(cfg.device, PathBuf::from("/tmp/x/xdma3"));
        let cfg = Config::from_vars(|_| None).expect("defaults");
        assert_eq!(cfg, Config::default());
    }

    fn with_config_path(path: &std::path::Path) -> Result<Config> {
        let p = path.to_string_lossy().into_owned();
        Config::from_vars(|k| (k == CONFIG_ENV).then(|| p.clone()))
    }

    #[test]
    fn a_config_that_is_not_a_regular_file_is_refused_at_once() {
        let dir = tempfile::tempdir().expect("tmp");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        // Nobody writes the FIFO: reading it would never return.
        let err = with_config_path(&fifo).expect_err("a FIFO");
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        let msg = err.to_string();
        assert!(
            msg.contains("a FIFO") && msg.contains(&*fifo.to_string_lossy()),
            "{msg}"
        );
        let err = with_config_path(dir.path()).expect_err("a directory");
        assert!(err.to_string().contains("a directory"), "{err}");
    }

    #[test]
    fn a_bad_config_file_says_invalid_configuration_once() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "backend = [").expect("write");
        let msg = with_config_path(&path).expect_err("bad TOML").to_string();
        assert_eq!(
            msg.matches("invalid xdma configuration").count(),
            1,
            "{msg}"
        );
        assert!(msg.contains("TOML"), "{msg}");
    }

    #[test]
    fn a_config_file_given_by_path_is_named_once_in_its_errors() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "backend = [").expect("write");
        let err = Config::from_file(&path).expect_err("bad TOML");
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        let msg = err.to_string();
        assert_eq!(
            msg.matches("invalid xdma configuration").count(),
            1,
            "{msg}"
        );
        assert_eq!(msg.matches("bad.toml").count(), 1, "{msg}");
        assert!(msg.contains("TOML"), "{msg}");
        let err = Config::from_file(dir.path()).expect_err("a directory");
        assert!(err.to_string().contains("a directory"), "{err}");
        std::fs::write(&path, "backend = \"hw\"").expect("write");
        assert_eq!(
            Config::from_file(&path).expect("a file").backend,
            BackendKind::Hw
        );
    }

    #[test]
    fn an_empty_device_prefix_is_refused() {
        let err = Config::from_vars(|k| (k == DEVICE_ENV).then(String::new))
            .expect_err("XDMA_DEVICE set but empty");
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        assert!(err.to_string().contains(DEVICE_ENV), "{err}");
    }

    #[test]
    fn bad_backend_name_is_a_config_error() {
        let err = Config::from_vars(|k| (k == BACKEND_ENV).then(|| "fpga".to_string()))
            .expect_err("unknown backend");
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        assert!(err.to_string().contains("sim"), "{err}");
    }

    #[test]
    fn toml_file_then_environment_then_sections() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("xdma.toml");
        std::fs::write(
            &path,
            "backend = \"hw\"\n[sim]\nlanes = 4\n[hw]\nname = \"board\"\n",
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
        let sim: Settings = cfg.section(BackendKind::Sim).expect("sim section");
        assert_eq!(
            sim,
            Settings {
                lanes: 4,
                name: String::new()
            }
        );
        let hw: Settings = cfg.section(BackendKind::Hw).expect("hw section");
        assert_eq!(hw.name, "board");
        // A round trip through TOML and serde keeps every field.
        let back = Config::from_toml(&cfg.to_toml().expect("toml")).expect("toml back");
        assert_eq!(back, cfg);
        let json = serde_json::to_string(&cfg).expect("json");
        let back: Config = serde_json::from_str(&json).expect("json back");
        assert_eq!(back, cfg);
        // Unknown keys are refused rather than ignored, at the top and inside a section.
        assert!(Config::from_toml("memroy_size = 1").is_err());
        let bad = Config::from_toml("[sim]\nlaness = 4\n").expect("tables parse");
        let err = bad
            .section::<Settings>(BackendKind::Sim)
            .expect_err("unknown field");
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        assert!(
            err.to_string().contains("[sim]") && err.to_string().contains("laness"),
            "{err}"
        );
    }

    #[test]
    fn sections_are_written_back() {
        let mut cfg = Config::default();
        let s = Settings {
            lanes: 2,
            name: "x".into(),
        };
        cfg.set_section(BackendKind::Hw, &s).expect("set");
        assert_eq!(cfg.section::<Settings>(BackendKind::Hw).expect("get"), s);
        assert!(cfg.sim.is_empty());
    }
}
